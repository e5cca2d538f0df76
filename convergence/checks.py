"""Rate and ordering checkers: measurements over seeds -> Verdict (DESIGN.md, "Verdict semantics").

``values`` has one row per seed s = 1..S and one column per record point x_j; the claim is about
the expectation E[q(x_j)], estimated by the mean over seeds. ``confidence`` = 1 - alpha. The rules
every checker shares (seeds, determinism, unmet hypotheses, ``Verdict.p_fail`` and multiplicity) are
``convergence.check_rules``'; the explicit-bound checks are ``convergence.bound_checks``.

* ``check_rate_exponent``: an upper-rate claim  E[q(x)] <= C x^a  ("q decays at least as fast as
  x^a") with the threshold  a + max(tolerance, relative_tolerance |a|)  (both explicit per call;
  ``rate_threshold``: a decay claim, a < 0, must keep its threshold < 0). Two power-law fits
  (``convergence.rates.fit_rate``, each with its two-sided confidence interval [lo, hi]: Student t
  with the delete-one jackknife over seeds): over all usable points, and over the tail, the usable
  points in the last ``tail_decades`` decades of x (at least 3 points), whose slope is the local
  exponent at the end of the horizon. FAIL when the exponent of either fit is provably above the
  threshold: each fit's p-value is twice its one-sided p-value of "exponent <= threshold" (the
  two-sided convention of ``check_ordering``), and ``Verdict.p_fail`` = min(1, 2 min(p_whole,
  p_tail)) (Bonferroni over the two fits); FAIL iff p_fail <= alpha, i.e. iff the lower end of a
  fit's two-sided 1 - alpha/2 interval lies above the threshold, so a true claim FAILs with
  probability <= alpha/2. Else PASS when the whole fit's 1 - alpha interval lies at or below the
  threshold and the tail's exponent does too (a tail above it: the curve may have flattened),
  else INCONCLUSIVE.
* ``check_ordering``: "E[smaller] < E[larger]" from paired seeds, a Student-t interval of the
  paired difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from .argument_checks import as_confidence, as_count, as_record_points, as_values, is_real
from .check_rules import (
    apply_downgrades, as_flag, as_hypotheses, as_nonnegative, check_claim_id, mean_interval,
)
from .rates import MIN_FIT_POINTS, RateFit, fit_rate, usable_points
from .verdict import Hypothesis, Status, Verdict

__all__ = ["check_rate_exponent", "rate_threshold", "check_ordering"]


def check_rate_exponent(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    claimed_exponent: float,
    *,
    tolerance: float,
    relative_tolerance: float = 0.0,
    deterministic: bool = False,
    fit_from: float | None = None,
    floor: float | None = None,
    tail_decades: float = 0.5,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
    min_points: int = 4,
    confidence: float = 0.95,
) -> Verdict:
    """Check "q decays at least as fast as x^claimed_exponent" from values (S, P) at x (P,).

    threshold = ``rate_threshold``(claimed_exponent, tolerance, relative_tolerance); ``tolerance``
    (absolute, required: the caller states how much slower than claimed still counts as the claimed
    rate) and ``relative_tolerance`` (a fraction of |claimed|) are both >= 0, and a decay claim
    (claimed < 0) must keep threshold < 0. Two fits (fit_rate with fit_from, floor, confidence):
    all usable points (x >= fit_from, mean > floor) and the tail, the usable points with
    x >= x_last 10^(-tail_decades), extended to the last 3 usable points when fewer. With p_whole
    and p_tail twice their one-sided p-values of "exponent <= threshold" (``RateFit.p_above``: the
    two-sided convention, as ``check_ordering``'s),

        p_fail = min(1, 2 min(p_whole, p_tail))      (Bonferroni over the two fits),

    and the check FAILs iff p_fail <= alpha = 1 - confidence, that is iff the lower end of the
    whole fit's or of the tail's two-sided 1 - alpha/2 interval lies above the threshold: a true
    claim FAILs with probability at most alpha/2 if the intervals are exact (measured at the
    boundary on Li's decaying step: 0.024-0.033 at alpha = 0.05, ``convergence.rates``). Otherwise
    it PASSes when the whole fit's 1 - alpha interval lies at or below the threshold (hi <=
    threshold) and the tail's exponent does too (a tail above it is a curve that may have
    flattened, INCONCLUSIVE), and is INCONCLUSIVE else (a 1 - alpha interval above the threshold
    that the Bonferroni test does not confirm included). It is INCONCLUSIVE, too, with fewer than
    ``min_points`` usable points, with a single seed of a stochastic run (``deterministic=False``),
    or when a hypothesis is unmet (``p_fail`` is then still the data's, ``convergence.check_rules``).

    The verdict has measured = the exponent over all usable points, theoretical = claimed,
    interval = its confidence interval (None when too few points to fit), ``p_fail``, and evidence:
    x, mean, lo, hi per point (Student t over seeds, level ``confidence``), ``used`` (points in the
    fit), ``fitted`` (the fitted line at every x), the fit's exponent, intercept, ``fit_range``
    ([first, last] x it fitted), n_floored, ``interval_method`` (method and level of the
    interval), ``p_value`` (p_whole), ``misfit`` (the OLS residual_std and ols_interval of the mean
    curve), ``tail`` (x_from and x_to, the first and last x it fitted, n_points, exponent,
    intercept, interval, p_value, status), claimed_exponent, tolerance,
    relative_tolerance, threshold, confidence, n_seeds and deterministic.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, claimed_exponent, tolerance,
            relative_tolerance, deterministic, tail_decades, min_points, hypotheses, or a fit_rate
            argument).
    """
    check_claim_id(claim_id)
    x = as_record_points(x)
    values = as_values(values, x.size, nonnegative=True)
    threshold = rate_threshold(claimed_exponent, tolerance, relative_tolerance)
    deterministic = as_flag(deterministic, "deterministic")
    if not (is_real(tail_decades) and tail_decades > 0):
        raise ValueError(f"tail_decades: must be a finite number > 0, got {tail_decades!r}")
    min_points = as_count(min_points, "min_points", minimum=MIN_FIT_POINTS)
    confidence = as_confidence(confidence)
    hypotheses = as_hypotheses(hypotheses)
    mean, lo, hi = mean_interval(values, confidence)
    used = usable_points(x, mean, fit_from, floor)
    n_used = int(used.sum())
    claim = f"claimed {claimed_exponent:g} + tolerance {threshold - claimed_exponent:g}"
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "used": used.tolist(),
        "claimed_exponent": float(claimed_exponent),
        "tolerance": float(tolerance),
        "relative_tolerance": float(relative_tolerance),
        "threshold": threshold,
        "confidence": confidence,
        "n_seeds": values.shape[0],
        "deterministic": deterministic,
    }
    p_fail = 1.0
    if n_used < MIN_FIT_POINTS:
        status, measured, interval = Status.INCONCLUSIVE, math.nan, None
        finding = f"only {n_used} usable points (x >= fit_from, mean > floor); need {min_points}"
    else:
        fit = fit_rate(x, values, fit_from=fit_from, confidence=confidence, floor=floor)
        tail = fit_rate(x, values, fit_from=_tail_start(x[used], tail_decades), confidence=confidence, floor=floor)
        measured, interval = fit.exponent, fit.interval
        p_whole, p_tail = (min(1.0, 2.0 * f.p_above(threshold)) for f in (fit, tail))
        p_fail = min(1.0, 2.0 * min(p_whole, p_tail))
        alpha = 1.0 - confidence
        whole_fails, tail_fails = 2.0 * p_whole <= alpha, 2.0 * p_tail <= alpha
        tail_status = Status.FAIL if tail_fails else Status.INCONCLUSIVE if tail.exponent > threshold else Status.PASS
        if p_fail <= alpha:
            status = Status.FAIL
        elif fit.interval[1] <= threshold and tail_status is Status.PASS:
            status = Status.PASS
        else:
            status = Status.INCONCLUSIVE
        evidence.update(
            fitted=fit.predict(x).tolist(),
            exponent=fit.exponent,
            intercept=fit.intercept,
            fit_range=[fit.x_used[0], fit.x_used[-1]],
            n_floored=fit.n_floored,
            interval_method=fit.method,
            p_value=p_whole,
            misfit={"residual_std": fit.residual_std, "ols_interval": list(fit.ols_interval)},
            tail={"x_from": tail.x_used[0], "x_to": tail.x_used[-1], "n_points": tail.n_points,
                  "exponent": tail.exponent, "intercept": tail.intercept, "interval": list(tail.interval),
                  "p_value": p_tail, "status": tail_status.value},
        )
        finding = _rate_finding(whole_fails, tail_fails, fit, tail, threshold, claim, p_fail)
        if n_used < min_points:
            status = Status.INCONCLUSIVE
            finding = f"{finding}; but only {n_used} usable points, need {min_points}"
    status, note = apply_downgrades(status, finding, values.shape[0], deterministic, hypotheses, notes)
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=measured,
        theoretical=float(claimed_exponent),
        interval=interval,
        hypotheses=hypotheses,
        notes=note,
        evidence=evidence,
        p_fail=p_fail,
    )


def rate_threshold(claimed_exponent: float, tolerance: float, relative_tolerance: float = 0.0) -> float:
    """The threshold of a rate claim, claimed + max(tolerance, relative_tolerance |claimed|).

    A claimed exponent < 0 states decay: its threshold must stay < 0, or a curve that does not
    decay at all would PASS (claimed -0.02 with tolerance 0.05 gives +0.03). A claimed exponent
    >= 0 bounds growth ("grows at most like x^a"), and any threshold is allowed.

    Raises:
        ValueError: naming ``claimed_exponent`` (not finite), ``tolerance`` / ``relative_tolerance``
            (not a finite number >= 0, or the one that lifts a decay claim's threshold to >= 0).
    """
    if not is_real(claimed_exponent):
        raise ValueError(f"claimed_exponent: must be a finite number, got {claimed_exponent!r}")
    tolerance = as_nonnegative(tolerance, "tolerance")
    relative_tolerance = as_nonnegative(relative_tolerance, "relative_tolerance")
    claimed = float(claimed_exponent)
    relative = relative_tolerance * abs(claimed)
    threshold = claimed + max(tolerance, relative)
    if claimed < 0 <= threshold:
        name, value = ("tolerance", tolerance) if tolerance >= relative else ("relative_tolerance", relative_tolerance)
        raise ValueError(
            f"{name}: {value:g} lifts the threshold of the decay claim {claimed:g} to {threshold:g} >= 0, so a curve "
            f"that does not decay would pass; a decay claim needs a tolerance below |claimed exponent| = {-claimed:g}"
        )
    return threshold


def _tail_start(x_used: np.ndarray, decades: float) -> float:
    """Left end of the tail fit: x_last 10^(-decades), moved left to keep the last 3 usable points
    and right to the first usable point (the tail never reaches before fit_from)."""
    start = min(float(x_used[-1]) / 10.0**decades, float(x_used[-MIN_FIT_POINTS]))
    return max(start, float(x_used[0]))


def _rate_finding(whole_fails: bool, tail_fails: bool, fit: RateFit, tail: RateFit, threshold: float, claim: str,
                  p_fail: float) -> str:
    """The note of a rate check: both fits with their intervals and what they say."""
    summary = (
        f"fitted exponent {fit.exponent:.4g} in [{fit.interval[0]:.4g}, {fit.interval[1]:.4g}] over "
        f"{fit.n_points} points; tail (x >= {tail.x_used[0]:g}, {tail.n_points} points) "
        f"{tail.exponent:.4g} in [{tail.interval[0]:.4g}, {tail.interval[1]:.4g}]; {fit.method}"
    )
    tested = f"p_fail = {p_fail:.3g}, Bonferroni over the two fits' two-sided p-values"
    if whole_fails:
        return f"{summary}: decays slower than {claim} ({tested})"
    if tail_fails:
        return f"{summary}: the curve has flattened, the tail decays slower than {claim} ({tested})"
    if max(fit.interval[0], tail.interval[0]) > threshold:
        return f"{summary}: an interval lies above {claim}, but not beyond the two fits' correction ({tested})"
    if fit.interval[1] > threshold:
        return f"{summary}: the interval contains {claim}; the data cannot tell"
    if tail.exponent > threshold:
        return f"{summary}: the tail exponent is above {claim} (the curve may have flattened); its interval cannot tell"
    return f"{summary}: the interval is <= {claim} and the tail agrees"


def check_ordering(
    claim_id: str,
    smaller: np.ndarray,
    larger: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
    *,
    deterministic: bool = False,
) -> Verdict:
    """Ordering claim "E[smaller] < E[larger]" from paired per-seed measurements (S,) each.

    The paired differences d_s = larger_s - smaller_s (same seed, same data) get a two-sided
    Student-t interval on S - 1 df at level ``confidence``: PASS if its lower end is > 0, FAIL if
    its upper end is < 0 (the opposite order holds), INCONCLUSIVE otherwise, with a single seed
    of a stochastic run (``deterministic=False``), or with unmet hypotheses. measured = mean
    difference, theoretical = 0, interval = the interval of the difference, ``p_fail`` twice the
    one-sided p-value of "the opposite order holds".
    """
    check_claim_id(claim_id)
    smaller = np.asarray(smaller, dtype=float).reshape(-1)
    larger = np.asarray(larger, dtype=float).reshape(-1)
    if smaller.shape != larger.shape or smaller.size == 0:
        raise ValueError(f"smaller/larger: need two equal-length, non-empty arrays, got {smaller.shape} and {larger.shape}")
    if not (np.all(np.isfinite(smaller)) and np.all(np.isfinite(larger))):
        raise ValueError("smaller/larger: values must be finite")
    confidence = as_confidence(confidence)
    hypotheses = as_hypotheses(hypotheses)
    deterministic = as_flag(deterministic, "deterministic")
    mean, lo, hi = (float(v[0]) for v in mean_interval((larger - smaller)[:, None], confidence))
    summary = f"mean difference {mean:.4g} in [{lo:.4g}, {hi:.4g}] over {smaller.size} paired seed(s)"
    if lo > 0:
        status, finding = Status.PASS, f"{summary} > 0: the order holds"
    elif hi < 0:
        status, finding = Status.FAIL, f"{summary} < 0: the opposite order holds"
    else:
        status, finding = Status.INCONCLUSIVE, f"{summary} contains 0: the data cannot tell"
    status, note = apply_downgrades(status, finding, smaller.size, deterministic, hypotheses, notes)
    evidence = {"smaller": smaller.tolist(), "larger": larger.tolist(), "confidence": confidence,
                "n_seeds": smaller.size, "deterministic": deterministic}
    return Verdict(claim_id, status, mean, 0.0, (lo, hi), hypotheses, note, evidence,
                   p_fail=_ordering_p_fail(larger - smaller, 1.0 - confidence))


def _ordering_p_fail(differences: np.ndarray, alpha: float) -> float:
    """The p-value of the FAIL decision "E[d] < 0" (the two-sided interval's upper end below 0): twice
    the one-sided Student-t p-value on S - 1 df, so FAIL at level alpha iff p_fail <= alpha. One seed,
    or no spread: 0 when d < 0 (exact), 1 otherwise."""
    n = differences.size
    mean = float(differences.mean())
    se = float(differences.std(ddof=1)) / math.sqrt(n) if n >= 2 else 0.0
    if se == 0.0:
        return 0.0 if mean < 0 else 1.0
    return min(1.0, 2.0 * float(stats.t.cdf(mean / se, n - 1)))
