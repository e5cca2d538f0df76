"""Claims side by side: ``fedbound verify`` evaluates its claims in a pool of ``jobs`` local processes.

A claim is more than its sweeps: exact optima (Newton, cvxpy), lemma replays, eq. 13's recursion,
fits, Monte-Carlo constants and its plots run in the process that evaluates it, one after the other.
Evaluated one claim after the other with each sweep on a pool of ``jobs`` workers, a default verify
kept only ~1.2 of 2 cores busy on average (354 s wall, 445 s CPU): every sweep also runs one task per
kernel in the driver before its pool forks, and most sweeps have fewer tasks than that, or one.

Here each claim is one task: a worker process evaluates it whole (its sweeps on the verification's
one pool of ``jobs`` run workers, ``convergence.run_pool``, opened before the claim workers fork),
draws its figures and hands back its card and what its progress saw (``ProgressTally``). So up to
``jobs`` claims and ``jobs`` run workers share the cores: the analysis of one claim overlaps the
runs of another, and a claim whose sweep is long (ding2020.fig2's 16 CNN runs, li2020.thm1's four long seeds) still spreads it over ``jobs`` cores
when it is the last one left (with the sweeps serial inside, that claim alone set the wall time).
Claims are submitted longest first (``progress.typical_seconds``), so the long ones do not finish
last alone (longest-processing-time order). Claims that build on one another form one task, evaluated
in order in one worker (``CHAINS``): the later ones then read the earlier ones' runs from the store, or
load their compiled kernels from Numba's cache, instead of computing them again at the same time. The workers are forked (``convergence.local_process_pool``) and find the claims in a module
global set before the fork, so a claim, its settings and the report code need not be picklable;
only the cards come back pickled (a verdict's read-only mappings, ``types.MappingProxyType``, which
pickle cannot take, travel as the dicts they wrap: ``_reduce_mapping_proxy``, registered with
multiprocessing's own pickler only).

What stays the same: every claim sees the same plan, seeds and runs (a run is a pure function of
its config and seed, bit-identical on any executor), so verdicts, measured values and figures are
the ones a serial verify gives. The run store is shared: each worker opens its own connection (the
parent closes its connection before forking), and SQLite's WAL and busy timeout let two workers
write in turn. Two claims that share runs and are not chained may both compute one when they run at
the same time (the store keeps one copy); the report's reused / computed counts then differ from a
serial verify's (ding2020.ordering reads 8 runs of ding2020.thm1 and thm2, 1 s of runs, not chained).

The pool is used only where it helps and is sound: ``jobs`` > 1, no Dask scheduler (a cluster runs
the sweeps), more than one claim, and a platform that forks. Otherwise the claims run here in order,
their sweeps on the verification's run pool (``one_run_pool``: jobs > 1, no scheduler, fork).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import pickle
import time
import types
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from multiprocessing.reduction import ForkingPickler
from typing import Protocol, TypeVar

from convergence.verdict import Status
from proofs_check.framework.settings import VerifySettings
from proofs_check.framework.registry import ClaimSelection

from .progress import ProgressTally, VerifyProgress, typical_seconds

__all__ = ["CHAINS", "claims_side_by_side", "evaluate_claims", "one_run_pool"]


class _Card(Protocol):
    """What ``evaluate_claims`` reads of a claim's card: its status, for the progress."""

    @property
    def status(self) -> Status: ...


C = TypeVar("C", bound=_Card)
CardFunction = Callable[[ClaimSelection, VerifySettings, VerifyProgress], C]
"""Evaluates one claim into its card under the settings given, reporting to the progress given."""

CHAINS: tuple[tuple[str, ...], ...] = (
    ("ding2020.fig2", "yu2019.cnn"),  # the CNN block-cyclic kernels: ~50 s CPU of compilation on a cold cache
    ("yu2019.thm1", "yu2019.cor2"),  # yu2019.cor2 reads yu2019.thm1's 48 runs from the store
)
"""Claims (registered ids) that one worker evaluates one after the other, in this order, when both are
selected (module docstring)."""

_WORK: tuple[Sequence[ClaimSelection], VerifySettings, VerifyProgress, Callable] | None = None
"""The claims of the pool that is running, its workers' settings, the parent's progress and the card
function: set before the workers fork, so they inherit it (module docstring)."""


def _reduce_mapping_proxy(proxy: types.MappingProxyType) -> tuple[Callable, tuple[dict]]:
    """A read-only mapping pickled as the dict it wraps, rebuilt read-only (module docstring)."""
    return _mapping_proxy, (dict(proxy),)


def _mapping_proxy(data: dict) -> types.MappingProxyType:
    """``data`` read-only again (the unpickling half of ``_reduce_mapping_proxy``)."""
    return types.MappingProxyType(data)


ForkingPickler.register(types.MappingProxyType, _reduce_mapping_proxy)


def claims_side_by_side(settings: VerifySettings, count: int) -> bool:
    """Whether ``count`` tasks (claims, or chains of them) under ``settings`` are evaluated in a pool of
    processes (module docstring)."""
    return (settings.jobs > 1 and settings.scheduler is None and count > 1
            and "fork" in multiprocessing.get_all_start_methods())


