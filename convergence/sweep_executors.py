"""Where a sweep's pending tasks run (``convergence.sweep``'s executors): in this process, on a local
process pool that forks after the driver has compiled each warm key once ("Compiling once" in
``convergence.sweep``; inside a verification, the one pool of ``convergence.run_pool``), or on the
workers of a Dask cluster; each finished task handed to ``finish``
as it completes, and a failure stopping the rest with a ``SweepError`` naming the task after every
other finished result has been handed over.

Ctrl-C. A terminal sends SIGINT to the whole process group: the driver, its pool's workers and their
own workers (``fedbound verify``'s claim workers and its run pool, ``convergence.run_pool``). Pool workers ignore
it (``_start_worker``), so only the driver decides: its KeyboardInterrupt cancels the work not
started and kills the workers and everything they started at once (``local_process_pool``), so no
worker takes up another task. A serial sweep stops after the run that is in progress (a compiled
kernel reacts to no signal until it returns). Every run handed over before the interrupt is stored,
so the sweep, run again, resumes. On Dask the tasks not yet finished are cancelled (``run_dask``).

Dask workers import fedbound's kernel modules once, when the cluster first meets a sweep (the
``WarmKernels`` worker plugin, ``convergence.dask_warm``), compile a kernel new to the cluster once (its first batch runs
alone, ``dask_warm.completed_warm_first``), and receive batches of short runs (``convergence.sweep_batches``).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as futures_as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
import psutil  # at import, not on Ctrl-C: the teardown starts at once (``_terminate_workers``)

from .algorithms.kernel_threads import kernel_paths, kernel_threads
from .config import ConfigError

__all__ = ["SCHEDULER_TIMEOUT_S", "Batch", "BatchOutcome", "Ran", "Result", "SweepTask", "Finish", "SweepError", "batch_items",
           "call_batch", "call_task", "run_serial", "warm_driver",
           "local_process_pool", "run_pool", "check_scheduler", "run_dask"]

_PARENT_POLL_S = 0.5  # how often a pool worker checks that the driver is alive
_KILL_WAIT_S = 1.0  # how long the driver waits for killed pool workers to end
_KILL_POLL_S = 0.01  # how often it checks whether they have ended
SCHEDULER_TIMEOUT_S = 5.0
"""How long reaching a Dask scheduler may take before the sweep gives up (connect and handshake)."""
_SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # dask.distributed's network transports

Result = dict[str, np.ndarray]


@dataclass(frozen=True)
class SweepTask:
    """One unit of a sweep: ``fn(*args)`` returns the result stored under ``key``.

    ``fn`` must be a top-level (picklable) pure function returning a mapping of names to NumPy
    arrays; ``config_json`` is what the key stands for, stored beside the result. ``warm_key``: tasks
    with equal keys run the same compiled code (module docstring, "Compiling once"); None: no hint.
    ``result_names``: the names of the arrays ``fn`` returns (None: not checked); a stored run of
    the key whose arrays have other names holds an older format of the result and is recomputed
    (``run_sweep``). ``check``: called on a stored result before it is used, raises ValueError
    saying why it cannot be this task's result (a shape or a value ``fn`` never returns); such a
    run is corrupt, as one that fails its checksums (None: not checked). ``cost``: its estimated CPU
    seconds (``convergence.budget``), by which short tasks are batched (``convergence.sweep_batches``;
    None: unknown, run alone).
    """

    key: str
    fn: Callable[..., Result]
    args: tuple
    config_json: dict[str, Any]
    warm_key: Hashable | None = None
    result_names: frozenset[str] | None = None
    check: Callable[[Mapping[str, np.ndarray]], None] | None = None
    cost: float | None = None


Batch = tuple[SweepTask, ...]
"""Tasks a worker runs one after the other as one unit (``convergence.sweep_batches``)."""


@dataclass(frozen=True)
class Ran:
    """How a task ran: its ``seconds`` (wall, in its worker), the linear-model kernel path its kernel calls
    took (``kernel_path``: "serial", "threaded", or None when none was counted, ``KernelPaths.path``) and the
    threads a kernel could use there (``kernel_threads``)."""

    seconds: float
    kernel_path: str | None = None
    kernel_threads: int = 1


Finish = Callable[[SweepTask, Result, Ran], None]  # records one finished task: its result and how it ran

_WARM_KEYS: set[Hashable] = set()
"""The warm keys of the tasks this process has run (module docstring, "Compiling once")."""


class SweepError(RuntimeError):
    """A task of a sweep failed; ``key`` names it and the task's own exception is the cause."""

    def __init__(self, key: str, error: BaseException) -> None:
        super().__init__(f"sweep task {key} failed: {type(error).__name__}: {error}")
        self.key = key


