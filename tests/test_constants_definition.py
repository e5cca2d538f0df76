"""One definition of Li et al.'s Assumption 3-4 constants, shared by the lemma checks and the falsifier,
and the power self-test of the ``lemmas`` claim: planted false lemmas FAIL, the true ones do not.

Definition (Li et al., ICLR 2020, Assumptions 3-4, ``papers/li2020_fedavg_noniid.txt`` l.137-143):
sigma_k^2 = max_t E var_k(w_t^k, b), G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch
gradient at client k's own iterate, E over the run (``proofs_check.constants.run_moments.IterateMoments``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from convergence import FedAvgConfig, Status, StepSize
from problems import FederatedProblem, li_counterexample, problem_constants, random_quadratic
from proofs_check.constants.assumptions import second_moment_bound
from proofs_check.framework.settings import VerifySettings
from proofs_check.claims.checks.constants import extreme_eigenvectors, sign_fixed
from proofs_check.framework.registry import get_claim
from proofs_check.falsifier.claims import FALSIFIABLE, FedAvgInstance, exact_moments
from proofs_check.lemmas.fedavg import collect, li_lemma1, li_lemma2, li_lemma3, yu_drift
from proofs_check.lemmas.verdicts import PLANTED_MARGIN, attained_scale, planted_factor
from proofs_check.claims.checks.lemmas import PLANTABLE_LEMMAS
from proofs_check.constants.regions import Points
from proofs_check.constants.run_moments import IterateMoments, iterate_moments

evaluate_lemmas = get_claim("lemmas").evaluate  # the mode's plan, parameters by name
evaluate_constants = get_claim("assumptions.constants").evaluate

QUICK = VerifySettings(quick=True, seeds=2, jobs=1, progress=False)


def two_clients() -> FederatedProblem:
    """Least squares, d = 1, mu = 0, per-sample loss (1/2)(x w - y)^2. Client 0: rows x = 1, 3 with y = 0,
    so g_i(w) = x_i^2 w = w, 9w: grad F_0 = 5w, population variance ((w - 5w)^2 + (9w - 5w)^2)/2 = 16 w^2.
    Client 1: the single row x = 2, y = 2: grad F_1 = 2(2w - 2) = 4w - 4, variance 0."""
    X = np.array([[1.0], [3.0], [2.0]])
    y = np.array([0.0, 0.0, 2.0])
    return FederatedProblem("two", "least_squares", X, y, np.array([0, 2, 3]), np.array([0.5, 0.5]), 0.0)


def test_iterate_moments_closed_form() -> None:
    problem = two_clients()
    # two seeds, one step: seed 0 has client 0 at w = 1 and client 1 at w = 0; seed 1 has them at 3 and 2
    local = np.array([[[[1.0], [0.0]]], [[[3.0], [2.0]]]])  # (S, T, N, d) = (2, 1, 2, 1)
    moments = iterate_moments(problem, local, 1)
    # client 0: E||g||^2 = 25 w^2 + 16 w^2 = 41 w^2 -> (41 + 369)/2 = 205; client 1: (4w - 4)^2 = 16 at w = 0 and 2
    np.testing.assert_allclose(moments.second_moment, [[205.0, 16.0]], rtol=1e-12)
    assert moments.G_sq == pytest.approx(205.0, rel=1e-12)
    np.testing.assert_allclose(moments.sigma_sq, [(16 + 144) / 2, 0.0], rtol=1e-12, atol=1e-12)
    # a minibatch of b = 2 rows halves the variance: (25 + 8 + 225 + 72)/2 = 165
    assert iterate_moments(problem, local, 2).G_sq == pytest.approx(165.0, rel=1e-12)
    # the pooled reading (every client's gradient at every client's point, every seed) would give 41 * 9 = 369
    pooled = second_moment_bound(problem, Points(local.reshape(-1, 1)), 1).value
    assert pooled == pytest.approx(369.0, rel=1e-12)
    with pytest.raises(ValueError, match="local_models"):
        iterate_moments(problem, local[0], 1)
    with pytest.raises(ValueError, match="variance"):
        IterateMoments(np.zeros((1, 2, 2)), np.zeros((1, 3, 2)), True, "")


def test_falsifier_and_lemma_checks_share_the_definition() -> None:
    """A deterministic run (exact gradients): the lemma checks' moments equal the falsifier's exact ones,
    and Lemma 3's tightness is the same number for both (falsifier violation = tightness - 1)."""
    problem = random_quadratic(3, 3, 0.5, 2.0, 1.0, 6, 19)
    L = problem_constants(problem).L
    config = FedAvgConfig(4, 5, StepSize.constant(0.25 / L), 0, 1.0, (5,), (0,))
    data = collect(problem, config)
    exact = exact_moments(FedAvgInstance(problem, config))
    scale = float(np.max(exact.second_moment))
    np.testing.assert_allclose(data.moments.second_moment, exact.second_moment, rtol=1e-9, atol=1e-12 * scale)
    assert data.G_sq == pytest.approx(exact.G_sq, rel=1e-9)
    violation = FALSIFIABLE["li2020.lemma3"].violation(FedAvgInstance(problem, config))
    assert violation == pytest.approx(li_lemma3(data).measured - 1.0, rel=1e-6)


