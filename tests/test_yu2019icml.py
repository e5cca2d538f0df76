"""Yu, Jin, Yang (ICML 2019) Theorem 3 and Corollary 4 as restated in Liu's lecture note: both claims PASS
at quick settings and their planted variants FAIL; Theorem 3's right-hand side and its constants against
hand-computed values; the two-curvature family's closed forms (its FedAvg fixed point, its constants)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import convergence
from convergence import Status
from problems import (
    FederatedProblem,
    LossKind,
    ProblemError,
    build_problem,
    exact_optimum,
    problem_spec,
    two_curvature_quadratic,
)
from proofs_check import constants, get_claim
from proofs_check.claims.yu2019icml.bound import theorem3_hypotheses, theorem3_terms
from proofs_check.claims.yu2019icml.cor4_runs import INSTANCE, INSTANCE_L, RULES, checked_settings

evaluate_thm3 = get_claim("yu2019icml.thm3").evaluate
evaluate_cor4 = get_claim("yu2019icml.cor4").evaluate


def test_theorem3_terms_against_a_hand_computed_value() -> None:
    # s = 0.01, K = 3, N = 4, L = 2, G^2 = 4, sigma^2 = 9, sigma_G^2 = 5, f0 = 5, T = 100 (note l. 449-451):
    #   2 f0/(s T)                 = 10 / 1          = 10
    #   (L/N) s sigma^2            = 0.5 * 0.01 * 9  = 0.045
    #   4 s^2 K G^2 L^2            = 4e-4 * 3 * 4 * 4 = 0.0192
    #   9 L^2 s^2 K^2 sigma_G^2    = 9 * 4 * 1e-4 * 9 * 5 = 0.162
    terms = theorem3_terms(np.array([100.0, 200.0]), s=0.01, K=3, N=4, L=2.0, G_sq=4.0, sigma_sq=9.0,
                           sigma_G_sq=5.0, f0=5.0)
    np.testing.assert_allclose(terms.total(), [10.2262, 5.2262], rtol=1e-14)
    np.testing.assert_allclose(terms.total(0.0), [10.0642, 5.0642], rtol=1e-14)  # the planted variant's bound
    assert terms.shares(0)["dissimilarity"] == pytest.approx(0.162 / 10.2262, rel=1e-14)


def test_theorem3_hypotheses_hold_at_s_equal_one_over_6LK_and_fail_just_beyond() -> None:
    L, K = 4.0, 512
    s = 1 / (6 * L * K)
    assert all(h.met for h in theorem3_hypotheses(s, K, L, "x"))
    assert [h.met for h in theorem3_hypotheses(s, K + 1, L, "x")] == [True, False]
    assert [h.met for h in theorem3_hypotheses(1.01 / L, 1, L, "x")] == [False, False]


def test_two_curvature_constants_in_closed_form() -> None:
    # module docstring of problems.two_curvature: grad F_k(w) = c_k (w - w*) + g_k, c = (L, m), g = (beta, -beta);
    # grad F(w) = ((L + m)/2)(w - w*), so grad F_k - grad F = +-((L - m)/2 (w - w*) + beta); a row's gradient
    # is grad F_k - sqrt(c_k) noise z_j, variance c_k noise^2 (a batch of b rows: c_k noise^2 / b).
    L, m, beta, w_star, noise = 4.0, 0.4, 1.5, 0.5, 0.3
    problem = two_curvature_quadratic(4, L, m, beta, w_star, noise, 4)
    assert constants.smoothness(problem, "clients").value == L
    w = 1.25
    at_w = constants.Points(np.array([[w]]))
    dissimilarity = ((L - m) / 2 * (w - w_star) + beta) ** 2  # 1.8 * 0.75 + 1.5 = 2.85, squared 8.1225
    assert constants.gradient_dissimilarity(problem, at_w, "uniform").value == pytest.approx(dissimilarity, rel=1e-12)
    assert dissimilarity == pytest.approx(8.1225, rel=1e-14)
    np.testing.assert_allclose(constants.variance_bound(problem, at_w, 2).values, [L * 0.09 / 2, m * 0.09 / 2,
                                                                                    L * 0.09 / 2, m * 0.09 / 2])
    stiff = (L * (w - w_star) + beta) ** 2 + L * noise**2  # 4.5^2 + 0.36 = 20.61 > soft (0.3 - 1.5)^2 + 0.036
    assert constants.second_moment_bound(problem, at_w, 1).value == pytest.approx(stiff, rel=1e-12)
    assert stiff == pytest.approx(20.61, rel=1e-14)
    # over the ball |w| <= 2 the dissimilarity is largest at w = 2: (1.8 * 1.5 + 1.5)^2 = 17.64
    ball = constants.Ball(np.zeros(1), 2.0)
    assert constants.gradient_dissimilarity(problem, ball, "uniform").value == pytest.approx(17.64, rel=1e-9)
    np.testing.assert_allclose(exact_optimum(problem, crosscheck=False).w_star, [w_star], rtol=1e-12)


def test_dissimilarity_of_a_hand_least_squares_instance() -> None:
    # two clients in R^2, one row each, weights 1/2, no l2: F_k(w) = (1/2)(x_k'w - y_k)^2, grad F_k = x_k (x_k'w - y_k).
    # x_1 = (1, 0), y_1 = 1; x_2 = (0, 2), y_2 = 2. At w = (3, 1): grad F_1 = (2, 0), grad F_2 = (0, 0);
    # grad F = (1, 0); (1/2)(||(1, 0)||^2 + ||(-1, 0)||^2) = 1. L = max_k ||x_k||^2 = 4.
    problem = FederatedProblem("hand", LossKind.LEAST_SQUARES, np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 2.0]),
                               np.array([0, 1, 2]), np.array([0.5, 0.5]), 0.0)
    at = constants.Points(np.array([[3.0, 1.0]]))
    assert constants.gradient_dissimilarity(problem, at, "uniform").value == pytest.approx(1.0, rel=1e-14)
    assert constants.smoothness(problem, "clients").value == pytest.approx(4.0, rel=1e-14)


def test_fedavg_settles_at_the_two_curvature_fixed_point() -> None:
    # exact gradients: in a round client k maps u = w - w* to (1 - s c_k)^K u - (g_k/c_k)(1 - (1 - s c_k)^K), so the
    # average after a sync is a u + b, a = mean_k (1 - s c_k)^K, b = -mean_k (g_k/c_k)(1 - (1 - s c_k)^K), and FedAvg
    # settles at u = b / (1 - a); to first order in s K, grad F = ((L + m)/2) u = s (K - 1)(L - m) beta / 4.
    L, m, beta, K = 4.0, 0.4, 1.0, 64
    s = 1 / (6 * L * K)
    spec = problem_spec("two_curvature_quadratic", n_clients=2, L=L, soft_curvature=m, dissimilarity=beta)
    config = convergence.PRSGDConfig(rounds=600, sync_interval=K, step_size=convergence.StepSize.constant(s),
                                     batch_size=0, record_rounds=(600,))
    result = convergence.run(convergence.RunConfig(spec, config))
    c, g = np.array([L, m]), np.array([beta, -beta])
    a = np.mean((1 - s * c) ** K)
    b = -np.mean(g / c * (1 - (1 - s * c) ** K))
    np.testing.assert_allclose(result.iterates[0, -1], [b / (1 - a)], rtol=1e-8)
    first_order = s * (K - 1) * (L - m) * beta / 4
    assert (L + m) / 2 * b / (1 - a) == pytest.approx(first_order, rel=0.1)


@pytest.mark.parametrize(("params", "field"), [
    ({"n_clients": 3}, "n_clients"), ({"soft_curvature": 1.0}, "soft_curvature"), ({"L": 0.0}, "L"),
    ({"samples_per_client": 3}, "samples_per_client"), ({"noise": -1.0}, "noise"), ({"dissimilarity": math.nan}, "dissimilarity"),
])
def test_two_curvature_bad_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=f"^{field}: "):
        build_problem(problem_spec("two_curvature_quadratic", **params))


def test_thm3_passes_and_fails_without_the_dissimilarity_term(quick_settings) -> None:
    verdict = evaluate_thm3(quick_settings).verdict
    assert verdict.status is Status.PASS, verdict.notes
    assert [c.name for c in verdict.checks] == ["explicit bound, random_quadratic, N = 2",
                                                "explicit bound, digits_tanh_mlp (estimated constants), N = 10"]
    assert 0.05 < verdict.measured < 1 and verdict.tightness.label == "upper bound"
    # the two-curvature bound lies above the ceiling (||grad f(0)|| + L B)^2 everywhere: not counted, never PASS
    [skipped] = verdict.uninformative
    assert skipped.name == "explicit bound, two-curvature, N = 2" and "(||grad f(c)|| + L R)^2" in skipped.reason
    rows = {row["instance"]: row for row in verdict.evidence["constants"]}
    drift = rows["two-curvature"]
    shares = drift[f"shares at t = {drift['T']}"]
    assert shares["dissimilarity"] > 0.99 and drift["f(x_0) - f*"] == 0.0
    assert drift["largest ratio measured / bound without the sigma_G^2 term"] > 2
    # the reported bound is Theorem 3's with the reported constants
    check = verdict.checks[0].verdict
    generic = rows["random_quadratic"]
    rhs = theorem3_terms(np.array(check.evidence["x"]), s=generic["s"], K=generic["K"], N=generic["N"], L=generic["L"],
                         G_sq=generic["G^2"], sigma_sq=generic["sigma^2"], sigma_G_sq=generic["sigma_G^2"],
                         f0=generic["f(x_0) - f*"]).total()
    np.testing.assert_allclose(check.evidence["bound"], rhs, rtol=1e-12)
    planted = evaluate_thm3(quick_settings, dissimilarity_scale=0.0).verdict
    assert planted.status is Status.FAIL
    failing = [c.name for c in planted.checks if c.verdict.status is Status.FAIL]
    assert failing == ["explicit bound, two-curvature, N = 2"]


def test_cor4_passes_reports_the_unmet_hypotheses_and_fails_a_steeper_rate(quick_settings) -> None:
    verdict = evaluate_cor4(quick_settings).verdict
    assert verdict.status is Status.PASS, verdict.notes
    rates = [c.verdict for c in verdict.checks]
    assert len(rates) >= 6 and all(-0.56 < v.measured < -0.46 for v in rates)
    # as stated, K = floor(T^(1/4)/N^(3/4)) with s = sqrt(N/T) misses Theorem 3's K <= 1/(6 L s) on every quick N
    stated_sync = [u for u in verdict.uninformative if "floor" in u.name and "as stated" in u.name]
    assert len(stated_sync) == 4 and all("not applicable" in u.reason and "K <= 1/(6 L s)" in u.reason
                                         for u in stated_sync)
    assert all(c.verdict.status is Status.PASS for c in verdict.checks)
    planted = evaluate_cor4(quick_settings, claimed_exponent=-1.0).verdict
    assert planted.status is Status.FAIL
    assert any("rate in N T" in c.name and c.verdict.status is Status.FAIL for c in planted.checks)


def test_cor4_hypotheses_follow_the_note() -> None:
    # the instance's L (module constant, read without building a problem by the plan's workload) is its max_k L_k
    instance = build_problem(problem_spec("two_curvature_quadratic", n_clients=8, **dict(INSTANCE)))
    assert constants.smoothness(instance, "clients").value == INSTANCE_L
    # K = 1 with s = sqrt(N/T) is within Theorem 3 iff T >= 36 L^2 N (= 1152 at L = 4, N = 2)
    stated_unit, corrected_unit = RULES[0], RULES[1]
    assert stated_unit.setting(2, 1152, INSTANCE_L).applicable and not stated_unit.setting(2, 1151, INSTANCE_L).applicable
    assert corrected_unit.setting(2, 72, INSTANCE_L).applicable and not corrected_unit.setting(2, 71, INSTANCE_L).applicable
    # the note's T >= L^2 N holds for the second rule, yet K <= 1/(6 L s) fails below N T = (6 L)^4
    setting = RULES[2].setting(2, 16_384, INSTANCE_L)
    met = {h.name.split("] ")[1]: h.met for h in setting.hypotheses}
    assert met["the note's T >= L^2 N"] and not met["K <= 1/(6 L s)"]
    grid = checked_settings((2, 4, 8), (1_024, 4_096, 16_384), INSTANCE_L)
    assert not any(s.rule is RULES[2] for s in grid.run)  # nothing of a not applicable check is run
    assert all(s.applicable for s in grid.run)
