"""The checks of an experiment (its ``[[checks]]`` tables): what each claims, parsed and checked
before any run.

Every check names a ``metric`` of the runs' common results (``convergence.RunResult``): ``gap``
= F(w) - F* (the default) or ``dist_sq`` = ||w - w*||^2, of the global model at the record
points, over the seeds. Three kinds:

* ``rate``: "the metric decays at least as fast as x^exponent" on every grid cell, with
  ``x`` an expression (default ``"T"``, the record steps; ``"gamma + T"`` for Li et al.'s
  horizon), ``exponent`` the claimed exponent and ``tolerance`` (>= 0) how much slower still
  counts as the claim (``convergence.check_rate_exponent``: the fitted exponent's interval over
  seeds and the tail's, against exponent + tolerance). A decaying claim (exponent < 0) needs
  exponent + tolerance < 0, or a curve that does not decay would pass (``checks[i].tolerance``).
* ``bound``: "E[metric] <= expression at every record point" on every grid cell, the expression
  of the names of ``proofs_check.experiments.names`` (``convergence.check_upper_bound``: one-sided
  Student-t tests over seeds with Holm's correction).
* ``ordering``: "the final E[metric] of grid cell ``smaller`` is below that of cell ``larger``",
  each cell picked by a table of grid values (``{local_steps = 5}``), checked on the paired
  seeds (``convergence.check_ordering``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from .algorithm import AlgorithmTable, Grid, GridCell
from .expression import Expression
from .fields import ExperimentError, check_keys, read_float, read_str, read_table, required
from .names import MOMENT_NAMES, PROBLEM_NAMES, RUN_NAMES, STEP_NAMES

__all__ = ["METRICS", "BoundCheck", "Check", "OrderingCheck", "RateCheck", "check_names", "parse_checks"]

METRICS: Mapping[str, str] = {"gap": "F(w) - F*", "dist_sq": "||w - w*||^2"}
"""The metrics a check reads (fields of ``convergence.RunResult``) and what they are."""


@dataclass(frozen=True)
class _MetricCheck:
    """What every check has: its ``name`` and the ``metric`` it reads (a key of ``METRICS``); ``kind``
    is its ``[[checks]]`` kind."""

    kind: ClassVar[str]

    name: str
    metric: str

    @property
    def quantity(self) -> str:
        """The metric in words (``METRICS``), e.g. "F(w) - F*"."""
        return METRICS[self.metric]


@dataclass(frozen=True)
class RateCheck(_MetricCheck):
    """E[metric] decays at least as fast as x^exponent, within ``tolerance`` (module docstring)."""

    kind: ClassVar[str] = "rate"

    x: Expression
    exponent: float
    tolerance: float

    @property
    def statement(self) -> str:
        return (f"E[{self.quantity}] decays at least as fast as x^{self.exponent:g} in x = {self.x.text} "
                f"(tolerance {self.tolerance:g}: an exponent up to {self.exponent + self.tolerance:g} counts)")


@dataclass(frozen=True)
class BoundCheck(_MetricCheck):
    """E[metric] <= ``expression`` at every record point (module docstring)."""

    kind: ClassVar[str] = "bound"

    expression: Expression

    @property
    def statement(self) -> str:
        return f"E[{self.quantity}] <= {self.expression.text} at every record point"


@dataclass(frozen=True)
class OrderingCheck(_MetricCheck):
    """The final E[metric] of the cell ``smaller`` is below that of the cell ``larger`` (module docstring)."""

    kind: ClassVar[str] = "ordering"

    smaller: GridCell
    larger: GridCell

    @property
    def statement(self) -> str:
        return f"the final E[{self.quantity}] of ({self.smaller.label}) is smaller than that of ({self.larger.label})"


Check = Union[RateCheck, BoundCheck, OrderingCheck]
"""One check of an experiment."""

_KEYS = {
    "rate": ("kind", "name", "metric", "x", "exponent", "tolerance"),
    "bound": ("kind", "name", "metric", "expression"),
    "ordering": ("kind", "name", "metric", "smaller", "larger"),
}


def check_names(algorithm: AlgorithmTable) -> frozenset[str]:
    """The names a check's expression may use with this algorithm (``proofs_check.experiments.names``):
    the problem's and the run's names, the config's numeric fields and ``E``, the step-size names
    when the config has a ``step_size`` field and the moments when it has a ``batch_size`` field.
    ExperimentError naming ``algorithm.name`` when a config field has the name of one of those."""
    fields = frozenset(algorithm.field_names(("int", "float")))
    clash = sorted(fields & (set(PROBLEM_NAMES) | set(STEP_NAMES) | set(RUN_NAMES)))
    if clash:
        raise ExperimentError(f"algorithm.name: {algorithm.name}'s config field {clash[0]!r} has the name of an "
                              "expression name; an experiment cannot tell them apart")
    names = set(PROBLEM_NAMES) | set(RUN_NAMES) | fields | {"E"}
    if "step_size" in algorithm.field_names(("step_size",)):
        names |= set(STEP_NAMES)
    if "batch_size" not in fields:
        names -= MOMENT_NAMES
    return frozenset(names)


def parse_checks(value: Any, names: frozenset[str], grid: Grid) -> tuple[Check, ...]:
    """The ``[[checks]]`` array: at least one check, each of a known kind with its keys, unique names."""
    if not isinstance(value, list) or not value:
        raise ExperimentError("checks: expected at least one [[checks]] table")
    checks: list[Check] = []
    for i, table in enumerate(value):
        check = _parse_check(read_table(table, f"checks[{i}]"), f"checks[{i}]", names, grid)
        if any(other.name == check.name for other in checks):
            raise ExperimentError(f"checks[{i}].name: {check.name!r} is the name of another check")
        checks.append(check)
    return tuple(checks)


def _parse_check(table: Mapping[str, Any], path: str, names: frozenset[str], grid: Grid) -> Check:
    kind = read_str(required(table, "kind", path), f"{path}.kind")
    if kind not in _KEYS:
        raise ExperimentError(f"{path}.kind: unknown kind {kind!r}; choose one of {', '.join(_KEYS)}")
    check_keys(table, _KEYS[kind], path)
    name = read_str(required(table, "name", path), f"{path}.name")
    if "/" in name:
        raise ExperimentError(f"{path}.name: {name!r} has a '/', which separates the parts of a verdict id")
    metric = read_str(table.get("metric", "gap"), f"{path}.metric")
    if metric not in METRICS:
        raise ExperimentError(f"{path}.metric: unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if kind == "rate":
        x = Expression.parse(table.get("x", "T"), f"{path}.x", names)
        exponent = read_float(required(table, "exponent", path), f"{path}.exponent")
        tolerance = read_float(required(table, "tolerance", path), f"{path}.tolerance", minimum=0.0)
        from convergence.checks import rate_threshold

        try:
            rate_threshold(exponent, tolerance)
        except ValueError as exc:  # finite numbers, tolerance >= 0: only a decay claim's threshold >= 0 is left
            raise ExperimentError(f"{path}.{exc}") from None
        return RateCheck(name, metric, x, exponent, tolerance)
    if kind == "bound":
        return BoundCheck(name, metric, Expression.parse(required(table, "expression", path), f"{path}.expression", names))
    smaller = grid.select(required(table, "smaller", path), f"{path}.smaller")
    larger = grid.select(required(table, "larger", path), f"{path}.larger")
    if smaller == larger:
        raise ExperimentError(f"{path}.larger: selects the same grid cell as smaller ({smaller.label})")
    return OrderingCheck(name, metric, smaller, larger)
