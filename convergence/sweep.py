"""Sweeps: many pure tasks run on an executor, each result stored the moment it finishes.

A task is a key, a picklable top-level function, its arguments and the JSON config it stands
for. The function must be pure (its result depends on its arguments only), so a result is the
same whichever executor runs it, in whatever order tasks complete; the sweep adds no order
dependence of its own (results come back keyed, in task order).

Executors (``convergence.sweep_executors``): "serial" (this process), "process" (a local ``ProcessPoolExecutor``) and "dask" (the
workers of a ``dask.distributed`` cluster, reached with ``Client(scheduler_address)``). The pool
and Dask share one code path: submit every task, take results ``as_completed``. With a run store,
the driver process writes each finished task in its own transaction as it arrives, so a sweep
that is interrupted (Ctrl-C, ``kill -9``, a lost node) resumes with no finished run lost or
repeated, and a repeated sweep reads everything back instead of computing it.

Compiling once. A task may carry a ``warm_key``: tasks with equal keys run the same compiled code
(for a run, ``sweep_runs.seed_task``: its algorithm, engine, kind of problem and float type). Before a local pool starts, the driver runs one pending task of each key that this
process has not run yet, and only then forks the workers (the pool always forks, where the platform
can), so they inherit the Numba dispatchers the driver compiled, or loaded from the cache, instead
of compiling (cold cache) or loading (warm cache) each kernel once per worker and per sweep. A
key is a hint for speed only: a task whose kernels the driver did not compile is compiled by its
worker, and a task computes the same numbers in the driver as in a worker (it is pure, BLAS on one
thread). Dask workers are other processes on other machines and get no such start; there the first
batch of each key new to the cluster runs alone, so a kernel missing from the cache is compiled once
(``convergence.dask_warm``).

One pool for a verification. Inside ``run_pool.session_pool`` (``fedbound verify`` with jobs > 1 opens
it), every "process" sweep, in this process or in a claim worker forked from it, runs its tasks on that
one pool instead of forking its own, and the first task of each warm key new to the pool runs alone
there instead of in the driver (``convergence.run_pool``).

Small sweeps in place. A "process" sweep estimated at no more than ``sweep_batches.IN_PLACE_SECONDS`` of
CPU in all runs in the process that asked for it (a claim worker, or the driver), on the pool or not:
the workers would spend longer loading its kernels than it saves (``sweep_batches.in_place``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

import numpy as np

from .algorithms.kernel_threads import check_threads, using_kernel_threads
from .budget import max_cpu_hours
from .run_pool import active_pool, run_on
from .sweep_batches import batches, in_place
from .store import CorruptRunError, CorruptRunWarning, RunStore, StoredRun, StoreError
from .sweep_executors import (
    SCHEDULER_TIMEOUT_S, Ran, Result, SweepError, SweepTask, check_scheduler, local_process_pool, run_dask, run_pool, run_serial,
    warm_driver,
)

__all__ = ["EXECUTORS", "SCHEDULER_TIMEOUT_S", "MissingRunError", "OutdatedRunError", "OutdatedRunWarning", "SweepError",
           "SweepMonitor", "SweepResults", "SweepOptions", "SweepTask", "check_scheduler", "local_process_pool",
           "run_sweep"]

EXECUTORS = ("serial", "process", "dask")

logger = logging.getLogger(__name__)


class SweepMonitor(Protocol):
    """Watches sweeps: told when one starts (the JSON configs of its distinct tasks and how many
    of them the store already holds), after each computed run, and when it ends (``total``: its distinct
    tasks, or, when it failed or was interrupted, the runs it holds: cached or finished). ``fedbound
    verify`` uses one to print progress, count reused and computed runs, and list what each claim ran."""

    def sweep_started(self, description: str, configs: Sequence[Mapping[str, Any]], cached: int) -> None: ...

    def run_finished(self) -> None: ...

    def sweep_finished(self, description: str, total: int, cached: int, seconds: float) -> None: ...


class _ProgressBar:
    """The default monitor: a transient tqdm bar per sweep on stderr."""

    def __init__(self) -> None:
        self._bar: Any = None

    def sweep_started(self, description: str, configs: Sequence[Mapping[str, Any]], cached: int) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=len(configs), initial=cached, desc=description, unit="run", leave=False)
        if cached:
            self._bar.set_postfix(cached=cached)

    def run_finished(self) -> None:
        self._bar.update()

    def sweep_finished(self, description: str, total: int, cached: int, seconds: float) -> None:
        self._bar.close()


class MissingRunError(StoreError):
    """A sweep over a read-only store needs runs the store does not hold: ``key`` names the first,
    ``missing`` counts them, ``path`` is the store. Nothing is computed."""

    def __init__(self, path: os.PathLike[str], key: str, missing: int) -> None:
        super().__init__(f"run {key} is not in the run store {str(path)!r} ({missing} run(s) of this sweep are "
                         "missing; a read-only store is never written)")
        self.path = path
        self.key = key
        self.missing = missing


class OutdatedRunError(StoreError):
    """A read-only store holds a run of this sweep in an older format of its result (arrays named
    otherwise than the task's ``result_names``); ``key`` names the first, ``path`` is the store."""

    def __init__(self, path: os.PathLike[str], key: str, outdated: int, reason: str) -> None:
        super().__init__(f"run store {str(path)!r}: run {key} is stored in an older format ({reason}; {outdated} "
                         "run(s) of this sweep are); a read-only store is never written: recompute them into a "
                         "writable store (fedbound verify --store)")
        self.path = path
        self.key = key
        self.outdated = outdated


class OutdatedRunWarning(UserWarning):
    """Runs stored in an older format of their result are being recomputed (the message names the
    store, how many and the first run with its array names)."""


class SweepResults(dict[str, Result]):
    """Results by task key, in task order, with the compute time of each and which came from the store.

    ``seconds[key]`` is the time the task's function ran (for a cached task, when it was
    computed); ``cached`` holds the keys read from the store instead of computed.
    """

    def __init__(self, results: Iterable[tuple[str, Result]], seconds: dict[str, float], cached: frozenset[str]):
        super().__init__(results)
        self.seconds = seconds
        self.cached = cached


def _resolve_executor(executor: str | None, scheduler: str | None, jobs: int) -> str:
    """The executor to use; a scheduler address goes with "dask" and only with it."""
    if executor is None:
        return "dask" if scheduler is not None else ("serial" if jobs == 1 else "process")
    if executor not in EXECUTORS:
        raise ValueError(f"executor: unknown executor {executor!r}; choose one of {EXECUTORS}")
    if (executor == "dask") != (scheduler is not None):
        raise ValueError(
            "scheduler: the 'dask' executor needs a scheduler address" if executor == "dask"
            else f"scheduler: a scheduler address needs the 'dask' executor, not {executor!r}"
        )
    return executor


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs, the same for every sweep of a verification.

    executor: "serial" (this process), "process" (a local pool of ``jobs`` workers) or "dask"
    (the workers of the ``dask.distributed`` cluster whose scheduler is at ``scheduler``); None
    picks "dask" with a scheduler, else "serial" for jobs = 1 and "process" for more ("process" runs a
    small sweep in this process, module docstring: one task to compute without a verification's pool,
    or an estimated cost of at most ``sweep_batches.IN_PLACE_SECONDS``). store: each
    finished task is written to it at once, its compute time in the run's metadata; with
    ``use_cache``, tasks already stored are read back, not recomputed (unless the stored run fails
    its checksums or was stored for another config: then a CorruptRunWarning names the run and the
    store and the task is recomputed and stored again; or when it was stored in an older format of
    its result, other array names than the task's ``result_names``: one OutdatedRunWarning says how
    many and they are recomputed, or, read-only, OutdatedRunError). A store opened read-only
    (``RunStore(..., readonly=True)``) is never written: a task it does not hold (or holds corrupt)
    raises MissingRunError (CorruptRunError) before anything runs. progress: True for a transient
    progress bar, False for none, or a ``SweepMonitor`` to report to. threads: how many threads
    each kernel call may use (``algorithms.kernel_threads``: the clients of a round in parallel,
    results bit-identical for any count, in runs whose rounds reach its ``THREADED_MIN_WORK``);
    more than 1 only with the "serial" executor, since jobs processes times threads would
    oversubscribe the cores and a forked worker cannot use its parent's OpenMP threads.
    max_cpu_hours: the limit a sweep's estimated cost must stay under (``convergence.budget``;
    None: ``$FEDBOUND_MAX_CPU_HOURS`` or the default). Bad values raise
    ValueError naming the field.
    """

    jobs: int = 1
    executor: str | None = None
    scheduler: str | None = None
    store: RunStore | None = None
    use_cache: bool = True
    progress: bool | SweepMonitor = True
    threads: int = 1
    max_cpu_hours: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1:
            raise ValueError(f"jobs: must be an integer >= 1, got {self.jobs!r}")
        object.__setattr__(self, "executor", _resolve_executor(self.executor, self.scheduler, self.jobs))
        check_threads(self.threads)
        if self.threads > 1 and self.executor != "serial":
            raise ValueError(f"threads: {self.threads} threads per run need the serial executor (jobs = 1), not "
                             f"{self.executor!r}: its workers run kernels single-threaded (jobs x threads would "
                             "oversubscribe the cores, and forked workers cannot use OpenMP threads)")
        if self.store is not None and not isinstance(self.store, RunStore):
            raise ValueError(f"store: expected a RunStore or None, got {type(self.store).__name__}")
        if not isinstance(self.use_cache, bool):
            raise ValueError(f"use_cache: expected True or False, got {self.use_cache!r}")
        if self.max_cpu_hours is not None:
            max_cpu_hours(self.max_cpu_hours)


def run_sweep(tasks: Sequence[SweepTask], options: SweepOptions = SweepOptions(), *,
              description: str = "runs") -> SweepResults:
    """Run every task once, as ``options`` say (``SweepOptions``), and return the results by key.

    Tasks sharing a key run once (their configs must agree). A failing task raises SweepError
    naming its key, after the tasks that finished have been stored and the ones not started
    cancelled.
    """
    unique = _unique(tasks)
    executor, store, use_cache = options.executor, options.store, options.use_cache
    results: dict[str, Result] = {}
    seconds: dict[str, float] = {}
    if store is not None and use_cache:
        outdated: list[tuple[SweepTask, StoredRun]] = []
        for task in unique:
            stored = _stored_run(store, task)
            if stored is not None and task.result_names is not None and set(stored.result) != task.result_names:
                outdated.append((task, stored))
            elif stored is not None:
                results[task.key] = stored.result
                seconds[task.key] = float(stored.meta.get("seconds", 0.0))
        if outdated:
            _outdated(store, outdated)
    cached = frozenset(results)
    pending = [task for task in unique if task.key not in results]
    if pending and store is not None and store.readonly:
        raise MissingRunError(store.path, pending[0].key, len(pending))
    if cached:
        logger.info("%s: %d of %d runs read from %s", description, len(cached), len(unique), store)
    pool = active_pool() if executor == "process" else None
    if executor == "process" and in_place(pending, pool is not None):
        executor, pool = "serial", None  # a small sweep: a pool's start and its kernels' loading cost more
    monitor = _monitor(options.progress)
    start = time.perf_counter()
    if monitor is not None:
        monitor.sweep_started(description, [task.config_json for task in unique], len(cached))

    def finish(task: SweepTask, result: Result, ran: Ran) -> None:
        results[task.key], seconds[task.key] = result, ran.seconds
        if store is not None:
            finished = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
            meta = {"seconds": ran.seconds, "executor": executor, "finished": finished,
                    "kernel_path": ran.kernel_path, "kernel_threads": ran.kernel_threads}
            store.put(task.key, task.config_json, result, meta)
        if monitor is not None:
            monitor.run_finished()

    completed = False
    try:
        if executor == "serial":
            with using_kernel_threads(options.threads):
                run_serial(pending, finish)
        elif pool is not None and pending:
            run_on(pool, batches(pending, pool.workers, first_alone=True), finish)
        elif executor == "process" and pending:
            rest = warm_driver(pending, finish)
            if len(rest) > 1:
                run_pool(batches(rest, options.jobs), options.jobs, finish)
            else:
                run_serial(rest, finish)
        elif executor == "dask" and pending:
            run_dask(pending, options.scheduler, finish, functools.partial(batches, first_alone=True))
        completed = True
    finally:
        if monitor is not None:  # a failed or interrupted sweep counts the runs it holds, not those it was given
            monitor.sweep_finished(description, len(unique) if completed else len(results), len(cached),
                                   time.perf_counter() - start)
    return SweepResults(((task.key, results[task.key]) for task in unique), seconds, cached)


def _monitor(progress: bool | SweepMonitor) -> SweepMonitor | None:
    """The monitor ``progress`` asks for: the default bar, none, or the one given."""
    if isinstance(progress, bool):
        return _ProgressBar() if progress else None
    return progress


def _stored_run(store: RunStore, task: SweepTask) -> StoredRun | None:
    """The task's run from the store, or None when it must be computed: not stored, or stored but
    failing its checksums or the task's ``check``, or stored for another config (all warned about,
    naming the run and the store, with CorruptRunWarning; the recomputed run then replaces it)."""
    try:
        stored = store.load(task.key)
        if stored is not None and task.check is not None and task.result_names in (None, set(stored.result)):
            _checked(store, task, stored)
    except CorruptRunError as error:
        if store.readonly:
            raise
        warnings.warn(f"{error}; recomputing it", CorruptRunWarning, stacklevel=3)
        return None
    if stored is not None and stored.config != _as_json(task.config_json):
        warnings.warn(f"run store {str(store.path)!r}: run {task.key} is corrupt: its stored config is not the "
                      "config of this run; recomputing it", CorruptRunWarning, stacklevel=3)
        return None
    return stored


def _checked(store: RunStore, task: SweepTask, stored: StoredRun) -> None:
    """Run the task's ``check`` on a stored result; CorruptRunError naming the run and the store when it fails."""
    assert task.check is not None
    try:
        task.check(stored.result)
    except ValueError as exc:
        raise CorruptRunError(store.path, task.key, f"its result cannot be this run's ({exc})") from None


