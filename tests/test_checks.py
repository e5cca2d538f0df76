"""Tests for convergence.checks: each checker must PASS, FAIL and be INCONCLUSIVE on cue."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from convergence import check_lower_bound, check_ordering, check_rate_exponent, check_upper_bound
from convergence.check_rules import holm_adjusted, holm_rejections
from convergence.verdict import Hypothesis, Status

X = np.geomspace(10.0, 1.0e4, 10)
MET = Hypothesis("eta_1 <= 1/(4L)", True, "eta_1 = 0.05 <= 0.0625")
UNMET = Hypothesis("K > CMN", False, "K = 10 > C M N = 500 is false")


def noisy(curve: np.ndarray, n_seeds: int = 8, noise: float = 0.02, seed: int = 0) -> np.ndarray:
    """values[s, j] = curve_j (1 + noise * eps_sj), eps ~ N(0, 1): mean curve_j in expectation."""
    rng = np.random.default_rng(seed)
    return curve * (1.0 + noise * rng.standard_normal((n_seeds, curve.size)))


TOL = 0.05  # absolute tolerance on the exponent used by these tests (5% of the claimed -1)


def kinked(tail_exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """x over 4 decades (6 points a decade) and x^-1.3 up to 10^3.5, continued with slope
    tail_exponent over the last half-decade: a fit over all points sees about -1.23."""
    x = np.geomspace(1.0, 1.0e4, 25)
    knee = 10**3.5
    return x, np.where(x <= knee, x**-1.3, knee**-1.3 * (x / knee) ** tail_exponent)


class TestRateExponent:
    def test_matching_rate_passes(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, tolerance=TOL)
        assert verdict.status is Status.PASS
        assert verdict.measured == pytest.approx(-1.0, abs=0.02)
        assert verdict.theoretical == -1.0
        assert verdict.interval[1] <= -0.95
        assert verdict.evidence["tail"]["status"] == "PASS"

    def test_faster_decay_passes_an_upper_rate(self) -> None:
        # x^-2 decays at least as fast as x^-1: the upper-rate claim holds.
        assert check_rate_exponent("r", X, noisy(X**-2.0), -1.0, tolerance=TOL).status is Status.PASS

    def test_deterministic_power_law_passes(self) -> None:
        assert check_rate_exponent("r", X, 5.0 / X, -1.0, tolerance=TOL, deterministic=True).status is Status.PASS

    def test_one_stochastic_seed_is_inconclusive(self) -> None:
        # The same single row, declared stochastic: no seed-to-seed variance, so no decision.
        verdict = check_rate_exponent("r", X, noisy(5.0 / X, n_seeds=1), -1.0, tolerance=TOL)
        assert verdict.status is Status.INCONCLUSIVE
        assert "one seed of a stochastic run" in verdict.notes and "data alone give PASS" in verdict.notes
        assert verdict.evidence["n_seeds"] == 1 and verdict.evidence["deterministic"] is False

    def test_slower_rate_fails(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 * X**-0.5), -1.0, tolerance=TOL)
        assert verdict.status is Status.FAIL
        assert verdict.interval[0] > -0.95
        assert "slower" in verdict.notes

    def test_plateau_fails(self) -> None:
        # A constant (e.g. FedAvg stuck at a biased fixed point): fitted exponent ~ 0 > -1.
        verdict = check_rate_exponent("r", X, noisy(np.full(X.size, 0.3)), -1.0, tolerance=TOL)
        assert verdict.status is Status.FAIL
        assert verdict.measured == pytest.approx(0.0, abs=0.02)

    def test_exact_plateau_fails_with_one_deterministic_seed(self) -> None:
        verdict = check_rate_exponent("r", X, np.full(X.size, 0.3), -1.0, tolerance=TOL, deterministic=True)
        assert verdict.status is Status.FAIL

    def test_flattened_tail_fails_although_the_whole_fit_passes(self) -> None:
        # x^-1.3 then flat over the last half-decade: the fit over all 25 points gives about -1.23
        # with an interval below -0.95 (it alone would PASS), but the tail's slope is exactly 0.
        x, curve = kinked(0.0)
        verdict = check_rate_exponent("r", x, curve, -1.0, tolerance=TOL, deterministic=True)
        assert verdict.interval[1] < -0.95
        assert verdict.status is Status.FAIL
        tail = verdict.evidence["tail"]
        assert tail["x_from"] == pytest.approx(10**3.5) and tail["n_points"] == 4
        assert tail["exponent"] == pytest.approx(0.0, abs=1e-12) and tail["status"] == "FAIL"
        assert "flattened" in verdict.notes

    def test_tail_that_disagrees_without_proof_is_inconclusive(self) -> None:
        # Slope -0.8 over the last half-decade with 20% noise over 4 seeds: the tail's estimate is
        # above -0.95 but its interval (1-2 df) reaches below it, so the data cannot tell.
        x, curve = kinked(-0.8)
        verdict = check_rate_exponent("r", x, noisy(curve, n_seeds=4, noise=0.2), -1.0, tolerance=TOL)
        tail = verdict.evidence["tail"]
        assert verdict.interval[1] < -0.95 and tail["exponent"] > -0.95 and tail["interval"][0] <= -0.95
        assert verdict.status is Status.INCONCLUSIVE and tail["status"] == "INCONCLUSIVE"
        assert "may have flattened" in verdict.notes

    def test_tolerance_absolute_and_relative(self) -> None:
        # threshold = claimed + max(tolerance, relative_tolerance |claimed|): x^-0.93 against -1.
        curve = X**-0.93
        strict = check_rate_exponent("r", X, curve, -1.0, tolerance=0.01, deterministic=True)
        relative = check_rate_exponent("r", X, curve, -1.0, tolerance=0.01, relative_tolerance=0.1, deterministic=True)
        assert strict.status is Status.FAIL and strict.evidence["threshold"] == pytest.approx(-0.99)
        assert relative.status is Status.PASS and relative.evidence["threshold"] == pytest.approx(-0.9)

    def test_tolerance_is_required(self) -> None:
        with pytest.raises(TypeError, match="tolerance"):
            check_rate_exponent("r", X, 5.0 / X, -1.0)  # type: ignore[call-arg]

    def test_interval_is_the_student_t_interval(self) -> None:
        # The three points of test_rates' hand computation: slope -0.95, se = sqrt(0.0075) on 1 df;
        # the interval -0.95 +- t_{1, 0.975} se = [-2.05, 0.15] contains -0.95: INCONCLUSIVE.
        x = np.exp(np.array([0.0, 1.0, 2.0]))
        y = np.exp(np.array([0.0, -1.1, -1.9]))
        verdict = check_rate_exponent("r", x, y, -1.0, tolerance=TOL, deterministic=True, min_points=3)
        half = stats.t.ppf(0.975, 1) * math.sqrt(0.0075)
        assert verdict.interval == pytest.approx((-0.95 - half, -0.95 + half), rel=1e-12)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.evidence["interval_method"] == "95% OLS Student-t interval (1 df); one seed, no seed variance"

    def test_wide_interval_is_inconclusive(self) -> None:
        # Two seeds decaying as x^-1 and x^-0.5: leaving one out gives the slopes -0.5 and -1, a
        # jackknife se of 0.25 on 1 df, an interval that contains the threshold -1 + 0.05.
        values = np.vstack([X**-1.0, X**-0.5])
        verdict = check_rate_exponent("r", X, values, -1.0, tolerance=TOL)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.interval[0] <= -0.95 < verdict.interval[1]
        assert "cannot tell" in verdict.notes

    def test_too_few_points_is_inconclusive(self) -> None:
        verdict = check_rate_exponent("r", X[:3], noisy(5.0 / X[:3]), -1.0, tolerance=TOL)
        assert verdict.status is Status.INCONCLUSIVE
        assert "only 3 usable points" in verdict.notes
        assert math.isfinite(verdict.measured)  # 3 points still get fitted and reported

    def test_points_at_floor_leave_too_few(self) -> None:
        values = 5.0 / X
        values[2:] = 1e-17
        verdict = check_rate_exponent("r", X, values, -1.0, tolerance=TOL, floor=1e-15, deterministic=True)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.interval is None and math.isnan(verdict.measured)
        assert verdict.evidence["used"] == (True, True) + (False,) * (X.size - 2)  # read-only: tuples

    def test_fit_from_excludes_the_transient(self) -> None:
        # (50 + x)^-1 is flat for x << 50; the tail x >= 1000 decays as ~x^-0.97.
        values = noisy((50.0 + X) ** -1.0)
        assert check_rate_exponent("r", X, values, -1.0, tolerance=TOL).status is Status.FAIL
        verdict = check_rate_exponent("r", X, values, -1.0, tolerance=TOL, fit_from=1000.0)
        assert verdict.status is Status.PASS
        assert verdict.evidence["tail"]["x_from"] >= 1000.0  # the tail never reaches before fit_from

    def test_unmet_hypothesis_is_inconclusive_and_named(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, tolerance=TOL, hypotheses=(MET, UNMET),
                                      notes="Thm 1")
        assert verdict.status is Status.INCONCLUSIVE
        assert not verdict.hypotheses_met
        assert "K > CMN" in verdict.notes and "eta_1" not in verdict.notes
        assert "data alone give PASS" in verdict.notes
        assert verdict.notes.startswith("Thm 1; ")

    def test_met_hypotheses_keep_the_verdict(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, tolerance=TOL, hypotheses=[MET])
        assert verdict.status is Status.PASS and verdict.hypotheses == (MET,)

    def test_evidence_is_json_and_complete(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, tolerance=TOL)
        evidence = json.loads(json.dumps(verdict.to_json()))["evidence"]
        for key in ("x", "mean", "lo", "hi", "used", "fitted"):
            assert len(evidence[key]) == X.size
        np.testing.assert_allclose(evidence["fitted"], np.exp(evidence["intercept"]) * X ** evidence["exponent"])
        assert all(lo <= m <= hi for lo, m, hi in zip(evidence["lo"], evidence["mean"], evidence["hi"]))
        assert evidence["interval_method"] == "95% Student-t interval (7 df) with the delete-one jackknife over 8 seeds"
        assert set(evidence["tail"]) == {"x_from", "x_to", "n_points", "exponent", "intercept", "interval", "p_value",
                                         "status"}
        assert evidence["fit_range"] == [X[0], X[-1]] and evidence["tail"]["x_to"] == X[-1]
        assert set(evidence["misfit"]) == {"residual_std", "ols_interval"}

    def test_p_fail_by_hand(self) -> None:
        # Seeds x^-0.3 and x^-0.5 against claimed -1 (threshold -0.95): leaving one seed out leaves
        # an exact power law, so the jackknife slopes are -0.5 and -0.3 on both fits, se =
        # sqrt(1/2 (0.1^2 + 0.1^2)) = 0.1 on 1 df; each fit's p-value is twice its one-sided p-value of
        # "exponent <= -0.95", 2 t_1.sf((slope of the log mean + 0.95) / 0.1), and p_fail = min(1, 2 min(p_whole,
        # p_tail)) (Bonferroni over the two fits).
        values = np.vstack([X**-0.3, X**-0.5])
        verdict = check_rate_exponent("r", X, values, -1.0, tolerance=TOL)
        log_mean = np.log(values.mean(axis=0))
        tail = X >= verdict.evidence["tail"]["x_from"]
        slopes = [stats.linregress(np.log(X[m]), log_mean[m]).slope for m in (np.ones(X.size, bool), tail)]
        p_values = [2 * stats.t.sf((slope + 0.95) / 0.1, 1) for slope in slopes]
        assert verdict.measured == pytest.approx(slopes[0], rel=1e-12)
        assert verdict.evidence["p_value"] == pytest.approx(p_values[0], rel=1e-9)
        assert verdict.evidence["tail"]["p_value"] == pytest.approx(p_values[1], rel=1e-9)
        assert verdict.p_fail == pytest.approx(min(1.0, 2 * min(p_values)), rel=1e-9)
        assert verdict.status is Status.INCONCLUSIVE and verdict.p_fail > 0.05  # 1 df: t_1 cannot tell

    @pytest.mark.parametrize("confidence", [0.9, 0.95])
    def test_fails_exactly_when_p_fail_is_at_most_alpha(self, confidence: float) -> None:
        # The check's FAIL rule and its p_fail agree: FAIL at its confidence iff p_fail <= 1 - confidence,
        # over slopes from well below to well above the threshold, noise levels and seed counts.
        rng = np.random.default_rng(0)
        statuses = set()
        for trial in range(120):
            exponent, noise, n_seeds = rng.uniform(-1.3, -0.6), rng.choice([0.02, 0.15]), int(rng.integers(2, 9))
            verdict = check_rate_exponent("r", X, noisy(X**exponent, n_seeds, noise, trial), -1.0, tolerance=TOL,
                                          confidence=confidence)
            assert (verdict.status is Status.FAIL) == (verdict.p_fail <= 1 - confidence), verdict.notes
            statuses.add(verdict.status)
        assert statuses == set(Status)  # every outcome occurred

    def test_decay_claim_needs_a_negative_threshold(self) -> None:
        # Claimed -0.02 with tolerance 0.05 would put the threshold at +0.03, where a flat curve PASSes.
        flat = np.full(X.size, 0.3)
        with pytest.raises(ValueError, match=r"^tolerance: 0.05 lifts the threshold of the decay claim -0.02 to 0.03"):
            check_rate_exponent("r", X, flat, -0.02, tolerance=0.05, deterministic=True)
        # A claimed exponent >= 0 bounds growth ("grows at most like x^0", ding2020.speedup's M sweep):
        # any threshold is allowed, the flat curve PASSes and a growing one FAILs.
        assert check_rate_exponent("r", X, flat, 0.0, tolerance=0.25, deterministic=True).status is Status.PASS
        assert check_rate_exponent("r", X, X**0.5, 0.0, tolerance=0.25, deterministic=True).status is Status.FAIL

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [
            ({"claimed_exponent": math.nan}, "claimed_exponent"),
            ({"tolerance": -0.1}, "tolerance"),
            ({"relative_tolerance": math.inf}, "relative_tolerance"),
            ({"deterministic": 1}, "deterministic"),
            ({"tail_decades": 0.0}, "tail_decades"),
            ({"min_points": 2}, "min_points"),
            ({"hypotheses": ("not a hypothesis",)}, "hypotheses"),
            ({"x": -X}, "x"),
            ({"values": np.ones((3, 4))}, "values"),
            ({"claim_id": ""}, "claim_id"),
            # a decay claim whose threshold is not negative: -0.02 + 0.05 = +0.03 would PASS a flat curve
            ({"claimed_exponent": -0.02, "tolerance": 0.05}, "tolerance"),
            ({"claimed_exponent": -0.5, "tolerance": 0.0, "relative_tolerance": 1.0}, "relative_tolerance"),
        ],
    )
    def test_bad_input_names_the_argument(self, kwargs: dict, name: str) -> None:
        args = {"claim_id": "r", "x": X, "values": 5.0 / X, "claimed_exponent": -1.0, "tolerance": TOL}
        args.update(kwargs)
        with pytest.raises(ValueError, match=rf"^{name}:"):
            check_rate_exponent(**args)


def seeds_with_t_statistic(bound: float, p_values: list[float], spread: float = 0.01) -> np.ndarray:
    """Two seeds per point, bound + t_j spread +- spread: mean bound + t_j spread, sd sqrt(2) spread,
    se = spread, so the one-sided statistic is t_j = t.isf(p_j, 1) and its p-value is p_j."""
    t = stats.t.isf(np.asarray(p_values), 1)
    mean = bound + t * spread
    return np.vstack([mean - spread, mean + spread])


class TestUpperBound:
    def test_bound_with_room_passes_as_an_upper_bound(self) -> None:
        bound = 10.0 / X
        verdict = check_upper_bound("u", X, noisy(5.0 / X), bound)
        assert verdict.status is Status.PASS
        assert verdict.measured == pytest.approx(0.5, abs=0.02)  # looseness ~ 2
        assert verdict.theoretical == 1.0
        assert verdict.interval[0] <= verdict.measured <= verdict.interval[1] < 1.0
        assert verdict.tightness.ratio == verdict.measured
        assert verdict.tightness.label == "upper bound" and "upper bound (" in verdict.notes

    def test_bound_within_ten_percent_is_tight(self) -> None:
        verdict = check_upper_bound("u", X, 0.95 * 10.0 / X, 10.0 / X, deterministic=True)
        assert verdict.status is Status.PASS
        assert verdict.tightness.ratio == pytest.approx(0.95) and verdict.tightness.label == "tight"

    def test_bound_crossed_is_labelled_violated(self) -> None:
        # mean/bound = 1.2 > 1: the label must not call a crossed bound "tight" (the status says FAIL too).
        verdict = check_upper_bound("u", X, 1.2 * 10.0 / X, 10.0 / X, deterministic=True)
        assert verdict.status is Status.FAIL and verdict.tightness.label == "violated"
        lower = check_lower_bound("l", X, np.full(X.size, 0.8), np.ones(X.size), deterministic=True)
        assert lower.status is Status.FAIL and lower.tightness.label == "violated"

    def test_deterministic_value_on_the_bound_passes(self) -> None:
        # One deterministic row: the limits are the point itself, and mean = bound satisfies hi <= bound.
        verdict = check_upper_bound("u", X, 10.0 / X, 10.0 / X, deterministic=True)
        assert verdict.status is Status.PASS and verdict.measured == pytest.approx(1.0)
        assert verdict.interval == (pytest.approx(1.0), pytest.approx(1.0))

    def test_one_stochastic_seed_is_inconclusive(self) -> None:
        for curve, alone in ((5.0 / X, "PASS"), (20.0 / X, "FAIL")):
            verdict = check_upper_bound("u", X, curve, 10.0 / X)
            assert verdict.status is Status.INCONCLUSIVE
            assert "one seed of a stochastic run" in verdict.notes and f"data alone give {alone}" in verdict.notes

    def test_violation_at_one_point_fails_and_names_it(self) -> None:
        curve = 5.0 / X
        curve[4] = 15.0 / X[4]  # 1.5 times the bound at x[4] only
        verdict = check_upper_bound("u", X, noisy(curve), 10.0 / X)
        assert verdict.status is Status.FAIL
        assert f"x = {X[4]:g}" in verdict.notes
        assert "1 of 10 points" in verdict.notes
        assert verdict.evidence["violations"] == (X[4],)
        assert verdict.measured == pytest.approx(1.5, abs=0.05)
        assert verdict.interval[0] > 1.0

    def test_crossing_interval_is_inconclusive(self) -> None:
        # Two seeds at 0.9 and 1.1 times the bound: mean = bound, the t interval straddles it.
        bound = 10.0 / X
        verdict = check_upper_bound("u", X, np.vstack([0.9 * bound, 1.1 * bound]), bound)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.interval[0] < 1.0 < verdict.interval[1]

    def test_unmet_hypothesis_is_inconclusive_even_if_violated(self) -> None:
        verdict = check_upper_bound("u", X, noisy(20.0 / X), 10.0 / X, hypotheses=(UNMET,))
        assert verdict.status is Status.INCONCLUSIVE
        assert "K > CMN" in verdict.notes and "data alone give FAIL" in verdict.notes

    def test_confidence_limits_t_and_gamma(self) -> None:
        # alpha = 0.1, P = 10, S = 5, positive data: hi = the larger of mean + t_{4, 0.9} se and the
        # gamma limit 2 S k* mean / chi2_{0.1}(2 S k*) (k* restated here from the ProUCL guide, sec. 2.3),
        # the PASS test; lo = mean - t_{4, 1 - 0.05/10} se, the simultaneous band of Holm's FAIL test at
        # alpha/2 = 0.05 (the other alpha/2 goes to the mean-ratio test).
        values = noisy(5.0 / X, n_seeds=5, noise=0.2, seed=3)
        verdict = check_upper_bound("u", X, values, 10.0 / X, confidence=0.9)
        mean, se = values.mean(axis=0), stats.sem(values, axis=0)
        spread = np.log(mean) - np.log(values).mean(axis=0)
        k = (3 - spread + np.sqrt((spread - 3) ** 2 + 24 * spread)) / (12 * spread)
        k_star = np.maximum((5 - 3) * k / 5 + 2 / 15, 1e-3)
        gamma_hi = 10 * k_star * mean / stats.chi2.ppf(0.1, 10 * k_star)
        np.testing.assert_allclose(verdict.evidence["hi"], np.maximum(mean + stats.t.ppf(0.9, 4) * se, gamma_hi),
                                   rtol=1e-12)
        assert np.all(gamma_hi > mean + stats.t.ppf(0.9, 4) * se)  # skewed enough here for gamma to be the wider
        np.testing.assert_allclose(verdict.evidence["lo"], mean - stats.t.ppf(0.995, 4) * se, rtol=1e-12)
        np.testing.assert_allclose(verdict.evidence["ratio"], mean * X / 10.0, rtol=1e-12)
        np.testing.assert_allclose(verdict.evidence["p_violation"], stats.t.sf((mean - 10.0 / X) / se, 4), rtol=1e-12)
        test = verdict.evidence["test"]
        assert test["alpha"] == pytest.approx(0.1) and test["n_points"] == X.size and test["n_seeds"] == 5
        assert test["method"].startswith("FAIL: Holm over 10 one-sided tests and the mean-ratio test, each at 0.05")

    def test_a_point_with_a_negative_value_uses_student_t_alone(self) -> None:
        values = noisy(np.full(X.size, 0.5), n_seeds=5, noise=0.2, seed=3)
        values[0] = -0.1  # one negative value per point: not gamma-like
        verdict = check_upper_bound("u", X, values, np.full(X.size, 2.0), confidence=0.9)
        mean, se = values.mean(axis=0), stats.sem(values, axis=0)
        np.testing.assert_allclose(verdict.evidence["hi"], mean + stats.t.ppf(0.9, 4) * se, rtol=1e-12)
        assert verdict.evidence["test"]["limits"] == "Student t"

    def test_holm_steps_down(self) -> None:
        # p = (0.01, 0.02, 0.3) at alpha = 0.05: Holm compares with 0.05/3, 0.05/2, 0.05 and rejects
        # the first two (Bonferroni, 0.05/3 for all, would reject only the first); the third stays.
        np.testing.assert_array_equal(holm_rejections(np.array([0.01, 0.02, 0.3]), 0.05), [True, True, False])
        np.testing.assert_allclose(holm_adjusted(np.array([0.01, 0.02, 0.3])), [0.03, 0.04, 0.3])
        # In the check Holm runs at alpha/2 = 0.025 (P >= 2): p = (0.005, 0.01, 0.3) meets 0.025/3 and
        # 0.025/2, the third does not.
        x = np.array([1.0, 2.0, 3.0])
        verdict = check_upper_bound("u", x, seeds_with_t_statistic(1.0, [0.005, 0.01, 0.3]), np.ones(3))
        assert verdict.status is Status.FAIL
        np.testing.assert_allclose(verdict.evidence["p_violation"], [0.005, 0.01, 0.3], rtol=1e-9)
        assert verdict.evidence["violations"] == (1.0, 2.0)
        # p_fail: twice the smaller of the smallest Holm-adjusted p (3 x 0.005) and the mean-ratio test's p.
        assert verdict.p_fail == pytest.approx(2 * min(0.015, verdict.evidence["mean_ratio"]["p_value"]))

    def test_no_rejection_when_the_smallest_p_misses_its_holm_threshold(self) -> None:
        # p = (0.03, 0.03, 0.03) > 0.025/3: no point rejected; the mean ratio (two seeds at 1 + t +- 0.01,
        # the same t) has the same p = 0.03 > 0.025. The per-point 0.05 test would reject all three.
        verdict = check_upper_bound("u", np.array([1.0, 2.0, 3.0]), seeds_with_t_statistic(1.0, [0.03] * 3), np.ones(3))
        assert verdict.status is Status.INCONCLUSIVE and verdict.evidence["violations"] == ()
        assert verdict.evidence["mean_ratio"]["p_value"] == pytest.approx(0.03, rel=1e-6)

    def test_family_wise_error_is_controlled(self) -> None:
        # A true bound at 98% tightness at 200 points, 8 seeds with 10% noise, 400 fixed datasets.
        # Testing every point at 95% (the former rule) FAILs about 76% of them; Holm at alpha = 0.05
        # must FAIL at most alpha of them, up to 3 binomial standard errors.
        n_points, reps, alpha = 200, 400, 0.05
        x, bound = np.arange(1.0, n_points + 1), np.ones(n_points)
        per_point = holm = 0
        for rep in range(reps):
            values = 0.98 * (1.0 + 0.1 * np.random.default_rng(rep).standard_normal((8, n_points)))
            lo, _ = stats.t.interval(0.95, 7, loc=values.mean(axis=0), scale=stats.sem(values, axis=0))
            per_point += bool(np.any(lo > bound))
            holm += check_upper_bound("u", x, values, bound).status is Status.FAIL
        assert per_point / reps > 0.75
        assert holm / reps <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)

    def test_clearly_violated_bound_still_fails_at_200_points(self) -> None:
        # The same setting with the mean 1.4 times the bound at 5 of the 200 points: FAIL on every
        # dataset (t about 8.1 on 7 df against Holm's first threshold t_{7, 1 - 0.025/200} = 6.8).
        n_points = 200
        x, bound = np.arange(1.0, n_points + 1), np.ones(n_points)
        curve = np.full(n_points, 0.98)
        curve[[10, 50, 90, 130, 170]] = 1.4
        for rep in range(20):
            values = curve * (1.0 + 0.1 * np.random.default_rng(rep).standard_normal((8, n_points)))
            assert check_upper_bound("u", x, values, bound).status is Status.FAIL

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [
            ({"bound": np.ones(3)}, "bound"),
            ({"bound": -np.ones(X.size)}, "bound"),
            ({"bound": np.full(X.size, np.inf)}, "bound"),
            ({"values": np.full(X.size, np.nan)}, "values"),
            ({"x": np.linspace(0.0, 1.0, X.size)}, "x"),
            ({"confidence": 0.0}, "confidence"),
            ({"deterministic": "yes"}, "deterministic"),
        ],
    )
    def test_bad_input_names_the_argument(self, kwargs: dict, name: str) -> None:
        args = {"claim_id": "u", "x": X, "values": 5.0 / X, "bound": 10.0 / X}
        args.update(kwargs)
        with pytest.raises(ValueError, match=rf"^{name}:"):
            check_upper_bound(**args)


class TestLowerBound:
    def test_values_above_pass(self) -> None:
        verdict = check_lower_bound("l", X, noisy(np.full(X.size, 2.0)), np.ones(X.size))
        assert verdict.status is Status.PASS
        assert verdict.measured == pytest.approx(2.0, abs=0.05)
        assert verdict.tightness.label == "lower bound"

    def test_values_below_fail_and_name_the_point(self) -> None:
        bound = np.ones(X.size)
        curve = np.full(X.size, 2.0)
        curve[7] = 0.5  # half the bound at x[7] only
        verdict = check_lower_bound("l", X, noisy(curve), bound)
        assert verdict.status is Status.FAIL
        assert f"x = {X[7]:g}" in verdict.notes
        assert verdict.evidence["violations"] == (X[7],)
        assert verdict.measured == pytest.approx(0.5, abs=0.02)
        assert verdict.interval[1] < 1.0

    def test_values_below_everywhere_fail(self) -> None:
        verdict = check_lower_bound("l", X, noisy(np.full(X.size, 0.5)), np.ones(X.size))
        assert verdict.status is Status.FAIL
        assert f"{X.size} of {X.size} points" in verdict.notes

    def test_holm_steps_down_below_the_bound(self) -> None:
        # The mirror of the upper-bound case with values that take negative entries (Student t alone):
        # seeds below the bound with p = (0.005, 0.01, 0.3), Holm at alpha/2 rejects the first two.
        values = 2.0 - seeds_with_t_statistic(1.0, [0.005, 0.01, 0.3], spread=1.0)  # reflect around the bound 1
        verdict = check_lower_bound("l", np.array([1.0, 2.0, 3.0]), values, np.ones(3))
        np.testing.assert_allclose(verdict.evidence["p_violation"], [0.005, 0.01, 0.3], rtol=1e-9)
        assert verdict.status is Status.FAIL and verdict.evidence["violations"] == (1.0, 2.0)

    def test_two_skewed_seeds_cannot_show_a_mean_below_a_lower_bound(self) -> None:
        # Positive values, 2 seeds: the gamma method's shape k* <= 2/(3 S) = 1/3 admits a heavy right tail,
        # so "E q < 1" cannot be shown from (0.3, 0.35), though Student t alone would (p = 0.005).
        verdict = check_lower_bound("l", np.array([1.0]), np.array([[0.3], [0.35]]), np.ones(1))
        assert verdict.status is not Status.FAIL

    def test_crossing_interval_is_inconclusive(self) -> None:
        bound = np.ones(X.size)
        verdict = check_lower_bound("l", X, np.vstack([0.9 * bound, 1.1 * bound]), bound)
        assert verdict.status is Status.INCONCLUSIVE

    def test_deterministic_and_stochastic_single_rows(self) -> None:
        bound, curve = np.ones(X.size), np.full(X.size, 1.05)
        assert check_lower_bound("l", X, curve, bound, deterministic=True).status is Status.PASS
        assert check_lower_bound("l", X, curve, bound, deterministic=True).tightness.label == "tight"
        assert check_lower_bound("l", X, curve, bound).status is Status.INCONCLUSIVE

    def test_unmet_hypothesis_is_inconclusive(self) -> None:
        verdict = check_lower_bound("l", X, noisy(np.full(X.size, 2.0)), np.ones(X.size), hypotheses=(UNMET,))
        assert verdict.status is Status.INCONCLUSIVE and "K > CMN" in verdict.notes

    def test_bad_bound_names_the_argument(self) -> None:
        with pytest.raises(ValueError, match="^bound:"):
            check_lower_bound("l", X, np.ones(X.size), np.zeros(X.size))


class TestOrdering:
    """check_ordering: paired seeds, Student-t interval of the difference."""

    def test_clear_order_passes(self) -> None:
        rng = np.random.default_rng(0)
        base = rng.normal(size=8)
        v = check_ordering("o", base, base + 1.0 + 0.01 * rng.normal(size=8))
        assert v.status is Status.PASS and v.interval[0] > 0

    def test_reversed_order_fails(self) -> None:
        base = np.linspace(0, 1, 6)
        v = check_ordering("o", base + 0.5, base + np.array([0.01, -0.02, 0.0, 0.01, -0.01, 0.0]))
        assert v.status is Status.FAIL and v.interval[1] < 0

    def test_noise_only_is_inconclusive(self) -> None:
        rng = np.random.default_rng(1)
        v = check_ordering("o", rng.normal(size=10), rng.normal(size=10))
        assert v.status is Status.INCONCLUSIVE

    def test_one_seed_is_inconclusive_unless_deterministic(self) -> None:
        stochastic = check_ordering("o", np.array([0.0]), np.array([1.0]))
        assert stochastic.status is Status.INCONCLUSIVE and "one seed of a stochastic run" in stochastic.notes
        assert check_ordering("o", np.array([0.0]), np.array([1.0]), deterministic=True).status is Status.PASS

    def test_mismatched_lengths_name_the_arguments(self) -> None:
        with pytest.raises(ValueError, match="smaller/larger"):
            check_ordering("o", np.ones(3), np.ones(4))
