"""Explicit-bound checkers: E[q(x_j)] <= B_j (or >= B_j) at every record point, from seeds.

``values`` has one row per seed s = 1..S and one column per record point x_j; the claim is about
E[q(x_j)], estimated by the mean over seeds; ``confidence`` = 1 - alpha. The shared rules (seeds,
determinism, unmet hypotheses, ``Verdict.p_fail``) are ``convergence.check_rules``'.

``check_upper_bound`` decides, at family-wise level alpha:

* FAIL ("the bound is violated somewhere") when either of two tests, each at level alpha/2
  (Bonferroni over the two, so a true bound FAILs with probability <= alpha), rejects:
  (a) Holm's step-down procedure (Holm 1979) over the P one-sided tests of "E q(x_j) <= B_j",
  valid under any dependence between points; (b) with P >= 2, the one-sided test of "the mean
  ratio Z = (1/P) sum_j q(x_j) / B_j has E Z <= 1", which the bound implies at every point: one
  test for the whole curve, so a bound that many correlated points exceed FAILs even when no single
  point survives Holm's correction over hundreds of points. With P = 1 test (a) alone runs at
  level alpha.
* PASS ("the bound holds everywhere") when every one-sided (1 - alpha) upper limit of E q(x_j)
  lies at or below B_j: an intersection-union test, so a bound violated at some point PASSes with
  probability at most alpha, with no correction for P.
* INCONCLUSIVE otherwise, or on the rules of ``check_rules``, or when the bound could not have
  failed (below).

Skewed data. Per-seed gaps and distances are non-negative and chi-square-like (skewness about 3
for a batch-1 SGD gap), and Student's t undercovers the mean's upper limit there: a sample with a
low mean has a small spread too. Measured on 4,000 samples of chi-square(1) data, the one-sided
95% Student-t upper limit lies below the mean 24% of the time with S = 4 seeds and 16% with 16.
So every upper confidence limit of a mean, and every test that the mean is below a value (the
PASS limit of an upper bound, the FAIL test of a lower bound), takes the more conservative of two
methods on a point whose values are all positive: Student t on S - 1 df, and the gamma method (the data Gamma(k, theta); k by Thom's approximation
of the maximum-likelihood shape with the small-sample correction k* = (S - 3) k / S + 2 / (3 S),
as in the US EPA's ProUCL technical guide, sec. 2.3; under H: E q = b, 2 S k* mean / b ~ chi-square
with 2 S k* df). Non-coverage of the combined 95% upper limit, measured the same way (4,000
samples each): chi-square(1) 4.3% (S = 4), 5.8% (8), 5.1% (16), 4.9% (32); chi-square(4) 3.7-5.4%;
exponential 4.1-4.9%; normal 1.9-3.8%; it is 8-13% for lognormal(0, 1) data, heavier-tailed than
the gamma law. ``tests/test_bound_statistics.py`` measures the false-PASS rate on chi-square data
and on real FedAvg gaps. A point with a value <= 0 uses Student t alone. Lower limits, and tests
that the mean is above a value (the FAIL tests of an upper bound), use Student t, which is
conservative in that direction for right-skewed data. With S <= 3 seeds the gamma shape's
correction leaves k* <= 2/(3S), so a skewed sample cannot certify its mean's upper limit: an
honest loss of power.

Uninformative bounds. A ``Ceiling`` is the largest value q can take on the instance (F(w_0) - F*
for a method that never increases F; L R^2 / 2 over a ball of radius R around w* that holds every
iterate, for an L-smooth F). A bound at or above the ceiling at every point could not have failed:
the verdict is then INCONCLUSIVE, with ``Verdict.cannot_fail`` giving the reason (a claim lists it
as uninformative, never as a PASS). Points where only some of the bound clears the ceiling are
named in the evidence (``unfailable_points``).

``check_lower_bound`` is the mirror image (q >= B_j, tests reversed; its ceiling is a floor: a
lower bound at or below the smallest value q can take cannot fail).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .argument_checks import as_confidence, as_record_points, as_values
from .check_rules import apply_downgrades, as_flag, as_hypotheses, check_claim_id, holm_adjusted
from .verdict import Hypothesis, Status, Tightness, Verdict

__all__ = ["TIGHT_RATIO", "Ceiling", "check_upper_bound", "check_lower_bound", "gamma_shape"]

TIGHT_RATIO = 0.9
"""A bound is reported "tight" when its worst measured/bound ratio reaches 0.9 (for a lower bound:
bound/measured), and "upper bound" (or "lower bound") otherwise, as PEPit's tests distinguish an
equality up to a relative precision from an inequality."""


@dataclass(frozen=True)
class Ceiling:
    """The most extreme value the measured quantity can take on the instance: the largest (for an
    upper-bound check) or the smallest (for a lower-bound check), one number or one per record
    point (P,), and ``reason``, the sentence that says why (e.g. "F(w_0) - F* = 11.8: FedAvg with
    exact gradients never increases F"). A bound beyond it at every point cannot fail."""

    value: float | np.ndarray
    reason: str

    def __post_init__(self) -> None:
        arr = np.asarray(self.value, dtype=np.float64)
        if arr.ndim > 1 or not np.all(np.isfinite(arr)):
            raise ValueError(f"ceiling.value: must be a finite number or a finite (P,) array, got {self.value!r}")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("ceiling.reason: say why the quantity cannot pass the ceiling")


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
    ceiling: Ceiling | None = None,
) -> Verdict:
    """Check E[q(x_j)] <= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    With alpha = 1 - confidence (module docstring): FAIL if Holm over the P one-sided tests, or the
    mean-ratio test, rejects (each at alpha/2 when P >= 2; the note names the strongest violation);
    PASS if every one-sided (1 - alpha) upper limit hi_j <= bound_j; INCONCLUSIVE otherwise, with a
    single seed of a stochastic run, when a hypothesis is unmet, or when ``ceiling`` shows the bound
    could not fail (``Verdict.cannot_fail``). measured = the tightness max_j mean_j / bound_j (the
    looseness of the bound is its inverse), theoretical = 1, interval = [lo_j, hi_j] / bound_j at
    that j; ``p_fail`` the p-value of the FAIL decision (module docstring).
    evidence: x, mean, bound, ratio per point; hi (one-sided 1 - alpha upper limits: the PASS
    test), lo (simultaneous one-sided limits on the other side, alpha/(2P)), p_violation (one-sided
    p-values per point), violations (x where Holm rejects), ``mean_ratio`` (the whole-curve test:
    mean, p-value), ``test`` (method, alpha, n_points, n_seeds, deterministic, limits), tightness
    and tightness_label ("tight" if TIGHT_RATIO <= tightness <= 1, "violated" above 1, else "upper
    bound"), confidence, and with a ceiling ``ceiling`` and ``unfailable_points``.

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses,
            deterministic, ceiling).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, deterministic, ceiling, upper=True)


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
    ceiling: Ceiling | None = None,
) -> Verdict:
    """Check E[q(x_j)] >= bound_j at every record point, from values (S, P), x (P,), bound (P,).

    The mirror image of ``check_upper_bound``: FAIL if Holm over the one-sided tests of
    "E q(x_j) >= bound_j", or the mean-ratio test of "E Z >= 1", rejects (FWER <= alpha), PASS if
    every one-sided (1 - alpha) lower limit lo_j >= bound_j, INCONCLUSIVE otherwise. measured =
    min_j mean_j / bound_j, theoretical = 1, interval = [lo_j, hi_j] / bound_j at that j; hi_j here
    is the simultaneous upper limit. ``ceiling`` is the smallest value q can take: a lower bound at
    or below it everywhere cannot fail. evidence as in ``check_upper_bound`` (tightness_label "tight"
    if TIGHT_RATIO <= bound/measured <= 1, "violated" above 1, else "lower bound").

    Raises:
        ValueError: naming the bad argument (claim_id, x, values, bound, confidence, hypotheses,
            deterministic, ceiling).
    """
    return _check_bound(claim_id, x, values, bound, confidence, hypotheses, notes, deterministic, ceiling, upper=False)


def gamma_shape(values: np.ndarray) -> np.ndarray:
    """Small-sample gamma shape k* per column of positive values (S, P), S >= 2: Thom's
    approximation of the maximum-likelihood shape, k = (3 - A + sqrt((A - 3)^2 + 24 A)) / (12 A)
    with A = log(mean) - mean(log q), corrected to k* = (S - 3) k / S + 2 / (3 S) (ProUCL technical
    guide, sec. 2.3), at least 1e-3; a column of equal values has no spread: k* = inf."""
    n = values.shape[0]
    logs = np.log(values)
    spread = np.log(values.mean(axis=0)) - logs.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shape = (3.0 - spread + np.sqrt((spread - 3.0) ** 2 + 24.0 * spread)) / (12.0 * spread)
    corrected = np.maximum((n - 3.0) * shape / n + 2.0 / (3.0 * n), 1e-3)
    return np.where(spread > 1e-14 * np.maximum(1.0, np.abs(logs).max(axis=0)), corrected, np.inf)


@dataclass(frozen=True)
class _PointTests:
    """One-sided tests of E q(x_j) against b_j per point, (P,) each: ``p_small`` is the p-value of
    "E q_j >= b_j" against "E q_j < b_j" (small when the mean is significantly below b_j),
    ``p_large`` of "E q_j <= b_j" against "E q_j > b_j"."""

    p_small: np.ndarray
    p_large: np.ndarray


def _point_tests(values: np.ndarray, b: np.ndarray) -> _PointTests:
    """Per point, one-sided p-values (module docstring): ``p_large`` by Student t on S - 1 df (for
    right-skewed data conservative in that direction), ``p_small`` the larger of Student t's and,
    for positive columns, the gamma method's. S = 1: the point is exact."""
    n_seeds = values.shape[0]
    mean = values.mean(axis=0)
    if n_seeds < 2:
        return _PointTests(np.where(mean < b, 0.0, 1.0), np.where(mean > b, 0.0, 1.0))
    se = values.std(axis=0, ddof=1) / math.sqrt(n_seeds)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - b) / se
        p_small = np.where(se > 0, stats.t.cdf(t, n_seeds - 1), np.where(mean < b, 0.0, 1.0))
        p_large = np.where(se > 0, stats.t.sf(t, n_seeds - 1), np.where(mean > b, 0.0, 1.0))
    positive = np.all(values > 0, axis=0)
    if np.any(positive):
        k = gamma_shape(values[:, positive])
        dof = 2.0 * n_seeds * k
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            g_small = np.where(np.isfinite(k), stats.chi2.cdf(dof * mean[positive] / b[positive], np.where(
                np.isfinite(k), dof, 1.0)), np.where(mean[positive] < b[positive], 0.0, 1.0))
        p_small[positive] = np.maximum(p_small[positive], g_small)
    return _PointTests(p_small, p_large)


