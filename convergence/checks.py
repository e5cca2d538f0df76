"""Checkers: measurements over seeds -> Verdict (DESIGN.md, "Verdict semantics").

``values`` has one row per seed s = 1..S and one column per record point x_j; the claim is about
the expectation E[q(x_j)], estimated by the mean over seeds. ``confidence`` = 1 - alpha.

Rules every checker shares:

* Seeds and determinism. ``deterministic=True`` declares data without sampling noise (exact
  gradients with full participation, a solved fixed point, a closed form): one row is then the
  expectation itself, and its per-point interval is the point. With S >= 2 rows the Student-t
  statistics below are used whatever the flag (identical rows give zero-width intervals). A
  stochastic run (``deterministic=False``, the default) with S < 2 seeds has no seed-to-seed
  variance, so no decision that needs one can be made: the verdict is INCONCLUSIVE, and the
  note says so and what the data alone would give. Never a PASS on a zero-width interval.
* Hypotheses. A check is INCONCLUSIVE, whatever the data say, when a hypothesis of the claim is
  unmet; the note names the unmet hypotheses and what the data alone would give.

* ``check_rate_exponent``: an upper-rate claim  E[q(x)] <= C x^a  ("q decays at least as fast as
  x^a") with the threshold  a + max(tolerance, relative_tolerance |a|)  (both explicit per call).
  Two power-law fits (``convergence.rates.fit_rate``, each with its confidence interval [lo, hi]:
  hull of the OLS Student-t and seed-bootstrap intervals): over all usable points, and over the
  tail, the usable points in the last ``tail_decades`` decades of x (at least 3 points), whose
  slope is the local exponent at the end of the horizon. The fit over all points says PASS if
  hi <= threshold, FAIL if lo > threshold, INCONCLUSIVE otherwise. The tail says FAIL if its lo >
  threshold (the curve has flattened: it decays provably slower than claimed at the end of the
  horizon, whatever the earlier points say), INCONCLUSIVE if only its exponent is > threshold
  (it disagrees, but its interval cannot confirm it), and agrees otherwise. The check FAILs if
  either says FAIL, else is INCONCLUSIVE if either says so, else PASSes.
* ``check_upper_bound``: an explicit bound  E[q(x_j)] <= B_j  at each of P record points, as P
  one-sided Student-t tests on S - 1 degrees of freedom, t_j = (mean_j - B_j) / (sd_j / sqrt(S)).
  FAIL when the Holm-Bonferroni step-down procedure (Holm 1979, "A simple sequentially rejective
  multiple test procedure", Scand. J. Statist. 6) rejects "E q(x_j) <= B_j" at some j: the
  family-wise error rate, the probability that a true bound FAILs at any of the P points, is at
  most alpha under any dependence between points. (Without it, a true bound at 98% tightness
  tested at 200 points at 95% each FAILs most of the time.) PASS when every one-sided upper
  limit mean_j + t_{S-1, 1-alpha} se_j is <= B_j: an intersection-union test, so a false bound
  (violated at some j) PASSes with probability at most alpha, with no correction for P.
  INCONCLUSIVE otherwise. The report names the method, alpha and P, and the tightness
  max_j mean_j / B_j ("tight" in [TIGHT_RATIO, 1], "violated" above 1, else "upper bound", as PEPit's tests say).
* ``check_lower_bound``: the mirror image, E[q(x_j)] >= B_j, with the tests reversed.
* ``check_ordering``: "E[smaller] < E[larger]" from paired seeds, a Student-t interval of the
  paired difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .argument_checks import as_confidence, as_count, as_record_points, as_values, is_real
from .rates import MIN_FIT_POINTS, RateFit, fit_rate, usable_points
from .verdict import Hypothesis, Status, Verdict

__all__ = [
    "TIGHT_RATIO",
    "check_rate_exponent",
    "check_upper_bound",
    "check_lower_bound",
    "check_ordering",
]

TIGHT_RATIO = 0.9
"""A bound is reported "tight" when its worst measured/bound ratio reaches 0.9 (for a lower bound:
bound/measured), and "upper bound" (or "lower bound") otherwise, as PEPit's tests distinguish an
equality up to a relative precision from an inequality."""

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
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Verdict:
    """Check "q decays at least as fast as x^claimed_exponent" from values (S, P) at x (P,).

    threshold = claimed + max(tolerance, relative_tolerance |claimed|); ``tolerance`` (absolute,
    required: the caller states how much slower than claimed still counts as the claimed rate)
    and ``relative_tolerance`` (a fraction of |claimed|) are both >= 0. Two fits (fit_rate with
    fit_from, floor, n_boot, confidence, seed): all usable points (x >= fit_from, mean > floor)
    and the tail, the usable points with x >= x_last 10^(-tail_decades), extended to the last 3
    usable points when fewer. The whole fit says PASS if its interval's hi <= threshold, FAIL if
    its lo > threshold; the tail says FAIL if its lo > threshold (flattened), INCONCLUSIVE if its
    exponent > threshold (disagrees, unconfirmed). The check FAILs if either says FAIL, is
    INCONCLUSIVE if either says so, and PASSes otherwise; it is INCONCLUSIVE, too, with fewer than ``min_points`` usable points, with a single seed of a stochastic
    run (``deterministic=False``), or when a hypothesis is unmet.

    The verdict has measured = the exponent over all usable points, theoretical = claimed,
    interval = its confidence interval (None when too few points to fit), and evidence: x, mean,
    lo, hi per point (Student t over seeds, level ``confidence``), ``used`` (points in the fit),
    ``fitted`` (the fitted line at every x), the fit's exponent, intercept, n_floored and
    ``interval_method`` (method and level of the interval), ``tail`` (x_from, n_points,
    exponent, interval, status), claimed_exponent, tolerance, relative_tolerance, threshold,
    confidence, n_seeds and deterministic.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, claimed_exponent, tolerance,
            relative_tolerance, deterministic, tail_decades, min_points, hypotheses, or a fit_rate
            argument).
    """
    _check_claim_id(claim_id)
    x = as_record_points(x)
    values = as_values(values, x.size, nonnegative=True)
    if not is_real(claimed_exponent):
        raise ValueError(f"claimed_exponent: must be a finite number, got {claimed_exponent!r}")
    tolerance = _as_nonnegative(tolerance, "tolerance")
    relative_tolerance = _as_nonnegative(relative_tolerance, "relative_tolerance")
    deterministic = _as_flag(deterministic, "deterministic")
    if not (is_real(tail_decades) and tail_decades > 0):
        raise ValueError(f"tail_decades: must be a finite number > 0, got {tail_decades!r}")
    min_points = as_count(min_points, "min_points", minimum=MIN_FIT_POINTS)
    as_count(n_boot, "n_boot", minimum=1)
    as_count(seed, "seed", minimum=0)
    confidence = as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    mean, lo, hi = _mean_interval(values, confidence)
    used = usable_points(x, mean, fit_from, floor)
    n_used = int(used.sum())
    threshold = float(claimed_exponent) + max(tolerance, relative_tolerance * abs(float(claimed_exponent)))
    claim = f"claimed {claimed_exponent:g} + tolerance {threshold - claimed_exponent:g}"
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "used": used.tolist(),
        "claimed_exponent": float(claimed_exponent),
        "tolerance": tolerance,
        "relative_tolerance": relative_tolerance,
        "threshold": threshold,
        "confidence": confidence,
        "n_seeds": values.shape[0],
        "deterministic": deterministic,
    }
    if n_used < MIN_FIT_POINTS:
        status, measured, interval = Status.INCONCLUSIVE, math.nan, None
        finding = f"only {n_used} usable points (x >= fit_from, mean > floor); need {min_points}"
    else:
        fit_args = {"n_boot": n_boot, "confidence": confidence, "seed": seed, "floor": floor}
        fit = fit_rate(x, values, fit_from=fit_from, **fit_args)
        tail = fit_rate(x, values, fit_from=_tail_start(x[used], tail_decades), **fit_args)
        measured, interval = fit.exponent, fit.interval
        whole, tail_status = _rate_status(fit, threshold), _tail_status(tail, threshold)
        status = _combine_rate(whole, tail_status)
        evidence.update(
            fitted=fit.predict(x).tolist(),
            exponent=fit.exponent,
            intercept=fit.intercept,
            n_floored=fit.n_floored,
            interval_method=fit.method,
            tail={"x_from": tail.x_used[0], "n_points": tail.n_points, "exponent": tail.exponent,
                  "interval": list(tail.interval), "status": tail_status.value},
        )
        finding = _rate_finding(whole, tail_status, fit, tail, claim)
        if n_used < min_points:
            status = Status.INCONCLUSIVE
            finding = f"{finding}; but only {n_used} usable points, need {min_points}"
    status, note = _apply_downgrades(status, finding, values.shape[0], deterministic, hypotheses, notes)
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


def _tail_start(x_used: np.ndarray, decades: float) -> float:
    """Left end of the tail fit: x_last 10^(-decades), moved left to keep the last 3 usable points
    and right to the first usable point (the tail never reaches before fit_from)."""
    start = min(float(x_used[-1]) / 10.0**decades, float(x_used[-MIN_FIT_POINTS]))
    return max(start, float(x_used[0]))


def _rate_status(fit: RateFit, threshold: float) -> Status:
    """One fit against the threshold: PASS if hi <= threshold, FAIL if lo > threshold."""
    lo, hi = fit.interval
    if hi <= threshold:
        return Status.PASS
    if lo > threshold:
        return Status.FAIL
    return Status.INCONCLUSIVE


def _tail_status(tail: RateFit, threshold: float) -> Status:
    """The local exponent at the end of the horizon: FAIL if its lo > threshold (flattened),
    INCONCLUSIVE if its exponent > threshold (disagrees, unconfirmed), PASS (agrees) otherwise."""
    if tail.interval[0] > threshold:
        return Status.FAIL
    if tail.exponent > threshold:
        return Status.INCONCLUSIVE
    return Status.PASS


def _combine_rate(whole: Status, tail: Status) -> Status:
    """The worse of the two: FAIL if either FAILs, else INCONCLUSIVE if either is, else PASS."""
    for status in (Status.FAIL, Status.INCONCLUSIVE):
        if status in (whole, tail):
            return status
    return Status.PASS


def _rate_finding(whole: Status, tail: Status, fit: RateFit, tail_fit: RateFit, claim: str) -> str:
    """The note of a rate check: both fits with their intervals and what they say."""
    summary = (
        f"fitted exponent {fit.exponent:.4g} in [{fit.interval[0]:.4g}, {fit.interval[1]:.4g}] over "
        f"{fit.n_points} points; tail (x >= {tail_fit.x_used[0]:g}, {tail_fit.n_points} points) "
        f"{tail_fit.exponent:.4g} in [{tail_fit.interval[0]:.4g}, {tail_fit.interval[1]:.4g}]; {fit.method}"
    )
    if whole is Status.FAIL:
        return f"{summary}: decays slower than {claim}"
    if tail is Status.FAIL:
        return f"{summary}: the curve has flattened, the tail decays slower than {claim}"
    if whole is Status.INCONCLUSIVE:
        return f"{summary}: the interval contains {claim}; the data cannot tell"
    if tail is Status.INCONCLUSIVE:
        return f"{summary}: the tail exponent is above {claim} (the curve may have flattened); its interval cannot tell"
    return f"{summary}: the interval is <= {claim} and the tail agrees"


def check_upper_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
    *,
    deterministic: bool = False,
) -> Verdict:
    """Check E[q(x_j)] <= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    With alpha = 1 - confidence (module docstring): FAIL if the Holm-Bonferroni procedure over the
    P one-sided t-tests of "E q(x_j) <= bound_j" rejects some point (family-wise error rate <=
    alpha; the note names the strongest violation); PASS if every one-sided (1 - alpha) upper
    limit hi_j <= bound_j; INCONCLUSIVE otherwise, with a single seed of a stochastic run, or when
    a hypothesis is unmet. measured = the tightness max_j mean_j / bound_j (the looseness of the
    bound is its inverse), theoretical = 1, interval = [lo_j, hi_j] / bound_j at that j.
    evidence: x, mean, bound, ratio per point; hi (one-sided 1 - alpha upper limits: the PASS
    test), lo (one-sided 1 - alpha/P lower limits, a simultaneous Bonferroni band: some lo_j >
    bound_j iff Holm rejects at least one point), p_violation (one-sided p-values), violations (x
    where Holm rejects), ``test`` (method, alpha, n_points, n_seeds, deterministic), tightness and
    tightness_label ("tight" if TIGHT_RATIO <= tightness <= 1, "violated" above 1, else "upper bound"), confidence.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses,
            deterministic).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, deterministic, upper=True)