def evaluate_claims(selections: Sequence[ClaimSelection], settings: VerifySettings, progress: VerifyProgress,
                    card: CardFunction[C]) -> dict[str, C]:
    """The card of every selection, by claim id in the order of ``selections``: ``card(selection,
    settings, progress)``, here one after the other, or in a pool of ``settings.jobs`` processes
    (``claims_side_by_side``, module docstring). ``progress`` hears of each claim's start and end and
    counts every sweep. An error of a claim is raised here, after the claims already running finish;
    claims not yet started are not started. A KeyboardInterrupt (Ctrl-C) ends the running claims and
    their sweeps at once (``convergence.local_process_pool``); the runs they stored stay stored."""
    tasks = sorted(_chained(selections), key=lambda task: -sum(typical_seconds(selections[i].id) for i in task))
    side_by_side = claims_side_by_side(settings, len(tasks))
    if not (side_by_side or one_run_pool(settings)):
        return {selection.id: _evaluate_here(selection, settings, progress, card) for selection in selections}
    from convergence.run_pool import session_pool

    if settings.store is not None and not settings.store_readonly:
        settings.run_store  # noqa: B018  (created here, once, before two workers could race to create it)
    settings.close()  # a SQLite connection must not cross a fork: each worker opens its own
    claim_workers = min(settings.jobs, len(tasks)) if side_by_side else 0
    with session_pool(settings.jobs, claim_workers):  # every sweep of every claim runs on it
        if not side_by_side:
            return {selection.id: _evaluate_here(selection, settings, progress, card) for selection in selections}
        return _side_by_side(selections, tasks, settings, progress, card)


def one_run_pool(settings: VerifySettings) -> bool:
    """Whether the sweeps of a verification under ``settings`` run on one local pool opened for all of them
    (``convergence.run_pool``): several jobs, no Dask scheduler, a platform that forks."""
    return settings.jobs > 1 and settings.scheduler is None and "fork" in multiprocessing.get_all_start_methods()


def _side_by_side(selections: Sequence[ClaimSelection], tasks: Sequence[tuple[int, ...]], settings: VerifySettings,
                  progress: VerifyProgress, card: CardFunction[C]) -> dict[str, C]:
    """The claims' cards, ``tasks`` evaluated in a pool of claim workers (module docstring)."""
    from convergence import local_process_pool

    global _WORK
    _WORK = (selections, dataclasses.replace(settings, progress=False), progress, card)
    cards: dict[int, C] = {}
    try:
        # On an error the running claims finish; on Ctrl-C the workers and the run pool's end at once.
        with local_process_pool(min(settings.jobs, len(tasks))) as pool:
            futures = [pool.submit(_evaluate_in_worker, task) for task in tasks]
            for future in as_completed(futures):
                for i, card_i, tally, seconds in future.result():
                    cards[i] = card_i
                    progress.absorb(tally)
                    progress.claim_finished(selections[i].id, card_i.status.value, seconds)
    finally:
        _WORK = None
    return {selections[i].id: cards[i] for i in range(len(selections))}


def _chained(selections: Sequence[ClaimSelection]) -> list[tuple[int, ...]]:
    """The pool's tasks: indices of ``selections``, one claim each, except that the claims of a chain
    (``CHAINS``, by registered id) form one task in the chain's order."""
    link = {claim_id: (n, position) for n, chain in enumerate(CHAINS) for position, claim_id in enumerate(chain)}
    tasks: list[list[int]] = []
    open_chains: dict[int, list[int]] = {}
    for i, selection in enumerate(selections):
        chain = link.get(selection.claim.id) if not selection.params else None
        if chain is None:
            tasks.append([i])
        elif chain[0] in open_chains:
            open_chains[chain[0]].append(i)
        else:
            open_chains[chain[0]] = [i]
            tasks.append(open_chains[chain[0]])
    return [tuple(sorted(task, key=lambda i: link.get(selections[i].claim.id, (0, 0))[1])) for task in tasks]


def _evaluate_here(selection: ClaimSelection, settings: VerifySettings, progress: VerifyProgress,
                   card: CardFunction[C]) -> C:
    """One claim in this process, its start and end told to ``progress``."""
    progress.claim_started(selection.id, selection.claim.citation)
    start = time.perf_counter()
    result = card(selection, settings, progress)
    progress.claim_finished(selection.id, result.status.value, time.perf_counter() - start)
    return result


def _evaluate_in_worker(task: tuple[int, ...]) -> list[tuple[int, _Card, ProgressTally, float]]:
    """Worker body: the claims ``task`` indexes in ``_WORK``, one after the other, each evaluated whole
    with a progress of its own; for each, its index, card, what its progress saw and the seconds it
    took. An error goes back as one the parent can unpickle."""
    assert _WORK is not None, "claim_pool: a worker started without its claims"
    selections, settings, parent_progress, card = _WORK
    done = []
    for index in task:
        selection = selections[index]
        progress = parent_progress.for_worker([selection.id])
        progress.claim_started(selection.id, selection.claim.citation)
        start = time.perf_counter()
        claim_settings = dataclasses.replace(settings, progress=progress)
        try:
            result = card(selection, claim_settings, progress)
        except Exception as error:
            raise _portable(error) from None
        finally:
            claim_settings.close()
        done.append((index, result, progress.tally(), time.perf_counter() - start))
    return done


def _portable(error: Exception) -> Exception:
    """``error`` if it survives pickling (how it reaches the parent), else the same message as the nearest
    class of its MRO that does (an exception whose ``__init__`` takes other arguments than its message
    does not unpickle), so the CLI still reports it as that kind of error."""
    candidates = [error] + [cls(str(error)) for cls in type(error).__mro__[1:] if _message_only(cls)]
    for candidate in candidates:
        try:
            pickle.loads(pickle.dumps(candidate))
        except Exception:  # noqa: BLE001  (any failure to round-trip: try the next class)
            continue
        return candidate
    return RuntimeError(f"{type(error).__name__}: {error}")


def _message_only(cls: type) -> bool:
    """Whether exception class ``cls`` can be built from a message alone."""
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return False
    try:
        cls("message")
    except Exception:  # noqa: BLE001
        return False
    return True
