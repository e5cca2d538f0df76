"""Verdicts from exact worst cases: a bound against the solved worst case at every point of a grid.

An upper bound on a method's performance over a class holds iff it is at least the worst case over
the class; a lower bound on what the class can force (an instance's bias, a theorem's Omega(.)) is
consistent iff it is at most the worst case. ``check_against_worst_case`` compares, point by point,
with the worst case's uncertainty: a solved value (``WorstCase.solved``) is taken to lie within a
relative ``VALUE_TOLERANCE`` of the exact worst case, so for an upper bound

* PASS when every point is solved and worst case x (1 + VALUE_TOLERANCE) <= bound,
* FAIL when some solved point has worst case x (1 - VALUE_TOLERANCE) > bound,
* INCONCLUSIVE otherwise (a point the solver did not solve to tolerance, or one within the tolerance),

and the mirror image for a lower bound. The comparison is exact (no sampling): the verdict's p_fail
is None (a FAIL counts as p = 0 in Holm's procedure, ``combine_checks``). The verdict's measured
figure is the extreme ratio worst case / bound (largest for an upper bound, smallest for a lower
bound, theoretical 1) and its tightness is labelled like ``convergence.check_upper_bound``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from convergence.verdict import Hypothesis, Status, Tightness, Verdict

from .worst_case import WorstCase

__all__ = ["VALUE_TOLERANCE", "check_against_worst_case"]

VALUE_TOLERANCE = 1e-3
"""The relative uncertainty taken on a solved worst case: ten times ``sdp.ACCURACY_TOLERANCE``, the
largest relative duality gap (and residual) of a solved program. Measured: fedbound's reduced program and
PEPit's direct N-client program, solved independently, agree within 1e-6 (relative) on every setting of
tests/test_pep.py (N = 1, 2, 3; zeta, Gamma, G; both metrics)."""
_TIGHT_RATIO = 0.9


def check_against_worst_case(
    check_id: str, x: Sequence[float], worst: Sequence[WorstCase], bound: Sequence[float], *, upper: bool,
    hypotheses: Sequence[Hypothesis] = (), notes: str = "", x_name: str = "x", root: bool = False,
) -> Verdict:
    """``bound`` (one per point) against the worst cases (module docstring): an upper bound on them
    (``upper``) or a lower bound; with ``root``, against their square roots (a distance ||x - x*||
    whose square the program maximises; its relative uncertainty is then half the value's).
    ``x`` labels the points (``x_name`` in the evidence)."""
    if not (len(x) == len(worst) == len(bound)) or not worst:
        raise ValueError(f"{check_id}: x, worst and bound must have one entry per point, got {len(x)}, {len(worst)}, "
                         f"{len(bound)}")
    values = [math.sqrt(max(w.value, 0.0)) if root and math.isfinite(w.value) else w.value for w in worst]
    solved = [w.solved for w in worst]
    ratios = [v / b if s and b > 0 else math.nan for v, b, s in zip(values, bound, solved)]
    tol = VALUE_TOLERANCE / 2 if root else VALUE_TOLERANCE
    if upper:
        fails = [s and v * (1 - tol) > b for v, b, s in zip(values, bound, solved)]
        holds = [s and v * (1 + tol) <= b for v, b, s in zip(values, bound, solved)]
    else:
        fails = [s and v * (1 + tol) < b for v, b, s in zip(values, bound, solved)]
        holds = [s and v * (1 - tol) >= b for v, b, s in zip(values, bound, solved)]
    status = Status.FAIL if any(fails) else (Status.PASS if all(holds) else Status.INCONCLUSIVE)
    finite = [r for r in ratios if math.isfinite(r)]
    extreme = (max(finite) if upper else min(finite)) if finite else math.nan
    unsolved = [f"{x_name} = {p:g} ({w.status}, accuracy {w.accuracy:.2g})" for p, w in zip(x, worst) if not w.solved]
    side = "upper" if upper else "lower"
    what = "the root of the worst case" if root else "worst case"
    summary = (f"{what} against the {side} bound at {len(worst)} point(s), each to within {tol:g} (relative) of "
               f"the exact value; {'worst/bound at most' if upper else 'worst/bound at least'} {extreme:.4g}")
    if unsolved:
        summary += f"; not solved to tolerance (INCONCLUSIVE there): {', '.join(unsolved)}"
    evidence: dict[str, Any] = {
        x_name: [float(p) for p in x], "worst_case": [_finite(v) for v in values], "bound": [float(b) for b in bound],
        "worst_over_bound": [_finite(r) for r in ratios], "solver": [w.figures() for w in worst],
    }
    return Verdict(check_id, status, extreme, 1.0, None, tuple(hypotheses), f"{notes} {summary}.".strip(),
                   evidence, tightness=_tightness(extreme, upper) if math.isfinite(extreme) else None)


def _tightness(ratio: float, upper: bool) -> Tightness:
    """As ``convergence.check_upper_bound``: "violated" past the bound, "tight" within 0.9 of it."""
    closeness = ratio if upper else (1 / ratio if ratio > 0 else 0.0)
    if closeness > 1:
        return Tightness(ratio, "violated")
    return Tightness(ratio, "tight" if closeness >= _TIGHT_RATIO else ("upper bound" if upper else "lower bound"))


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