def call_task(fn: Callable[..., Result], args: tuple) -> tuple[Result, Ran]:
    """Worker body: ``fn(*args)`` checked to be a mapping of names to arrays, and how it ran (``Ran``)."""
    paths = kernel_paths()
    before = (paths.serial, paths.threaded)
    start = time.perf_counter()
    result = fn(*args)
    elapsed = time.perf_counter() - start
    if not isinstance(result, Mapping) or not all(
        isinstance(name, str) and isinstance(value, np.ndarray) for name, value in result.items()
    ):
        raise TypeError(f"{getattr(fn, '__name__', fn)!s} must return a mapping of names to numpy arrays")
    return dict(result), Ran(elapsed, paths.since(before).path, kernel_threads())


@dataclass(frozen=True)
class BatchOutcome:
    """What a batch's worker sends back: ``done``, the (result, ``Ran``) of its first tasks in order, and
    ``error``, the exception of the next task, which ended the batch (None: every task ran)."""

    done: tuple[tuple[Result, Ran], ...]
    error: Exception | None = None


def call_batch(items: Sequence[tuple[Callable[..., Result], tuple]]) -> BatchOutcome:
    """Worker body: ``call_task(fn, args)`` for each (fn, args) of ``items`` in order, up to the first failure."""
    done = []
    for fn, args in items:
        try:
            done.append(call_task(fn, args))
        except Exception as error:  # noqa: BLE001  (the task's failure, handed to its sweep by the driver)
            return BatchOutcome(tuple(done), error)
    return BatchOutcome(tuple(done))


def batch_items(batch: Sequence[SweepTask]) -> tuple[tuple[Callable[..., Result], tuple], ...]:
    """What ``call_batch`` takes for ``batch``: each task's function and arguments."""
    return tuple((task.fn, task.args) for task in batch)


def run_serial(pending: list[SweepTask], finish: Finish) -> None:
    """Run the tasks one after the other in this process (their warm keys are then warm here)."""
    for task in pending:
        try:
            result, ran = call_task(task.fn, task.args)
        except Exception as error:
            raise SweepError(task.key, error) from error
        if task.warm_key is not None:
            _WARM_KEYS.add(task.warm_key)
        finish(task, result, ran)


def warm_driver(pending: list[SweepTask], finish: Finish) -> list[SweepTask]:
    """Run here, before a pool forks, the first pending task of each warm key this process has not
    run yet (module docstring, "Compiling once"); return the other tasks, in their order."""
    first: dict[Hashable, SweepTask] = {}
    for task in pending:
        if task.warm_key is not None and task.warm_key not in _WARM_KEYS:
            first.setdefault(task.warm_key, task)
    run_serial(list(first.values()), finish)
    ran = {task.key for task in first.values()}
    return [task for task in pending if task.key not in ran]


