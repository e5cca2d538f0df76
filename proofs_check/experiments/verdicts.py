"""An experiment's checks evaluated on its runs: one Verdict per check, with a typed sub-check per
grid cell, and the plots that show the evidence.

A check is run on the runs of each grid cell (an ordering check on its two cells) with the
checkers of ``convergence.checks``, exactly as the shipped claims use them; the sub-checks are
combined by ``proofs_check.combine_checks`` (FAIL if one fails, PASS if all pass, INCONCLUSIVE
otherwise). The checks never declare a run deterministic: with a single seed every check is
INCONCLUSIVE (no seed-to-seed variance to decide on); runs without sampling noise (exact gradients)
give identical seeds and zero-width intervals from two seeds on.

A sub-check that could not have failed on its instance is kept in the verdict as uninformative
(``convergence.Uninformative``, never counted as a PASS):

* a bound check where the mean metric is <= 0 at every record point (it lies below any positive
  bound whatever the algorithm does);
* a bound check whose bound is at least the largest value the metric of a run that did not diverge
  can take at every record point: a run stops with DivergenceError once ||w - w*||^2 exceeds
  DIVERGENCE_FACTOR (1 + ||w_0 - w*||^2), and F(w) - F* <= (L_F / 2) ||w - w*||^2 (F is
  L_F-smooth with grad F(w*) = 0).

A bound at least the initial value of the metric at every point is kept and counted, with a note
that it can fail only if the metric grows above its starting value (as ``li2020.thm1`` says of
Theorem 1's loose bound).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from convergence import Uninformative, Verdict, check_ordering, check_rate_exponent, check_upper_bound
from convergence.argument_checks import as_record_points
from ..framework.claim import ClaimResult
from ..framework.evaluation import combine_checks
from ..framework.plot_specs import Curve, CurvesPlot, PlotSpec, ReferenceRate, rate_plot

from .algorithm import GridCell
from .checks import BoundCheck, Check, OrderingCheck, RateCheck
from .expression import Expression
from .fields import ExperimentError
from .file import Experiment
from .names import MOMENT_NAMES, CellValues, ProblemValues

__all__ = ["CellRuns", "check_before_runs", "evaluate_check"]

_YLABELS = {"gap": r"$F(w) - F^*$", "dist_sq": r"$\|w - w^*\|^2$"}


@dataclass(frozen=True, eq=False)
class CellRuns:
    """The runs of one grid cell: the cell, its RunResult (whose ``algorithm`` is the cell's config)
    and the values of every expression name for it (``proofs_check.experiments.names.CellValues``)."""

    cell: GridCell
    result: Any
    values: CellValues

    @classmethod
    def of(cls, cell: GridCell, result: Any, problem: ProblemValues) -> CellRuns:
        return cls(cell, result, CellValues(problem, result.algorithm, result.steps, result.dist_sq))

    def metric(self, name: str) -> np.ndarray:
        """The metric (S, P) of ``checks.METRICS``."""
        return np.asarray(getattr(self.result, name), dtype=np.float64)


def evaluate_check(experiment: Experiment, index: int, runs: Sequence[CellRuns]) -> ClaimResult:
    """The verdict of ``experiment.checks[index]`` on the runs of every grid cell (in the grid's
    order), and its plots. ExperimentError naming the check's field when an expression cannot be
    evaluated or a rate's x is not increasing and positive."""
    check = experiment.checks[index]
    path = f"checks[{index}]"
    check_id = experiment.check_id(check)
    if isinstance(check, OrderingCheck):
        return _ordering(experiment, check, check_id, runs)
    counted: list[tuple[str, Verdict]] = []
    uninformative: list[Uninformative] = []
    plots: list[PlotSpec] = []
    for cell_runs in runs:
        if isinstance(check, RateCheck):
            verdict, plot = _rate(experiment, check, check_id, path, cell_runs)
            counted.append((cell_runs.cell.label, verdict))
        else:
            verdict, plot, reason = _bound(experiment, check, check_id, path, cell_runs)
            if reason:
                uninformative.append(Uninformative.of(cell_runs.cell.label, verdict, reason))
            else:
                counted.append((cell_runs.cell.label, verdict))
        plots.append(plot)
    verdict = combine_checks(check_id, counted, notes=_notes(experiment, check, len(runs)), uninformative=uninformative)
    return ClaimResult(verdict, tuple(plots))


def check_before_runs(experiment: Experiment, index: int, cells: Sequence[GridCell], configs: Sequence[Any],
                      problem: ProblemValues) -> None:
    """Refuse, before any run, what ``evaluate_check`` would refuse of ``experiment.checks[index]``
    whatever the runs give: at each cell's record steps T (its config's record rounds times its
    local steps per round), a rate's x that is constant, not finite and positive or not increasing,
    a bound <= 0, and a bound check with a record step T = 0 (its checker compares at T > 0).
    Expressions that read Li's moments (``MOMENT_NAMES``: measured over the runs' region) are
    checked after the runs. ExperimentError naming the field."""
    check = experiment.checks[index]
    path = f"checks[{index}]"
    if isinstance(check, OrderingCheck):
        return
    for cell, config in zip(cells, configs):
        steps = np.asarray(config.record_rounds, dtype=np.float64) * config.steps_per_round
        values = CellValues(problem, config, steps, np.zeros((1, steps.size)))
        if isinstance(check, RateCheck):
            if not MOMENT_NAMES & check.x.names:
                _rate_axis(check, path, values)
            continue
        if np.any(steps <= 0):
            raise ExperimentError(f"record_rounds: round 0 (T = 0) is a record point, and {path} is a bound check, "
                                  "which compares the metric with its bound at T > 0: record rounds >= 1")
        if not MOMENT_NAMES & check.expression.names:
            _bound_values(check, path, values, cell.label)


def _rate_axis(check: RateCheck, path: str, values: CellValues) -> np.ndarray:
    """A rate check's x at the record points (P,); ExperimentError naming ``path.x`` for an x that does
    not depend on T or is not finite, positive and increasing."""
    x = check.x.evaluate(values, f"{path}.x")
    if np.ndim(x) == 0:
        raise ExperimentError(f"{path}.x: {check.x.text!r} does not depend on T, so it gives no axis to fit along")
    try:
        return as_record_points(x)
    except ValueError as exc:
        raise ExperimentError(f"{path}.x: {check.x.text!r} over the record points: {exc}") from None


def _bound_values(check: BoundCheck, path: str, values: CellValues, label: str) -> np.ndarray:
    """A bound check's bound at the record points (P,); ExperimentError naming ``path.expression``
    for a bound <= 0 somewhere."""
    steps = values.steps
    bound = np.broadcast_to(check.expression.evaluate(values, f"{path}.expression"), steps.shape)
    if np.any(bound <= 0):
        j = int(np.argmax(bound <= 0))
        raise ExperimentError(f"{path}.expression: the bound {check.expression.text!r} is {bound[j]:.6g} <= 0 at "
                              f"T = {steps[j]:g} ({label}); a bound on a non-negative metric must be > 0")
    return bound


def _rate(experiment: Experiment, check: RateCheck, check_id: str, path: str,
          cell_runs: CellRuns) -> tuple[Verdict, PlotSpec]:
    """``check_rate_exponent`` of the cell's metric in x."""
    x = _rate_axis(check, path, cell_runs.values)
    try:
        verdict = check_rate_exponent(
            f"{check_id}/{cell_runs.cell.label}", x, cell_runs.metric(check.metric), claimed_exponent=check.exponent,
            tolerance=check.tolerance,
            notes=f"{cell_runs.cell.label}: {_setting(experiment, cell_runs)}; {_names(check.x, cell_runs)}",
        )
    except ValueError as exc:
        raise ExperimentError(f"{path}.x: {check.x.text!r} over the record points: {exc}") from None
    plot = rate_plot(
        _file_name(experiment.name, check.name, cell_runs.cell.label),
        f"{check.name}: {cell_runs.cell.label}",
        f"Mean {check.quantity} over {len(cell_runs.result.seeds)} seed(s) against x = {check.x.text} "
        f"({cell_runs.cell.label}), the power laws fitted over all usable points and over the tail (each drawn over "
        f"the x it fitted; the check decides on both) and the claimed rate x^{check.exponent:g}.",
        verdict, xlabel=f"x = {check.x.text}", ylabel=_YLABELS[check.metric],
        reference=ReferenceRate(check.exponent, f"claimed $x^{{{check.exponent:g}}}$"),
    )
    return verdict, plot


def _bound(experiment: Experiment, check: BoundCheck, check_id: str, path: str,
           cell_runs: CellRuns) -> tuple[Verdict, PlotSpec, str]:
    """``check_upper_bound`` of the cell's metric against the bound at every record point, and the
    reason it is uninformative ("" when it is not: module docstring)."""
    from convergence.algorithms.local_steps import DIVERGENCE_FACTOR

    steps = cell_runs.values.steps
    bound = _bound_values(check, path, cell_runs.values, cell_runs.cell.label)
    values = cell_runs.metric(check.metric)
    start = cell_runs.values["gap0" if check.metric == "gap" else "dist0_sq"]
    moments = (f" {cell_runs.values.moments.method}." if MOMENT_NAMES & check.expression.names else "")
    headroom = (f" The bound is at least the initial value {start:.4g} at every record point, so it can fail only "
                "if the metric grows above its starting value." if np.all(bound >= start) else "")
    verdict = check_upper_bound(
        f"{check_id}/{cell_runs.cell.label}", steps, values, np.array(bound),
        notes=f"{cell_runs.cell.label}: {_setting(experiment, cell_runs)}; {_names(check.expression, cell_runs)}."
        f"{headroom}{moments}",
    )
    ceiling = (1.0 + cell_runs.values["dist0_sq"]) * DIVERGENCE_FACTOR
    if check.metric == "gap":
        ceiling *= cell_runs.values["L_F"] / 2
    reason = ""
    if np.all(values.mean(axis=0) <= 0):
        reason = f"the mean {check.quantity} is <= 0 at every record point, so it lies below any positive bound"
    elif np.all(bound >= ceiling):
        reason = (f"the bound is at least {ceiling:.4g} at every record point, the largest {check.quantity} a run "
                  "can reach without stopping as diverged, so it holds whatever the algorithm does")
    plot = rate_plot(
        _file_name(experiment.name, check.name, cell_runs.cell.label),
        f"{check.name}: {cell_runs.cell.label}",
        f"Mean {check.quantity} over {len(cell_runs.result.seeds)} seed(s) against the record steps T "
        f"({cell_runs.cell.label}) and the bound {check.expression.text} (dashed).",
        verdict, xlabel="T (local steps)", ylabel=_YLABELS[check.metric], bound=bound.tolist(),
    )
    return verdict, plot, reason


def _ordering(experiment: Experiment, check: OrderingCheck, check_id: str, runs: Sequence[CellRuns]) -> ClaimResult:
    """``check_ordering`` of the final metric of the two cells, paired over seeds."""
    by_cell = {cell_runs.cell.label: cell_runs for cell_runs in runs}
    smaller, larger = by_cell[check.smaller.label], by_cell[check.larger.label]
    final = [(c, c.metric(check.metric)[:, -1], int(c.values.steps[-1])) for c in (smaller, larger)]
    where = "; ".join(f"{c.cell.label}: T = {steps}, {_setting(experiment, c)}" for c, _, steps in final)
    name = f"({check.smaller.label}) < ({check.larger.label})"
    verdict = check_ordering(f"{check_id}/{name}", final[0][1], final[1][1],
                             notes=f"final {check.quantity}, paired over seeds; {where}")
    last = sorted({int(c.result.rounds[-1]) for c, _, _ in final})
    compared = (f"at their last record round, {last[0]} (dotted)" if len(last) == 1 else
                f"each at its last record round ({' and '.join(map(str, last))})")
    plot = CurvesPlot(
        _file_name(experiment.name, check.name, "cells"), check.name,
        f"Mean {check.quantity} over the seeds against the communication rounds for the two grid cells the "
        f"ordering compares {compared}.",
        tuple(Curve(c.result.rounds.tolist(), c.metric(check.metric).mean(axis=0).tolist(), c.cell.label)
              for c, _, _ in final),
        xlabel="communication rounds", ylabel=_YLABELS[check.metric], logx=True, logy=True,
        compared_at=last[0] if len(last) == 1 else None,
    )
    combined = combine_checks(check_id, [(name, verdict)], notes=_notes(experiment, check, 2))
    return ClaimResult(combined, (plot,))


def _notes(experiment: Experiment, check: Check, cells: int) -> str:
    """The verdict's notes: the statement, where it was checked and the experiment's description."""
    where = "on the two grid cells it compares" if isinstance(check, OrderingCheck) else f"on each of {cells} grid cell(s)"
    text = f"{check.kind} check: {check.statement}, {where}; {experiment.algorithm.name} on {_problem(experiment)}."
    return f"{text} {experiment.description}".strip()


def _setting(experiment: Experiment, cell_runs: CellRuns) -> str:
    """The run of one cell in a few words."""
    result = cell_runs.result
    return (f"{experiment.algorithm.name}, {len(result.seeds)} seed(s), T up to {int(result.steps[-1])}, "
            f"{len(result.steps)} record points")


def _names(expression: Expression, cell_runs: CellRuns) -> str:
    """The values of the names an expression reads, for one cell (T, an array, by its range)."""
    parts = [f"{name} = {cell_runs.values[name]:.6g}" for name in sorted(expression.names - {"T"})]
    if "T" in expression.names:
        parts.append(f"T from {cell_runs.values.steps[0]:g} to {cell_runs.values.steps[-1]:g}")
    return "with " + ", ".join(parts)


def _problem(experiment: Experiment) -> str:
    spec = experiment.problem.to_json()
    params = spec.get("params", {})
    family = spec.get("family", "a problem view")
    if family == "arrays":
        return f"the user's arrays {params.get('name') or params.get('file')}"
    return f"{family}({', '.join(f'{k}={v}' for k, v in params.items())})"


def _file_name(*parts: str) -> str:
    """A figure's file stem from its parts (letters, digits and dots kept, the rest joined by '_')."""
    return re.sub(r"[^A-Za-z0-9.]+", "_", "_".join(parts)).strip("_.")