def _limits(values: np.ndarray, level: float, upper: bool) -> np.ndarray:
    """One-sided confidence limits of E q(x_j) at ``level`` (P,): an upper limit (``upper``) is the
    larger of Student t's and, for positive columns, the gamma method's; a lower limit is Student
    t's (module docstring)."""
    n_seeds = values.shape[0]
    mean = values.mean(axis=0)
    if n_seeds < 2:
        return mean.copy()
    sign = 1.0 if upper else -1.0
    se = values.std(axis=0, ddof=1) / math.sqrt(n_seeds)
    limit = mean + sign * stats.t.ppf(level, n_seeds - 1) * se
    positive = np.all(values > 0, axis=0)
    if upper and np.any(positive):
        k = gamma_shape(values[:, positive])
        dof = np.where(np.isfinite(k), 2.0 * n_seeds * k, 1.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            gamma = np.where(np.isfinite(k), dof * mean[positive] / stats.chi2.ppf(1.0 - level, dof), mean[positive])
        limit[positive] = np.maximum(limit[positive], gamma)
    return limit


def _tightness_label(extreme_ratio: float, upper: bool) -> str:
    """"tight" when mean/bound (upper) or bound/mean (lower) lies in [TIGHT_RATIO, 1] at the worst point,
    "violated" above 1 (the mean crosses the bound, whether or not the crossing is significant)."""
    closeness = extreme_ratio if upper else (1.0 / extreme_ratio if extreme_ratio > 0 else np.inf)
    if closeness > 1.0:
        return "violated"
    return "tight" if closeness >= TIGHT_RATIO else ("upper bound" if upper else "lower bound")


def _ceiling_points(ceiling: Ceiling | None, bound: np.ndarray, upper: bool) -> np.ndarray:
    """Points where the bound is beyond the ceiling, so that no value of q can violate it there."""
    if ceiling is None:
        return np.zeros(bound.shape, dtype=bool)
    value = np.asarray(ceiling.value, dtype=np.float64)
    if value.ndim == 1 and value.shape != bound.shape:
        raise ValueError(f"ceiling.value: expected one number or shape {bound.shape} matching x, got {value.shape}")
    return bound >= value if upper else bound <= value


def _check_bound(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    confidence: float,
    hypotheses: Sequence[Hypothesis],
    notes: str,
    deterministic: bool,
    ceiling: Ceiling | None,
    *,
    upper: bool,
) -> Verdict:
    """Shared body of the upper (q <= bound) and lower (q >= bound) bound checks."""
    check_claim_id(claim_id)
    x = as_record_points(x, increasing=False)
    values = as_values(values, x.size, nonnegative=False)
    bound_arr = np.asarray(bound, dtype=np.float64)
    if bound_arr.shape != x.shape:
        raise ValueError(f"bound: expected shape {x.shape} matching x, got {np.shape(bound)}")
    if not np.all(np.isfinite(bound_arr)) or np.any(bound_arr <= 0):
        raise ValueError("bound: must be finite and positive at every point (ratios mean / bound)")
    if ceiling is not None and not isinstance(ceiling, Ceiling):
        raise ValueError(f"ceiling: expected None or a convergence.Ceiling, got {type(ceiling).__name__}")
    confidence = as_confidence(confidence)
    hypotheses = as_hypotheses(hypotheses)
    deterministic = as_flag(deterministic, "deterministic")
    unfailable = _ceiling_points(ceiling, bound_arr, upper)
    alpha = 1.0 - confidence
    n_seeds, n_points = values.shape
    fail_alpha = alpha / 2.0 if n_points >= 2 else alpha
    tests = _point_tests(values, bound_arr)
    p_violation = tests.p_large if upper else tests.p_small
    adjusted = holm_adjusted(p_violation)
    violated = adjusted <= fail_alpha
    ratios = values / bound_arr
    whole = _point_tests(ratios.mean(axis=1, keepdims=True), np.ones(1))
    p_whole = float((whole.p_large if upper else whole.p_small)[0]) if n_points >= 2 else 1.0
    whole_rejects = p_whole <= fail_alpha
    p_fail = min(1.0, (2.0 if n_points >= 2 else 1.0) * min(float(adjusted.min()), p_whole))
    holding = _limits(values, confidence, upper)
    band = _limits(values, 1.0 - fail_alpha / n_points, not upper)
    sign = 1.0 if upper else -1.0
    holds = bool(np.all(sign * (holding - bound_arr) <= 0))
    mean = values.mean(axis=0)
    lo, hi = (band, holding) if upper else (holding, band)
    ratio, ratio_lo, ratio_hi = mean / bound_arr, lo / bound_arr, hi / bound_arr
    worst = int((np.argmax if upper else np.argmin)(ratio))
    kind, relation = ("upper", "above") if upper else ("lower", "below")
    label = _tightness_label(float(ratio[worst]), upper)
    n_gamma = int(np.all(values > 0, axis=0).sum())
    limits = (f"upper limits by the larger of Student t and the gamma method ({n_gamma} of {n_points} points "
              "positive), lower limits by Student t") if n_gamma else "Student t"
    method = (f"FAIL: Holm over {n_points} one-sided tests"
              + (f" and the mean-ratio test, each at {fail_alpha:g}" if n_points >= 2 else f" at {fail_alpha:g}")
              + f" (FWER {alpha:g}); PASS: every one-sided {1 - alpha:g} limit on the bound's side; {n_seeds} seeds, "
              f"limits by {limits}")
    mean_ratio = float(ratios.mean()) if n_points >= 2 else float(ratio[0])
    if np.any(violated) or whole_rejects:
        status = Status.FAIL
        if np.any(violated):
            strongest = int(np.argmin(np.where(violated, adjusted, np.inf)))
            finding = (f"{kind} bound violated at {int(violated.sum())} of {n_points} points; strongest at "
                       f"x = {x[strongest]:g}: mean/bound = {ratio[strongest]:.4g} "
                       f"(simultaneous CI [{ratio_lo[strongest]:.4g}, {ratio_hi[strongest]:.4g}] {relation} 1)")
        else:
            finding = (f"{kind} bound violated on the whole curve: the mean over the {n_points} points of q/bound is "
                       f"{mean_ratio:.4g} (one-sided p = {p_whole:.3g} against {'<=' if upper else '>='} 1); "
                       f"{int(np.sum(sign * (ratio - 1) > 0))} points have their mean {relation} the bound")
    elif holds:
        status = Status.PASS
        finding = (f"{kind} bound holds at all {n_points} points; worst mean/bound = {ratio[worst]:.4g} at "
                   f"x = {x[worst]:g}")
    else:
        status = Status.INCONCLUSIVE
        finding = (f"no violation survives the family-wise tests, but a confidence limit crosses the bound; worst "
                   f"mean/bound = {ratio[worst]:.4g} (CI [{ratio_lo[worst]:.4g}, {ratio_hi[worst]:.4g}]) at "
                   f"x = {x[worst]:g}")
    finding = f"{finding}; tightness {ratio[worst]:.4g}: {label} ({method})"
    if ceiling is not None and 0 < unfailable.sum() < n_points:
        finding += (f"; at {int(unfailable.sum())} of {n_points} points the bound is beyond what q can reach "
                    f"({ceiling.reason}), so only the others can fail")
    status, note = apply_downgrades(status, finding, n_seeds, deterministic, hypotheses, notes)
    cannot_fail = ""
    if ceiling is not None and bool(unfailable.all()):
        beyond = "at or above the largest" if upper else "at or below the smallest"
        cannot_fail = f"the bound is {beyond} value the quantity can take at every point ({ceiling.reason})"
        note = f"uninformative: {cannot_fail}. The data alone give {status.value}: {note}"
        status = Status.INCONCLUSIVE
    evidence: dict[str, Any] = {
        "x": x.tolist(),
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "bound": bound_arr.tolist(),
        "ratio": ratio.tolist(),
        "p_violation": p_violation.tolist(),
        "violations": x[violated].tolist(),
        "mean_ratio": {"mean": mean_ratio, "p_value": p_whole},
        "test": {"method": method, "alpha": alpha, "n_points": n_points, "n_seeds": n_seeds,
                 "deterministic": deterministic, "limits": limits},
        "confidence": confidence,
    }
    if ceiling is not None:
        evidence["ceiling"] = {"value": np.asarray(ceiling.value, dtype=np.float64).tolist(), "reason": ceiling.reason}
        evidence["unfailable_points"] = x[unfailable].tolist()
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=float(ratio[worst]),
        theoretical=1.0,
        interval=(float(ratio_lo[worst]), float(ratio_hi[worst])),
        tightness=Tightness(float(ratio[worst]), label),
        hypotheses=hypotheses,
        notes=note,
        evidence=evidence,
        p_fail=p_fail,
        cannot_fail=cannot_fail,
    )
