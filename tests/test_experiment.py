"""`fedbound run EXPERIMENT.toml`: the worked example PASSes, planted false claims FAIL, a check
that cannot fail is uninformative, the run store is reused, every bad input names its field, and
the expression evaluator refuses everything outside its whitelist.

The example runs once per module (``example``: 32 runs of a few thousand steps, about 4 s, plus
its figures); every other run test reads those runs back from its store and skips the figures.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from convergence import ScheduleError, Status, StepSize, Verdict
from proofs_check.experiments import Experiment, ExperimentError, Expression, load_experiment
from reports import run_experiment
from reports.cli import main
from reports.progress import VerifyProgress

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fedavg_rate.toml"
EXAMPLE_TEXT = EXAMPLE.read_text(encoding="utf-8")
BOUND = ("kappa / (gamma + T) * (2 * (p2_sigma_sq + 6 * L * Gamma + 8 * (E - 1)**2 * G_sq) / mu "
         "+ mu * gamma / 2 * dist0_sq)")
RUNS = 32  # 2 grid cells x 16 seeds


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, Path]:
    """The example through the CLI: (exit status, report folder, run store)."""
    out = tmp_path_factory.mktemp("example")
    store = out / "runs.sqlite"
    status = main(["run", str(EXAMPLE), "--out", str(out), "--store", str(store), "--no-progress"])
    return status, out, store


def _variant(tmp_path: Path, replacements: dict[str, str], checks: str | None = None) -> Path:
    """The example file with text replaced (and its checks replaced by ``checks`` when given)."""
    text = EXAMPLE_TEXT
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new)
    if checks is not None:
        text = text[: text.index("[[checks]]")] + checks
    path = tmp_path / "variant.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _run_from_store(path: Path, out: Path, store: Path) -> tuple[Any, VerifyProgress]:
    progress = VerifyProgress(["x"], enabled=False)
    outcome = run_experiment(load_experiment(path), out, store=str(store), progress=progress, figures=False)
    return outcome, progress


# ---------------------------------------------------------------- the worked example


def test_example_passes_with_a_sub_check_per_grid_cell(example: tuple[int, Path, Path]) -> None:
    status, out, _ = example
    assert status == 0
    document = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    verdicts = {v.claim_id: v for v in map(Verdict.from_json, document["claims"])}
    assert list(verdicts) == ["fedavg-rate/rate exponent -1", "fedavg-rate/Theorem 1, eq. 4",
                              "fedavg-rate/more local steps, smaller gap"]
    assert all(v.status is Status.PASS for v in verdicts.values())
    rate, bound, ordering = verdicts.values()
    assert [c.name for c in rate.checks] == ["local_steps=1", "local_steps=5"]
    assert [c.name for c in bound.checks] == ["local_steps=1", "local_steps=5"]
    assert not bound.uninformative and 0 < bound.checks[0].verdict.measured < 1  # tightness = max gap / bound
    assert [c.name for c in ordering.checks] == ["(local_steps=5) < (local_steps=1)"]
    assert document["meta"]["mode"] == "experiment"
    assert document["meta"]["cache"].startswith(f"0 run(s) reused from the store, {RUNS} computed")
    for claim in document["claims"]:
        assert claim["figures"] and all((out / f["png"]).is_file() and (out / f["svg"]).is_file()
                                        for f in claim["figures"])
    assert "fedavg-rate/Theorem 1, eq. 4" in (out / "report.md").read_text(encoding="utf-8")
    assert "more local steps, smaller gap" in (out / "index.html").read_text(encoding="utf-8")


def test_readme_shows_the_example_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", readme, flags=re.DOTALL)
    assert EXAMPLE_TEXT in blocks
    assert "fedbound run examples/fedavg_rate.toml" in readme


# ---------------------------------------------------------------- planted false claims, store reuse


def test_planted_false_claims_fail_and_reuse_the_stored_runs(example: tuple[int, Path, Path], tmp_path: Path) -> None:
    path = _variant(tmp_path, {
        "exponent = -1.0": "exponent = -2.0",                                       # O(1/T^2): false
        f'expression = "{BOUND}"': f'expression = "({BOUND}) / 100"',               # 100x too small
        "smaller = {local_steps = 5}\nlarger = {local_steps = 1}": "smaller = {local_steps = 1}\nlarger = {local_steps = 5}",
    })
    outcome, progress = _run_from_store(path, tmp_path / "out", example[2])
    assert [v.status for v in outcome.verdicts] == [Status.FAIL] * 3
    assert (progress.reused, progress.computed) == (RUNS, 0)  # the same runs: read back, none computed
    assert outcome.meta["cache"].startswith(f"{RUNS} run(s) reused from the store, 0 computed")


def test_a_bound_that_cannot_fail_is_uninformative_never_pass(example: tuple[int, Path, Path], tmp_path: Path) -> None:
    # 1e40 is above (L_F / 2) DIVERGENCE_FACTOR (1 + ||w*||^2), the largest gap a run that did not diverge can reach
    path = _variant(tmp_path, {}, checks='[[checks]]\nkind = "bound"\nname = "huge"\nexpression = "1e40"\n')
    outcome, _ = _run_from_store(path, tmp_path / "out", example[2])
    (verdict,) = outcome.verdicts
    assert verdict.status is Status.INCONCLUSIVE and not verdict.checks
    assert [u.name for u in verdict.uninformative] == ["local_steps=1", "local_steps=5"]
    assert all(u.verdict.status is Status.INCONCLUSIVE and "holds whatever the algorithm does" in u.reason
               for u in verdict.uninformative)


def test_cli_exit_status_one_when_a_check_fails(example: tuple[int, Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, {}, checks='[[checks]]\nkind = "ordering"\nname = "reversed"\n'
                    "smaller = {local_steps = 1}\nlarger = {local_steps = 5}\n")
    status = main(["run", str(path), "--out", str(tmp_path / "out"), "--store", str(example[2]), "--no-progress"])
    assert status == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "1 check(s) did not pass: fedavg-rate/reversed" in out


# ---------------------------------------------------------------- bad input: one error naming the field


BASE = tomllib.loads(EXAMPLE_TEXT)


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """A mutation of the parsed example: set (or with value ... delete) the key at a dotted path with [i] indices."""
    def mutate(data: dict) -> None:
        *parents, last = re.findall(r"[^.\[\]]+", path)
        node: Any = data
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        key = int(last) if last.isdigit() else last
        if value is ...:
            del node[key]
        else:
            node[key] = value
    return mutate


BAD_FILES = [
    (_set("foo", 1), "foo: unknown key"),
    (_set("seeds", 0), "seeds: must be >= 1"),
    (_set("seeds", "4"), "seeds: expected an integer"),
    (_set("seeds", [0, 1.5]), "seeds[1]: expected an integer"),
    (_set("record_rounds", {"log_space": 3}), "record_rounds.log_space: unknown key"),
    (_set("record_rounds", 5), "record_rounds: expected a list"),
    (_set("record_rounds", ...), "record_rounds: missing"),
    (_set("problem.from_arrays", "x.npz"), "problem: give either family"),
    (_set("problem.family", "nope"), "problem.family: unknown problem family 'nope'"),
    (_set("problem.params.alpha", -1.0), "problem.params.alpha: must be >= 0"),
    (_set("problem.params.n_clients", 2.5), "problem.params.n_clients: expected an integer"),
    (_set("algorithm.name", ...), "algorithm.name: missing"),
    (_set("algorithm.name", "fedsgd"), "algorithm.name: unknown algorithm 'fedsgd'"),
    (_set("algorithm.foo", 1), "algorithm.foo: unknown key"),
    (_set("algorithm.seeds", [1]), "algorithm.seeds: seeds is set at the top level"),
    (_set("algorithm.rounds", ...), "algorithm.rounds: missing"),
    (_set("algorithm.step_size", 0.1), "algorithm.step_size: expected a table"),
    (_set("algorithm.step_size.eta", 0.1), "algorithm.step_size.eta: unknown key"),
    (_set("algorithm.step_size.gamma", "T + 1"), "algorithm.step_size.gamma: unknown name 'T'"),
    (_set("algorithm.rounds", "__import__('os')"), "algorithm.rounds: call of '__import__' is not allowed"),
    (_set("grid.foo", [1]), "grid.foo: not a field of the algorithm's config"),
    (_set("grid.local_steps", [1, 1]), "grid.local_steps[1]: 1 is listed twice"),
    (_set("grid.local_steps", []), "grid.local_steps: expected a non-empty array"),
    (_set("grid.rounds", [10]), "grid.rounds: also given in [algorithm]"),
    (_set("checks", ...), "checks: missing"),
    (_set("checks", []), "checks: expected at least one"),
    (_set("checks[0].kind", "speed"), "checks[0].kind: unknown kind 'speed'"),
    (_set("checks[0].exponent", ...), "checks[0].exponent: missing"),
    (_set("checks[0].tolerance", -0.1), "checks[0].tolerance: must be >= 0"),
    (_set("checks[0].tolerance", True), "checks[0].tolerance: expected a real number, got True (bool)"),
    (_set("checks[0].tolerance", 1.0), "checks[0].tolerance: 1 lifts the threshold of the decay claim -1 to 0 >= 0"),
    (_set("checks[0].metric", "loss"), "checks[0].metric: unknown metric 'loss'"),
    (_set("checks[0].x", "gamma + Lip"), "checks[0].x: unknown name 'Lip'"),
    (_set("checks[1].name", "rate exponent -1"), "checks[1].name: 'rate exponent -1' is the name of another check"),
    (_set("checks[1].expression", "4 * Lip / (mu**2 * (gamma + T))"), "checks[1].expression: unknown name 'Lip'"),
    (_set("checks[1].expression", 3), "checks[1].expression: expected an expression"),
    (_set("checks[2].smaller", {"foo": 1}), "checks[2].smaller.foo: not a grid field"),
    (_set("checks[2].smaller", {"local_steps": 3}), "checks[2].smaller.local_steps: 3 is not among the grid's values"),
    (_set("checks[2].smaller", {"local_steps": 1}), "checks[2].larger: selects the same grid cell as smaller"),
    (_set("name", "a/b"), "name: 'a/b' has a '/'"),
]


@pytest.mark.parametrize("mutate, message", BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_bad_field_is_one_error_naming_it(mutate: Callable[[dict], None], message: str) -> None:
    data = copy.deepcopy(BASE)
    mutate(data)
    with pytest.raises(ExperimentError) as error:
        Experiment.parse(data, base_dir=ROOT, name="x")
    assert str(error.value).startswith(message)


def test_user_arrays_problem_and_its_bad_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "data"))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    np.savez(tmp_path / "data.npz", X=X, y=y, client_of_row=np.repeat(np.arange(4), 10))
    np.savez(tmp_path / "no_y.npz", X=X, client_of_row=np.repeat(np.arange(4), 10))
    data = copy.deepcopy(BASE)
    data["problem"] = {"from_arrays": "data.npz", "loss": "least_squares", "l2": 0.1}
    experiment = Experiment.parse(data, base_dir=tmp_path, name="x")
    assert experiment.problem.to_json()["family"] == "arrays"
    for table, message in [({"from_arrays": "no_y.npz", "loss": "least_squares"}, "problem.from_arrays: "),
                           ({"from_arrays": "missing.npz", "loss": "least_squares"}, "problem.from_arrays: cannot read"),
                           ({"from_arrays": "data.npz", "loss": "hinge"}, "problem.loss: "),
                           ({"from_arrays": "data.npz"}, "problem.loss: missing")]:
        data["problem"] = table
        with pytest.raises(ExperimentError, match=f"^{re.escape(message)}"):
            Experiment.parse(data, base_dir=tmp_path, name="x")


def test_values_only_the_problem_or_the_runs_show_bad_name_their_field(example: tuple[int, Path, Path],
                                                                       tmp_path: Path) -> None:
    cases = [
        ({"local_steps = [1, 5]": "local_steps = [1, 5, 0]"}, None, "grid.local_steps (cell local_steps=0): must be >= 1"),
        ({"rounds = 4000": 'rounds = "10.5 * kappa"'}, None, "algorithm.rounds: '10.5 * kappa' gives"),
        ({}, '[[checks]]\nkind = "bound"\nname = "b"\nexpression = "gap0 - 1"\n', "checks[0].expression: the bound"),
        ({}, '[[checks]]\nkind = "rate"\nname = "r"\nx = "T - T"\nexponent = -1\ntolerance = 0.1\n',
         "checks[0].x: "),
    ]
    for replacements, checks, message in cases:
        with pytest.raises(ExperimentError, match=f"^{re.escape(message)}"):
            _run_from_store(_variant(tmp_path, replacements, checks), tmp_path / "out", example[2])


def test_cli_bad_input_is_one_line_and_exit_status_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, {"6 * L * Gamma": "6 * Lip * Gamma"})
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fedbound: error: checks[1].expression: unknown name 'Lip'") and "\n" not in err
    (tmp_path / "bad.toml").write_text("seeds = [1,", encoding="utf-8")
    assert main(["run", str(tmp_path / "bad.toml")]) == 2
    assert "is not valid TOML" in capsys.readouterr().err


def test_run_help_imports_no_numerical_library() -> None:
    code = ("import sys, contextlib, io\nfrom reports.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['run', '--help'])\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('numba', 'cvxpy', 'matplotlib', 'scipy', 'dask') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


# ---------------------------------------------------------------- the expression evaluator


@pytest.mark.parametrize("text, message", [
    ("L.real", "attribute access 'L.real'"),
    ("(1).__class__", "attribute access '1 .__class__'"),
    ("__import__('os').system('true')", "call of '__import__('os').system'"),
    ("eval('1')", "call of 'eval'"),
    ("getattr(L, 'real')", "call of 'getattr'"),
    ("max(L, key=mu)", "passes keyword or starred arguments"),
    ("sqrt(*T)", "passes keyword or starred arguments"),
    ("Lip + 1", "unknown name 'Lip'"),
    ("L // 2", "operator '//' is not allowed"),
    ("L < mu", "(Compare) is not allowed"),
    ("T[0]", "(Subscript) is not allowed"),
    ("[L, mu]", "(List) is not allowed"),
    ("'L'", "constant 'L' is not a number"),
    ("True", "constant True is not a number"),
    ("1j", "constant 1j is not a number"),
    ("sqrt(L, mu)", "sqrt takes 1 argument(s), got 2"),
    ("min(L)", "min takes at least 2 argument(s), got 1"),
    ("L +", "cannot parse"),
    ("", "expected an expression"),
    ("1" + "+1" * 300, "at most 500"),
])
def test_expression_refuses_what_is_not_arithmetic(text: str, message: str) -> None:
    with pytest.raises(ExperimentError) as error:
        Expression.parse(text, "checks[1].expression", {"L", "mu", "T"})
    assert str(error.value).startswith("checks[1].expression: ") and message in str(error.value)


def test_expression_evaluates_arithmetic_element_wise() -> None:
    T = np.array([1.0, 10.0, 100.0])
    values = {"L": 4.0, "mu": 0.5, "gamma": 8.0, "T": T}
    expression = Expression.parse("4 * L / (mu**2 * (gamma + T))", "bound", values)
    assert expression.names == {"L", "mu", "gamma", "T"}
    np.testing.assert_allclose(expression.evaluate(values, "bound"), 4 * 4.0 / (0.25 * (8.0 + T)), rtol=0, atol=0)
    functions = Expression.parse("max(sqrt(T), 5) + min(exp(0), log(T + 1), 2) - ceil(mu) + floor(-mu) + -L", "f", values)
    expected = np.maximum(np.sqrt(T), 5) + np.minimum(np.minimum(1.0, np.log(T + 1)), 2) - 1 - 1 - 4
    np.testing.assert_allclose(functions.evaluate(values, "f"), expected)
    assert Expression.parse("L * mu", "f", values).evaluate(values, "f") == 2.0
    with pytest.raises(ExperimentError, match=r"^f: '1 / \(T - T\)' is not finite"):
        Expression.parse("1 / (T - T)", "f", values).evaluate(values, "f")
    with pytest.raises(ExperimentError, match="^f: no value for L"):
        Expression.parse("L", "f", {"L"}).evaluate({}, "f")


# ---------------------------------------------------------------- StepSize.from_json


@pytest.mark.parametrize("step", [StepSize.constant(0.01), StepSize.li(0.5, 10.0, 5), StepSize.inverse_time(0.2, 0.05),
                                  StepSize.per_round(0.1)])
def test_step_size_from_json_inverts_to_json(step: StepSize) -> None:
    assert StepSize.from_json(step.to_json()) == step
    assert StepSize.from_json(json.loads(json.dumps(step.to_json()))) == step


def test_step_size_from_json_names_the_bad_key() -> None:
    assert StepSize.from_json({"kind": "constant", "eta0": 0.01}) == StepSize.constant(0.01)
    for data, message in [({"kind": "constant", "eta": 0.01}, "step_size.eta: unknown key"),
                          ({"eta0": 0.01}, "step_size.kind: missing"),
                          ([("kind", "constant")], "step_size: expected a mapping"),
                          ({"kind": "constant", "eta0": -1.0}, "step_size.eta0: the step size must be > 0"),
                          ({"kind": "constant", "eta0": "0.1"}, "step_size.eta0: expected a real number")]:
        with pytest.raises(ScheduleError, match=f"^{re.escape(message)}"):
            StepSize.from_json(data)
