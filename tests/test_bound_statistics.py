"""Error rates of the explicit-bound checks on the data fedbound produces, uninformative bounds, and
family-wise control over a claim's sub-checks (convergence.bound_checks, proofs_check.combine_checks).

Monte Carlo error: a rate estimated from R independent replications has binomial standard error
sqrt(a (1 - a) / R); the assertions allow the nominal alpha = 0.05 plus 3 of those (R = 1,500:
0.05 + 0.017), and the old rule's measured rates (one-sided Student-t limits, the rule before this
test) lie well above that line, so each test fails on it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from convergence import Ceiling, FedAvgConfig, RunConfig, StepSize, check_upper_bound, run
from convergence.verdict import Status, Verdict
from problems import random_quadratic
from proofs_check import combine_checks

ALPHA = 0.05
ONE = np.array([1.0])


def _mc_limit(reps: int) -> float:
    """alpha plus 3 binomial standard errors of a rate estimated from ``reps`` replications."""
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def _pass_rate(groups: np.ndarray, bound: float) -> float:
    """Fraction of seed groups (R, S) on which "E q <= bound" PASSes at one record point."""
    return float(np.mean([check_upper_bound("q", ONE, g[:, None], np.array([bound])).status is Status.PASS
                          for g in groups]))


def _student_t_pass_rate(groups: np.ndarray, bound: float) -> float:
    """The old rule: PASS when mean + t_{S-1, 0.95} se <= bound."""
    S = groups.shape[1]
    upper = groups.mean(axis=1) + stats.t.ppf(1 - ALPHA, S - 1) * groups.std(axis=1, ddof=1) / math.sqrt(S)
    return float(np.mean(upper <= bound))


@pytest.fixture(scope="module")
def fedavg_gaps() -> np.ndarray:
    """F(w_T) - F* of 20,000 seeds of FedAvg with Li's Scheme I, K = 1 client a round, batch 1, E = 1,
    4 rounds, eta = 0.1, on a 4-client least-squares problem (d = 3): skewness about 3."""
    problem = random_quadratic(4, 3, 0.5, 4.0, 1.0, 8, 0)
    config = FedAvgConfig(1, 4, StepSize.constant(0.1), 1, 1.0, (4,), tuple(range(20_000)),
                          participation="scheme_i", participants=1)
    return run(RunConfig(problem.spec, config)).gap[:, -1]


@pytest.mark.parametrize("n_seeds", [4, 8])
def test_false_pass_rate_on_chi_square_data_is_at_most_alpha(n_seeds: int) -> None:
    # chi-square(1) per seed, E q = 1, bound 0.8: false, so PASS is an error. Measured: Student t 17% (S = 4)
    # and 11% (S = 8); the rule of bound_checks 3.2% and 3.0% (4,000 replications).
    reps = 1500
    groups = np.random.default_rng(0).standard_normal((reps, n_seeds)) ** 2
    assert _student_t_pass_rate(groups, 0.8) > _mc_limit(reps)  # the old rule fails this test
    assert _pass_rate(groups, 0.8) <= _mc_limit(reps)


@pytest.mark.parametrize("n_seeds", [4, 8])
def test_false_pass_rate_on_fedavg_gaps_is_at_most_alpha(fedavg_gaps: np.ndarray, n_seeds: int) -> None:
    # E gap estimated by the 20,000-seed mean (relative standard error 0.9%), bound 0.8 E gap: false by 23
    # standard errors of that estimate. Disjoint groups of n_seeds seeds are independent replications.
    # Measured: Student t 13.8% (S = 4), 8.8% (S = 8); this rule 4.2%, 3.1% (2,500 groups).
    truth = fedavg_gaps.mean()
    assert stats.skew(fedavg_gaps) > 2.5
    reps = 1500
    groups = fedavg_gaps[: reps * n_seeds].reshape(reps, n_seeds)
    assert _student_t_pass_rate(groups, 0.8 * truth) > _mc_limit(reps)
    assert _pass_rate(groups, 0.8 * truth) <= _mc_limit(reps)


def test_true_bound_fails_at_most_alpha_on_fedavg_gaps(fedavg_gaps: np.ndarray) -> None:
    # The bound E gap itself (true, tight): FAIL is an error; at one point the FAIL test is Student t at alpha,
    # conservative on right-skewed data. A true bound at twice the mean must PASS often (power) with 8 seeds.
    truth, reps = fedavg_gaps.mean(), 1500
    groups = fedavg_gaps[: reps * 8].reshape(reps, 8)
    fails = np.mean([check_upper_bound("q", ONE, g[:, None], np.array([truth])).status is Status.FAIL for g in groups])
    assert fails <= _mc_limit(reps)
    assert _pass_rate(groups[:300], 2.0 * truth) > 0.3


def test_mean_ratio_test_fails_a_bound_that_many_points_exceed() -> None:
    # yu2019.drift's shape: 800 points (steps x clients), 16 seeds, a mild common per-seed factor
    # (chi-square(400)/400) times heavy point noise (chi-square(1)); the mean is 1.3 times the bound on 400
    # points and equal to it on the rest. One point's t-statistic is about 0.3 / (1.3 sqrt(2) / 4) = 0.65,
    # far from Holm's 0.025/800 line (t_{15} = 4.8), so Holm alone finds nothing; the mean of q/bound over
    # the curve, E Z = 1.15 with a standard error about 0.02, is rejected.
    rng = np.random.default_rng(1)
    n_seeds, n_points = 16, 800
    x, bound = np.arange(1.0, n_points + 1), np.ones(n_points)
    mean = np.where(np.arange(n_points) % 2 == 0, 1.3, 1.0)
    values = mean * rng.chisquare(400, (n_seeds, 1)) / 400 * rng.chisquare(1, (n_seeds, n_points))
    verdict = check_upper_bound("drift", x, values, bound)
    assert verdict.status is Status.FAIL
    assert verdict.evidence["violations"] == ()  # not one point survives Holm's correction
    assert verdict.evidence["mean_ratio"]["p_value"] <= ALPHA / 2
    assert "violated on the whole curve" in verdict.notes


def test_family_wise_error_of_the_two_fail_tests_on_a_true_bound() -> None:
    # A true bound (mean 0.97 of it at 50 correlated points, 8 seeds, 300 datasets): Holm at alpha/2 plus the
    # mean-ratio test at alpha/2 FAIL at most alpha of the datasets.
    reps, fails = 300, 0
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)
        values = 0.97 * rng.chisquare(4, (8, 1)) / 4 * (0.9 + 0.2 * rng.random((8, 50)))
        fails += check_upper_bound("q", np.arange(1.0, 51), values, np.ones(50)).status is Status.FAIL
    assert fails / reps <= _mc_limit(reps)


class TestCeiling:
    X = np.array([1.0, 10.0, 100.0])

    def test_bound_above_the_ceiling_everywhere_is_uninformative(self) -> None:
        # The gap can be at most 11.8 (say F(w_0) - F*); bounds of 2,625 and more cannot fail.
        values = np.abs(np.random.default_rng(0).standard_normal((8, 3)))
        ceiling = Ceiling(11.8, "F(w_0) - F* = 11.8, and the method never increases F")
        verdict = check_upper_bound("thm", self.X, values, np.array([2625.0, 3000.0, 4000.0]), ceiling=ceiling)
        assert verdict.status is Status.INCONCLUSIVE
        assert "F(w_0) - F* = 11.8" in verdict.cannot_fail
        assert "uninformative" in verdict.notes and "The data alone give PASS" in verdict.notes
        combined = combine_checks("thm", [("explicit bound", verdict)])
        assert combined.status is Status.INCONCLUSIVE and combined.checks == ()
        assert combined.uninformative[0].name == "explicit bound" and combined.uninformative[0].alone.startswith("PASS")

    def test_bound_below_the_ceiling_somewhere_is_counted(self) -> None:
        values = np.abs(np.random.default_rng(0).standard_normal((8, 3)))
        verdict = check_upper_bound("thm", self.X, values, np.array([5.0, 20.0, 30.0]),
                                    ceiling=Ceiling(11.8, "F(w_0) - F*"))
        assert verdict.status is Status.PASS and not verdict.cannot_fail
        assert verdict.evidence["unfailable_points"] == (10.0, 100.0)
        assert "only the others can fail" in verdict.notes

    def test_per_point_ceiling_and_bad_ceiling(self) -> None:
        values = np.ones((1, 3))
        verdict = check_upper_bound("thm", self.X, values, np.array([5.0, 5.0, 5.0]), deterministic=True,
                                    ceiling=Ceiling(np.array([4.0, 5.0, 6.0]), "ball sup"))
        assert verdict.evidence["unfailable_points"] == (1.0, 10.0) and verdict.status is Status.PASS
        with pytest.raises(ValueError, match="^ceiling.value:"):
            check_upper_bound("thm", self.X, values, np.ones(3), ceiling=Ceiling(np.ones(2), "wrong shape"))
        with pytest.raises(ValueError, match="^ceiling.reason:"):
            Ceiling(1.0, " ")


def _verdict(status: Status, p_fail: float | None) -> Verdict:
    return Verdict("c", status, 1.0, 1.0, p_fail=p_fail)


class TestHolmOverSubChecks:
    def test_a_fail_that_does_not_survive_holm_is_inconclusive(self) -> None:
        # Five sub-checks, one FAILs on its own at p = 0.02 > 0.05 / 5: the claim is INCONCLUSIVE.
        checks = [("a", _verdict(Status.FAIL, 0.02))] + [(n, _verdict(Status.PASS, 0.9)) for n in "bcde"]
        claim = combine_checks("claim", checks)
        assert claim.status is Status.INCONCLUSIVE
        assert "not after Holm's correction" in claim.notes and "a (adjusted p = 0.1)" in claim.notes
        assert claim.p_fail == pytest.approx(0.1)

    def test_a_strong_fail_survives(self) -> None:
        checks = [("a", _verdict(Status.FAIL, 0.001))] + [(n, _verdict(Status.PASS, 0.9)) for n in "bcde"]
        assert combine_checks("claim", checks).status is Status.FAIL

    def test_exact_comparisons_count_as_p_zero_or_one(self) -> None:
        checks = [("exact", _verdict(Status.FAIL, None)), ("b", _verdict(Status.PASS, None))]
        assert combine_checks("claim", checks).status is Status.FAIL

    def test_family_wise_error_over_twenty_true_sub_checks(self) -> None:
        # 20 independent true sub-checks with uniform p-values, each FAILing alone when p <= 0.05: without
        # correction a claim FAILs with probability 1 - 0.95^20 = 64%; with Holm at most 5%.
        rng = np.random.default_rng(3)
        reps, fails = 2000, 0
        for _ in range(reps):
            p = rng.random(20)
            checks = [(f"s{i}", _verdict(Status.FAIL if q <= ALPHA else Status.PASS, float(q))) for i, q in enumerate(p)]
            fails += combine_checks("claim", checks).status is Status.FAIL
        assert fails / reps <= _mc_limit(reps)
