"""Power-law rate fits: the slope of log E[q] in log x, with a jackknife interval over seeds.

A rate theorem  E[q(x)] <= C x^a  (x = the number of steps T, or a shifted horizon gamma + T as
in Li et al. 2020, Thm 1) predicts a straight line of slope a in log-log scale. Given
measurements ``values[s, j]`` of q at record points x_j for seeds s = 1..S, ``fit_rate`` fits

    log ybar_j = b + a log x_j,        ybar_j = (1/S) sum_s values[s, j],

by ordinary least squares (OLS) on the n points with x_j >= fit_from and ybar_j > floor. The log
of the mean (not the mean of the logs) is fitted because theorems bound the expectation E[q].
The estimand is theta = the OLS slope of log E[q(x_j)] over those points: the exponent when E[q]
is a power law there, its least-squares summary otherwise (a curved mean has one too; how far the
mean curve is from a straight line is reported beside it, ``residual_std`` and ``ols_interval``,
and ``convergence.checks.check_rate_exponent`` fits the tail apart to catch a flattening end).

Confidence interval of theta at level ``confidence`` = 1 - alpha (two-sided), S >= 2 seeds:
the delete-one jackknife over seeds (Efron & Tibshirani, "An Introduction to the Bootstrap",
1993, ch. 11). theta_(i) is the slope refitted on the mean of the S - 1 other seeds,

    se = sqrt((S - 1)/S sum_i (theta_(i) - mean_i theta_(i))^2),   interval = a^ +- t_{S-1, 1-alpha/2} se,

Student's t on S - 1 degrees of freedom. Seeds are the independent unit: the points of one seed
form one correlated trajectory and are never treated as independent. A left-out replicate drops
its points whose mean is <= floor; if one keeps fewer than two points, se = inf and the interval
is (-inf, inf): the data cannot tell. With S = 1 (a deterministic curve) there is no seed
variance and the interval is the OLS Student-t one, a +- t_{n-2, 1-alpha/2} sqrt(RSS / (n - 2) /
sum_j (log x_j - mean log x)^2) (Seber & Lee, "Linear Regression Analysis", 2003, sec. 5.1): it
measures the misfit of the power law.

Measured coverage of the two-sided 95% interval (Monte Carlo, disjoint replicates of S seeds,
R = 400-3200 replicates, binomial standard error 0.004-0.011), with S = 4 / 8 / 16 / 32:

  (a) FedAvg with Li et al.'s step eta_t = 2/(mu(gamma+t)), least squares, batch 1, E = 1, the truth
      from the exact moment recursion (``proofs_check.constants.run_moments.exact_expectations``), x = gamma + T:
      N = 4, d = 3, T <= 30 gamma, last decade   jackknife .946 .942 .956 .968   former hull .882 .896 .935 .943
        its last half decade                     jackknife .944 .944 .946 .948   former hull .917 .924 .936 .953
      N = 4, d = 3, T = 1..60 gamma              jackknife .952 .932 .940 .948   per-seed    .938 .911 .886 .828
      N = 8, d = 10, batch 4, T = 1..60 gamma    jackknife .950 .950 .957 .968   per-seed    .950 .930 .903 .846
      N = 2, d = 50, T = 1..60 gamma             jackknife .932 .928 .924 .934   per-seed    .928 .899 .876 .790
  (b) x^-1 Z, Z = chi-square(k)/k, 15 points over a decade (R = 2000; the former hull R = 1000):
      k = 1, independent along x                 jackknife .960 .950 .954 .949   per-seed    .951 .954 .954 .943
      k = 1, AR(1) 0.9 along x                   jackknife .925 .936 .942 .941   per-seed    .952 .945 .951 .949
      k = 4, AR(1) 0.7 along x                   jackknife .953 .951 .946 .946   former hull .868  -   .916  -

The former interval, the hull of an OLS interval over the mean curve (its correlated points taken
as independent) and a seed-bootstrap percentile interval (35 distinct resamples with S = 4),
undercovered. Per-seed slopes (OLS of log q_s on log x per seed, Student t over the S slopes)
estimate the slope of E[log q], which differs from that of log E[q] when the law of q changes shape
along x (a run's nearly deterministic start, noise-driven later): biased there. The jackknife's weak
spots are S = 4 with chi-square(1) noise strongly correlated along x, and fits from the first
record points of the d = 50 run, whose skewed first points (coefficient of variation ~1) put the
lower end above the truth 5-6% of the time (the FAIL side; ``check_rate_exponent`` tests each fit
at alpha/4 one-sided: a true claim at its boundary FAILed 0.024-0.033 of the time on (a), the
former check 0.052-0.107).

Power. The interval's half-width on (a), last decade: 0.76 / 0.42 / 0.28 / 0.19 (S = 4 / 8 / 16 /
32); the true exponent -1.011 lies 0.06 below a claim's threshold -0.95, and its interval lies below
it in 4-8% of the replicates (the former hull, undercovering, 8-10%): with batch-1 noise on three
parameters the exponent's standard error is 0.13 with 16 seeds, and 80% power needs about 600
seeds, whatever the interval. With less noise relative to the mean the same margin is confirmed:
on (b), 40 points over four decades, k = 4, the interval lies below -0.95 in 0.15 (S = 4) and 0.79
(S = 16) of the replicates (half-width 0.035 with 16 seeds); on (a) with N = 2, d = 50 (last decade,
truth -1.034), in 0.11 / 0.25 / 0.47 / 0.77. ``tests/test_rate_statistics.py`` measures coverage
and power on (a) and (b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .argument_checks import as_confidence, as_floor, as_record_points, as_values, is_real

__all__ = ["RateFit", "fit_rate", "usable_points", "MIN_FIT_POINTS"]

MIN_FIT_POINTS = 3
"""The fewest points a rate fit takes: n - 2 >= 1 degrees of freedom for the OLS standard error."""


@dataclass(frozen=True)
class RateFit:
    """A fitted power law  mean_s values[s, j] ~ exp(intercept) * x_j ** exponent.

    ``interval`` is the two-sided confidence interval of ``exponent`` at level ``confidence``:
    exponent +- t_{df} ``standard_error``, the jackknife over the ``n_seeds`` seeds (df = S - 1)
    or, with one seed, the OLS Student-t interval (df = n_points - 2), as ``method`` says (module
    docstring). ``n_points`` is the number of points fitted, ``x_used`` / ``y_mean_used`` those
    points and their means over the seeds; ``residual_std`` the OLS residual standard error in log
    scale, sqrt(RSS / (n_points - 2)), and ``ols_interval`` the OLS Student-t interval, both
    measures of the misfit of a power law to the mean curve; ``n_floored`` the number of points
    with x >= fit_from left out because their mean was <= floor.
    """

    exponent: float
    interval: tuple[float, float]
    standard_error: float
    df: int
    intercept: float
    n_points: int
    n_seeds: int
    x_used: tuple[float, ...]
    y_mean_used: tuple[float, ...]
    residual_std: float
    confidence: float
    ols_interval: tuple[float, float]
    n_floored: int = 0

    @property
    def method(self) -> str:
        """How ``interval`` was formed, with its level and degrees of freedom."""
        level = f"{100 * self.confidence:g}%"
        if self.n_seeds == 1:
            return f"{level} OLS Student-t interval ({self.df} df); one seed, no seed variance"
        return f"{level} Student-t interval ({self.df} df) with the delete-one jackknife over {self.n_seeds} seeds"

    def p_above(self, threshold: float) -> float:
        """One-sided p-value of "exponent <= threshold" against "exponent > threshold": the
        Student-t tail P(T_df >= (exponent - threshold) / standard_error). The interval's lower end
        lies above the threshold iff p_above(threshold) < alpha / 2. With a zero standard error
        (identical seeds, an exact power law) it is 0 when exponent > threshold and 1 otherwise."""
        if self.standard_error == 0.0:
            return 0.0 if self.exponent > threshold else 1.0
        return float(stats.t.sf((self.exponent - threshold) / self.standard_error, self.df))

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The fitted line exp(intercept) * x ** exponent at the points x (any shape)."""
        return np.exp(self.intercept) * np.asarray(x, dtype=np.float64) ** self.exponent


