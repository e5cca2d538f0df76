"""Resource bounds checked before work starts: worker counts, run memory and sweep memory.

Memory estimates count the float64 arrays a run allocates from its sizes (bytes = 8 per entry)
and are compared with ``problems.MEMORY_FRACTION`` of the memory available now
(``problems.check_memory``), so a request that cannot fit is refused with a ConfigError naming
the fields that drive it, before anything is allocated, instead of ending in MemoryError:

* one run: each algorithm's engine estimates its own (``Algorithm.memory_bytes``): the records
  it keeps per seed and record point, and its work arrays (FedAvg: the Numba kernel's minibatch
  and least-squares Gram matrices, or the NumPy reference's client rows padded to n_max), and
  for a traced run every local iterate of every seed;
* a sweep: every (config, seed) pair holds its task (config JSON, arguments) and its result in the
  driver until the sweep ends: ``TASK_BYTES`` per pair plus its records.
"""

from __future__ import annotations

import os
import warnings

from problems import check_int, check_memory

from .config import ConfigError

__all__ = ["FLOAT_BYTES", "TASK_BYTES", "check_jobs", "check_run_memory", "check_sweep_memory"]

FLOAT_BYTES = 8
"""Bytes per float64 entry."""
TASK_BYTES = 8 * 1024
"""Driver memory per (config, seed) pair of a sweep beside its records: the task and its config
JSON, the result mapping and the store's bookkeeping. Measured: 2.5 KiB per pair (tracemalloc
peak of ``execute`` with 500 and with 2500 seeds of the counterexample, with or without a store);
8 KiB leaves room for longer configs (record lists, block-cyclic fields)."""


def check_jobs(jobs: int, *, force: bool = False, name: str = "jobs") -> int:
    """``jobs`` worker processes, capped at ``os.cpu_count()`` with a warning unless ``force``.

    More workers than cores only add memory and context switches to a CPU-bound sweep.
    """
    jobs = check_int(name, jobs, minimum=1, error=ConfigError)
    cores = os.cpu_count() or 1
    if jobs > cores and not force:
        warnings.warn(f"{name}: {jobs} workers for {cores} CPU cores; using {cores} (force to override)",
                      RuntimeWarning, stacklevel=2)
        return cores
    return jobs


def check_run_memory(nbytes: int, engine: str, problem_name: str, trace: bool = False) -> None:
    """ConfigError naming batch_size, seeds and record_rounds (a traced run: trace, rounds and
    seeds) when one run, estimated by its engine at ``nbytes`` (``Algorithm.memory_bytes``, the
    counts of the module docstring), cannot fit in memory."""
    fields = "trace (every local iterate), rounds, seeds" if trace else "batch_size, seeds, record_rounds"
    what = f"a traced {engine} run on {problem_name!r}" if trace else f"a {engine} run on {problem_name!r}"
    check_memory(fields, nbytes, what, error=ConfigError)


def check_sweep_memory(pairs: int, record_floats: int, name: str = "seeds") -> None:
    """ConfigError naming ``name`` when a sweep of ``pairs`` (config, seed) pairs holding
    ``record_floats`` recorded floats in all cannot fit in the driver's memory.

    With ``record_floats`` = 0 and ``pairs`` = the number of seeds this is a lower bound for any
    sweep that runs one config with all those seeds (the CLI's check of ``--seeds``).
    """
    nbytes = pairs * TASK_BYTES + FLOAT_BYTES * record_floats
    check_memory(name, nbytes, f"a sweep of {pairs} (config, seed) runs", error=ConfigError)