def test_sampled_moments_estimate_the_exact_ones() -> None:
    """With minibatches the lemma checks' E is the mean over seeds: it converges to the falsifier's exact
    expectation. Every (t, k) mean lies within its simultaneous 99.9% Student-t interval (Bonferroni
    over the T N cells; a failure rate of 0.1% if the definitions agree)."""
    problem = random_quadratic(3, 3, 0.5, 2.0, 1.5, 5, 2)
    L = problem_constants(problem).L
    config = FedAvgConfig(3, 2, StepSize.constant(0.25 / L), 1, 1.0, (2,), tuple(range(300)))
    moments = collect(problem, config).moments
    exact = exact_moments(FedAvgInstance(problem, config))
    values = moments.grad_sq + moments.variance  # (S, T, N) the conditional second moments per seed
    S = values.shape[0]
    se = values.std(axis=0, ddof=1) / np.sqrt(S)
    limit = stats.t.ppf(1 - 0.001 / (2 * se.size), S - 1)
    assert np.all(np.abs(values.mean(axis=0) - exact.second_moment) <= limit * se + 1e-12)
    assert moments.G_sq == pytest.approx(exact.G_sq, rel=0.05)


def test_planted_lemma3_false_by_11_percent_now_fails() -> None:
    """The case of issue 8. On this deterministic run Lemma 3 needs the constant c = 4 * tightness; at
    0.89 c it is false (by 1/0.89 - 1 = 12% at the tightest step). The old G^2, every client's gradient at
    every client's iterate, is 12.9% larger than Assumption 4's, so the planted constant PASSed with it;
    with Assumption 4's G^2 it FAILs and the true lemma PASSes."""
    problem = random_quadratic(3, 3, 0.5, 2.0, 1.0, 6, 19)
    L = problem_constants(problem).L
    config = FedAvgConfig(4, 5, StepSize.constant(0.25 / L), 0, 1.0, (5,), (0,))
    data = collect(problem, config)
    true = li_lemma3(data)
    assert true.status is Status.PASS and true.measured < 1
    needed = 4.0 * true.measured
    planted = li_lemma3(data, constant=0.89 * needed)
    assert planted.status is Status.FAIL and planted.measured == pytest.approx(1 / 0.89, rel=1e-9)
    # the old definition: the maximum over the pooled iterates of every client's second moment. Its bound
    # 0.89 c eta_t^2 (E-1)^2 G^2_pooled equals the bound of the constant 0.89 c G^2_pooled / G^2 with this G^2
    T = config.total_steps
    pooled = second_moment_bound(problem, Points(data.stack("local_models")[:, :T].reshape(-1, problem.dim)), 0).value
    assert pooled / data.G_sq == pytest.approx(1.1286, abs=1e-4) and pooled / data.G_sq > 1 / 0.89
    assert li_lemma3(data, constant=0.89 * needed * pooled / data.G_sq).status is Status.PASS


