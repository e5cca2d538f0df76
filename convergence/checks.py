"""Checkers: measurements over seeds -> Verdict (DESIGN.md, "Verdict semantics").

* ``check_rate_exponent``: an upper-rate claim  E[q(x)] <= C x^a  ("q decays at least as fast as
  x^a"). The exponent of mean_s q is fitted with a confidence interval [lo, hi]
  (``convergence.rates.fit_rate``); with tol the tolerance,
  PASS if hi <= a + tol, FAIL if lo > a + tol, INCONCLUSIVE otherwise.
* ``check_upper_bound``: an explicit bound  E[q(x_j)] <= B_j  at every record point. Each mean
  over seeds gets a confidence interval [lo_j, hi_j];
  PASS if hi_j <= B_j for all j, FAIL if lo_j > B_j for some j (a provable violation),
  INCONCLUSIVE otherwise.
* ``check_lower_bound``: the mirror image, E[q(x_j)] >= B_j: PASS if lo_j >= B_j for all j, FAIL if
  hi_j < B_j for some j.

A check is INCONCLUSIVE, whatever the data say, when a hypothesis of the claim is unmet; the note
names the unmet hypotheses and what the data alone would give.

Per-point interval of a mean over S seeds (Student t): mean +- t_{S-1, 1-alpha/2} sd / sqrt(S),
sd with ddof = 1; with S = 1 (deterministic runs) the interval is the point itself. The level
is per point; no correction for the number of points is made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from .rates import (
    _MIN_FIT_POINTS,
    _as_confidence,
    _as_count,
    _as_record_points,
    _as_values,
    _is_real,
    _usable_points,
    fit_rate,
)
from .verdict import Hypothesis, Status, Verdict

__all__ = ["check_rate_exponent", "check_upper_bound", "check_lower_bound", "check_ordering"]


def check_rate_exponent(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    claimed_exponent: float,
    tolerance: float = 0.05,
    fit_from: float | None = None,
    floor: float | None = None,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
    min_points: int = 4,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Verdict:
    """Check "q decays at least as fast as x^claimed_exponent" from values (S, P) at x (P,).

    The fitted exponent a_hat with interval [lo, hi] (fit_rate with fit_from, floor, n_boot,
    confidence, seed) gives PASS if hi <= claimed + tolerance, FAIL if lo > claimed + tolerance,
    INCONCLUSIVE otherwise, or with fewer than ``min_points`` usable points (x >= fit_from, mean
    > floor), or when a hypothesis is unmet.

    The verdict has measured = a_hat, theoretical = claimed_exponent, interval = [lo, hi] (None
    when too few points to fit), and evidence: x, mean, lo, hi per point (Student t over seeds),
    ``used`` (points in the fit), ``fitted`` (the fitted line at every x), the fit's exponent,
    intercept and n_floored, claimed_exponent, tolerance and confidence.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, claimed_exponent, tolerance,
            min_points, hypotheses, or a fit_rate argument).
    """
    _check_claim_id(claim_id)
    x = _as_record_points(x)
    values = _as_values(values, x.size, nonnegative=True)
    if not _is_real(claimed_exponent):
        raise ValueError(f"claimed_exponent: must be a finite number, got {claimed_exponent!r}")
    if not (_is_real(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance: must be a finite number >= 0, got {tolerance!r}")
    min_points = _as_count(min_points, "min_points", minimum=_MIN_FIT_POINTS)
    _as_count(n_boot, "n_boot", minimum=1)
    _as_count(seed, "seed", minimum=0)
    confidence = _as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    mean, lo, hi = _mean_interval(values, confidence)
    used = _usable_points(x, mean, fit_from, floor)
    n_used = int(used.sum())
    threshold = float(claimed_exponent) + float(tolerance)
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "used": used.tolist(),
        "claimed_exponent": float(claimed_exponent),
        "tolerance": float(tolerance),
        "confidence": confidence,
    }
    if n_used < _MIN_FIT_POINTS:
        status, measured, interval = Status.INCONCLUSIVE, math.nan, None
        finding = f"only {n_used} usable points (x >= fit_from, mean > floor); need {min_points}"
    else:
        fit = fit_rate(x, values, fit_from=fit_from, n_boot=n_boot, confidence=confidence, seed=seed, floor=floor)
        measured, interval = fit.exponent, fit.interval
        evidence.update(
            fitted=fit.predict(x).tolist(),
            exponent=fit.exponent,
            intercept=fit.intercept,
            n_floored=fit.n_floored,
        )
        summary = f"fitted exponent {fit.exponent:.4g} in [{fit.interval[0]:.4g}, {fit.interval[1]:.4g}]"
        if n_used < min_points:
            status = Status.INCONCLUSIVE
            finding = f"{summary}, but only {n_used} usable points; need {min_points}"
        elif fit.interval[1] <= threshold:
            status = Status.PASS
            finding = f"{summary} <= claimed {claimed_exponent:g} + tolerance {tolerance:g}"
        elif fit.interval[0] > threshold:
            status = Status.FAIL
            finding = f"{summary} > claimed {claimed_exponent:g} + tolerance {tolerance:g}: decays slower than claimed"
        else:
            status = Status.INCONCLUSIVE
            finding = f"{summary} contains claimed {claimed_exponent:g} + tolerance {tolerance:g}: the data cannot tell"
    status, note = _apply_hypotheses(status, finding, hypotheses, notes)
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=measured,
        theoretical=float(claimed_exponent),
        interval=interval,
        hypotheses=hypotheses,
        notes=note,
        evidence=evidence,
    )


def check_upper_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
) -> Verdict:
    """Check E[q(x_j)] <= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    PASS if every upper confidence limit hi_j <= bound_j; FAIL if some lower limit lo_j > bound_j
    (the note names the strongest violation: its x and mean/bound with interval); INCONCLUSIVE
    otherwise or when a hypothesis is unmet. measured = max_j mean_j / bound_j (the looseness of
    the bound is its inverse), theoretical = 1, interval = [lo_j, hi_j] / bound_j at that j.
    evidence: x, mean, lo, hi, bound, ratio per point, violations (x where violated), confidence.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, upper=True)


