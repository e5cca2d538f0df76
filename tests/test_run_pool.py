"""``convergence.run_pool``: one local process pool for a whole ``fedbound verify`` (issue 29).

What must hold: a verification with jobs > 1 makes one pool of run workers and one of claim workers,
whatever the number of claims and sweeps (a pool forked per sweep, the old way, made one more per
sweep, inside the claim workers), counted by logging every ``ProcessPoolExecutor`` made in any process;
the sweeps of every claim run on the same workers, except those estimated below IN_PLACE_SECONDS, which run
in the claim worker itself; the results are the serial ones bit for bit; the
first task of a warm key the pool has not run runs alone; a failing task stops its own sweep only;
Ctrl-C ends the pool's workers at once.
"""

from __future__ import annotations

import io
import os
import time
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import psutil
import pytest
from test_sweep import _assert_identical, _requests

from convergence import SweepOptions, execute, sweep_executors
from convergence.run_pool import RunPool, session_pool
from convergence.store import RunStore
from convergence.sweep import SweepError, SweepTask, run_sweep
from convergence.verdict import Status
from proofs_check.framework.registry import select_claim
from proofs_check.framework.settings import VerifySettings
from reports.claim_pool import evaluate_claims
from reports.progress import VerifyProgress

CLAIMS = ["control.constant-step-rate", "ding2020.ordering", "yu2019.cor2"]
SWEEPS_PER_CLAIM = 3
TASKS_PER_SWEEP = 4


def _doubled(value: float) -> dict[str, np.ndarray]:
    """A tiny task that says which process ran it."""
    return {"pid": np.array(os.getpid()), "value": np.array(2.0 * value)}


def _stamped(seconds: float) -> dict[str, np.ndarray]:
    """A task that sleeps and gives its start and end (wall clock, comparable across processes)."""
    start = time.time()
    time.sleep(seconds)
    return {"start": np.array(start), "end": np.array(time.time())}


def _failing(value: float) -> dict[str, np.ndarray]:
    if value == 2.0:
        raise ValueError("task 2 always fails")
    return _doubled(value)


def _sweeping_card(selection, settings, progress):
    """A claim's card that runs SWEEPS_PER_CLAIM sweeps of tiny tasks as a claim's own sweeps would."""
    results = {}
    for sweep in range(SWEEPS_PER_CLAIM):
        tasks = [SweepTask(f"{selection.id}/{sweep}/{i}", _doubled, (float(i + 10 * sweep),), {"i": i, "s": sweep})
                 for i in range(TASKS_PER_SWEEP)]
        results.update(run_sweep(tasks, settings.sweep_options()))
    return types.SimpleNamespace(status=Status.PASS, pids={int(r["pid"]) for r in results.values()},
                                 values=[float(r["value"]) for r in results.values()], claim_pid=os.getpid())