# ------------------------------------------------------------------------------ power self-test
@pytest.fixture(scope="module")
def counterexample_data():
    """Li's Appendix C problem (N = 5, p = 4), E = 4, 8 rounds at eta = 1/(4L), batch 2, 16 seeds."""
    problem = li_counterexample(5, 4, 2e-4)
    L = problem_constants(problem).L
    return collect(problem, FedAvgConfig(4, 8, StepSize.constant(0.25 / L), 2, 1.0, (8,), tuple(range(16))))


def test_li_planted_variants_fail(counterexample_data) -> None:  # noqa: ANN001
    """Each Li lemma and Yu's drift at PLANTED_MARGIN times the largest constant the data prove too small
    FAILs; the true lemmas PASS, but Lemma 2, an equality at t = 0 with Assumption 3's sigma_k^2, which no
    sampled check can confirm (INCONCLUSIVE, never FAIL)."""
    data = counterexample_data
    for lemma, keyword, paper in ((li_lemma1, "scale", 1.0), (li_lemma2, "factor", 1.0), (li_lemma3, "constant", 4.0),
                                  (yu_drift, "constant", 4.0)):
        true = lemma(data)
        assert true.status is (Status.INCONCLUSIVE if lemma is li_lemma2 else Status.PASS), true.notes
        assert true.hypotheses_met
        factor = planted_factor(true)
        assert factor == pytest.approx(PLANTED_MARGIN * attained_scale(true)) and 0 < factor < 1
        planted = lemma(data, **{keyword: paper * factor})
        assert planted.status is Status.FAIL, planted.notes
        assert planted.claim_id.startswith(true.claim_id + f"[{keyword}=")


def test_evaluate_lemmas_true_rows() -> None:
    """The lemma table with quick settings: every counted row PASSes; Li's Lemma 2 rows are INCONCLUSIVE
    (an equality at t = 0, see test_li_planted_variants_fail) and Ding's Lemmas 8 (true by the selection rule)
    and 9 (implied by L-smoothness) cannot fail: all are listed as uninformative, not counted, so the claim
    PASSes on the others and says which rows it did not count."""
    verdict = evaluate_lemmas(QUICK).verdict
    rows = {row.name: row.verdict for row in verdict.checks}
    assert any(name.startswith("ding2020.lemma6") or name.startswith("Lemma 6") for name in rows)
    assert all(row.status is Status.PASS for row in rows.values()), {n: r.status for n, r in rows.items()}
    assert not any("Lemma 8" in name or "Lemma 9" in name for name in rows)
    skipped = verdict.uninformative
    assert [u.name.split(",")[0].split(":")[0] for u in skipped] == ["li2020.lemma2"] * 2 + ["Lemma 8", "Lemma 9"]
    assert all(u.verdict.status is Status.INCONCLUSIVE for u in skipped)
    assert all("equality at t = 0" in u.reason for u in skipped[:2])
    assert "by construction" in skipped[2].reason and "2 B^2 L" in skipped[3].reason
    assert verdict.status is Status.PASS and "Not counted (uninformative), li2020.lemma2" in verdict.notes


FAST = [lemma for lemma in PLANTABLE_LEMMAS if not lemma.startswith("li2020")]


@pytest.mark.parametrize("planted", FAST + [pytest.param(lemma, marks=pytest.mark.slow)
                                           for lemma in PLANTABLE_LEMMAS if lemma.startswith("li2020")])
def test_evaluate_lemmas_planted_variant_fails(planted: str) -> None:
    verdict = evaluate_lemmas(QUICK, planted=planted).verdict
    assert verdict.status is Status.FAIL
    assert all(row.verdict.status is Status.FAIL for row in verdict.checks)
    assert f"Planted false {planted}" in verdict.notes


def test_evaluate_lemmas_rejects_unknown_variant() -> None:
    with pytest.raises(ValueError, match="^planted: claim 'lemmas' needs one of li2020.lemma1"):
        evaluate_lemmas(QUICK, planted="li2020.lemma7")


