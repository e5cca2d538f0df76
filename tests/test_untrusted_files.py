"""Files a user downloads run no code but what they name, and only declared builders (issue 30).

An experiment's folder may hold anything: ``fedbound run`` imports nothing from it or from the
current directory (a ``matplotlib.py`` there stays unread), and an experiment file's ``builder``
runs only a function declared ``@problems.problem_builder``, checked in its source before the
file or module is imported. Standard-library modules and relative names are refused unimported, as
for ``fedbound falsify``. Marker files written by module-level code prove what was (not) run.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from problems import ProblemError, ProblemSpec, build_problem
from problems.user_code import load_builder
from reports.cli import main
from proofs_check.experiments import load_experiment

ROOT = Path(__file__).resolve().parents[1]

BUILDERS = '''
open("MARKER_builders_imported", "w").write("imported")

import numpy as np

from problems import FederatedProblem, problem_builder


@problem_builder
def two_clients(n_rows: int = 4, shift: float = 1.0, seed: int = 0) -> FederatedProblem:
    """Two least-squares clients of n_rows rows; client 1's targets shifted by ``shift``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n_rows, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + shift * np.repeat([0.0, 1.0], n_rows)
    return FederatedProblem("two clients", "least_squares", X, y, [0, n_rows, 2 * n_rows], [0.5, 0.5], 0.1)
'''

UNDECLARED = '''
open("MARKER_undeclared_imported", "w").write("imported")

from problems import FederatedProblem


def two_clients(n_rows: int = 4) -> FederatedProblem:
    open("MARKER_undeclared_called", "w").write("called")
    raise AssertionError("never called")
'''

EXPERIMENT = '''
seeds = 2
record_rounds = [1, 10, 40]

[problem]
family = "untrusted.two_clients"
builder = "{builder}"
params = {{n_rows = 5}}

[algorithm]
name = "fedavg"
rounds = 40
local_steps = 2
step_size = {{kind = "constant", eta0 = 0.05}}