def check_lower_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
) -> Verdict:
    """Check E[q(x_j)] >= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    PASS if every lower confidence limit lo_j >= bound_j; FAIL if some upper limit hi_j < bound_j
    (the note names the strongest violation); INCONCLUSIVE otherwise or when a hypothesis is
    unmet. measured = min_j mean_j / bound_j, theoretical = 1, interval = [lo_j, hi_j] / bound_j
    at that j. evidence as in ``check_upper_bound``.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, upper=False)


def _check_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float,
    hypotheses: Sequence[Hypothesis],
    notes: str,
    *,
    upper: bool,
) -> Verdict:
    """Shared body of the upper (q <= bound) and lower (q >= bound) bound checks."""
    _check_claim_id(claim_id)
    x = _as_record_points(x, increasing=False)
    values = _as_values(values, x.size, nonnegative=False)
    bound_arr = np.asarray(bound, dtype=np.float64)
    if bound_arr.shape != x.shape:
        raise ValueError(f"bound: expected shape {x.shape} matching x, got {np.shape(bound)}")
    if not np.all(np.isfinite(bound_arr)) or np.any(bound_arr <= 0):
        raise ValueError("bound: must be finite and positive at every point (ratios mean / bound)")
    confidence = _as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    mean, lo, hi = _mean_interval(values, confidence)
    ratio, ratio_lo, ratio_hi = mean / bound_arr, lo / bound_arr, hi / bound_arr
    if upper:
        violated, holds = lo > bound_arr, bool(np.all(hi <= bound_arr))
        worst = int(np.argmax(ratio))
        strongest = int(np.argmax(np.where(violated, ratio_lo, -np.inf)))
        relation = "above"
    else:
        violated, holds = hi < bound_arr, bool(np.all(lo >= bound_arr))
        worst = int(np.argmin(ratio))
        strongest = int(np.argmin(np.where(violated, ratio_hi, np.inf)))
        relation = "below"
    kind = "upper" if upper else "lower"
    if np.any(violated):
        status = Status.FAIL
        finding = (
            f"{kind} bound violated at {int(violated.sum())} of {x.size} points; strongest at "
            f"x = {x[strongest]:g}: mean/bound = {ratio[strongest]:.4g} "
            f"(CI [{ratio_lo[strongest]:.4g}, {ratio_hi[strongest]:.4g}] entirely {relation} 1)"
        )
    elif holds:
        status = Status.PASS
        finding = (
            f"{kind} bound holds at all {x.size} points; worst mean/bound = {ratio[worst]:.4g} at x = {x[worst]:g}"
        )
    else:
        status = Status.INCONCLUSIVE
        finding = (
            f"no provable violation, but the CI crosses the bound; worst mean/bound = {ratio[worst]:.4g} "
            f"(CI [{ratio_lo[worst]:.4g}, {ratio_hi[worst]:.4g}]) at x = {x[worst]:g}"
        )
    status, note = _apply_hypotheses(status, finding, hypotheses, notes)
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "bound": bound_arr.tolist(),
        "ratio": ratio.tolist(),
        "violations": x[violated].tolist(),
        "confidence": confidence,
    }
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=float(ratio[worst]),
        theoretical=1.0,
        interval=(float(ratio_lo[worst]), float(ratio_hi[worst])),
        hypotheses=hypotheses,
        notes=note,
        evidence=evidence,
    )


def check_ordering(
    claim_id: str,
    smaller: np.ndarray,
    larger: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
) -> Verdict:
    """Ordering claim "E[smaller] < E[larger]" from paired per-seed measurements (S,) each.

    The paired differences d_s = larger_s - smaller_s (same seed, same data) get a Student-t
    interval: PASS if its lower end is > 0, FAIL if its upper end is < 0 (the opposite order
    holds), INCONCLUSIVE otherwise or with unmet hypotheses. measured = mean difference,
    theoretical = 0, interval = the interval of the difference.
    """
    _check_claim_id(claim_id)
    smaller = np.asarray(smaller, dtype=float).reshape(-1)
    larger = np.asarray(larger, dtype=float).reshape(-1)
    if smaller.shape != larger.shape or smaller.size == 0:
        raise ValueError(f"smaller/larger: need two equal-length, non-empty arrays, got {smaller.shape} and {larger.shape}")
    if not (np.all(np.isfinite(smaller)) and np.all(np.isfinite(larger))):
        raise ValueError("smaller/larger: values must be finite")
    confidence = _as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    mean, lo, hi = (float(v[0]) for v in _mean_interval((larger - smaller)[:, None], confidence))
    summary = f"mean difference {mean:.4g} in [{lo:.4g}, {hi:.4g}] over {smaller.size} paired seed(s)"
    if lo > 0:
        status, finding = Status.PASS, f"{summary} > 0: the order holds"
    elif hi < 0:
        status, finding = Status.FAIL, f"{summary} < 0: the opposite order holds"
    else:
        status, finding = Status.INCONCLUSIVE, f"{summary} contains 0: the data cannot tell"
    status, note = _apply_hypotheses(status, finding, hypotheses, notes)
    evidence = {"smaller": smaller.tolist(), "larger": larger.tolist(), "confidence": confidence}
    return Verdict(claim_id, status, mean, 0.0, (lo, hi), hypotheses, note, evidence)


def _mean_interval(values: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds of values (S, P) and its Student-t interval (the point itself when S = 1)."""
    n_seeds = values.shape[0]
    mean = values.mean(axis=0)
    if n_seeds == 1:
        return mean, mean.copy(), mean.copy()
    half = stats.t.ppf(0.5 + confidence / 2.0, n_seeds - 1) * values.std(axis=0, ddof=1) / math.sqrt(n_seeds)
    return mean, mean - half, mean + half


def _check_claim_id(claim_id: str) -> None:
    """A claim id is a non-empty string."""
    if not isinstance(claim_id, str) or not claim_id:
        raise ValueError(f"claim_id: must be a non-empty string, got {claim_id!r}")


def _as_hypotheses(hypotheses: Sequence[Hypothesis]) -> tuple[Hypothesis, ...]:
    """The hypotheses as a tuple, each a Hypothesis."""
    items = tuple(hypotheses)
    if not all(isinstance(h, Hypothesis) for h in items):
        raise ValueError("hypotheses: every item must be a convergence.verdict.Hypothesis")
    return items


def _apply_hypotheses(
    status: Status, finding: str, hypotheses: tuple[Hypothesis, ...], notes: str
) -> tuple[Status, str]:
    """Downgrade to INCONCLUSIVE when a hypothesis is unmet; compose the note (user notes first)."""
    unmet = [h for h in hypotheses if not h.met]
    if unmet:
        listed = "; ".join(f"{h.name} ({h.detail})" for h in unmet)
        finding = f"hypotheses unmet: {listed}. The data alone give {status.value}: {finding}"
        status = Status.INCONCLUSIVE
    return status, "; ".join(part for part in (notes, finding) if part)
