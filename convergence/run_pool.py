"""One local process pool for a whole verification: every sweep of every claim runs its tasks on it.

A pool forked per sweep (``sweep_executors.run_pool``) pays its start every time: forking the workers,
and a tiny task costs ~36 ms in fresh workers against ~2 ms in warm ones (issue 29). ``fedbound
verify`` instead opens one ``RunPool`` of ``jobs`` workers (``session_pool``) before anything runs,
and every sweep with the "process" executor that is not small enough to run in place
(``sweep_batches.in_place``) submits its tasks to it (in batches of short runs,
``convergence.sweep_batches``; the first task of a warm key alone), whichever process evaluates its
claim:

* in the process that opened it, directly (``RunPool.submit``);
* in a claim worker (``reports.claim_pool``: processes forked after the pool opened), through the
  opener: the worker sends each task down one queue, a thread of the opener (``_Broker``) submits
  it to the pool, and the run worker puts the outcome straight on the claim worker's own reply
  queue (``_call_and_reply``: the arrays cross one pipe, not two), where it completes a
  ``concurrent.futures.Future`` (``_PoolClient``). The claim worker still writes each run to
  the store as it arrives, so a verification interrupted at any point resumes as before.

Compiling once. The pool's workers are forked when it opens, before any kernel is compiled here, so
each loads its kernels from Numba's cache (or compiles them) once for the verification, not once per
sweep. So that a kernel not yet in the cache is compiled once, not in every worker at the same time,
the first task of each warm key (``SweepTask.warm_key``) the pool has not run yet runs alone: the
tasks submitted with that key meanwhile are held back, and released when it finishes (its worker has
then written the kernel to the cache, where the others load it). Tasks of other keys go on.

Ctrl-C. The workers ignore SIGINT (``local_process_pool``); a KeyboardInterrupt that leaves
``session_pool`` kills them and everything they started at once, as a per-sweep pool does. A failing
task cancels the tasks of its own sweep that have not started (``RunPool.cancel``), never another
sweep's, and the pool stays open.

Results are the tasks' own (each task is a pure function of its arguments), so they are bit-identical
to a serial sweep's, and the run keys are unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import multiprocessing
import os
import pickle
import queue
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, as_completed, wait
from dataclasses import dataclass
from typing import Any

from .sweep_executors import (
    Batch,
    BatchOutcome,
    Finish,
    batch_items,
    call_batch,
    collect,
    local_process_pool,
)

__all__ = ["RunPool", "active_pool", "run_on", "session_pool"]

_POLL_S = 0.1  # how often the broker and the reply readers check whether they should stop


@dataclass(frozen=True)
class _Request:
    """A task sent by a claim worker to the pool's opener: ``task``, its function and arguments pickled once
    in the claim worker and unpickled in the run worker only (the opener passes the bytes on), with its warm
    key; or (``cancel``) the cancellation of request ``ident`` of worker ``slot``."""

    slot: int
    ident: int
    task: bytes = b""
    warm_key: Hashable | None = None
    cancel: bool = False


class RunPool:
    """A local pool of ``workers`` forked processes, open for a whole verification (module docstring):
    ``submit`` a batch of tasks, get a Future of its ``BatchOutcome``; the first task of each new warm
    key runs alone (module docstring, "Compiling once"). ``starts`` counts the pools opened in this
    process (the hook tests count them with)."""

    starts = 0

    def __init__(self, executor: Any, workers: int) -> None:
        self.workers = workers
        self._executor = executor
        self._owner = os.getpid()
        self._lock = threading.RLock()  # a cancel under it runs the done-callback, which takes it again
        self._warm: set[Hashable] = set()  # keys whose first task has finished
        self._held: dict[Hashable, list[tuple[Future, Callable[..., Any], tuple]]] = {}  # key -> waiting tasks
        self._inner: dict[Future, Future] = {}  # our future -> the executor's, once submitted to it

    def submit(self, batch: Batch) -> Future:
        """Run ``batch`` on the pool (``call_batch``); the returned Future holds its ``BatchOutcome``."""
        return self._submit(call_batch, (batch_items(batch),), batch[0].warm_key)

    def _submit(self, body: Callable[..., Any], args: tuple, warm_key: Hashable | None) -> Future:
        """Run ``body(*args)`` on the pool, the first task of a new warm key alone (module docstring)."""
        outer: Future = Future()
        with self._lock:
            if warm_key is not None and warm_key not in self._warm:
                if warm_key in self._held:
                    self._held[warm_key].append((outer, body, args))
                    return outer
                self._held[warm_key] = []
                self._start(outer, body, args, warm_key)
                return outer
            self._start(outer, body, args, None)
        return outer

    def cancel(self, futures: Sequence[Future]) -> None:
        """Cancel those of ``futures`` that have not started (held back or queued); the running ones finish."""
        with self._lock:
            for future in futures:
                inner = self._inner.get(future)
                if inner is None:
                    for held in self._held.values():
                        held[:] = [entry for entry in held if entry[0] is not future]
                    _cancelled(future)
                else:
                    inner.cancel()  # its callback cancels ``future`` when it had not started

    def _start(self, outer: Future, body: Callable[..., Any], args: tuple, first_of: Hashable | None) -> None:
        """Submit a task to the executor (the lock held), completing ``outer`` with its outcome; when it is the
        first of warm key ``first_of``, its end releases the tasks held back for that key. A pool that has
        ended (shut down, or broken by a worker killed on Ctrl-C) fails ``outer`` with its error."""
        try:
            inner = self._executor.submit(body, *args)
        except RuntimeError as error:  # BrokenProcessPool is one; so is a submission after shutdown
            outer.set_exception(error)
            return
        self._inner[outer] = inner

        def done(inner: Future) -> None:
            with self._lock:  # so that ``cancel`` sees it either not started or ended, never in between
                self._inner.pop(outer, None)
                if first_of is not None:
                    self._warm.add(first_of)
                    for held_outer, held_body, held_args in self._held.pop(first_of, []):
                        self._start(held_outer, held_body, held_args, None)
                _copy(inner, outer)

        inner.add_done_callback(done)


def _copy(inner: Future, outer: Future) -> None:
    """Complete ``outer`` as ``inner`` ended (its result, its exception, or cancelled)."""
    if inner.cancelled():
        _cancelled(outer)
    elif inner.exception() is not None:
        outer.set_exception(inner.exception())
    else:
        outer.set_result(inner.result())


def _cancelled(future: Future) -> None:
    """Cancel a future nobody runs, and tell its waiters (``as_completed``, ``wait``) that it ended."""
    if future.cancel():
        future.set_running_or_notify_cancel()


@dataclass(frozen=True)
class _Queues:
    """How claim workers reach the pool (module docstring): their ``requests``, one reply queue per claim
    worker (``replies``, by slot) and the slots not taken yet (``free_slots``). Made before the run workers
    fork, which put the outcomes on the reply queues themselves (``_call_and_reply``)."""

    requests: Any
    replies: tuple[Any, ...]
    free_slots: Any

    @classmethod
    def make(cls, slots: int) -> _Queues:
        context = multiprocessing.get_context("fork")
        queues = cls(context.Queue(), tuple(context.Queue() for _ in range(slots)), context.Queue())
        for slot in range(slots):
            queues.free_slots.put(slot)
        return queues


_QUEUES: _Queues | None = None
"""The open session's queues, inherited by the run workers and the claim workers forked after them."""