[[checks]]
kind = "bound"
name = "below the initial gap"
expression = "gap0"
'''


def _folder(tmp_path: Path, builder: str) -> Path:
    """An experiment folder: the experiment naming ``builder``, the two builder files and a
    ``matplotlib.py`` (a dependency fedbound imports late, to draw the report) writing a marker."""
    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "exp.toml").write_text(EXPERIMENT.format(builder=builder), encoding="utf-8")
    (folder / "builders.py").write_text(BUILDERS, encoding="utf-8")
    (folder / "undeclared.py").write_text(UNDECLARED, encoding="utf-8")
    (folder / "matplotlib.py").write_text('open("MARKER_matplotlib", "w").write("run")\n', encoding="utf-8")
    return folder


def _markers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("MARKER_*"))


@pytest.mark.parametrize("problem, launch", [("synthetic", "script"), ("builders.py:two_clients", "script"),
                                             ("synthetic", "python -m")])
def test_run_in_a_downloaded_folder_imports_only_the_declared_builder(tmp_path: Path, problem: str,
                                                                     launch: str) -> None:
    """The console script's situation (sys.path[0] is the script's folder) and ``python -m
    reports.cli`` (Python puts the current directory first), the current directory the experiment's:
    matplotlib (drawing the report) and the pool's workers must not read the folder; with a shipped
    family nothing of it runs, with a file's builder only that file."""
    folder = _folder(tmp_path, problem)
    if problem == "synthetic":
        text = (folder / "exp.toml").read_text(encoding="utf-8")
        text = text.replace('family = "untrusted.two_clients"\nbuilder = "synthetic"\nparams = {n_rows = 5}',
                            'family = "synthetic"\nparams = {n_clients = 4}')
        (folder / "exp.toml").write_text(text, encoding="utf-8")
    launcher = tmp_path / "bin" / "fedbound_launcher.py"
    launcher.parent.mkdir()
    launcher.write_text("import sys\nfrom reports.cli import main\nsys.exit(main())\n", encoding="utf-8")
    out = tmp_path / "report"
    command = [sys.executable, str(launcher)] if launch == "script" else [sys.executable, "-m", "reports.cli"]
    done = subprocess.run(
        [*command, "run", "exp.toml", "--out", str(out), "--no-progress", "--jobs", "2", "--force-jobs"],
        cwd=folder, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a check that did not pass, still a report
    assert (out / "index.html").is_file() and list(out.glob("*.png"))  # the report was drawn (matplotlib ran)
    if problem == "synthetic":
        assert _markers(folder) == []  # no MARKER_matplotlib
        return
    assert _markers(folder) == ["MARKER_builders_imported"]  # no MARKER_matplotlib
    recorded = json.loads((out / "verdicts.json").read_text())["meta"]["problem"]
    assert recorded["builder"] == f"{folder.resolve() / 'builders.py'}:two_clients"  # by its absolute path


@pytest.mark.parametrize("builder, message", [
    ("undeclared.py:two_clients", "is not declared a problem builder"),
    ("builders.py:missing", "is not declared a problem builder"),
    ("this:nothing", "'this' is a module of Python's standard library"),
    ("pdb:main", "'pdb' is a module of Python's standard library"),
    ("gzip:main", "'gzip' is a module of Python's standard library"),
    ("..os:sep", "'..os' is a relative module name"),
    ("numpy:show_config", "numpy:show_config is not declared a problem builder"),
    ("matplotlib:use", "no installed module 'matplotlib'|is not declared a problem builder"),
    ("../outside.py:f", "lies outside the experiment file's folder"),
    ("/etc/hosts.py:f", "is an absolute path"),
])
def test_an_undeclared_builder_is_refused_before_it_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], builder: str, message: str
) -> None:
    folder = _folder(tmp_path, builder)
    monkeypatch.chdir(folder)
    imported = set(sys.modules)
    assert main(["run", "exp.toml", "--out", str(tmp_path / "report"), "--no-progress"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fedbound: error: problem.builder: ")
    assert any(part in lines[0] for part in message.split("|")), lines[0]
    assert _markers(folder) == []  # neither builder file, nor the folder's matplotlib.py, ran
    assert "Beautiful is better" not in captured.out  # `this` was not imported
    assert not {"this", "pdb"} & (set(sys.modules) - imported)
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("name, message", [
    ("..os:sep", "claim: '..os' is a relative module name"),
    ("this:nothing", "claim: 'this' is a module of Python's standard library"),
    ("pdb:main", "claim: 'pdb' is a module of Python's standard library"),
    ("os.path:sep", "claim: 'os.path' is a module of Python's standard library"),
    ("9lives:claim", "claim: '9lives' is not a module name"),
])
def test_falsify_refuses_relative_and_standard_library_names(
    capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    assert main(["falsify", name]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fedbound: error: {message}"), lines
    assert captured.out == ""


def test_a_worker_loads_a_file_builder_from_the_spec_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process-pool or Dask worker gets the spec only (JSON or pickled): it loads the same file by
    its absolute path, under the same private name, and builds the same problem."""
    folder = _folder(tmp_path, "builders.py:two_clients")
    monkeypatch.chdir(folder)  # the builder file writes its marker into the current directory
    spec = load_experiment(folder / "exp.toml").problem
    expected = build_problem(spec).fingerprint
    script = textwrap.dedent("""
        import json, pickle, sys
        from problems import ProblemSpec, build_problem
        from_json = build_problem(ProblemSpec.from_json(json.loads(sys.argv[1])))
        from_pickle = build_problem(pickle.loads(bytes.fromhex(sys.argv[2])))
        print(from_json.fingerprint, from_pickle.fingerprint)
    """)
    done = subprocess.run([sys.executable, "-c", script, json.dumps(spec.to_json()), pickle.dumps(spec).hex()],
                          cwd=tmp_path, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.split() == [expected, expected]


def test_a_recorded_spec_naming_an_undeclared_file_is_refused_unimported(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec read back (from a store, by a worker) is checked as an experiment file is."""
    folder = _folder(tmp_path, "undeclared.py:two_clients")
    monkeypatch.chdir(folder)
    spec = {"family": "untrusted.recorded", "builder": f"{folder / 'undeclared.py'}:two_clients", "params": {}}
    with pytest.raises(ProblemError, match="^builder: .*undeclared.py:two_clients is not declared a problem builder"):
        ProblemSpec.from_json(spec)
    with pytest.raises(ProblemError, match="^builder: 'undeclared.py' is a relative path"):
        load_builder("undeclared.py:two_clients")
    os.mkfifo(folder / "fifo.py")
    with pytest.raises(ProblemError, match="^builder: .*fifo.py' is not a regular file"):
        load_builder(f"{folder / 'fifo.py'}:f")  # opening a FIFO would block for ever
    assert _markers(folder) == []
