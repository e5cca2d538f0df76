"""What a request will cost, estimated before any of it runs, and the limit it must stay under.

Every path that computes (``fedbound verify`` and a claim's parameters, ``fedbound run``'s
experiment files, ``fedbound falsify``, and ``convergence.execute`` itself) first describes its
work as a ``Workload`` from its plan alone (no config, grid or record-round array is built for
it) and calls ``check_workload``, which prices it and refuses it, with one ``BudgetError`` naming
the field that drives it and the estimate, when it exceeds the limit:

* **time**: ``seconds = runs x RUN_SECONDS + client_steps x STEP_SECONDS + flops / FLOP_RATE``
  (a CNN's flops at NETWORK_FLOP_RATE; on the NumPy reference path, traced runs,
  REFERENCE_STEP_SECONDS and REFERENCE_FLOP_RATE), compared with the CPU-hours allowed
  (``max_cpu_hours``: ``--max-cpu-hours``, else ``$FEDBOUND_MAX_CPU_HOURS``, else
  ``DEFAULT_MAX_CPU_HOURS``). A client-step is one local step of one client (a minibatch gradient
  and an update); its flops are ``rows x flops_per_row``, ``rows`` the minibatch (or the client's
  rows for an exact gradient) and ``flops_per_row`` the model's (``model_flops_per_row``: 4 d for a
  linear model, the network's forward and backward pass for a CNN); each record point adds a pass
  over every row (the metrics);
* **memory**: the driver holds every (config, seed) pair's task and records until the sweep ends,
  ``runs x TASK_BYTES + 8 x record floats`` (``resources``), compared with ``problems.MEMORY_FRACTION``
  of the memory available now (``problems.available_memory``).

The constants were measured as CPU time (``time.process_time``, so the machine's load does not
enter) on this project's development machine (AMD EPYC, Zen 4), each beside its value; they price
a step at its cost on one core, so an estimate is CPU time, whatever the number of jobs. They are
meant to be right within a small factor (docs/architecture.md, "Budget", compares them with the
runs of a default ``fedbound verify``): the limit refuses requests that are absurd (days to
centuries of CPU time), not ones a little larger than usual.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from problems import MEMORY_FRACTION, available_memory, format_bytes

from .config import ConfigError
from .resources import FLOAT_BYTES, TASK_BYTES

__all__ = [
    "BudgetError", "DEFAULT_MAX_CPU_HOURS", "FLOP_RATE", "MAX_CPU_HOURS_ENV", "NETWORK_FLOP_RATE",
    "REFERENCE_FLOP_RATE", "REFERENCE_STEP_SECONDS", "RUN_SECONDS", "STEP_SECONDS", "Workload", "check_workload",
    "config_drivers", "exceeds", "max_cpu_hours", "model_flops_per_row", "pass_workload", "record_workload",
    "run_workload",
]

RUN_SECONDS = 2e-3
"""Seconds per (config, seed) pair beside its steps: its task, its result's transfer and storage and
the metrics of its records. Measured: 0.6 ms of CPU per pair (400 one-round seeds of the
counterexample through ``execute`` into a store, serial); 2 ms leaves room for larger records."""
STEP_SECONDS = 3e-7
"""Seconds per client-step of a Numba kernel beside its arithmetic (the sampler, the loop, the update).
Measured: 0.15 us (the counterexample, d = 21, exact gradients) to 0.29 us (d = 5, batch 1)."""
FLOP_RATE = 1e10
"""Flops per second of the linear models' Numba kernels on one core. Measured: 15.6 GFLOP/s
(synthetic(1,1) softmax, d = 610, batch 24: 3.8 us a client-step for 58,560 flops)."""
NETWORK_FLOP_RATE = 3e9
"""Flops per second of the CNN kernels on one core (``NetworkLayout.flops_per_image`` per image).
Measured: 3.7 GFLOP/s (digits_net, batch 2: 14 us a client-step, 143,000 images/s of CPU time)."""
REFERENCE_STEP_SECONDS = 3e-5
"""Seconds per client-step of the NumPy reference path (traced runs: the lemma checks, eq. 13) beside
its arithmetic. Measured: 5.5 us (d = 5, batch 1) and 9.7 us (the counterexample, exact) untraced;
keeping the trace costs 2-4 times that (the traced runs of a default verify, warm)."""
REFERENCE_FLOP_RATE = 1e9
"""Flops per second of the NumPy reference path's small products. Measured: 72 us a client-step of
synthetic(1,1), batch 24 (58,560 flops): 10 us of overhead and about 1 GFLOP/s."""
DEFAULT_MAX_CPU_HOURS = 24.0
"""The default limit: a day of one core. The default and ``--full`` verifications estimate far
below it (tests/test_budget.py estimates every registered claim's plans)."""
MAX_CPU_HOURS_ENV = "FEDBOUND_MAX_CPU_HOURS"
"""The environment variable that sets the limit when no ``--max-cpu-hours`` is given."""


class BudgetError(ConfigError):
    """A request whose estimated cost exceeds the limit (time) or the memory available; the message
    names the field that drives it, the estimate and how to raise the limit."""


def _real(value: Any) -> float:
    """A count as a float, +inf when it is beyond float range (Python ints have no bound)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Workload:
    """The estimated work of a request: ``runs`` (config, seed) pairs, ``client_steps`` (one
    client's local step each, on any path), ``seconds`` their estimated CPU time (priced by
    ``run_workload``), the ``memory_bytes`` the driver holds at once (tasks and records), and
    ``drivers``: the request's fields that size it with their values (``(field, value)``, e.g.
    ``("rounds", 1e12)``), the largest named when it is refused. Workloads add up (``+``) and
    scale (``times``)."""

    runs: float = 0.0
    client_steps: float = 0.0
    seconds: float = 0.0
    memory_bytes: float = 0.0
    drivers: tuple[tuple[str, float], ...] = field(default=())

    def __add__(self, other: Workload) -> Workload:
        if not isinstance(other, Workload):
            return NotImplemented
        return Workload(self.runs + other.runs, self.client_steps + other.client_steps, self.seconds + other.seconds,
                        self.memory_bytes + other.memory_bytes, _merge(self.drivers + other.drivers))

    def times(self, count: Any) -> Workload:
        """``count`` copies of this work (``count`` configs of one shape), its drivers kept."""
        k = _real(count)
        return Workload(k * self.runs, k * self.client_steps, k * self.seconds, k * self.memory_bytes, self.drivers)

    def with_drivers(self, *drivers: tuple[str, Any]) -> Workload:
        """The same work with more named fields."""
        return Workload(self.runs, self.client_steps, self.seconds, self.memory_bytes,
                        _merge(self.drivers + tuple((name, _real(value)) for name, value in drivers)))

    def describe(self) -> str:
        """E.g. ``about 3.2e+05 CPU-hours and 8.0 KiB held by the driver: 64 runs, 1.2e+13 client-steps``."""
        return (f"about {_number(self.seconds / 3600)} CPU-hours and {_bytes(self.memory_bytes)} held by the "
                f"driver: {_number(self.runs)} runs, {_number(self.client_steps)} client-steps")

    def largest_driver(self) -> str | None:
        """The field with the largest value among ``drivers`` (None without any)."""
        return max(self.drivers, key=lambda item: item[1])[0] if self.drivers else None


def _merge(drivers: Iterable[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    """One entry per field, its largest value, largest first."""
    out: dict[str, float] = {}
    for name, value in drivers:
        out[name] = max(out.get(name, -math.inf), value)
    return tuple(sorted(out.items(), key=lambda item: -item[1]))


def _number(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "more than 1e308"


def _bytes(nbytes: float) -> str:
    """A byte count for people; beyond a pebibyte in scientific notation."""
    return format_bytes(nbytes) if nbytes < 1024**5 else f"{_number(nbytes)} bytes"


def run_workload(*, seeds: Any, rounds: Any, steps_per_round: Any, clients: Any, rows: Any, flops_per_row: Any,
                 records: Any = 1, data_rows: Any = 0, dim: Any = 0, network: bool = False,
                 reference: bool = False) -> Workload:
    """The work of one config run for ``seeds`` seeds: ``rounds`` rounds of ``steps_per_round`` local
    steps on ``clients`` clients each, every step on ``rows`` rows (the minibatch, or a client's rows
    for an exact gradient) at ``flops_per_row`` flops a row (a CNN's when ``network``), on the NumPy
    reference path when ``reference``, and its ``records`` record points (``record_workload``).
    Priced as the module docstring says; any count may be a huge int (+inf beyond floats)."""
    S = _real(seeds)
    steps = S * _real(rounds) * _real(steps_per_round) * _real(clients)
    flops = steps * _real(rows) * _real(flops_per_row)
    if reference:
        seconds = steps * REFERENCE_STEP_SECONDS + flops / REFERENCE_FLOP_RATE
    else:
        seconds = steps * STEP_SECONDS + flops / (NETWORK_FLOP_RATE if network else FLOP_RATE)
    return Workload(S, steps, S * RUN_SECONDS + seconds, S * TASK_BYTES) + record_workload(
        seeds=seeds, records=records, data_rows=data_rows, flops_per_row=flops_per_row, dim=dim, network=network)


def pass_workload(*, passes: Any, rows: Any, flops_per_row: Any, network: bool = False,
                  reference: bool = False) -> Workload:
    """``passes`` gradient passes over ``rows`` rows each (a tracked run's full gradient at every
    step), priced as the steps' arithmetic is: no run, no client-step."""
    flops = _real(passes) * _real(rows) * _real(flops_per_row)
    rate = REFERENCE_FLOP_RATE if reference else NETWORK_FLOP_RATE if network else FLOP_RATE
    return Workload(seconds=flops / rate)


def record_workload(*, seeds: Any, records: Any, data_rows: Any, flops_per_row: Any, dim: Any,
                    network: bool = False) -> Workload:
    """``records`` record points of each of ``seeds`` seeds: a pass over the problem's ``data_rows``
    rows each (the metrics, ``flops_per_row`` a row) and a (``dim`` + 2)-float record the driver keeps."""
    points = _real(seeds) * _real(records)
    flops = points * _real(data_rows) * _real(flops_per_row)
    return Workload(seconds=flops / (NETWORK_FLOP_RATE if network else FLOP_RATE),
                    memory_bytes=FLOAT_BYTES * points * (_real(dim) + 2))


def model_flops_per_row(objective: Any) -> tuple[float, bool]:
    """Flops of one row's gradient and whether they are a network's: the forward and backward pass
    of a CNN (``NetworkLayout.flops_per_image``), else 4 d for a linear model (its forward product
    x'W and its gradient x r', 2 d each)."""
    network = getattr(objective, "network", None)
    if network is not None:
        return float(network.layout.flops_per_image()), True
    return 4.0 * objective.dim, False


def config_drivers(config: Any) -> tuple[tuple[str, float], ...]:
    """The fields of an algorithm config that size its work, by name: its integer fields (rounds,
    local steps, cycles, batch size, participants, ...), its seed count and its record points."""
    drivers = [(f.name, getattr(config, f.name)) for f in dataclasses.fields(config)
               if isinstance(getattr(config, f.name), int) and not isinstance(getattr(config, f.name), bool)]
    drivers += [("seeds", len(config.seeds)), ("record_rounds", len(config.record_rounds))]
    return tuple((name, _real(value)) for name, value in drivers)


def max_cpu_hours(given: Any = None) -> float:
    """The limit: ``given`` (``--max-cpu-hours``), else ``$FEDBOUND_MAX_CPU_HOURS``, else
    DEFAULT_MAX_CPU_HOURS; ConfigError naming the option or the variable for a value that is not a
    finite number > 0."""
    if given is not None:
        name, value = "--max-cpu-hours", given
    elif os.environ.get(MAX_CPU_HOURS_ENV, "").strip():
        name, value = MAX_CPU_HOURS_ENV, os.environ[MAX_CPU_HOURS_ENV].strip()
    else:
        return DEFAULT_MAX_CPU_HOURS
    try:
        hours = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        hours = math.nan
    if not (math.isfinite(hours) and hours > 0):
        raise ConfigError(f"{name}: expected a number of CPU-hours > 0, got {value!r}")
    return hours


def exceeds(workload: Workload, limit_hours: Any = None) -> bool:
    """Whether ``check_workload`` would refuse ``workload`` (time over the limit, or memory)."""
    return not (workload.seconds <= max_cpu_hours(limit_hours) * 3600
                and workload.memory_bytes <= MEMORY_FRACTION * available_memory())


def check_workload(workload: Workload, what: str, field: str | None = None, *, limit_hours: Any = None) -> None:
    """BudgetError unless ``workload`` (the work of ``what``, e.g. "claim 'li2020.thm1'") fits: its
    driver memory in MEMORY_FRACTION of the memory available, its estimated time in
    ``max_cpu_hours(limit_hours)``. The message starts with ``field``, else the workload's largest
    driver, else "request", and gives the estimate."""
    name = field or workload.largest_driver() or "request"
    available = available_memory()
    if not workload.memory_bytes <= MEMORY_FRACTION * available:
        raise BudgetError(f"{name}: {what} would take {workload.describe()}, more than {MEMORY_FRACTION:.0%} of the "
                          f"{format_bytes(available)} of memory available; choose smaller sizes")
    limit = max_cpu_hours(limit_hours)
    if not workload.seconds <= limit * 3600:
        raise BudgetError(f"{name}: {what} would take {workload.describe()}, over the limit of {limit:g} CPU-hours "
                          f"(raise it with --max-cpu-hours or ${MAX_CPU_HOURS_ENV})")
