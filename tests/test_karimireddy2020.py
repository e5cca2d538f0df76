"""Karimireddy et al. (ICML 2020), SCAFFOLD: karimireddy2020.drift and karimireddy2020.rate.

Each claim PASSes at quick settings and each planted variant FAILs in the sub-check it plants. The
claims' numbers are checked against closed forms computed here: FedAvg's limit w~* solves Li et
al.'s eq. 32 (``fedavg_fixed_point``; at E = 1 it is w*, since I - P = eta sum_k p_k Q_k), the
minibatch check's step eta_last = eta_0 / (1 + a (T - 1)) with a = (eta_0/eta_T - 1) / T, and the
contraction check recovers the factor of an exact geometric sequence q_r = C rho^r.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from convergence import Status, fedavg_fixed_point
from convergence.algorithms.scaffold import CONTROL_UPDATES
from problems import build_problem, exact_optimum, problem_spec
from proofs_check import get_claim
from proofs_check.claims.karimireddy2020.contraction import check_contraction
from proofs_check.claims.karimireddy2020.drift import CONTROL_VARIATES, MINIBATCH_SEEDS
from proofs_check.claims.karimireddy2020.rate import RATE_SEEDS


@pytest.fixture(scope="module")
def drift(quick_settings):
    return get_claim("karimireddy2020.drift").evaluate(quick_settings).verdict


@pytest.fixture(scope="module")
def rate(quick_settings):
    return get_claim("karimireddy2020.rate").evaluate(quick_settings).verdict


def sub_check(verdict, name: str):
    """The counted sub-check whose name contains ``name`` (exactly one)."""
    (found,) = [c.verdict for c in verdict.checks if name in c.name]
    return found


def test_drift_passes_and_its_numbers_are_li_eq32s(drift, quick_settings) -> None:
    assert drift.status is Status.PASS, drift.notes
    plan = get_claim("karimireddy2020.drift").plan_for(quick_settings, {})
    assert plan.seeds == MINIBATCH_SEEDS  # quick_settings' 6 seeds raised to the check's minimum
    problem = build_problem(problem_spec("li_counterexample", N=plan.N, p=plan.p, mu=plan.mu))
    w_star = exact_optimum(problem, crosscheck=False).w_star
    scale = np.linalg.norm(w_star)
    drift_eq32 = [np.linalg.norm(fedavg_fixed_point(problem, plan.eta, E).w - w_star) / scale for E in plan.E_grid]
    np.testing.assert_allclose(drift.evidence["drift"], drift_eq32, rtol=1e-12)
    assert min(drift_eq32) > 7e-3  # Li's Theorem 4 bias at E = 2, eta = 0.1, far above SCAFFOLD's 1e-10
    assert max(drift.evidence["fedavg_to_limit"]) <= plan.limit_tolerance  # FedAvg's last iterate is w~*
    assert max(drift.evidence["scaffold_distance"]) <= plan.reach_tolerance
    # gradient descent's limit is w* (E = 1): "drift removed" cannot be told from FedAvg there
    assert np.linalg.norm(fedavg_fixed_point(problem, plan.eta, 1).w - w_star) < 1e-12 * scale
    (control,) = drift.uninformative
    assert control.name == "SCAFFOLD removes the drift, E = 1" and control.verdict.status is Status.INCONCLUSIVE
    assert sub_check(drift, "E = 1 control").status is Status.PASS
    for E in plan.E_grid:
        geometric = sub_check(drift, f"geometric decay of ||w_r - w*||, E = {E}")
        assert geometric.status is Status.PASS and geometric.interval[1] < plan.max_contraction


def test_drift_minibatch_floor_is_fedavg_at_the_last_step(drift, quick_settings) -> None:
    plan = get_claim("karimireddy2020.drift").plan_for(quick_settings, {})
    total = plan.noisy_rounds * plan.noisy_E
    last = plan.noisy_eta0 / (1 + (plan.noisy_decay - 1) / total * (total - 1))
    problem = build_problem(problem_spec("li_counterexample", N=plan.N, p=plan.p, mu=plan.mu))
    w_star = exact_optimum(problem, crosscheck=False).w_star
    floor = np.sum((fedavg_fixed_point(problem, last, plan.noisy_E).w - w_star) ** 2)
    minibatch = sub_check(drift, "minibatch")
    assert minibatch.evidence["drift_floor"] == pytest.approx(floor, rel=1e-12)
    assert minibatch.status is Status.PASS and minibatch.evidence["scaffold_over_floor"] < 0.5
    assert minibatch.evidence["fedavg_over_floor"] > 0.8  # FedAvg with the same noise ends near its floor


@pytest.mark.parametrize("name", ["FedAvg also reaches w*", "noise floor x 0.01"])
def test_drift_planted_variants_fail_in_their_sub_check(quick_settings, name: str) -> None:
    claim = get_claim("karimireddy2020.drift")
    (variant,) = [v for v in claim.variants if v.name == name]
    verdict = claim.evaluate_variant(quick_settings, variant).verdict
    assert verdict.status is Status.FAIL
    assert sub_check(verdict, variant.sub_check).status is Status.FAIL


def test_rate_passes_with_the_explicit_bound_uninformative(rate, quick_settings) -> None:
    assert rate.status is Status.PASS, rate.notes
    assert get_claim("karimireddy2020.rate").plan_for(quick_settings, {}).seeds == RATE_SEEDS
    (explicit,) = rate.uninformative
    assert explicit.verdict.status is Status.INCONCLUSIVE and "not available verbatim" in explicit.reason
    for scheme in ("full participation", "Scheme II"):
        linear = sub_check(rate, f"linear convergence with exact gradients, {scheme}")
        assert linear.status is Status.PASS and linear.interval[1] < 0.999
        exponent = sub_check(rate, f"with minibatch noise, {scheme}")
        assert exponent.status is Status.PASS and exponent.interval[1] <= -0.8


@pytest.mark.parametrize("name", ["rate O(R^-2)", "FedAvg converges linearly"])
def test_rate_planted_variants_fail_in_their_sub_check(quick_settings, name: str) -> None:
    claim = get_claim("karimireddy2020.rate")
    (variant,) = [v for v in claim.variants if v.name == name]
    verdict = claim.evaluate_variant(quick_settings, variant).verdict
    assert verdict.status is Status.FAIL
    assert any(c.verdict.status is Status.FAIL for c in verdict.checks if variant.sub_check in c.name)


def test_contraction_recovers_a_geometric_factor_and_fails_a_stalled_curve() -> None:
    rounds = np.arange(0, 201, 5)
    geometric = 3.0 * 0.9 ** rounds  # q_r = C rho^r, rho = 0.9: log q is exactly linear in r
    verdict = check_contraction("g", rounds, geometric[None, :], 0.95, floor=1e-300, deterministic=True)
    assert verdict.status is Status.PASS and verdict.measured == pytest.approx(0.9, rel=1e-12)
    assert check_contraction("g", rounds, geometric[None, :], 0.85, floor=1e-300,
                             deterministic=True).status is Status.FAIL  # faster than measured: false
    stalled = np.maximum(geometric, 1e-3)  # FedAvg-like: geometric, then a floor above the fit's
    verdict = check_contraction("s", rounds, stalled[None, :], 0.999, floor=1e-12, deterministic=True)
    assert verdict.status is Status.FAIL and verdict.evidence["tail_contraction"] == pytest.approx(1.0)
    floored = check_contraction("f", rounds, geometric[None, :], 0.95, floor=2.0, deterministic=True)
    assert floored.status is Status.INCONCLUSIVE and math.isnan(floored.measured)  # only q_0 = 3 lies above 2


def test_contraction_names_bad_arguments() -> None:
    with pytest.raises(ValueError, match="^max_contraction: "):
        check_contraction("x", np.arange(5), np.ones((1, 5)), 1.0, floor=0.0, deterministic=True)
    with pytest.raises(ValueError, match="^rounds: "):
        check_contraction("x", np.array([0, 2, 1, 3, 4]), np.ones((1, 5)), 0.9, floor=0.0, deterministic=True)


def test_the_planted_control_variates_are_scaffolds() -> None:
    assert set(CONTROL_VARIATES) == set(CONTROL_UPDATES)