def fit_rate(
    x: np.ndarray,
    values: np.ndarray,
    fit_from: float | None = None,
    confidence: float = 0.95,
    floor: float | None = None,
) -> RateFit:
    """Fit log(mean over seeds of values) = intercept + exponent * log x (see the module docstring).

    Args:
        x: (P,) finite, positive, strictly increasing record points (T, or gamma + T).
        values: (S, P) finite, nonnegative measurements for S seeds; a (P,) array is one seed.
        fit_from: fit only the points with x >= fit_from (None: all points).
        confidence: level of the interval, in (0, 1).
        floor: points whose mean is <= floor (at machine precision) are dropped and counted in
            ``RateFit.n_floored``; None means 0 (a zero mean has no logarithm).

    Raises:
        ValueError: naming the bad argument, or ``values`` when fewer than 3 points remain.
    """
    x = as_record_points(x)
    values = as_values(values, x.size, nonnegative=True)
    confidence = as_confidence(confidence)
    floor_value = as_floor(floor)
    mean = values.mean(axis=0)
    in_range = _in_fit_range(x, fit_from)
    keep = in_range & (mean > floor_value)
    if keep.sum() < MIN_FIT_POINTS:
        raise ValueError(
            f"values: only {int(keep.sum())} points have x >= fit_from and a mean above floor = "
            f"{floor_value:g}; a rate fit needs at least {MIN_FIT_POINTS}"
        )
    log_x = np.log(x[keep])
    slope, intercept, residual_std, slope_se = _ols(log_x, np.log(mean[keep]))
    quantile = float(stats.t.ppf(0.5 + confidence / 2.0, log_x.size - 2))
    ols_interval = (slope - quantile * slope_se, slope + quantile * slope_se)
    n_seeds = values.shape[0]
    if n_seeds == 1:
        se, df, interval = slope_se, log_x.size - 2, ols_interval
    else:
        se, df = _jackknife_se(log_x, values[:, keep], floor_value), n_seeds - 1
        half = float(stats.t.ppf(0.5 + confidence / 2.0, df)) * se if se > 0 else 0.0
        interval = (slope - half, slope + half)
    return RateFit(
        exponent=slope,
        interval=interval,
        standard_error=se,
        df=df,
        intercept=intercept,
        n_points=int(keep.sum()),
        n_seeds=n_seeds,
        x_used=tuple(float(v) for v in x[keep]),
        y_mean_used=tuple(float(v) for v in mean[keep]),
        residual_std=residual_std,
        confidence=confidence,
        ols_interval=ols_interval,
        n_floored=int(np.sum(in_range & ~keep)),
    )


