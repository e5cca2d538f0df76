"""The settings of one verification: what a claim evaluation may spend (seeds, jobs, mode, CPU-hour
limit) and where its runs go (the run store). Imports no numerical library."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from convergence import RunStore, SweepMonitor, SweepOptions

__all__ = ["VerifySettings"]


@dataclass(frozen=True)
class VerifySettings:
    """What a claim evaluation may spend and where its runs go.

    seeds for stochastic runs (a claim's plan takes it as its ``seeds``); jobs worker processes (or a
    Dask ``scheduler`` address); quick: the claims' quick plans (smaller grids and horizons, smoke
    tests); full: their full plans (the larger sweeps); progress: True for progress bars, False for
    none, or a ``SweepMonitor`` every sweep reports to; ``store``: path of the run store (SQLite)
    that finished runs are written to and read back from unless ``use_cache`` is False (then they
    are recomputed and overwritten). ``store_readonly`` opens the store for reading only: a run it
    does not hold is an error instead of a computation (``fedbound report``). ``max_cpu_hours``: the
    limit a claim's estimated cost must stay under (``convergence.budget``; None: the environment's
    or the default), checked from its plan before it runs and by every sweep.
    """

    seeds: int = 4
    jobs: int = 1
    quick: bool = False
    full: bool = False
    progress: bool | SweepMonitor = True
    store: str | None = None
    use_cache: bool = True
    scheduler: str | None = None
    store_readonly: bool = False
    max_cpu_hours: float | None = None

    @property
    def mode(self) -> str:
        """The mode, "quick", "full" or "default": which plan of every claim runs (``ModePlans.select``)."""
        return "quick" if self.quick else ("full" if self.full else "default")

    @functools.cached_property
    def run_store(self) -> RunStore | None:
        """The open run store (None without a store path); errors name it ``--store``, the option it comes from."""
        from convergence import RunStore

        return None if self.store is None else RunStore(self.store, readonly=self.store_readonly, field="--store")

    def close(self) -> None:
        """Close the run store if it was opened, so its file is complete on its own (SQLite folds the
        write-ahead log back into the database when the last connection closes). A later use of
        ``run_store`` opens it again."""
        store = self.__dict__.pop("run_store", None)
        if store is not None:
            store.close()

    def sweep_options(self) -> SweepOptions:
        """How every sweep of this verification runs (jobs, scheduler, the run store, caching, progress)."""
        from convergence import SweepOptions

        return SweepOptions(jobs=self.jobs, scheduler=self.scheduler, store=self.run_store,
                            use_cache=self.use_cache, progress=self.progress, max_cpu_hours=self.max_cpu_hours)

    def __post_init__(self) -> None:
        from convergence import config_int

        object.__setattr__(self, "seeds", config_int("seeds", self.seeds))
        object.__setattr__(self, "jobs", config_int("jobs", self.jobs))
        if self.quick and self.full:
            raise ValueError("quick/full: choose at most one of them")
        if self.store_readonly and (self.store is None or not self.use_cache):
            raise ValueError("store_readonly: a read-only store needs a store path and use_cache=True")
        if self.max_cpu_hours is not None:
            from convergence import max_cpu_hours

            object.__setattr__(self, "max_cpu_hours", max_cpu_hours(self.max_cpu_hours))