def _call_and_reply(slot: int, ident: int, task: bytes) -> None:
    """Run-worker body of a claim worker's batch (``_Request.task``, its tasks' functions and arguments
    pickled): ``call_batch``, its ``BatchOutcome`` put on the reply queue of ``slot`` as ("ok", outcome), or
    ("error", exception) when the batch could not be unpickled; an exception that cannot be pickled goes as
    a RuntimeError with its type and message (the claim worker would otherwise wait for it forever)."""
    assert _QUEUES is not None, "run_pool: a run worker started without the session's queues"
    try:
        outcome: tuple[str, Any] = ("ok", call_batch(pickle.loads(task)))
    except Exception as error:  # noqa: BLE001  (handed to its sweep)
        outcome = ("error", error)
    if outcome[0] == "ok" and outcome[1].error is not None and not _picklable(outcome[1].error):
        outcome = ("ok", BatchOutcome(outcome[1].done, _plain(outcome[1].error)))
    elif outcome[0] == "error" and not _picklable(outcome[1]):
        outcome = ("error", _plain(outcome[1]))
    _QUEUES.replies[slot].put((ident, outcome))


def _picklable(error: Exception) -> bool:
    try:
        pickle.dumps(error)
    except Exception:  # noqa: BLE001  (any failure to pickle)
        return False
    return True


def _plain(error: Exception) -> RuntimeError:
    """An exception that pickles, with ``error``'s type and message."""
    return RuntimeError(f"{type(error).__name__}: {error}")


