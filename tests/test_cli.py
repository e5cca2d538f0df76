"""The command line: listing, clear one-line errors, and an end-to-end report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reports.cli import main


def test_list_shows_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for cid in ("li2020.thm4", "li2020.thm1", "control.constant-step-rate"):
        assert cid in out


def test_unknown_claim_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--claim", "li2020.thm99", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown claim id 'li2020.thm99'" in err and "Traceback" not in err


def test_unwritable_output_dir_names_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["verify", "--claim", "control.constant-step-rate", "--out", str(blocker / "report")]) == 2
    assert "--out: cannot write" in capsys.readouterr().err


def test_bad_seeds_rejected_by_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["verify", "--seeds", "0"])
    assert exc.value.code == 2
    assert "--seeds" in capsys.readouterr().err


def test_verify_negative_control_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["verify", "--quick", "--claim", "control.constant-step-rate", "--out", str(out), "--no-progress"]) == 0
    data = json.loads((out / "verdicts.json").read_text())
    (claim,) = data["claims"]
    assert claim["claim_id"] == "control.constant-step-rate"
    assert claim["status"] == "FAIL" and claim["expected"] == "FAIL"
    # the gap levels off: fitted exponent near 0, far above the claimed -1
    assert claim["measured"] > -0.2
    html = (out / "index.html").read_text()
    assert "data:image/png;base64," in html
    assert (out / "report.md").exists() and list(out.glob("*.png"))


def test_kernel_cache_means_no_recompile_in_a_second_process(tmp_path: Path) -> None:
    code = (
        "import numpy as np\n"
        "from convergence.algorithms.local_sgd import local_sgd_kernel as fedavg_kernel\n"
        "from convergence import FedAvgConfig, RunConfig, StepSize, run\n"
        "from problems import li_counterexample\n"
        "p = li_counterexample(3, 2, 0.1)\n"
        "run(RunConfig(p.spec, FedAvgConfig(2, 3, StepSize.constant(0.1))), problem=p)\n"
        "print(sum(fedavg_kernel.stats.cache_misses.values()), sum(fedavg_kernel.stats.cache_hits.values()))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split()[0] == "1"  # compiled (and cached) once
    misses, hits = second.stdout.split()
    assert misses == "0" and int(hits) >= 1


def test_falsify_finds_the_planted_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["falsify", "li2020.lemma3[constant=0.01]", "--budget", "30", "--json"]) == 1  # found: exit 1
    result = json.loads(capsys.readouterr().out)
    assert result["found"] and result["violation"] > 0
    assert 1 <= result["examples_tried"] <= 30 and result["shrink_evaluations"] >= 0
    assert result["counterexample"]["claim"] == "li2020.lemma3[constant=0.01]"


def test_falsify_does_not_find_a_true_lemma(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["falsify", "li2020.lemma3", "--budget", "20", "--json"]) == 0  # none found: exit 0
    result = json.loads(capsys.readouterr().out)
    assert result["found"] is False and result["examples_tried"] <= 20


def test_falsify_user_claim_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["falsify", "no_such_module:claim"]) == 2
    assert "claim: no installed module 'no_such_module'" in capsys.readouterr().err
    assert main(["falsify", "json:dumps"]) == 2
    assert "claim: 'json' is a module of Python's standard library" in capsys.readouterr().err
    assert main(["falsify", "numpy:pi"]) == 2
    assert "not a FalsifiableClaim" in capsys.readouterr().err