@pytest.mark.parametrize("planted", [None, "L", "mu", "sigma_k^2", "G^2", "sigma_G^2"])
def test_constants_claim_catches_a_constant_ten_percent_off(planted) -> None:
    """assumptions.constants: the true table PASSes; each constant reported 10% wrong (a sup at 0.9 of its value,
    mu at 1/0.9) FAILs through a witness on the counterexample, where every constant is exact (least squares:
    the extreme secant curvatures are L_k and mu_k, and each sup is attained at a point of the ball)."""
    verdict = evaluate_constants(QUICK, planted=planted).verdict
    first = verdict.checks[0].verdict
    if planted is None:
        assert verdict.status is Status.PASS and first.measured == 0.0
    else:
        assert verdict.status is Status.FAIL and first.status is Status.FAIL
        assert planted.split("^")[0] in first.notes.split("violated:")[1]


def test_constants_claim_rejects_unknown_planted_name() -> None:
    with pytest.raises(ValueError, match="^planted: claim 'assumptions.constants' needs one of L, mu"):
        evaluate_constants(QUICK, planted="Gamma")


@pytest.mark.parametrize("d", [1, 2, 7, 60])
def test_extreme_eigenvectors_equal_those_of_the_full_decomposition(d: int) -> None:
    """The two eigenpairs computed alone are the extreme ones of the full ``numpy.linalg.eigh``: the vectors
    agree up to sign (|<u, v>| = 1 to rounding) and their Rayleigh quotients are the extreme eigenvalues.
    The spectrum is spread (gaps >= 0.5), so each extreme eigenvector is unique up to sign."""
    rng = np.random.default_rng(d)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = (Q * np.linspace(-3.0, 40.0, d)) @ Q.T
    A = 0.5 * (A + A.T)
    values, vectors = np.linalg.eigh(A)
    for e, value, full in zip(extreme_eigenvectors(A), values[[0, -1]], vectors[:, [0, -1]].T):
        assert abs(abs(float(e @ full)) - 1.0) < 1e-12 and abs(float(e @ e) - 1.0) < 1e-12
        np.testing.assert_allclose(e, sign_fixed(full), rtol=0, atol=1e-10)
        assert float(e @ A @ e) == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_secant_witnesses_equal_the_full_decomposition_ones() -> None:
    """The secant witnesses with the extreme eigenvectors alone equal those of the full decomposition's extreme
    eigenvectors (signs fixed the same way: over a ball of radius ||w*|| a softmax curvature along e and -e
    differs by up to 3x on synthetic(1,1)): to rounding for least squares (the counterexample of the constants
    table), and for softmax (a small synthetic(1,1), d = 66) to 1e-8 relative, the eigenvectors' own accuracy
    (rounding / the smallest spectral gap) carried through a secant over the ball."""
    from problems import build_problem, exact_optimum, problem_spec
    from proofs_check.claims.checks import constants as constants_claim
    from proofs_check.claims.checks.default_problems import DEFAULT_PROBLEMS

    problems = {"counterexample": DEFAULT_PROBLEMS["counterexample"],
                "softmax": problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=4, n_features=10, n_classes=6,
                                        l2=0.25, seed=1)}

    def full(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vectors = np.linalg.eigh(A)[1]
        return sign_fixed(vectors[:, 0]), sign_fixed(vectors[:, -1])

    for label, rel in (("counterexample", 1e-10), ("softmax", 1e-8)):
        problem = build_problem(problems[label])
        w_star = exact_optimum(problem, crosscheck=False).w_star
        radius = float(np.linalg.norm(w_star))
        subset = constants_claim._secant_curvatures(problem, w_star, radius)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(constants_claim, "extreme_eigenvectors", full)
            reference = constants_claim._secant_curvatures(problem, w_star, radius)
        for ours, theirs in zip(subset, reference):
            np.testing.assert_allclose(ours, theirs, rtol=rel, atol=0)