def _ols(log_x: np.ndarray, log_y: np.ndarray) -> tuple[float, float, float, float]:
    """Slope, intercept, residual standard error and slope standard error of OLS of log_y on log_x."""
    dx = log_x - log_x.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (log_y - log_y.mean())) / sxx
    intercept = float(log_y.mean() - slope * log_x.mean())
    residuals = log_y - (intercept + slope * log_x)
    residual_std = math.sqrt(float(residuals @ residuals) / (log_x.size - 2))
    return slope, intercept, residual_std, residual_std / math.sqrt(sxx)


def _jackknife_se(log_x: np.ndarray, values: np.ndarray, floor: float) -> float:
    """Delete-one jackknife standard error of the log-mean OLS slope over the S seed rows of values
    (S, n), S >= 2. Replicate i fits the mean of the other rows, (sum - values[i]) / (S - 1), on
    its points with mean > floor; inf when some replicate keeps fewer than two points."""
    n_seeds = values.shape[0]
    means = (values.sum(axis=0)[None, :] - values) / (n_seeds - 1)
    mask = means > floor
    n_kept = mask.sum(axis=1)
    if np.any(n_kept < 2):
        return math.inf
    weights = mask.astype(np.float64)
    log_y = np.log(np.where(mask, means, 1.0))
    mean_x = weights @ log_x / n_kept
    mean_y = (weights * log_y).sum(axis=1) / n_kept
    dx = weights * (log_x[None, :] - mean_x[:, None])
    slopes = (dx * (log_y - mean_y[:, None])).sum(axis=1) / (dx * dx).sum(axis=1)
    spread = slopes - slopes.mean()
    return math.sqrt((n_seeds - 1) / n_seeds * float(spread @ spread))


def _in_fit_range(x: np.ndarray, fit_from: float | None) -> np.ndarray:
    """Boolean mask of the points with x >= fit_from (all points when fit_from is None)."""
    if fit_from is None:
        return np.ones(x.shape, dtype=bool)
    if not is_real(fit_from):
        raise ValueError(f"fit_from: must be a finite number or None, got {fit_from!r}")
    return x >= fit_from


def usable_points(x: np.ndarray, mean: np.ndarray, fit_from: float | None, floor: float | None) -> np.ndarray:
    """Mask of the points fit_rate fits: x >= fit_from and mean > floor (validated arguments)."""
    return _in_fit_range(x, fit_from) & (mean > as_floor(floor))