def test_a_verification_makes_one_run_pool_for_all_its_claims_and_sweeps(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "pools.txt"

    class Counting(ProcessPoolExecutor):  # inherited by the forked claim workers, so their pools are counted too
        def __init__(self, *args, **kwargs):
            with log.open("a") as out:
                out.write(f"{os.getpid()}\n")
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(sweep_executors, "ProcessPoolExecutor", Counting)
    starts = RunPool.starts
    selections = [select_claim(claim) for claim in CLAIMS]
    progress = VerifyProgress(CLAIMS, stream=io.StringIO(), interactive=False)
    cards = evaluate_claims(selections, VerifySettings(jobs=2, progress=False), progress, _sweeping_card)
    made = log.read_text().split()
    assert made == [str(os.getpid())] * 2, made  # the run pool and the claim workers' pool, both here; none per sweep
    assert RunPool.starts == starts + 1
    run_workers = set().union(*(card.pids for card in cards.values()))
    assert len(run_workers) <= 2 and not run_workers & ({card.claim_pid for card in cards.values()} | {os.getpid()})
    assert all(card.values == [2.0 * (i + 10 * s) for s in range(SWEEPS_PER_CLAIM) for i in range(TASKS_PER_SWEEP)]
               for card in cards.values())


def _small_sweeps_card(selection, settings, progress):
    """``_sweeping_card`` with an estimated cost on each task: 0.04 s per sweep, below IN_PLACE_SECONDS."""
    results = {}
    for sweep in range(SWEEPS_PER_CLAIM):
        tasks = [SweepTask(f"{selection.id}/{sweep}/{i}", _doubled, (float(i + 10 * sweep),), {"i": i, "s": sweep},
                           "kernel", cost=0.01) for i in range(TASKS_PER_SWEEP)]
        results.update(run_sweep(tasks, settings.sweep_options()))
    return types.SimpleNamespace(status=Status.PASS, pids={int(r["pid"]) for r in results.values()},
                                 values=[float(r["value"]) for r in results.values()], claim_pid=os.getpid())


def test_small_sweeps_of_claim_workers_run_in_the_claim_worker() -> None:
    selections = [select_claim(claim) for claim in CLAIMS]
    progress = VerifyProgress(CLAIMS, stream=io.StringIO(), interactive=False)
    cards = evaluate_claims(selections, VerifySettings(jobs=2, progress=False), progress, _small_sweeps_card)
    assert all(card.pids == {card.claim_pid} != {os.getpid()} for card in cards.values())
    assert all(card.values == [2.0 * (i + 10 * s) for s in range(SWEEPS_PER_CLAIM) for i in range(TASKS_PER_SWEEP)]
               for card in cards.values())


def test_one_claim_with_jobs_runs_its_sweeps_on_the_pool_and_jobs_one_opens_none(tmp_path: Path) -> None:
    selection = [select_claim(CLAIMS[0])]
    progress = VerifyProgress(CLAIMS[:1], stream=io.StringIO(), interactive=False)
    starts = RunPool.starts
    card = evaluate_claims(selection, VerifySettings(jobs=2, progress=False), progress, _sweeping_card)[CLAIMS[0]]
    assert RunPool.starts == starts + 1 and card.claim_pid == os.getpid() and os.getpid() not in card.pids
    card = evaluate_claims(selection, VerifySettings(jobs=1, progress=False), progress, _sweeping_card)[CLAIMS[0]]
    assert RunPool.starts == starts + 1 and card.pids == {os.getpid()}


def test_runs_on_the_session_pool_equal_the_serial_ones_bit_for_bit(on_the_pool: None) -> None:
    serial = execute(_requests(), SweepOptions(jobs=1, progress=False))
    with session_pool(2, 0):
        pooled = execute(_requests(), SweepOptions(jobs=2, progress=False))
        again = execute(_requests(), SweepOptions(jobs=2, progress=False))  # warm workers, the same numbers
    _assert_identical(serial, pooled)
    _assert_identical(serial, again)


def test_the_first_task_of_a_warm_key_new_to_the_pool_runs_alone() -> None:
    with session_pool(2, 0):
        tasks = [SweepTask(f"w{i}", _stamped, (0.3 if i == 0 else 0.0,), {"i": i}, "kernel") for i in range(4)]
        other = SweepTask("other", _stamped, (0.0,), {"other": 1}, "another kernel")
        first = run_sweep(tasks + [other], SweepOptions(jobs=2, progress=False))
        assert all(float(first[f"w{i}"]["start"]) >= float(first["w0"]["end"]) for i in range(1, 4))
        assert float(first["other"]["start"]) < float(first["w0"]["end"])  # another key does not wait
        warm = [SweepTask(f"v{i}", _stamped, (0.3,), {"v": i}, "kernel") for i in range(2)]
        second = run_sweep(warm, SweepOptions(jobs=2, progress=False))  # a key run once: side by side at once
        assert float(second["v1"]["start"]) < float(second["v0"]["end"])


def test_a_failing_task_stops_its_sweep_and_the_pool_runs_the_next(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store, session_pool(2, 0):
        options = SweepOptions(jobs=2, store=store, progress=False)
        with pytest.raises(SweepError, match="sweep task f2 failed: ValueError: task 2 always fails"):
            run_sweep([SweepTask(f"f{i}", _failing, (float(i),), {"i": i}) for i in range(3)], options)
        assert {"f0", "f1"} <= set(store.keys()) and "f2" not in set(store.keys())
        after = run_sweep([SweepTask(f"g{i}", _doubled, (float(i),), {"g": i}) for i in range(3)], options)
        assert [float(r["value"]) for r in after.values()] == [0.0, 2.0, 4.0]


class _CtrlCAfterFirstRun:
    """A SweepMonitor that raises KeyboardInterrupt, as Ctrl-C does in the driver, once the first run is stored."""

    def sweep_started(self, description, configs, cached) -> None:
        pass

    def run_finished(self) -> None:
        raise KeyboardInterrupt

    def sweep_finished(self, description, total, cached, seconds) -> None:
        pass


def test_ctrl_c_during_a_sweep_ends_the_session_pool_at_once(tmp_path: Path) -> None:
    tasks = [SweepTask(f"t{i}", _stamped, (0.0 if i == 0 else 5.0,), {"i": i}) for i in range(6)]
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), RunStore(tmp_path / "runs.sqlite") as store, session_pool(2, 0):
        run_sweep(tasks, SweepOptions(jobs=2, store=store, progress=_CtrlCAfterFirstRun()))
    assert time.monotonic() - start < 2.5  # the long tasks (5 s) were not waited for
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert not [p for p in left if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
