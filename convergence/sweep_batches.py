"""Short runs batched into larger tasks: what a pool or a Dask worker receives is a batch of a sweep's
tasks, run one after the other, so a sweep of many short runs pays the per-task cost (a round trip
to the worker, pickling the arguments, a Dask scheduler's bookkeeping) once per batch, not per run.

A batch holds tasks of one warm key (the same compiled code, ``SweepTask.warm_key``), in the sweep's
order, until their estimated cost (``SweepTask.cost``, CPU seconds from ``convergence.budget``'s price
of the run) reaches ``target_seconds``: ``BATCH_SECONDS``, or less when the sweep is small, so that it
still makes ``BATCHES_PER_WORKER`` batches per worker to share out. A task whose cost is unknown runs
alone. With ``first_alone`` (the verification's pool, ``convergence.run_pool``) the first task of each
warm key is a batch of its own, so the pool can run it alone and compile its kernel once.

Batching changes neither results nor run ids: each task is still ``fn(*args)``, a pure function, and
is stored under its own key with its own compute time as soon as its batch comes back. A batch pickles
its tasks' arguments in one go, so the objects they share (a run config's problem spec and w*) are
pickled once per batch. A failing task ends its batch: the tasks before it are stored, and the sweep
stops with a ``SweepError`` naming it (``sweep_executors.call_batch`` and ``collect``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from .sweep_executors import SweepTask

__all__ = ["BATCHES_PER_WORKER", "BATCH_SECONDS", "IN_PLACE_SECONDS", "batches", "in_place", "target_seconds"]

BATCH_SECONDS = 0.25
"""The estimated CPU seconds a batch is filled up to: the ~2-5 ms a task costs on warm workers (tiny FedAvg
runs on the verification's pool) is then about 1-2% of it, and a Ctrl-C loses at most this much work per
worker."""
BATCHES_PER_WORKER = 4
"""Batches per worker a sweep is cut into at least (when it has that many tasks), so that the workers
finish at about the same time."""


IN_PLACE_SECONDS = 1.0
"""A "process" sweep whose pending tasks are estimated at no more CPU seconds than this, in all, runs in the
process that asked for it (``in_place``). A pool's workers each load a kernel new to them from Numba's cache
(~0.3 s of CPU for a FedAvg kernel) before they run it, and a sweep this small would save less than that by
running on two cores; the claim worker that runs it loads the kernel at most once. Measured in alternated
pairs on ``fedbound verify`` (docs/architecture.md, "One run pool")."""


def in_place(pending: Sequence[SweepTask], pool_open: bool) -> bool:
    """Whether a "process" sweep runs its ``pending`` tasks in this process rather than on a pool: their
    estimated cost is known and at most ``IN_PLACE_SECONDS`` in all, or, with no verification pool open
    (``pool_open``), there is a single task (a pool forked for one worker adds only its start and the
    kernels' loading)."""
    if len(pending) == 1 and not pool_open:
        return True
    return all(task.cost is not None for task in pending) and sum(task.cost or 0.0 for task in pending) <= IN_PLACE_SECONDS


def target_seconds(pending: Sequence[SweepTask], workers: int) -> float:
    """The estimated cost a batch is filled up to (module docstring): ``BATCH_SECONDS``, or the sweep's
    known cost over ``BATCHES_PER_WORKER * workers`` when that is less."""
    known = sum(task.cost for task in pending if task.cost is not None)
    return min(BATCH_SECONDS, known / (BATCHES_PER_WORKER * workers))


def batches(pending: Sequence[SweepTask], workers: int, *, first_alone: bool = False) -> list[tuple[SweepTask, ...]]:
    """``pending`` cut into batches (module docstring), every task in exactly one, in the sweep's order
    within each warm key."""
    target = target_seconds(pending, workers)
    by_key: dict[Hashable | None, list[SweepTask]] = {}
    for task in pending:
        by_key.setdefault(task.warm_key, []).append(task)
    out: list[tuple[SweepTask, ...]] = []
    for key, tasks in by_key.items():
        if first_alone and key is not None:
            out.append((tasks[0],))
            tasks = tasks[1:]
        batch: list[SweepTask] = []
        cost = 0.0
        for task in tasks:
            if task.cost is None:
                out.append((task,))
                continue
            batch.append(task)
            cost += task.cost
            if cost >= target:
                out.append(tuple(batch))
                batch, cost = [], 0.0
        if batch:
            out.append(tuple(batch))
    return out