def check_lower_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float = 0.95,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
    *,
    deterministic: bool = False,
) -> Verdict:
    """Check E[q(x_j)] >= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    The mirror image of ``check_upper_bound``: FAIL if Holm over the one-sided tests of
    "E q(x_j) >= bound_j" rejects some point (FWER <= alpha = 1 - confidence), PASS if every
    one-sided (1 - alpha) lower limit lo_j >= bound_j, INCONCLUSIVE otherwise. measured = min_j
    mean_j / bound_j, theoretical = 1, interval = [lo_j, hi_j] / bound_j at that j; hi_j here is the
    simultaneous (1 - alpha/P) upper limit. evidence as in ``check_upper_bound`` (tightness_label
    "tight" if TIGHT_RATIO <= bound/measured <= 1, "violated" above 1, else "lower bound").

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses,
            deterministic).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, deterministic, upper=False)


@dataclass(frozen=True)
class _BoundTests:
    """Per-point one-sided tests of E q(x_j) against bound_j (module docstring), on the side of the
    bound: ``holding`` are the (1 - alpha) limits that must clear the bound for a PASS, ``band``
    the simultaneous (1 - alpha/P) limits on the other side, ``p_violation`` the one-sided
    p-values of "the bound holds at j", ``violated`` Holm's rejections at level alpha."""

    holding: np.ndarray
    band: np.ndarray
    p_violation: np.ndarray
    violated: np.ndarray
    holds: bool