@contextlib.contextmanager
def local_process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A local process pool of ``workers`` processes, for a ``with`` block, that forks where the
    platform can (the workers inherit this process's compiled kernels and loaded modules, module
    docstring) and whose workers ignore SIGINT and end by themselves if this process is killed
    (``_start_worker``). The sweeps' pool, and ``fedbound verify``'s pool of claims
    (``reports.claim_pool``).

    Leaving the block normally or with an Exception shuts the pool down: the tasks not started are
    cancelled and the running ones finish. Leaving it with a KeyboardInterrupt (Ctrl-C, module
    docstring) or another BaseException cancels the tasks not started and kills the workers and their
    descendants at once (``_terminate_workers``), and the interrupt goes on.
    """
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                               initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException as stop:
        if not isinstance(stop, Exception):
            _terminate_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(parent: int) -> None:
    """Pool-worker initializer: ignore SIGINT (the driver alone decides what Ctrl-C stops, module
    docstring; a worker's own pools inherit this), and end this worker, from a daemon thread, once
    its parent (the driver) is gone.

    A driver killed with SIGKILL cannot shut its pool down, and its workers, blocked reading a
    task queue whose other ends their siblings still hold, would otherwise live on. When the
    parent dies the worker is re-parented, so ``os.getppid()`` changes: checked every
    ``_PARENT_POLL_S`` seconds (a worker inside a compiled kernel, which holds the GIL, ends when
    the kernel returns).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="fedbound-parent-watch", daemon=True).start()


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes and every process they started, at once: the workers are
    suspended first (SIGSTOP: a claim worker writes no further run into the store while the tree is
    listed), the pool's tasks not started are cancelled, then every process of the tree is killed
    (SIGKILL) and awaited for at most ``_KILL_WAIT_S`` seconds; SIGINT is ignored meanwhile in the main
    thread, so that a second Ctrl-C cannot cut the teardown short.

    The workers are the pool's ``_processes`` (what Python 3.14's ``terminate_workers`` ends; it
    leaves their children, hence psutil for the tree). A worker killed while it writes the run store
    leaves it consistent: each run is one SQLite transaction.
    """
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        workers = []
        for pid in list(pool._processes or ()):  # ProcessPoolExecutor keeps its workers by pid (private)
            with contextlib.suppress(psutil.NoSuchProcess):
                worker = psutil.Process(pid)
                worker.suspend()
                workers.append(worker)
        tree = list(workers)
        for worker in workers:
            with contextlib.suppress(psutil.NoSuchProcess):
                tree += worker.children(recursive=True)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in tree:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        deadline = time.monotonic() + _KILL_WAIT_S
        while any(_running(process) for process in tree) and time.monotonic() < deadline:
            time.sleep(_KILL_POLL_S)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _running(process: psutil.Process) -> bool:
    """Whether the ``psutil.Process`` still runs: a zombie has ended (an orphaned worker's zombie stays
    until some init reaps it, which one in a container may never do, so psutil's ``wait_procs`` would
    wait out its whole timeout)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def run_pool(pending: list[Batch], jobs: int, finish: Finish) -> None:
    """Run the batches on a local process pool of ``jobs`` workers (no more than there are batches);
    the workers end by themselves if the driver is killed, and at once on Ctrl-C
    (``local_process_pool``)."""
    with local_process_pool(min(jobs, len(pending))) as pool:
        futures = {pool.submit(call_batch, batch_items(batch)): batch for batch in pending}
        stop = functools.partial(pool.shutdown, wait=True, cancel_futures=True)  # lets the running ones finish
        collect(futures, futures_as_completed(futures), stop, finish)


