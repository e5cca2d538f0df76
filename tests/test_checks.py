"""Tests for convergence.checks: each checker must PASS, FAIL and be INCONCLUSIVE on cue."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from convergence.checks import check_lower_bound, check_ordering, check_rate_exponent, check_upper_bound
from convergence.verdict import Hypothesis, Status

X = np.geomspace(10.0, 1.0e4, 10)
MET = Hypothesis("eta_1 <= 1/(4L)", True, "eta_1 = 0.05 <= 0.0625")
UNMET = Hypothesis("K > CMN", False, "K = 10 > C M N = 500 is false")


def noisy(curve: np.ndarray, n_seeds: int = 8, noise: float = 0.02, seed: int = 0) -> np.ndarray:
    """values[s, j] = curve_j (1 + noise * eps_sj), eps ~ N(0, 1): mean curve_j in expectation."""
    rng = np.random.default_rng(seed)
    return curve * (1.0 + noise * rng.standard_normal((n_seeds, curve.size)))


class TestRateExponent:
    def test_matching_rate_passes(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0)
        assert verdict.status is Status.PASS
        assert verdict.measured == pytest.approx(-1.0, abs=0.02)
        assert verdict.theoretical == -1.0
        assert verdict.interval[1] <= -0.95

    def test_faster_decay_passes_an_upper_rate(self) -> None:
        # x^-2 decays at least as fast as x^-1: the upper-rate claim holds.
        assert check_rate_exponent("r", X, noisy(X**-2.0), -1.0).status is Status.PASS

    def test_deterministic_power_law_passes(self) -> None:
        assert check_rate_exponent("r", X, 5.0 / X, -1.0).status is Status.PASS

    def test_slower_rate_fails(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 * X**-0.5), -1.0)
        assert verdict.status is Status.FAIL
        assert verdict.interval[0] > -0.95
        assert "slower" in verdict.notes

    def test_plateau_fails(self) -> None:
        # A constant (e.g. FedAvg stuck at a biased fixed point): fitted exponent ~ 0 > -1.
        verdict = check_rate_exponent("r", X, noisy(np.full(X.size, 0.3)), -1.0)
        assert verdict.status is Status.FAIL
        assert verdict.measured == pytest.approx(0.0, abs=0.02)

    def test_exact_plateau_fails_with_one_seed(self) -> None:
        assert check_rate_exponent("r", X, np.full(X.size, 0.3), -1.0).status is Status.FAIL

    def test_wide_interval_is_inconclusive(self) -> None:
        # Two seeds decaying as x^-1 and x^-0.5: resampling seeds gives slopes from -1 to -0.5,
        # an interval that contains the threshold -1 + 0.05.
        values = np.vstack([X**-1.0, X**-0.5])
        verdict = check_rate_exponent("r", X, values, -1.0)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.interval[0] <= -0.95 < verdict.interval[1]
        assert "cannot tell" in verdict.notes

    def test_too_few_points_is_inconclusive(self) -> None:
        verdict = check_rate_exponent("r", X[:3], noisy(5.0 / X[:3]), -1.0)
        assert verdict.status is Status.INCONCLUSIVE
        assert "only 3 usable points" in verdict.notes
        assert math.isfinite(verdict.measured)  # 3 points still get fitted and reported

    def test_points_at_floor_leave_too_few(self) -> None:
        values = 5.0 / X
        values[2:] = 1e-17
        verdict = check_rate_exponent("r", X, values, -1.0, floor=1e-15)
        assert verdict.status is Status.INCONCLUSIVE
        assert verdict.interval is None and math.isnan(verdict.measured)
        assert verdict.evidence["used"] == [True, True] + [False] * (X.size - 2)

    def test_fit_from_excludes_the_transient(self) -> None:
        # (50 + x)^-1 is flat for x << 50; the tail x >= 1000 decays as ~x^-0.97.
        values = noisy((50.0 + X) ** -1.0)
        assert check_rate_exponent("r", X, values, -1.0).status is Status.FAIL
        assert check_rate_exponent("r", X, values, -1.0, fit_from=1000.0).status is Status.PASS

    def test_unmet_hypothesis_is_inconclusive_and_named(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, hypotheses=(MET, UNMET), notes="Thm 1")
        assert verdict.status is Status.INCONCLUSIVE
        assert not verdict.hypotheses_met
        assert "K > CMN" in verdict.notes and "eta_1" not in verdict.notes
        assert "data alone give PASS" in verdict.notes
        assert verdict.notes.startswith("Thm 1; ")

    def test_met_hypotheses_keep_the_verdict(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0, hypotheses=[MET])
        assert verdict.status is Status.PASS and verdict.hypotheses == (MET,)

    def test_evidence_is_json_and_complete(self) -> None:
        verdict = check_rate_exponent("r", X, noisy(5.0 / X), -1.0)
        evidence = json.loads(json.dumps(verdict.to_json()))["evidence"]
        for key in ("x", "mean", "lo", "hi", "used", "fitted"):
            assert len(evidence[key]) == X.size
        np.testing.assert_allclose(evidence["fitted"], np.exp(evidence["intercept"]) * X ** evidence["exponent"])
        assert all(lo <= m <= hi for lo, m, hi in zip(evidence["lo"], evidence["mean"], evidence["hi"]))

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [
            ({"claimed_exponent": math.nan}, "claimed_exponent"),
            ({"tolerance": -0.1}, "tolerance"),
            ({"min_points": 2}, "min_points"),
            ({"hypotheses": ("not a hypothesis",)}, "hypotheses"),
            ({"x": -X}, "x"),
            ({"values": np.ones((3, 4))}, "values"),
            ({"n_boot": 0}, "n_boot"),
            ({"claim_id": ""}, "claim_id"),
        ],
    )
    def test_bad_input_names_the_argument(self, kwargs: dict, name: str) -> None:
        args = {"claim_id": "r", "x": X, "values": 5.0 / X, "claimed_exponent": -1.0}
        args.update(kwargs)
        with pytest.raises(ValueError, match=rf"^{name}:"):
            check_rate_exponent(**args)


class TestUpperBound:
    def test_bound_with_room_passes(self) -> None:
        bound = 10.0 / X
        verdict = check_upper_bound("u", X, noisy(5.0 / X), bound)
        assert verdict.status is Status.PASS
        assert verdict.measured == pytest.approx(0.5, abs=0.02)  # looseness ~ 2
        assert verdict.theoretical == 1.0
        assert verdict.interval[0] <= verdict.measured <= verdict.interval[1] < 1.0

    def test_deterministic_value_on_the_bound_passes(self) -> None:
        # S = 1: the interval is the point itself, and mean = bound satisfies hi <= bound.
        verdict = check_upper_bound("u", X, 10.0 / X, 10.0 / X)
        assert verdict.status is Status.PASS and verdict.measured == pytest.approx(1.0)

    def test_violation_at_one_point_fails_and_names_it(self) -> None:
        curve = 5.0 / X
        curve[4] = 15.0 / X[4]  # 1.5 times the bound at x[4] only
        verdict = check_upper_bound("u", X, noisy(curve), 10.0 / X)
        assert verdict.status is Status.FAIL
        assert f"x = {X[4]:g}" in verdict.notes
        assert "1 of 10 points" in verdict.notes
        assert verdict.evidence["violations"] == [X[4]]
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

    def test_student_t_interval(self) -> None:
        values = noisy(5.0 / X, n_seeds=5, noise=0.2, seed=3)
        verdict = check_upper_bound("u", X, values, 10.0 / X, confidence=0.9)
        lo, hi = stats.t.interval(0.9, 4, loc=values.mean(axis=0), scale=stats.sem(values, axis=0))
        np.testing.assert_allclose(verdict.evidence["lo"], lo, rtol=1e-12)
        np.testing.assert_allclose(verdict.evidence["hi"], hi, rtol=1e-12)
        np.testing.assert_allclose(verdict.evidence["ratio"], values.mean(axis=0) * X / 10.0, rtol=1e-12)

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [
            ({"bound": np.ones(3)}, "bound"),
            ({"bound": -np.ones(X.size)}, "bound"),
            ({"bound": np.full(X.size, np.inf)}, "bound"),
            ({"values": np.full(X.size, np.nan)}, "values"),
            ({"x": np.linspace(0.0, 1.0, X.size)}, "x"),
            ({"confidence": 0.0}, "confidence"),
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

    def test_values_below_fail_and_name_the_point(self) -> None:
        bound = np.ones(X.size)
        curve = np.full(X.size, 2.0)
        curve[7] = 0.5  # half the bound at x[7] only
        verdict = check_lower_bound("l", X, noisy(curve), bound)
        assert verdict.status is Status.FAIL
        assert f"x = {X[7]:g}" in verdict.notes
        assert verdict.evidence["violations"] == [X[7]]
        assert verdict.measured == pytest.approx(0.5, abs=0.02)
        assert verdict.interval[1] < 1.0

    def test_values_below_everywhere_fail(self) -> None:
        verdict = check_lower_bound("l", X, noisy(np.full(X.size, 0.5)), np.ones(X.size))
        assert verdict.status is Status.FAIL
        assert f"{X.size} of {X.size} points" in verdict.notes

    def test_crossing_interval_is_inconclusive(self) -> None:
        bound = np.ones(X.size)
        verdict = check_lower_bound("l", X, np.vstack([0.9 * bound, 1.1 * bound]), bound)
        assert verdict.status is Status.INCONCLUSIVE

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

    def test_mismatched_lengths_name_the_arguments(self) -> None:
        with pytest.raises(ValueError, match="smaller/larger"):
            check_ordering("o", np.ones(3), np.ones(4))