class _Broker:
    """The opener's side of the claim workers' access (module docstring): a thread that takes their
    requests, submits them to ``pool`` (the run worker replies itself, ``_call_and_reply``) and replies
    for a task that was cancelled or whose worker died."""

    def __init__(self, pool: RunPool, queues: _Queues) -> None:
        self.requests = queues.requests
        self.replies = queues.replies
        self.free_slots = queues.free_slots
        self._pool = pool
        self._futures: dict[tuple[int, int], Future] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fedbound-run-pool-broker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                request: _Request = self.requests.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            key = (request.slot, request.ident)
            if request.cancel:
                future = self._futures.get(key)
                if future is not None:
                    self._pool.cancel([future])
                continue
            future = self._pool._submit(_call_and_reply, (request.slot, request.ident, request.task), request.warm_key)
            self._futures[key] = future
            future.add_done_callback(functools.partial(self.reply, key))

    def reply(self, key: tuple[int, int], future: Future) -> None:
        """Tell the claim worker of request ``key`` that it was cancelled, ("cancelled", None), or that it
        failed outside its task (a run worker died), ("error", exception); the run worker sent the rest."""
        self._futures.pop(key, None)
        slot, ident = key
        if future.cancelled():
            self.replies[slot].put((ident, ("cancelled", None)))
        elif future.exception() is not None:
            self.replies[slot].put((ident, ("error", future.exception())))


class _PoolClient:
    """A claim worker's handle on its parent's pool (module docstring): the same ``submit`` and ``cancel``
    as ``RunPool``, through the broker's queues; takes a reply slot of its own on first use."""

    def __init__(self, broker: _Broker, workers: int) -> None:
        self.workers = workers
        self._requests = broker.requests
        self._slot = broker.free_slots.get()
        self._replies = broker.replies[self._slot]
        self._pending: dict[int, Future] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        threading.Thread(target=self._receive, name="fedbound-run-pool-replies", daemon=True).start()

    def submit(self, batch: Batch) -> Future:
        future: Future = Future()
        with self._lock:
            ident = next(self._ids)
            self._pending[ident] = future
        self._requests.put(_Request(self._slot, ident, pickle.dumps(batch_items(batch)), batch[0].warm_key))
        return future

    def cancel(self, futures: Sequence[Future]) -> None:
        with self._lock:
            idents = [ident for ident, future in self._pending.items() if future in futures]
        for ident in idents:
            self._requests.put(_Request(self._slot, ident, cancel=True))

    def _receive(self) -> None:
        while True:
            ident, (kind, value) = self._replies.get()
            with self._lock:
                future = self._pending.pop(ident)
            if kind == "ok":
                future.set_result(value)
            elif kind == "error":
                future.set_exception(value)
            else:
                _cancelled(future)


_SESSION: tuple[RunPool, _Broker] | None = None
"""The pool ``session_pool`` opened, with its broker (inherited by the claim workers forked after it)."""
_CLIENT: _PoolClient | None = None
"""This claim worker's handle on the session pool, made on first use."""


@contextlib.contextmanager
def session_pool(workers: int, client_slots: int) -> Iterator[RunPool]:
    """Open the verification's pool of ``workers`` processes (module docstring) for a ``with`` block, with
    ``client_slots`` processes forked later (claim workers) able to use it. Every "process" sweep in the
    block, here or in those processes, runs on it (``active_pool``). Leaving the block shuts it down as
    ``local_process_pool`` does (at once, killing the workers, on Ctrl-C)."""
    global _SESSION, _QUEUES
    if _SESSION is not None:
        raise RuntimeError("session_pool: a verification pool is already open in this process")
    _QUEUES = _Queues.make(client_slots)
    try:
        with local_process_pool(workers) as executor:
            executor.submit(int).result()  # forks every worker now, before threads or claim workers exist
            RunPool.starts += 1
            pool = RunPool(executor, workers)
            broker = _Broker(pool, _QUEUES)
            broker.start()
            _SESSION = (pool, broker)
            try:
                yield pool
            finally:
                _SESSION = None
                broker.stop()
    finally:
        _QUEUES = None


def active_pool() -> RunPool | _PoolClient | None:
    """The open verification pool for a sweep of this process: the pool itself in the process that opened it,
    a client of it in a claim worker forked from that process, None when none is open."""
    global _CLIENT
    if _SESSION is None:
        return None
    pool, broker = _SESSION
    if os.getpid() == pool._owner:
        return pool
    if _CLIENT is None:
        _CLIENT = _PoolClient(broker, pool.workers)
    return _CLIENT


def run_on(pool: RunPool | _PoolClient, pending: Sequence[Batch], finish: Finish) -> None:
    """Run a sweep's pending batches on the verification's pool, each finished task handed to ``finish`` as
    its batch completes; a failure cancels this sweep's batches not started and raises SweepError
    (``sweep_executors.collect``)."""
    futures = {pool.submit(batch): batch for batch in pending}

    def stop() -> None:
        pool.cancel(list(futures))
        wait(futures)

    try:
        collect(futures, as_completed(futures), stop, finish)
    except BaseException:
        pool.cancel([future for future in futures if not future.done()])
        raise