def check_scheduler(address: Any, name: str = "scheduler") -> str:
    """``address`` if it is a Dask scheduler address ([scheme://]host:port) that accepts a TCP
    connection within SCHEDULER_TIMEOUT_S; ConfigError naming ``name`` otherwise.

    Checked with a plain socket before any Dask client exists, so a bad address fails in seconds
    with one message (a Client that never connected reports errors again from its destructor).
    """
    if not isinstance(address, str):
        raise ConfigError(f"{name}: expected an address such as tcp://host:8786, got {address!r}")
    scheme, _, rest = address.rpartition("://")
    host, _, port_text = rest.rpartition(":")
    if scheme not in ("",) + _SCHEDULER_SCHEMES or not host.strip("[]") or not port_text.isdigit():
        raise ConfigError(f"{name}: expected [{'|'.join(_SCHEDULER_SCHEMES)}://]host:port, got {address!r}")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise ConfigError(f"{name}: port {port} is outside 1..65535 in {address!r}")
    try:
        socket.create_connection((host.strip("[]"), port), timeout=SCHEDULER_TIMEOUT_S).close()
    except OSError as exc:
        raise ConfigError(f"{name}: no Dask scheduler reachable at {address!r} ({exc})") from None
    return address


def run_dask(pending: list[SweepTask], scheduler: str | None, finish: Finish,
             cut: Callable[[list[SweepTask], int], list[Batch]]) -> None:
    """Run the tasks on the workers of the Dask cluster whose scheduler is at ``scheduler``, in the batches
    ``cut(pending, threads)`` makes for the cluster's worker threads now (``convergence.sweep_batches``), the
    first batch of each warm key new to the cluster alone (``convergence.dask_warm``)."""
    from dask.distributed import Client  # here, so that only Dask sweeps pay for the import

    address = check_scheduler(scheduler)
    try:
        client = Client(address, set_as_default=False, timeout=SCHEDULER_TIMEOUT_S)
    except OSError as exc:
        raise ConfigError(f"scheduler: cannot connect to the Dask scheduler at {scheduler!r} ({exc})") from None
    with client:
        from .dask_warm import WarmKernels, completed_warm_first

        client.register_plugin(WarmKernels())  # once per worker: fedbound imported before its first task
        threads = max(1, sum(client.nthreads().values()))
        futures: dict[Any, Batch] = {}

        def submit(batch: Batch) -> Any:
            return client.submit(call_batch, batch_items(batch), pure=False)

        try:  # the first batch of a warm key new to the cluster alone (``dask_warm``, "Compiling once")
            completed = completed_warm_first(client, address, cut(pending, threads), submit, futures)
            collect(futures, completed, lambda: client.cancel(running(futures)), finish)
        finally:
            client.cancel(running(futures))


def running(futures: Iterable[Any]) -> list[Any]:
    """The futures not yet done (queued or running)."""
    return [future for future in futures if not future.done()]


def collect(
    futures: Mapping[Any, Batch],
    completed: Iterator[Any],
    stop: Callable[[], object],
    finish: Finish,
) -> None:
    """Finish the tasks of each future's batch (a ``BatchOutcome``) as it completes; on a failure (of a
    task, or of the future itself: then its batch's first task is named), stop the rest and raise
    SweepError.

    Before raising, every other task that had already finished successfully is finished too, so
    no computed result is lost.
    """
    finished: set[str] = set()
    for future in completed:
        batch = futures[future]
        try:
            outcome = future.result()
        except Exception as error:
            failed, failure = batch[0], error
            break
        _finish_batch(batch, outcome, finish, finished)
        if outcome.error is not None:
            failed, failure = batch[len(outcome.done)], outcome.error
            break
    else:
        return
    stop()
    for future, batch in futures.items():
        if not future.done() or future.cancelled():
            continue
        try:
            outcome = future.result()
        except Exception:
            continue
        _finish_batch(batch, outcome, finish, finished)
    raise SweepError(failed.key, failure) from failure


def _finish_batch(batch: Batch, outcome: BatchOutcome, finish: Finish, finished: set[str]) -> None:
    """Finish the tasks of ``batch`` that ``outcome`` holds and that are not in ``finished`` (then added)."""
    for task, (result, ran) in zip(batch, outcome.done):
        if task.key not in finished:
            finish(task, result, ran)
            finished.add(task.key)
