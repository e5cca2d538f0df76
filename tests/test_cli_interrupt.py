"""Ctrl-C during `fedbound verify` (issue 28): a terminal's SIGINT reaches the whole process group (the
CLI, its claim workers and their sweep workers); the CLI stops handing out work, ends its workers and
exits within seconds with one line, and a rerun into the same store resumes from the runs stored before.

The selection runs as a pool of two claim workers with a third claim waiting in the pool's queue
(``reports.claim_pool``, claims longest first): before the fix the waiting claim started after the
signal, the CLI waited for it and for the running claims (22-45 s in the issue), and the workers printed
"Exception ignored ... KeyboardInterrupt".
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from convergence.store import RunStore, StoreError

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ("yu2019icml.thm3", "ding2020.thm2", "control.constant-step-rate")  # the last waits in the queue (jobs 2)
SIGNAL_AFTER_RUNS = 10  # stored runs seen before the signal: the interrupted verify has work behind it
EXIT_WITHIN_S = 5.0  # the bound from SIGINT to exit
INTERRUPTED = "fedbound: interrupted"  # the one line reports.cli prints on KeyboardInterrupt, exit status 130


def _verify(store: Path, out: Path, stderr: object) -> subprocess.Popen:
    """`fedbound verify --quick --jobs 2` of CLAIMS into ``store``, in a process group of its own (as a
    terminal's foreground job)."""
    command = [sys.executable, "-m", "reports.cli", "verify", "--quick", "--jobs", "2", "--store", str(store),
               "--out", str(out)]
    for claim in CLAIMS:
        command += ["--claim", claim]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            start_new_session=True)


def _stored_runs(store: Path) -> int:
    """Runs in ``store`` now (0 while the verify has not created it yet)."""
    if not store.exists():
        return 0
    try:
        with RunStore(store, readonly=True) as reader:
            return len(reader)
    except StoreError:  # being created by the verify
        return 0


def _group_alive(group: int) -> list[psutil.Process]:
    """The live (not zombie) processes of process group ``group``."""
    alive = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
    return alive


def test_sigint_stops_verify_within_seconds_and_a_rerun_resumes(tmp_path: Path) -> None:
    store, out, log = tmp_path / "runs.sqlite", tmp_path / "report", tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        verify = _verify(store, out, stderr)
        try:
            deadline = time.monotonic() + 120.0  # generous: a cold Numba cache compiles first
            while verify.poll() is None and _stored_runs(store) < SIGNAL_AFTER_RUNS and time.monotonic() < deadline:
                time.sleep(0.05)
            assert verify.poll() is None, "verify ended before it could be interrupted"
            before = _stored_runs(store)
            logged = log.stat().st_size
            os.killpg(verify.pid, signal.SIGINT)  # what ^C in a terminal does
            signalled = time.monotonic()
            with contextlib.suppress(subprocess.TimeoutExpired):
                verify.wait(timeout=60.0)
            seconds = time.monotonic() - signalled
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(verify.pid, signal.SIGKILL)
            verify.wait()
    text = log.read_text()
    assert seconds < EXIT_WITHIN_S, f"verify took {seconds:.1f} s to exit after SIGINT"
    assert verify.returncode == 130
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert text.rstrip().splitlines()[-1] == INTERRUPTED
    started_late = re.findall(r"^\[fedbound\] (\S+): (?!PASS|FAIL|INCONCLUSIVE)", text[logged:], flags=re.MULTILINE)
    assert not started_late, f"claims started after the signal: {started_late}"
    assert not _group_alive(verify.pid), "a worker outlived the interrupted verify"
    kept = _stored_runs(store)
    assert kept >= before > 0

    rerun = _verify(store, out, subprocess.PIPE)
    stdout, rerun_err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, rerun_err
    counts = re.search(r"(\d+) run\(s\) reused from the store, (\d+) computed", stdout)
    assert counts is not None, stdout
    reused, computed = map(int, counts.groups())
    assert reused >= kept and computed > 0