def _bound_tests(values: np.ndarray, bound: np.ndarray, alpha: float, upper: bool) -> _BoundTests:
    """One-sided Student-t tests on S - 1 df per point; with S = 1 the point is exact (se = 0)."""
    n_seeds, n_points = values.shape
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / math.sqrt(n_seeds) if n_seeds >= 2 else np.zeros(n_points)
    df = max(n_seeds - 1, 1)
    sign = 1.0 if upper else -1.0
    excess = sign * (mean - bound)  # > 0 in the direction of a violation
    with np.errstate(divide="ignore", invalid="ignore"):
        p_violation = np.where(se > 0, stats.t.sf(excess / se, df), np.where(excess > 0, 0.0, 1.0))
    holding = mean + sign * stats.t.ppf(1.0 - alpha, df) * se
    band = mean - sign * stats.t.ppf(1.0 - alpha / n_points, df) * se
    holds = bool(np.all(sign * (holding - bound) <= 0))
    return _BoundTests(holding, band, p_violation, _holm(p_violation, alpha), holds)


def _holm(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections: sort p ascending, reject p_(k) while p_(k) <= alpha / (P - k + 1)
    (k = 1..P), stop at the first that is not. FWER <= alpha under any dependence (Holm 1979)."""
    order = np.argsort(p_values, kind="stable")
    below = p_values[order] <= alpha / (p_values.size - np.arange(p_values.size))
    n_rejected = p_values.size if below.all() else int(np.argmin(below))
    rejected = np.zeros(p_values.size, dtype=bool)
    rejected[order[:n_rejected]] = True
    return rejected


def _tightness_label(extreme_ratio: float, upper: bool) -> str:
    """"tight" when mean/bound (upper) or bound/mean (lower) lies in [TIGHT_RATIO, 1] at the worst point,
    "violated" above 1 (the mean crosses the bound, whether or not the crossing is significant)."""
    closeness = extreme_ratio if upper else (1.0 / extreme_ratio if extreme_ratio > 0 else np.inf)
    if closeness > 1.0:
        return "violated"
    return "tight" if closeness >= TIGHT_RATIO else ("upper bound" if upper else "lower bound")


def _check_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float,
    hypotheses: Sequence[Hypothesis],
    notes: str,
    deterministic: bool,
    *,
    upper: bool,
) -> Verdict:
    """Shared body of the upper (q <= bound) and lower (q >= bound) bound checks."""
    _check_claim_id(claim_id)
    x = as_record_points(x, increasing=False)
    values = as_values(values, x.size, nonnegative=False)
    bound_arr = np.asarray(bound, dtype=np.float64)
    if bound_arr.shape != x.shape:
        raise ValueError(f"bound: expected shape {x.shape} matching x, got {np.shape(bound)}")
    if not np.all(np.isfinite(bound_arr)) or np.any(bound_arr <= 0):
        raise ValueError("bound: must be finite and positive at every point (ratios mean / bound)")
    confidence = as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    deterministic = _as_flag(deterministic, "deterministic")
    alpha = 1.0 - confidence
    tests = _bound_tests(values, bound_arr, alpha, upper)
    mean = values.mean(axis=0)
    lo, hi = (tests.band, tests.holding) if upper else (tests.holding, tests.band)
    ratio, ratio_lo, ratio_hi = mean / bound_arr, lo / bound_arr, hi / bound_arr
    pick = np.argmax if upper else np.argmin
    worst = int(pick(ratio))
    kind, relation = ("upper", "above") if upper else ("lower", "below")
    label = _tightness_label(float(ratio[worst]), upper)
    method = (f"Holm-Bonferroni over {x.size} one-sided Student-t tests ({values.shape[0]} seeds), FWER alpha = "
              f"{alpha:g}; PASS needs every one-sided {1 - alpha:g} limit on the bound's side")
    if np.any(tests.violated):
        status = Status.FAIL
        strongest = int(np.argmin(np.where(tests.violated, tests.p_violation, np.inf)))
        finding = (
            f"{kind} bound violated at {int(tests.violated.sum())} of {x.size} points; strongest at "
            f"x = {x[strongest]:g}: mean/bound = {ratio[strongest]:.4g} "
            f"(simultaneous CI [{ratio_lo[strongest]:.4g}, {ratio_hi[strongest]:.4g}] {relation} 1)"
        )
    elif tests.holds:
        status = Status.PASS
        finding = f"{kind} bound holds at all {x.size} points; worst mean/bound = {ratio[worst]:.4g} at x = {x[worst]:g}"
    else:
        status = Status.INCONCLUSIVE
        finding = (
            f"no violation survives Holm's correction, but a confidence limit crosses the bound; worst "
            f"mean/bound = {ratio[worst]:.4g} (CI [{ratio_lo[worst]:.4g}, {ratio_hi[worst]:.4g}]) at x = {x[worst]:g}"
        )
    finding = f"{finding}; tightness {ratio[worst]:.4g}: {label} ({method})"
    status, note = _apply_downgrades(status, finding, values.shape[0], deterministic, hypotheses, notes)
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "bound": bound_arr.tolist(),
        "ratio": ratio.tolist(),
        "p_violation": tests.p_violation.tolist(),
        "violations": x[tests.violated].tolist(),
        "test": {"method": method, "alpha": alpha, "n_points": x.size, "n_seeds": values.shape[0],
                 "deterministic": deterministic},
        "tightness": float(ratio[worst]),
        "tightness_label": label,
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
    *,
    deterministic: bool = False,
) -> Verdict:
    """Ordering claim "E[smaller] < E[larger]" from paired per-seed measurements (S,) each.

    The paired differences d_s = larger_s - smaller_s (same seed, same data) get a two-sided
    Student-t interval on S - 1 df at level ``confidence``: PASS if its lower end is > 0, FAIL if
    its upper end is < 0 (the opposite order holds), INCONCLUSIVE otherwise, with a single seed
    of a stochastic run (``deterministic=False``), or with unmet hypotheses. measured = mean
    difference, theoretical = 0, interval = the interval of the difference.
    """
    _check_claim_id(claim_id)
    smaller = np.asarray(smaller, dtype=float).reshape(-1)
    larger = np.asarray(larger, dtype=float).reshape(-1)
    if smaller.shape != larger.shape or smaller.size == 0:
        raise ValueError(f"smaller/larger: need two equal-length, non-empty arrays, got {smaller.shape} and {larger.shape}")
    if not (np.all(np.isfinite(smaller)) and np.all(np.isfinite(larger))):
        raise ValueError("smaller/larger: values must be finite")
    confidence = as_confidence(confidence)
    hypotheses = _as_hypotheses(hypotheses)
    deterministic = _as_flag(deterministic, "deterministic")
    mean, lo, hi = (float(v[0]) for v in _mean_interval((larger - smaller)[:, None], confidence))
    summary = f"mean difference {mean:.4g} in [{lo:.4g}, {hi:.4g}] over {smaller.size} paired seed(s)"
    if lo > 0:
        status, finding = Status.PASS, f"{summary} > 0: the order holds"
    elif hi < 0:
        status, finding = Status.FAIL, f"{summary} < 0: the opposite order holds"
    else:
        status, finding = Status.INCONCLUSIVE, f"{summary} contains 0: the data cannot tell"
    status, note = _apply_downgrades(status, finding, smaller.size, deterministic, hypotheses, notes)
    evidence = {"smaller": smaller.tolist(), "larger": larger.tolist(), "confidence": confidence,
                "n_seeds": smaller.size, "deterministic": deterministic}
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


def _as_nonnegative(value: float, name: str) -> float:
    """A finite number >= 0."""
    if not (is_real(value) and value >= 0):
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    return float(value)


def _as_flag(value: bool, name: str) -> bool:
    """A bool (numpy bools included), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: must be True or False, got {value!r}")
    return bool(value)


def _apply_downgrades(
    status: Status, finding: str, n_seeds: int, deterministic: bool, hypotheses: tuple[Hypothesis, ...], notes: str
) -> tuple[Status, str]:
    """Downgrade to INCONCLUSIVE with a single seed of a stochastic run (no seed-to-seed variance)
    or when a hypothesis is unmet, saying what the data alone give; compose the note (user notes
    first)."""
    if n_seeds < 2 and not deterministic:
        finding = (f"one seed of a stochastic run: no seed-to-seed variance, so no interval to decide on "
                   f"(rerun with 2 or more seeds). The data alone give {status.value}: {finding}")
        status = Status.INCONCLUSIVE
    unmet = [h for h in hypotheses if not h.met]
    if unmet:
        listed = "; ".join(f"{h.name} ({h.detail})" for h in unmet)
        finding = f"hypotheses unmet: {listed}. The data alone give {status.value}: {finding}"
        status = Status.INCONCLUSIVE
    return status, "; ".join(part for part in (notes, finding) if part)
