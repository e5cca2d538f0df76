"""Tests for convergence.rates.fit_rate: exponent recovery, intervals, floor, validation (coverage and power:
``tests/test_rate_statistics.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from convergence.rates import RateFit, fit_rate

X = np.geomspace(1.0, 1.0e4, 12)


def noisy_power_law(exponent: float, n_seeds: int, noise: float, seed: int) -> np.ndarray:
    """values[s, j] = 3 x_j^exponent (1 + noise * eps_sj), eps ~ N(0, 1): the seed mean is 3 x^a in expectation."""
    rng = np.random.default_rng(seed)
    return 3.0 * X**exponent * (1.0 + noise * rng.standard_normal((n_seeds, X.size)))


@settings(max_examples=40, deadline=None)
@given(
    exponent=st.floats(min_value=-3.0, max_value=0.0),
    log_c=st.floats(min_value=-5.0, max_value=5.0),
    n_seeds=st.integers(min_value=1, max_value=4),
)
def test_exact_power_law_is_recovered(exponent: float, log_c: float, n_seeds: int) -> None:
    # Every seed equals c x^a exactly, so log mean = log c + a log x with zero residual: the fit
    # returns a and log c up to rounding, and the interval collapses onto a.
    values = np.tile(math.exp(log_c) * X**exponent, (n_seeds, 1))
    fit = fit_rate(X, values)
    assert fit.exponent == pytest.approx(exponent, abs=1e-9)
    assert fit.intercept == pytest.approx(log_c, abs=1e-8)
    assert fit.interval[0] <= fit.exponent <= fit.interval[1]
    assert fit.interval[1] - fit.interval[0] < 1e-9
    assert fit.residual_std < 1e-10
    assert (fit.n_points, fit.n_seeds, fit.n_floored) == (X.size, n_seeds, 0)


def test_noisy_interval_contains_truth() -> None:
    # 5% multiplicative noise over 8 seeds; the interval is >= 95% so it should miss a rarely.
    # The datasets are fixed (seeds 0..19), so the count is deterministic.
    hits = 0
    for trial in range(20):
        fit = fit_rate(X, noisy_power_law(-1.0, 8, 0.05, trial))
        hits += fit.interval[0] <= -1.0 <= fit.interval[1]
        assert fit.exponent == pytest.approx(-1.0, abs=0.05)
    assert hits >= 18


def test_single_seed_interval_is_the_student_t_interval_by_hand() -> None:
    # Three points, log x = (0, 1, 2), log y = (0, -1.1, -1.9). By hand: mean log y = -1, the
    # deviations of log x are (-1, 0, 1), so sxx = 2, sxy = -1 - 0.9 = -1.9, slope = -0.95,
    # intercept = -1 + 0.95 = -0.05; residuals (0.05, -0.1, 0.05), RSS = 0.015 on n - 2 = 1 df,
    # se = sqrt(0.015 / 1 / 2) = sqrt(0.0075). The 95% interval is -0.95 +- t_{1, 0.975} se.
    x = np.exp(np.array([0.0, 1.0, 2.0]))
    y = np.exp(np.array([0.0, -1.1, -1.9]))
    fit = fit_rate(x, y)
    half = stats.t.ppf(0.975, 1) * math.sqrt(0.0075)
    assert fit.exponent == pytest.approx(-0.95, abs=1e-12)
    assert fit.intercept == pytest.approx(-0.05, abs=1e-12)
    assert fit.residual_std == pytest.approx(math.sqrt(0.015), rel=1e-12)
    assert fit.interval == pytest.approx((-0.95 - half, -0.95 + half), rel=1e-12)
    assert fit.ols_interval == fit.interval and fit.df == 1
    assert fit.standard_error == pytest.approx(math.sqrt(0.0075), rel=1e-12)
    assert fit.method == "95% OLS Student-t interval (1 df); one seed, no seed variance"
    # t_{1, 0.975} = 12.71 against the normal 1.96: the old interval was 6.5x too narrow.
    assert half / (stats.norm.ppf(0.975) * math.sqrt(0.0075)) == pytest.approx(6.48, abs=0.01)


def test_single_seed_interval_matches_linregress() -> None:
    # S = 1: no seed variance, the interval is slope +- t_{n-2, 0.975} se(slope), with se from an
    # independent OLS (scipy.stats.linregress) of log y on log x.
    values = noisy_power_law(-1.5, 1, 0.2, 3)
    fit = fit_rate(X, values)
    ref = stats.linregress(np.log(X), np.log(values[0]))
    t = stats.t.ppf(0.975, X.size - 2)
    assert fit.exponent == pytest.approx(ref.slope, rel=1e-12)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-12)
    assert fit.interval[0] == pytest.approx(ref.slope - t * ref.stderr, rel=1e-12)
    assert fit.interval[1] == pytest.approx(ref.slope + t * ref.stderr, rel=1e-12)


def test_interval_is_the_jackknife_t_interval() -> None:
    # S >= 2: the slope of the log mean +- t_{S-1, 0.975} se, se the delete-one jackknife over seeds
    # (Efron & Tibshirani 1993, eq. 11.5), here from S independent OLS fits (scipy.stats.linregress)
    # of the log mean of the other S - 1 seeds; the OLS interval is kept as the misfit's measure.
    values = noisy_power_law(-1.0, 5, 0.3, 4)
    fit = fit_rate(X, values)
    log_x = np.log(X)
    full = stats.linregress(log_x, np.log(values.mean(axis=0)))
    left_out = np.array([stats.linregress(log_x, np.log(np.delete(values, i, axis=0).mean(axis=0))).slope
                         for i in range(5)])
    se = math.sqrt(4 / 5 * np.sum((left_out - left_out.mean()) ** 2))
    half = stats.t.ppf(0.975, 4) * se
    assert fit.exponent == pytest.approx(full.slope, rel=1e-12)
    assert fit.standard_error == pytest.approx(se, rel=1e-10) and fit.df == 4
    assert fit.interval == pytest.approx((full.slope - half, full.slope + half), rel=1e-10)
    t = stats.t.ppf(0.975, X.size - 2)
    assert fit.ols_interval == pytest.approx((full.slope - t * full.stderr, full.slope + t * full.stderr), rel=1e-12)
    assert fit.method == "95% Student-t interval (4 df) with the delete-one jackknife over 5 seeds"


def test_jackknife_of_two_seeds_by_hand() -> None:
    # Seeds x^-1 and x^-0.5: leaving one out leaves the other, an exact power law, so the slopes are
    # -0.5 and -1, se = sqrt(1/2 ((-0.25)^2 + 0.25^2)) = 0.25 on 1 df.
    fit = fit_rate(X, np.vstack([X**-1.0, X**-0.5]))
    half = stats.t.ppf(0.975, 1) * 0.25
    assert fit.standard_error == pytest.approx(0.25, rel=1e-12)
    assert fit.interval == pytest.approx((fit.exponent - half, fit.exponent + half), rel=1e-12)
    assert -1.0 < fit.exponent < -0.5


def test_p_above_is_the_one_sided_student_t_p_value() -> None:
    # P(T_df >= (exponent - threshold) / se); the interval's lower end lies above the threshold iff
    # p_above < alpha / 2. Identical seeds (se = 0): 0 above the exponent's side, 1 otherwise.
    fit = fit_rate(X, np.vstack([X**-1.0, X**-0.5]))
    for threshold in (-1.5, fit.interval[0] - 1e-9, fit.interval[0] + 1e-9, -0.2):
        p = fit.p_above(threshold)
        assert p == pytest.approx(stats.t.sf((fit.exponent - threshold) / 0.25, 1), rel=1e-9)
        assert (p < 0.025) == (fit.interval[0] > threshold)
    exact = fit_rate(X, np.tile(X**-1.0, (3, 1)))
    assert exact.standard_error < 1e-12
    assert exact.p_above(-1.1) == 0.0 and exact.p_above(-0.9) == 1.0


def test_floor_drops_points_and_counts_them() -> None:
    values = X**-2.0
    values[-3:] = 1e-18  # converged to machine precision
    fit = fit_rate(X, values, floor=1e-15)
    assert fit.n_floored == 3
    assert fit.n_points == X.size - 3
    assert fit.x_used == tuple(X[:-3])
    assert fit.exponent == pytest.approx(-2.0, abs=1e-9)


def test_zero_mean_is_dropped_without_floor() -> None:
    values = X**-1.0
    values[-1] = 0.0
    fit = fit_rate(X, values)
    assert (fit.n_points, fit.n_floored) == (X.size - 1, 1)


def test_replicate_below_floor_is_refitted_without_it() -> None:
    # Seed A reaches 0 at the last point, seed B does not: the replicate without B (A alone) drops
    # that point and refits on the rest; the full fit keeps it (its mean is positive). Both
    # replicates are exact x^-1 laws, so the jackknife se is 0.
    a = X**-1.0
    a[-1] = 0.0
    fit = fit_rate(X, np.vstack([a, X**-1.0]))
    assert fit.n_points == X.size
    assert fit.standard_error == pytest.approx(0.0, abs=1e-12)
    assert math.isfinite(fit.interval[0]) and math.isfinite(fit.interval[1])


def test_replicate_with_fewer_than_two_points_cannot_tell() -> None:
    # Seed A is 0 after its first point: the replicate without B keeps one point, no slope, so the
    # interval is (-inf, inf) and the one-sided p-value 1/2 (t = 0: no evidence either way).
    a = X**-1.0
    a[1:] = 0.0
    fit = fit_rate(X, np.vstack([a, X**-1.0]))
    assert fit.standard_error == math.inf and fit.interval == (-math.inf, math.inf)
    assert fit.p_above(-1.0) == 0.5


def test_fit_from_selects_points_and_shifted_horizon() -> None:
    # values = (gamma + T)^-1 is an exact power law in x = gamma + T, not in T.
    T = np.geomspace(1.0, 1.0e4, 12)
    gamma = 50.0
    values = (gamma + T) ** -1.0
    shifted = fit_rate(gamma + T, values)
    assert shifted.exponent == pytest.approx(-1.0, abs=1e-12)
    tail = fit_rate(T, values, fit_from=1000.0)
    assert tail.x_used == tuple(T[T >= 1000.0])
    assert tail.exponent == pytest.approx(-1.0, abs=0.05)
    assert fit_rate(T, values).exponent > -0.8  # the pre-asymptotic plateau flattens the full fit


def test_predict_is_the_fitted_line() -> None:
    fit = fit_rate(X, 2.0 * X**-0.75)
    assert isinstance(fit, RateFit)
    np.testing.assert_allclose(fit.predict(X), 2.0 * X**-0.75, rtol=1e-10)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"x": np.array([1.0, 3.0, 2.0, 4.0])}, "x"),
        ({"x": np.array([0.0, 1.0, 2.0, 3.0])}, "x"),
        ({"x": np.array([1.0, 2.0, np.nan, 4.0])}, "x"),
        ({"x": np.ones((2, 2))}, "x"),
        ({"values": np.ones((2, 3))}, "values"),
        ({"values": np.array([[1.0, np.nan, 1.0, 1.0]])}, "values"),
        ({"values": np.array([[1.0, -1.0, 1.0, 1.0]])}, "values"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": math.nan}, "confidence"),
        ({"floor": -1.0}, "floor"),
        ({"fit_from": math.nan}, "fit_from"),
        ({"fit_from": 3.5}, "values"),  # one point left: too few to fit
    ],
)
def test_bad_input_names_the_argument(kwargs: dict, name: str) -> None:
    args = {"x": np.array([1.0, 2.0, 3.0, 4.0]), "values": np.array([[1.0, 0.5, 0.3, 0.25]])}
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}:"):
        fit_rate(**args)
