"""``convergence.sweep_batches``: short runs batched into larger tasks (issue 29).

What must hold: every task is in exactly one batch, batches hold one warm key and fill up to the
target cost (BATCH_SECONDS, or less for a small sweep: BATCHES_PER_WORKER batches per worker); a task of
unknown cost runs alone; a batched sweep gives the unbatched results bit for bit, under the same run
ids, with fewer submissions; a failing task inside a batch stores the tasks before it and names itself.
A sweep estimated at no more than IN_PLACE_SECONDS in all runs in the process that asked for it, with
the same results bit for bit; a larger one, or one of unknown cost, runs on the pool.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from test_sweep import _assert_identical, _requests

from convergence import SweepOptions, execute, sweep_batches
from convergence.run_pool import RunPool, session_pool
from convergence.store import RunStore
from convergence.sweep import SweepError, SweepTask, run_sweep
from convergence.sweep_runs import seed_cost, seed_task
from problems import build_problem


def _value(x: float) -> dict[str, np.ndarray]:
    return {"value": np.array(3.0 * x)}


def _pid(x: float) -> dict[str, np.ndarray]:
    return {"pid": np.array(os.getpid()), "value": np.array(3.0 * x)}


def _fails_at_5(x: float) -> dict[str, np.ndarray]:
    if x == 5.0:
        raise ValueError("task 5 always fails")
    return _value(x)


def _tasks(n: int, cost: float | None, key: str | None = "k", fn=_value, prefix: str = "t") -> list[SweepTask]:
    return [SweepTask(f"{prefix}{i}", fn, (float(i),), {"i": i, "p": prefix}, key, cost=cost) for i in range(n)]


def _sizes(batches) -> list[int]:
    return [len(batch) for batch in batches]


def test_batches_fill_up_to_the_target_cost_one_warm_key_each() -> None:
    tasks = _tasks(10, 0.1)  # 1.0 s in all, 1 worker: the target is min(0.25, 1.0 / 4) = 0.25 s, three tasks
    assert sweep_batches.target_seconds(tasks, 1) == pytest.approx(0.25)
    assert _sizes(sweep_batches.batches(tasks, 1)) == [3, 3, 3, 1]
    assert _sizes(sweep_batches.batches(tasks, 1, first_alone=True)) == [1, 3, 3, 3]
    assert [t.key for b in sweep_batches.batches(tasks, 1) for t in b] == [t.key for t in tasks]  # each once, in order
    small = _tasks(4, 0.01)  # 0.04 s on 2 workers: target 0.005 s, every task alone
    assert _sizes(sweep_batches.batches(small, 2)) == [1, 1, 1, 1]
    mixed = _tasks(3, 0.2, "a", prefix="a") + _tasks(2, None, "b", prefix="b") + _tasks(3, 0.2, "a", prefix="c")
    cut = sweep_batches.batches(mixed, 1)
    assert all(len({task.warm_key for task in batch}) == 1 for batch in cut)
    assert [[t.key for t in b] for b in cut] == [["a0", "a1"], ["a2", "c0"], ["c1", "c2"], ["b0"], ["b1"]]


def test_a_seed_task_costs_its_price_and_keeps_its_key() -> None:
    request = _requests()[0]
    problem = build_problem(request.config.problem)
    cost = seed_cost(request, problem, "numba")
    assert cost > 0
    with_cost = seed_task(request, 0, "numba", problem=problem, cost=cost)
    assert with_cost.cost == cost and with_cost.key == seed_task(request, 0, "numba", problem=problem).key


def _many_seeds() -> list:
    """The sweep test's requests with 32 seeds of the minibatch config (5 ms each): batches of 4 on 2 workers."""
    minibatch, exact = _requests()
    alg = minibatch.config.algorithm.with_seeds(tuple(range(32)))
    return [dataclasses.replace(minibatch, config=dataclasses.replace(minibatch.config, algorithm=alg)), exact]


