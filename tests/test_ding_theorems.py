"""Ding et al. 2020, Theorems 1-2: the explicit bound, the hypotheses with the configuration's C,
the identical-block instance on which the mini-max checks can fail, and planted false variants.

Quick settings throughout (each evaluation takes well under a second once the kernels are
compiled); the full-size evaluation is the slow test of ``test_claims``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from convergence import Status, Verdict
from problems import ProblemError, build_block_cyclic, exact_optimum, problem_spec
from proofs_check import VerifySettings, get_claim
from proofs_check.claims.ding2020.theorem_runs import instance, run_configs, shared_minimiser_instance
from proofs_check.constants.ding2020 import DingConstants, ding_bound
from proofs_check.claims.ding2020.hypotheses import ding_hypotheses

evaluate_thm1 = get_claim("ding2020.thm1").evaluate  # the mode's plan, parameters by name
evaluate_thm2 = get_claim("ding2020.thm2").evaluate

QUICK = VerifySettings(quick=True, seeds=2, jobs=1, progress=False)
QUICK4 = VerifySettings(quick=True, seeds=4, jobs=1, progress=False)
"""MC-PSGD's gap on identical blocks varies more between seeds: with 2 seeds (1 degree of freedom)
the Holm test of a 40x violated bound cannot reject, so its planted bound is tested with 4."""


def _checks(verdict) -> dict[str, Verdict]:
    return {c.name: c.verdict for c in verdict.checks}


def test_ding_bound_against_a_hand_computed_value() -> None:
    # THEOREMS.md, ding2020.thm1, with N = 4, T = 100, K = 10, I = 2, gamma = 1/2, L = 2, mu = 1/2,
    # B^2 = 3, G^2 = 2, sigma^2 = 4, term by term:
    #   2 B^2 / (gamma T)                = 6 / 50                              = 0.12
    #   gamma sigma^2 / (2N)             = 0.5 * 4 / 8                         = 0.25
    #   2 gamma^2 I^2 G^2 L^2 / mu       = 2 * 0.25 * 4 * 2 * 4 / 0.5          = 32
    #   4 gamma^3 I^2 G^2 L^2            = 4 * 0.125 * 4 * 2 * 4               = 16
    #   gamma [4 (B^2 L^2 + B^2 + B^2 L) / (gamma K) + 4 gamma^2 I^2 G^2 L^2 + L gamma sigma^2 / N]
    #                                    = 0.5 * [4 * (12 + 3 + 6) / 5 + 32 + 1] = 0.5 * 49.8 = 24.9
    #   2 gamma^3 I^3 G^2 L^2            = 2 * 0.125 * 8 * 2 * 4               = 16
    #   gamma^2 sigma^2 I L / (2N)       = 0.25 * 4 * 2 * 2 / 8                = 0.5
    # sum = 89.77
    constants = DingConstants(N=4, T=100, K=10, I=2, gamma=0.5, L=2.0, mu=0.5, B_sq=3.0, G_sq=2.0, sigma_sq=4.0)
    assert constants.bound == pytest.approx(89.77, rel=1e-13)
    assert constants.to_json()["bound"] == constants.bound and constants.to_json()["B^2"] == 3.0


def test_ding_bound_takes_B_over_the_iterates_and_both_optima() -> None:
    # Assumption 5 bounds ||x*|| and ||x_m*|| too (eq. 36, 63): with the tracked iterate norms
    # zeroed, B^2 must fall back to the largest optimum norm, on blocks far apart that of some x_m*.
    problem = instance()
    run = run_configs(QUICK, [("mm", problem, 32, (0, 1), ())])[0]
    optima = [exact_optimum(problem.combined, crosscheck=False).w_star] + [
        exact_optimum(problem.block(m), crosscheck=False).w_star for m in range(problem.n_blocks)]
    norms = [float(w @ w) for w in optima]
    assert max(norms) > norms[0]  # an x_m* is farther out than x*
    assert ding_bound(run)[1].B_sq == max(float(run.result.extras.max_norm_sq.max()), *norms)
    extras = dataclasses.replace(run.result.extras, max_norm_sq=np.zeros_like(run.result.extras.max_norm_sq))
    zeroed = dataclasses.replace(run, result=dataclasses.replace(run.result, extras=extras))
    value, constants = ding_bound(zeroed)
    assert constants.B_sq == max(norms) and value == constants.bound


def test_ding_hypotheses_use_the_configurations_C() -> None:
    # N = 4, M = 3, K = 32: K > C M N holds for C = 2 (24) and fails for C = 10 (120).
    N, M, K, I = 4, 3, 32, 1
    for C, met in ((2, True), (10, False)):
        T = C * M * K
        explicit = ding_hypotheses("mm", N, M, T, K, I, C=C)[1]
        inferred = ding_hypotheses("mm", N, M, T, K, I)[1]  # C = T / (M K)
        assert explicit == inferred and explicit.met is met and f"C M N = {C * M * N}" in explicit.detail
    with pytest.raises(ValueError, match=r"^T: "):
        ding_hypotheses("mm", N, M, 2 * M * K + 1, K, I)
    with pytest.raises(ValueError, match=r"^C: "):
        ding_hypotheses("mm", N, M, 2 * M * K, K, I, C=0)


def test_identical_blocks_give_F_m_equal_F_and_block_spread_zero_does_not() -> None:
    kwargs = dict(n_clients=3, n_blocks=3, dim=4, samples_per_client=6, seed=1)
    same = build_block_cyclic(problem_spec("block_cyclic_quadratic", identical_blocks=True, **kwargs))
    assert build_block_cyclic(same.spec) is same  # rebuilt from its spec
    c, n = same.combined, 3 * 6  # rows per block
    for m in (1, 2):
        assert np.array_equal(c.X[m * n:(m + 1) * n], c.X[:n]) and np.array_equal(c.y[m * n:(m + 1) * n], c.y[:n])
    w = np.linspace(-1.0, 1.0, 4)
    assert np.ptp(same.block_objectives(w)) == 0.0  # F_m(w) = F(w) for every m
    F_star = exact_optimum(c, crosscheck=False).F_star
    assert [exact_optimum(same.block(m), crosscheck=False).F_star for m in range(3)] == pytest.approx([F_star] * 3)
    # block_spread = 0 shares the ground truths but not the rows: the F_m still differ.
    spread0 = build_block_cyclic(problem_spec("block_cyclic_quadratic", block_spread=0.0, **kwargs))
    assert np.ptp(spread0.block_objectives(w)) > 1e-3
    with pytest.raises(ProblemError, match=r"^identical_blocks: "):
        problem_spec("block_cyclic_quadratic", identical_blocks=1)


def test_thm1_true_claim_passes_and_planted_variants_fail() -> None:
    # 4 seeds: with 2 the bound check's gamma upper limit cannot certify the skewed gaps (INCONCLUSIVE)
    true = evaluate_thm1(QUICK4).verdict
    checks = _checks(true)
    bound = checks["explicit bound, identical blocks, MM-PSGD"]
    rate = checks["rate O(1/sqrt(NT)), identical blocks, MM-PSGD"]
    assert true.status is Status.PASS and true.claim_id == "ding2020.thm1"
    assert bound.status is Status.PASS and 0 < bound.measured < 1
    assert bound.tightness.label == "upper bound"  # measured / bound is about 1e-3
    assert rate.status is Status.PASS and rate.measured < -0.5
    assert all(h.met for h in true.hypotheses) and any("C M N = 24" in h.detail for h in true.hypotheses)
    # a steeper rate than the data's (about -0.9) and a bound 1e5 times smaller both FAIL
    steep = evaluate_thm1(QUICK4, claimed_exponent=-1.5).verdict
    assert steep.status is Status.FAIL and steep.claim_id == "ding2020.thm1[claimed_exponent=-1.5]"
    assert _checks(steep)["rate O(1/sqrt(NT)), identical blocks, MM-PSGD"].status is Status.FAIL
    small = evaluate_thm1(QUICK4, bound_scale=1e-5).verdict
    assert small.status is Status.FAIL
    assert _checks(small)["explicit bound, identical blocks, MM-PSGD"].status is Status.FAIL
    with pytest.raises(ValueError, match=r"^bound_scale: "):
        evaluate_thm1(QUICK, bound_scale=0.0)


def test_shared_minimiser_instance_has_different_blocks_and_one_minimiser() -> None:
    """block_spread = client_spread = mu = noise = 0: every F_m^i is minimised at theta_0, so x_m* = x* and the
    floor (1/M) sum_m F_m* - F* is 0, but the blocks hold different rows, so the F_m differ."""
    problem = shared_minimiser_instance(n_clients=3, n_blocks=3)
    x_star = exact_optimum(problem.combined, crosscheck=False).w_star
    for m in range(3):
        np.testing.assert_allclose(exact_optimum(problem.block(m), crosscheck=False).w_star, x_star, atol=1e-10)
    assert np.ptp(problem.block_objectives(np.linspace(-1.0, 1.0, problem.dim))) > 1e-2


def test_thm1_shared_minimiser_sub_checks_pass_and_planted_fail() -> None:
    """Heterogeneous blocks sharing their minimiser: the mini-max gap is >= 0, so bound and rate are counted
    sub-checks; the planted bound x 1e-5 and exponent -1.5 FAIL there."""
    true = evaluate_thm1(QUICK4).verdict
    checks = _checks(true)
    bound, rate = checks["explicit bound, shared minimiser, MM-PSGD"], checks["rate O(1/sqrt(NT)), shared minimiser, MM-PSGD"]
    assert bound.claim_id == "ding2020.mm/shared-minimiser/bound" and rate.claim_id == "ding2020.mm/shared-minimiser/rate"
    assert bound.status is Status.PASS and 0 < bound.measured < 1e-2 and rate.status is Status.PASS
    assert true.evidence["floor"]["shared minimiser"] == pytest.approx(0.0, abs=1e-12)
    assert "explicit bound, identical blocks, MM-PSGD" in checks  # the existing sub-checks keep their names
    small = _checks(evaluate_thm1(QUICK4, bound_scale=1e-5).verdict)["explicit bound, shared minimiser, MM-PSGD"]
    assert small.status is Status.FAIL
    steep = _checks(evaluate_thm1(QUICK4, claimed_exponent=-1.5).verdict)["rate O(1/sqrt(NT)), shared minimiser, MM-PSGD"]
    assert steep.status is Status.FAIL


def test_thm1_on_blocks_apart_alone_is_inconclusive_not_pass() -> None:
    # The old special branch PASSed here: the mini-max gap is negative, so bound and rate hold
    # trivially. Now both are uninformative and, with nothing else to check, so is the claim.
    verdict = evaluate_thm1(QUICK, identical_instance=False, shared_minimiser=False).verdict
    assert verdict.status is Status.INCONCLUSIVE and verdict.checks == ()
    assert "Every sub-check is uninformative" in verdict.notes
    reasons = {u.name: u.reason for u in verdict.uninformative}
    assert set(reasons) == {"explicit bound, blocks apart, MM-PSGD", "rate O(1/sqrt(NT)), blocks apart, MM-PSGD"}
    assert all("gap is <= 0" in r for r in reasons.values())
    assert verdict.uninformative[0].alone.startswith("PASS")  # what the old branch reported
    assert verdict.evidence["floor"]["blocks apart"] < 0
    excess = verdict.evidence["excess_over_floor"]
    # excess = G - floor, the mean per-block gap, >= 0 (Theorem 1 gives it no rate: evidence only)
    assert np.allclose(np.array(excess["minimax_mean"]) - verdict.evidence["floor"]["blocks apart"], excess["mean"])
    assert [r["quantity"] for r in verdict.evidence["measured_rates_blocks_apart"]][0] == "excess over the floor"


def test_thm2_true_claim_passes_and_planted_variants_fail() -> None:
    true = evaluate_thm2(QUICK4).verdict
    checks = _checks(true)
    assert true.status is Status.PASS
    per_block = [c for name, c in checks.items() if name.startswith("per-block rate")]
    assert len(per_block) == 3 and "excess over the floor, blocks apart, MC-PSGD" in checks
    assert checks["explicit bound, identical blocks, MC-PSGD"].tightness.label == "upper bound"
    assert {u.name for u in true.uninformative} == {
        "explicit bound, blocks apart, MC-PSGD", "rate O(1/sqrt(NT)), blocks apart, MC-PSGD"}
    steep = evaluate_thm2(QUICK4, claimed_exponent=-1.5).verdict
    assert steep.status is Status.FAIL and all(v.status is Status.FAIL for name, v in _checks(steep).items()
                                                if "rate" in name or "excess" in name)
    small = evaluate_thm2(QUICK4, bound_scale=1e-5).verdict
    assert small.status is Status.FAIL
    assert _checks(small)["explicit bound, identical blocks, MC-PSGD"].status is Status.FAIL
