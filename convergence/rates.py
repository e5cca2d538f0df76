"""Power-law rate fits with a confidence interval from OLS (Student t) and a bootstrap over seeds.

A rate theorem  E[q(x)] <= C x^a  (x = the number of steps T, or a shifted horizon gamma + T as
in Li et al. 2020, Thm 1) predicts a straight line of slope a in log-log scale. Given
measurements ``values[s, j]`` of q at record points x_j for seeds s = 1..S, ``fit_rate`` fits

    log ybar_j = b + a log x_j,        ybar_j = (1/S) sum_s values[s, j],

by ordinary least squares (OLS) on the n points with x_j >= fit_from and ybar_j > floor. The log
of the mean (not the mean of the logs) is fitted because theorems bound the expectation E[q].

Confidence interval for the exponent a, at level ``confidence`` = 1 - alpha (two-sided):

* OLS: a +- t_{n-2, 1-alpha/2} se(a), with Student's t quantile on n - 2 degrees of freedom and
  se(a) = sqrt(RSS / (n - 2) / sum_j (log x_j - mean log x)^2): the exact interval of an OLS
  slope with i.i.d. normal residuals (e.g. Seber & Lee, "Linear Regression Analysis", 2003,
  sec. 5.1). It measures how far the mean curve is from a power law, which the bootstrap does
  not see. (The normal quantile 1.96 would be 6.5x too narrow at n = 3 and 2.2x at n = 4.)
* bootstrap over seeds (S >= 2): draw S seed rows with replacement, average them, refit; the
  percentile interval of the ``n_boot`` refitted slopes (Efron & Tibshirani, "An Introduction to
  the Bootstrap", 1993, ch. 13). Seeds are the independent unit; the points of one seed form one
  trajectory and are never resampled on their own. A replicate applies the same floor rule (its
  points with mean <= floor are left out of its refit); if some replicate keeps fewer than two
  points its slope is undefined and the interval is (-inf, inf): the data cannot tell.

The reported interval (``RateFit.interval``, named by ``RateFit.method``) is the hull of the two
(the wider of them on each side), so neither the seed-to-seed noise nor the misfit of the power
law can make it falsely sharp; it covers a with probability at least that of either interval.
With S = 1 the bootstrap is undefined and the interval is the OLS one alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .argument_checks import as_confidence, as_count, as_floor, as_record_points, as_values, is_real

__all__ = ["RateFit", "fit_rate", "usable_points", "MIN_FIT_POINTS"]

MIN_FIT_POINTS = 3
"""The fewest points a rate fit takes: n - 2 >= 1 degrees of freedom for the OLS standard error."""


@dataclass(frozen=True)
class RateFit:
    """A fitted power law  mean_s values[s, j] ~ exp(intercept) * x_j ** exponent.

    ``interval`` is the confidence interval of ``exponent`` at level ``confidence``: the hull of
    ``ols_interval`` (Student t, n_points - 2 degrees of freedom) and ``bootstrap_interval`` (the
    seed-bootstrap percentile interval; None when n_seeds = 1), as ``method`` says (see the module
    docstring); ``n_points`` the number of points fitted, ``x_used`` / ``y_mean_used`` those points and their
    means over the ``n_seeds`` seeds; ``residual_std`` the OLS residual standard error in log
    scale, sqrt(RSS / (n_points - 2)); ``n_floored`` the number of points with x >= fit_from
    left out because their mean was <= floor.
    """

    exponent: float
    interval: tuple[float, float]
    intercept: float
    n_points: int
    n_seeds: int
    x_used: tuple[float, ...]
    y_mean_used: tuple[float, ...]
    residual_std: float
    confidence: float
    ols_interval: tuple[float, float]
    bootstrap_interval: tuple[float, float] | None
    n_floored: int = 0

    @property
    def method(self) -> str:
        """How ``interval`` was formed, with its level and degrees of freedom."""
        ols = f"OLS Student-t interval ({self.n_points - 2} df)"
        level = f"{100 * self.confidence:g}%"
        if self.bootstrap_interval is None:
            return f"{level} {ols}; one seed, no bootstrap"
        return f"{level} hull of the {ols} and the seed-bootstrap percentile interval ({self.n_seeds} seeds)"

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The fitted line exp(intercept) * x ** exponent at the points x (any shape)."""
        return np.exp(self.intercept) * np.asarray(x, dtype=np.float64) ** self.exponent


def fit_rate(
    x: np.ndarray,
    values: np.ndarray,
    fit_from: float | None = None,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    floor: float | None = None,
) -> RateFit:
    """Fit log(mean over seeds of values) = intercept + exponent * log x (see the module docstring).

    Args:
        x: (P,) finite, positive, strictly increasing record points (T, or gamma + T).
        values: (S, P) finite, nonnegative measurements for S seeds; a (P,) array is one seed.
        fit_from: fit only the points with x >= fit_from (None: all points).
        n_boot: number of bootstrap replicates over seeds (unused when S = 1).
        confidence: level of the interval, in (0, 1).
        seed: seed of ``numpy.random.default_rng`` for the bootstrap; the fit is deterministic
            given it.
        floor: points whose mean is <= floor (at machine precision) are dropped and counted in
            ``RateFit.n_floored``; None means 0 (a zero mean has no logarithm).

    Raises:
        ValueError: naming the bad argument, or ``values`` when fewer than 3 points remain.
    """
    x = as_record_points(x)
    values = as_values(values, x.size, nonnegative=True)
    n_boot = as_count(n_boot, "n_boot", minimum=1)
    confidence = as_confidence(confidence)
    seed = as_count(seed, "seed", minimum=0)
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
    half = float(stats.t.ppf(0.5 + confidence / 2.0, log_x.size - 2)) * slope_se
    ols_interval = (slope - half, slope + half)
    n_seeds = values.shape[0]
    boot = None
    if n_seeds >= 2:
        boot = _bootstrap_interval(log_x, values[:, keep], floor_value, n_boot, confidence, seed)
    lo, hi = ols_interval if boot is None else (min(ols_interval[0], boot[0]), max(ols_interval[1], boot[1]))
    return RateFit(
        exponent=slope,
        interval=(lo, hi),
        intercept=intercept,
        n_points=int(keep.sum()),
        n_seeds=n_seeds,
        x_used=tuple(float(v) for v in x[keep]),
        y_mean_used=tuple(float(v) for v in mean[keep]),
        residual_std=residual_std,
        confidence=confidence,
        ols_interval=ols_interval,
        bootstrap_interval=boot,
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


def _bootstrap_interval(
    log_x: np.ndarray, values: np.ndarray, floor: float, n_boot: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile interval of the OLS slope over ``n_boot`` resamplings of the seed rows of values (S, n).

    Resampling S rows with replacement is drawing multinomial counts (S; 1/S, ..., 1/S) per
    replicate, so the replicate means are counts @ values / S, shape (n_boot, n).
    """
    n_seeds = values.shape[0]
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_seeds, np.full(n_seeds, 1.0 / n_seeds), size=n_boot)
    means = counts @ values / n_seeds
    mask = means > floor
    n_kept = mask.sum(axis=1)
    if np.any(n_kept < 2):
        return -math.inf, math.inf
    weights = mask.astype(np.float64)
    log_y = np.log(np.where(mask, means, 1.0))
    mean_x = weights @ log_x / n_kept
    mean_y = (weights * log_y).sum(axis=1) / n_kept
    dx = weights * (log_x[None, :] - mean_x[:, None])
    slopes = (dx * (log_y - mean_y[:, None])).sum(axis=1) / (dx * dx).sum(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.percentile(slopes, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return float(lo), float(hi)


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