def _outdated(store: RunStore, outdated: list[tuple[SweepTask, StoredRun]]) -> None:
    """Say that the ``outdated`` runs (stored with other array names than their tasks return) are
    recomputed, in one OutdatedRunWarning; OutdatedRunError on a read-only store."""
    task, stored = outdated[0]
    assert task.result_names is not None  # only such tasks are checked
    reason = (f"arrays {sorted(set(stored.result) - task.result_names)} are not in this fedbound's result, "
              f"{sorted(task.result_names - set(stored.result))} missing")
    if store.readonly:
        raise OutdatedRunError(store.path, task.key, len(outdated), reason)
    warnings.warn(f"run store {str(store.path)!r}: {len(outdated)} run(s) are stored in an older format of their "
                  f"result (run {task.key}: {reason}); recomputing them, and they replace the stored ones",
                  OutdatedRunWarning, stacklevel=3)


def _as_json(config: Mapping[str, Any]) -> Any:
    """A config as the store gives it back (tuples become lists, keys strings)."""
    return json.loads(json.dumps(config))


def _unique(tasks: Sequence[SweepTask]) -> list[SweepTask]:
    """The tasks with repeated keys dropped (first kept); a key with two configs is an error."""
    first: dict[str, SweepTask] = {}
    for task in tasks:
        if not isinstance(task, SweepTask):
            raise TypeError(f"tasks: expected SweepTask items, got {type(task).__name__}")
        seen = first.setdefault(task.key, task)
        if seen.config_json != task.config_json:
            raise ValueError(f"tasks: key {task.key} is given to two different configs")
    return list(first.values())


