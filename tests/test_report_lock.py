"""Two `fedbound verify` runs into one report folder at once: both claims end up in the report.

Each verify reads the report already in its folder, evaluates its claims and merges them in. Run
at the same time, both used to read the folder before either had written (no report yet), and the
last writer's report replaced the first's: one claim lost, exit status 0 (the store held both).
The merge now happens under the folder's lock (``reports.report_files.report_lock``): the second
writer waits, reads what the first wrote and adds its claim; the store's verification record is
updated in one transaction the same way. The test starts two real processes together, each with a
cheap claim of its own; each spends seconds evaluating, so their reads of the folder overlap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from reports.report_files import LOCK_FILE, report_lock
from reports.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ("control.constant-step-rate", "li2020.thm4")


def test_two_concurrent_verifies_into_one_folder_both_end_up_in_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    command = [sys.executable, "-m", "reports.cli", "verify", "--quick", "--seeds", "2", "--jobs", "1", "--no-progress",
               "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.Popen([*command, "--claim", claim], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for claim in CLAIMS]
    done = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in done]
    verdicts = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    assert sorted(c["claim_id"] for c in verdicts["claims"]) == sorted(CLAIMS)
    report = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "index.html").read_text(encoding="utf-8")
    assert all(claim in report and claim in html for claim in CLAIMS)
    assert all((out / figure["png"]).is_file() for claim in verdicts["claims"] for figure in claim["figures"])
    assert main(["report", str(out / "runs.sqlite"), "--out", str(tmp_path / "rebuilt"), "--no-progress"]) == 0
    rebuilt = json.loads((tmp_path / "rebuilt" / "verdicts.json").read_text(encoding="utf-8"))
    assert sorted(c["claim_id"] for c in rebuilt["claims"]) == sorted(CLAIMS)  # the store's record has both


def test_the_report_lock_excludes_a_second_holder_until_the_first_leaves(tmp_path: Path) -> None:
    order: list[str] = []
    with report_lock(tmp_path):
        second = threading.Thread(target=lambda: _hold(tmp_path, order))
        second.start()
        time.sleep(0.5)  # the second holder is waiting, in another process
        order.append("first done")
    second.join(timeout=60)
    assert order == ["first done", "second in"]
    assert (tmp_path / LOCK_FILE).is_file()


def _hold(folder: Path, order: list[str]) -> None:
    """Take the folder's lock in another process (flock excludes processes) and note when it got it."""
    code = f"from reports.report_files import report_lock\nwith report_lock({str(folder)!r}):\n    print('in')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "in", done.stderr
    order.append("second in")