def test_a_batched_sweep_equals_the_unbatched_one_bit_for_bit(monkeypatch: pytest.MonkeyPatch, on_the_pool: None) -> None:
    submitted: list[int] = []
    submit = RunPool.submit

    def counting(self, batch):
        submitted.append(len(batch))
        return submit(self, batch)

    monkeypatch.setattr(RunPool, "submit", counting)
    serial = execute(_many_seeds(), SweepOptions(jobs=1, progress=False))
    with session_pool(2, 0):
        batched = execute(_many_seeds(), SweepOptions(jobs=2, progress=False))
        batched_submissions = list(submitted)
        submitted.clear()
        monkeypatch.setattr(sweep_batches, "BATCH_SECONDS", 0.0)  # every task alone: the unbatched sweep
        unbatched = execute(_many_seeds(), SweepOptions(jobs=2, progress=False))
    _assert_identical(serial, batched)
    _assert_identical(serial, unbatched)
    assert sum(batched_submissions) == sum(submitted) == 33  # 32 + 1 seeds, every one once
    assert max(batched_submissions) > 1 and set(submitted) == {1}


@pytest.mark.parametrize("pooled", [True, False], ids=["session pool", "pool per sweep"])
def test_a_failing_task_in_a_batch_keeps_the_tasks_before_it_and_is_named(tmp_path, pooled: bool, on_the_pool: None) -> None:
    tasks = _tasks(8, 0.1, fn=_fails_at_5)
    with RunStore(tmp_path / "runs.sqlite") as store:
        options = SweepOptions(jobs=2, store=store, progress=False)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sweep_batches, "BATCHES_PER_WORKER", 0.001)  # one batch: the whole sweep in a worker
            patch.setattr(sweep_batches, "BATCH_SECONDS", 10.0)
            with pytest.raises(SweepError, match="sweep task t5 failed: ValueError: task 5 always fails"):
                if pooled:
                    with session_pool(2, 0):
                        run_sweep(tasks, options)
                else:
                    run_sweep(tasks, options)
        stored = set(store.keys())
    assert {"t1", "t2", "t3", "t4"} <= stored and not stored & {"t5", "t6", "t7"}


def test_a_sweep_below_the_in_place_cost_runs_here_and_a_larger_one_on_the_pool() -> None:
    assert sweep_batches.IN_PLACE_SECONDS == 1.0
    small = _tasks(4, 0.25, fn=_pid, prefix="s")  # 1.0 s in all: at the threshold, in place
    large = _tasks(5, 0.25, fn=_pid, prefix="l")  # 1.25 s: on the pool
    unknown = _tasks(2, None, fn=_pid, prefix="u")  # no estimate: on the pool
    assert sweep_batches.in_place(small, True) and not sweep_batches.in_place(large, True)
    assert not sweep_batches.in_place(unknown, True) and not sweep_batches.in_place(unknown[:1], True)
    assert sweep_batches.in_place(unknown[:1], False) and sweep_batches.in_place(_tasks(1, 5.0), False)
    options = SweepOptions(jobs=2, progress=False)
    with session_pool(2, 0):
        ran = {name: run_sweep(tasks, options) for name, tasks in (("small", small), ("large", large),
                                                                   ("unknown", unknown), ("one", unknown[:1]))}
    here = {name: {int(result["pid"]) == os.getpid() for result in results.values()} for name, results in ran.items()}
    assert here == {"small": {True}, "large": {False}, "unknown": {False}, "one": {False}}
    assert [float(r["value"]) for r in ran["small"].values()] == [0.0, 3.0, 6.0, 9.0]
    assert [float(r["value"]) for r in ran["large"].values()] == [0.0, 3.0, 6.0, 9.0, 12.0]


def test_runs_in_place_equal_the_serial_and_the_pooled_ones_bit_for_bit(tmp_path, monkeypatch) -> None:
    requests = _many_seeds()  # 0.18 s estimated in all: in place
    serial = execute(requests, SweepOptions(jobs=1, progress=False))
    with session_pool(2, 0), RunStore(tmp_path / "here.sqlite") as here, RunStore(tmp_path / "pool.sqlite") as pool:
        in_place = execute(requests, SweepOptions(jobs=2, store=here, progress=False))
        monkeypatch.setattr(sweep_batches, "IN_PLACE_SECONDS", 0.0)
        pooled = execute(requests, SweepOptions(jobs=2, store=pool, progress=False))
        executors = {name: {store.load(key).meta["executor"] for key in sorted(store.keys())} for name, store in
                     (("here", here), ("pool", pool))}
    assert executors == {"here": {"serial"}, "pool": {"process"}}
    _assert_identical(serial, in_place)
    _assert_identical(serial, pooled)
