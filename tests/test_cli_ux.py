"""The CLI as a tool for people and scripts: fast start, falsify exit codes and listing, progress
lines without terminal frames, a report folder that never mixes settings."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reports.cli import main
from reports.progress import VerifyProgress

HEAVY = ("numba", "cvxpy", "matplotlib", "scipy", "dask", "hypothesis")


def test_help_and_list_import_no_numerical_library() -> None:
    # fedbound --help and fedbound list must answer at once: nothing heavy may load for them
    code = ("import sys, contextlib, io\nfrom reports.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['list'])\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_list_shows_citation_statement_and_measured(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "arXiv:1907.02189" in out and "arXiv:2002.07454" in out and "measured:" in out


def test_falsify_list_shows_ids_and_parameter_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["falsify", "--list"]) == 0
    out = capsys.readouterr().out
    assert "li2020.lemma3[constant=0.01]" in out and "other values are not built in" in out
    assert main(["list", "--falsifiable"]) == 0
    assert capsys.readouterr().out == out


def test_falsify_reproduce_line_runs_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["falsify", "li2020.lemma3[constant=0.01]", "--budget", "30"]) == 1
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("reproduce: "))
    argv = shlex.split(line.removeprefix("reproduce: "))  # the shell's reading of the printed line
    assert argv[0] == "fedbound"
    assert main(argv[1:]) == 1
    again = capsys.readouterr().out
    assert again.splitlines()[0] == out.splitlines()[0]  # same counterexample, same message


def test_falsify_user_claim_from_a_file_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "myclaims_fedbound_test.py").write_text(
        "from hypothesis import strategies as st\nfrom proofs_check import FalsifiableClaim\n"
        "true = FalsifiableClaim('t', 'x^2 >= 0', st.integers(-5, 5), lambda x: -x * x)\n"
        "false = FalsifiableClaim('f', 'x < 3', st.integers(0, 9), lambda x: x - 2.5)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert main(["falsify", "myclaims_fedbound_test.py:true", "--budget", "20"]) == 0
    assert main(["falsify", "myclaims_fedbound_test.py:false", "--budget", "50"]) == 1
    assert "violated" in capsys.readouterr().out
    assert main(["falsify", "myclaims_fedbound_test:true"]) == 2  # the current directory is not on the path
    assert "no installed module 'myclaims_fedbound_test'" in capsys.readouterr().err


def test_progress_off_a_terminal_is_lines_with_counts_and_eta() -> None:
    stream = io.StringIO()
    progress = VerifyProgress(["li2020.thm4", "lemmas"], stream=stream, interactive=False)
    progress.claim_started("li2020.thm4", "Li et al.")
    progress.sweep_started("runs", [{"seed": 0}, {"seed": 1}, {"seed": 2}], cached=1)
    progress.run_finished()
    progress.run_finished()
    progress.sweep_finished("runs", 3, 1, 0.5)
    progress.claim_finished("li2020.thm4", "PASS", 1.0)
    text = stream.getvalue()
    assert "\r" not in text
    assert "3 run(s), 1 reused, 2 computed" in text and "overall 1/2 claims" in text and "ETA" in text
    assert (progress.reused, progress.computed) == (1, 2)
    assert progress.sweeps["li2020.thm4"][0].summary()["varying"] == {"seed": ["0", "1", "2"]}


def test_verify_merges_into_a_compatible_report_and_refuses_other_settings(tmp_path: Path) -> None:
    out = tmp_path / "report"
    base = ["verify", "--quick", "--out", str(out), "--no-progress", "--seeds", "2"]
    assert main([*base, "--claim", "control.constant-step-rate"]) == 0
    assert main([*base, "--claim", "li2020.thm4"]) == 0  # same settings: merged
    claims = json.loads((out / "verdicts.json").read_text())["claims"]
    assert [c["claim_id"] for c in claims] == ["li2020.thm4", "control.constant-step-rate"]
    assert all((out / f["png"]).is_file() and (out / f["svg"]).is_file() for c in claims for f in c["figures"])
    html = (out / "index.html").read_text()
    assert "claim-control.constant-step-rate" in html and "claim-li2020.thm4" in html and "References" in html
    before = (out / "verdicts.json").read_bytes()
    assert main(["verify", "--out", str(out), "--no-progress", "--claim", "li2020.thm4"]) == 2  # other mode: refused
    assert (out / "verdicts.json").read_bytes() == before
