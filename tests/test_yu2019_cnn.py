"""yu2019.cnn: the CNN's full-gradient and per-sample oracles, the identical-data family, the estimators
of L, G^2, sigma^2 on cases with known constants, the rate check's PASS / FAIL / INCONCLUSIVE logic, and
the quick plan end to end (its FAIL, its planted variant's FAIL, the bound as uncounted evidence)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convergence import PRSGDConfig, RunConfig, Status, StepSize, check_rate_exponent, run
from problems import ProblemError, build_block_cyclic, build_problem, identical_images, problem_spec, random_quadratic
from proofs_check import VerifySettings, get_claim, power_smoothness, sample_minibatch_moments, secant_smoothness
from proofs_check.constants.minibatch_moments import gradient_variance
from proofs_check.claims.yu2019.cnn import rate_hypotheses, smoothness_hypothesis
from proofs_check.claims.yu2019.cnn_estimates import restoring_L, round_up
from proofs_check.claims.yu2019.sweep import RATE_TOLERANCE, yu_theorem1_bound

N_TRAIN = 24


@pytest.fixture(scope="module")
def problem():
    return build_block_cyclic(problem_spec("identical_images", n_clients=3, n_train=N_TRAIN, n_test=20))


# ------------------------------------------------------------------------------- the oracles
def test_the_full_gradient_matches_central_differences_of_the_objective(problem):
    """<grad F(theta), v> = (F(theta + h v) - F(theta - h v)) / (2h) + O(h^2) along random directions
    (float64 network; h = 1e-6 keeps both errors near 1e-9)."""
    c = problem.combined
    theta = c.initial_model(1)
    grad = c.gradient(theta)
    rng = np.random.default_rng(0)
    for _ in range(3):
        v = rng.standard_normal(c.dim)
        v /= np.linalg.norm(v)
        h = 1e-6
        numeric = (c.objective(theta + h * v) - c.objective(theta - h * v)) / (2 * h)
        assert grad @ v == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_the_full_gradient_is_the_weighted_sum_of_the_client_gradients_and_of_the_sample_gradients(problem):
    c = problem.combined
    theta = c.initial_model(2)
    by_clients = sum(c.weights[k] * c.client_gradient(theta, k) for k in range(c.n_clients))
    np.testing.assert_allclose(c.gradient(theta), by_clients, rtol=1e-12, atol=1e-15)
    samples = c.sample_gradients(theta, 1)
    assert samples.shape == (N_TRAIN, c.dim) and samples.dtype == np.float64
    np.testing.assert_allclose(samples.mean(axis=0), c.client_gradient(theta, 1), rtol=1e-11, atol=1e-15)
    images, labels = c.client_data(1)
    one = c.network.loss_and_gradient(theta, images[5:6], labels[5:6])[1]
    np.testing.assert_array_equal(samples[5], one)


# ------------------------------------------------------------------------ the identical data
def test_every_client_holds_the_same_images_so_every_local_objective_is_f(problem):
    c = problem.combined
    assert (problem.n_blocks, problem.n_clients, c.n_clients) == (1, 3, 3)
    np.testing.assert_array_equal(c.client_sizes, [N_TRAIN] * 3)
    np.testing.assert_allclose(c.weights, 1 / 3)
    for k in (1, 2):
        np.testing.assert_array_equal(c.client_data(k)[0], c.client_data(0)[0])
        np.testing.assert_array_equal(c.client_data(k)[1], c.client_data(0)[1])
    theta = c.initial_model(0)
    local = c.local_objectives(theta)
    assert np.ptp(local) == 0 and c.objective(theta) == pytest.approx(local[0], rel=1e-15)
    one = build_problem(problem_spec("identical_images", n_clients=1, n_train=N_TRAIN, n_test=20))
    assert one.objective(theta) == pytest.approx(c.objective(theta), rel=1e-14)  # f does not depend on N
    assert problem.block_accuracy(theta[None, :]).test_sizes == (20,)


def test_pr_sgd_runs_the_identical_problem_from_its_spec(problem):
    config = PRSGDConfig(rounds=3, sync_interval=2, step_size=StepSize.constant(0.1), batch_size=2, seeds=(0, 1),
                         record_rounds=(0, 3))
    result = run(RunConfig(problem.spec, config))
    assert result.extras.grad_sq_mean.shape == (2, 2) and np.all(result.extras.grad_sq_mean[:, 1] > 0)
    np.testing.assert_array_equal(result.iterates[:, 0], [problem.combined.initial_model(s) for s in (0, 1)])


@pytest.mark.parametrize("params, field", [
    ({"n_clients": 0}, "n_clients"), ({"n_train": 5000}, "n_train"), ({"dtype": "float16"}, "dtype"),
    ({"network": "lenet5"}, "network"),
])
def test_bad_family_fields_are_named(params, field):
    with pytest.raises(ProblemError, match=f"^{field}: "):
        identical_images(**{"n_train": 8, **params})


# ---------------------------------------------------------------------------- the estimators
def _quadratic(eigenvalues):
    """f(x) = x'Ax/2 with A = Q diag(eigenvalues) Q': grad f = A x, L = max |eigenvalue| exactly."""
    q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((len(eigenvalues),) * 2))
    return q @ np.diag(eigenvalues) @ q.T, q


def test_power_iteration_finds_the_largest_absolute_eigenvalue_of_a_quadratic():
    A, _ = _quadratic([-4.0, 1.0, 2.5, 0.5, -1.0])  # L = 4 (the largest |eigenvalue|: a saddle)
    x = np.ones(5)
    for radius in (1e-6, 1e-2, 1.0):  # central differences are exact on a quadratic, whatever the radius
        assert power_smoothness(lambda w: A @ w, x, iterations=200, radius=radius) == pytest.approx(4.0, rel=1e-9)
    assert power_smoothness(lambda w: A @ w, x, iterations=1, radius=1e-3) <= 4.0 + 1e-12  # a lower bound at once
    assert power_smoothness(lambda w: 0 * w, x, iterations=5, radius=1e-3) == 0.0
    with pytest.raises(ValueError, match="^iterations: "):
        power_smoothness(lambda w: w, x, iterations=0, radius=1.0)
    with pytest.raises(ValueError, match="^radius: "):
        power_smoothness(lambda w: w, x, iterations=3, radius=-1.0)


def test_secants_are_lower_bounds_of_L_reached_along_the_top_eigenvector():
    A, q = _quadratic([3.0, -1.0, 0.5])
    rng = np.random.default_rng(1)
    points = rng.standard_normal((6, 3))
    assert secant_smoothness(points, points @ A) <= 3.0 + 1e-12  # ||A (x - y)|| <= 3 ||x - y||
    along = np.outer(np.arange(4.0), q[:, 0])  # points on the line of the eigenvector of eigenvalue 3
    assert secant_smoothness(along, along @ A) == pytest.approx(3.0, rel=1e-12)
    assert secant_smoothness(np.zeros((2, 3)), np.zeros((2, 3))) == 0.0  # no pair of distinct points
    with pytest.raises(ValueError, match="^gradients: "):
        secant_smoothness(points, points[:, :2])


def test_minibatch_moments_by_hand_and_against_the_linear_models_exact_variance():
    # two rows with gradients +-e1: mean 0, v = 1; b rows with replacement: E||g_b||^2 = Var = 1/b
    assert sample_minibatch_moments(np.array([[1.0, 0.0], [-1.0, 0.0]]), 2) == pytest.approx((0.5, 0.5))
    # a least-squares client: per-sample gradients x_i (x_i'w - y_i); the variance is
    # minibatch_moments.gradient_variance's (1/b)(1/n) sum ||g_i - gbar||^2
    p = random_quadratic(n_clients=2, dim=4, samples_per_client=7, seed=2)
    w = np.random.default_rng(0).standard_normal(4)
    X, y = p.client_data(0)
    samples = X * (X @ w - y)[:, None]
    second, variance = sample_minibatch_moments(samples, 3)
    assert variance == pytest.approx(gradient_variance(p, w, 3)[0], rel=1e-12)
    assert second == pytest.approx(np.sum(samples.mean(axis=0) ** 2) + variance, rel=1e-12)
    with pytest.raises(ValueError, match="^batch_size: "):
        sample_minibatch_moments(samples, 0)


def test_restoring_L_is_the_root_of_theorem_1s_bound():
    terms = dict(steps=100.0, s=0.05, K=2, N=2, G_sq=3.0, sigma_sq=2.0, f0=1.5)
    base = yu_theorem1_bound(100.0, L=0.0, **{k: v for k, v in terms.items() if k != "steps"})  # 2 f0 / (s T) = 0.6
    assert base == pytest.approx(0.6)
    L = restoring_L(2.0, **terms)
    assert yu_theorem1_bound(100.0, L=L, **{k: v for k, v in terms.items() if k != "steps"}) == pytest.approx(2.0)
    assert restoring_L(0.5, **terms) == 0.0  # the L-free term alone already exceeds it
    assert restoring_L(2.0, **{**terms, "G_sq": 0.0, "sigma_sq": 0.0}) == math.inf  # no L raises the bound


def test_round_up_to_two_significant_digits():
    assert round_up(2.714) == pytest.approx(2.8) and round_up(19.0) == pytest.approx(19.0)
    assert round_up(0.011363) == pytest.approx(0.012) and round_up(5.4388) == pytest.approx(5.5)


# ------------------------------------------------------------------------ the check's logic
def test_the_rate_check_passes_a_decay_fails_a_flat_curve_and_is_inconclusive_when_s_exceeds_1_over_L():
    """Synthetic finals c (NT)^-1/2 with 5% noise over 6 seeds, as the claim feeds check_rate_exponent:
    PASS with its hypotheses met, FAIL for the planted exponent -1, INCONCLUSIVE once s > 1/L."""
    N, horizons = 2, (64, 128, 256, 512, 1024)
    nt = np.array([N * T for T in horizons], dtype=float)
    noise = np.random.default_rng(0).normal(1.0, 0.05, size=(6, nt.size))
    decaying, flat = 3.0 * nt ** -0.5 * noise, 0.05 * noise

    def check(values, claimed, L):
        hypotheses = tuple(h for T in horizons for h in rate_hypotheses(N, T, 1, math.sqrt(N / T) / 5.0, L))
        return check_rate_exponent("t", nt, values, claimed_exponent=claimed, tolerance=RATE_TOLERANCE,
                                   hypotheses=hypotheses)

    assert check(decaying, -0.5, 5.0).status is Status.PASS
    assert check(decaying, -1.0, 5.0).status is Status.FAIL
    assert check(flat, -0.5, 5.0).status is Status.FAIL
    # s = sqrt(2/64)/5 = 0.0354 at T = 64: L = 30 makes s L = 1.06 > 1 there
    unmet = check(decaying, -0.5, 30.0)
    assert unmet.status is Status.INCONCLUSIVE and "s <= 1/L" in unmet.notes and "[N=2, T=64]" in unmet.notes
    k_unmet = rate_hypotheses(4, 64, 2, 0.01, 1.0)[0]  # K = 2 > 64^(1/4) / 4^(3/4) = 1
    assert not k_unmet.met and "T^(1/4)/N^(3/4) = 1" in k_unmet.detail


# --------------------------------------------------------------------------- end to end
def test_the_smoothness_hypothesis_is_read_off_the_layers():
    # Theorem 1 assumes f L-smooth: a ReLU or max-pool layer makes the loss only piecewise smooth (unmet), a net of
    # dense layers under the cross-entropy is smooth (met)
    from problems.models.cnn import ConvNet, Dense, NetworkLayout, digits_net

    relu = smoothness_hypothesis(digits_net())
    assert not relu.met and "MaxPool2d and ReLU layers" in relu.detail and "no finite global L" in relu.detail
    linear = smoothness_hypothesis(ConvNet("linear", NetworkLayout((8, 8, 1), (Dense(64, 10),))))
    assert linear.met and relu.name == linear.name == "f L-smooth (Theorem 1, Corollary 2)"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The quick plan as stated and its planted variant, on one run store (the variant reuses the runs)."""
    claim = get_claim("yu2019.cnn")
    # 4 seeds: with 2 the rate intervals (Student t on 1 df over the seeds' jackknife) cannot tell
    settings = VerifySettings(seeds=4, quick=True, progress=False,
                              store=str(tmp_path_factory.mktemp("yu2019cnn") / "runs.sqlite"))
    (variant,) = claim.variants
    return claim.evaluate(settings).verdict, claim.evaluate_variant(settings, variant).verdict


def test_the_quick_plan_is_inconclusive_outside_its_hypotheses_with_the_finding_kept(quick):
    """The ReLU net is not L-smooth, so by fedbound's rule its counted sub-checks and the claim are
    INCONCLUSIVE; the data alone FAIL the rate (the quick plan's horizons are pre-asymptotic: the net barely
    leaves its initialisation, the average squared gradient norm stays near ||grad f(x_0)||^2, the fitted
    exponent at N = 1 well above -1/2 + 0.05), and the notes keep that finding."""
    verdict, _ = quick
    headline = verdict.checks[0].verdict
    assert verdict.status is Status.INCONCLUSIVE and headline.status is Status.INCONCLUSIVE
    assert [h.name for h in verdict.hypotheses if not h.met] == ["f L-smooth (Theorem 1, Corollary 2)"]
    assert headline.interval[0] > -0.45 and "The data alone give FAIL" in headline.notes
    assert "Hypothesis unmet on digits_net: f L-smooth" in verdict.notes and "Fitted exponents" in verdict.notes
    relu_bounds = [u for u in verdict.uninformative if u.name.startswith("Theorem 1 with estimated constants, N")]
    assert len(relu_bounds) == 2
    for u in relu_bounds:
        assert u.verdict.status is Status.INCONCLUSIVE and u.verdict.tightness.ratio < 1
    constants = [c for c in verdict.evidence["constants_estimated"] if c["network"] == "digits_net"]
    assert len(constants) == 2 and all(c["L (estimate)"] >= c["L Hessian (estimate)"] > 0 for c in constants)
    assert all(c["lowest f recorded"] < c["f(xbar_0) - 0"] for c in constants)  # f* <= the lowest loss seen
    assert "ESTIMATE" in verdict.notes


def test_on_the_smooth_network_the_bound_passes_its_planted_variant_fails_and_the_rates_are_uninformative(quick):
    """digits_tanh_mlp is L-smooth: Theorem 1's bound with the estimated (lower) constants is counted and PASSes
    (tightness about 0.07-0.1 on the quick plan), the bound / 50 FAILs, and the rate checks, whose range the bound
    cannot bite (its value at the largest horizon is above the average at the smallest), are uninformative."""
    verdict, planted = quick
    smooth = [c for c in verdict.checks if "smooth network" in c.name]
    assert [c.name.split(",")[2].strip() for c in smooth] == ["N = 1", "N = 2"]
    assert all(c.verdict.status is Status.PASS and c.verdict.hypotheses[0].met for c in smooth)
    assert all(0 < c.verdict.tightness.ratio < 0.5 for c in smooth)
    rates = [u for u in verdict.uninformative if "smooth network" in u.name]
    assert {u.name.split(",")[0] for u in rates} == {"rate in N T", "linear speedup in N at T = 64"}
    assert all("can neither confirm nor refute" in u.reason for u in rates)
    certified = [c for c in verdict.evidence["constants_estimated"] if c["network"] == "digits_tanh_mlp"]
    # the certified L is an upper bound of the curvature the power iteration meets along the same run
    assert all(c["L (certified)"] > c["L (estimate)"] > 0 and c["G^2 (certified)"] > c["G^2 (estimate)"]
               for c in certified)
    assert planted.status is Status.FAIL and planted.as_expected
    failed = [c for c in planted.checks if c.verdict.status is Status.FAIL]
    assert failed and all("smooth network" in c.name and c.name.startswith("Theorem 1") for c in failed)


def test_rate_bite_is_uninformative_exactly_when_the_bound_at_the_largest_horizon_exceeds_the_smallest_average():
    from proofs_check.claims.yu2019.cnn_estimates import RunConstants
    from proofs_check.claims.yu2019.cnn_smooth import rate_bite

    c = RunConstants(L_secant=1.0, L_hessian=2.0, L=2.0, G_sq=1.0, sigma_sq=0.5, f0=2.0, f_min=1.0)
    # yu_theorem1_bound at T = 100, s = 0.05, K = 2, N = 1: 2*2/(0.05*100) + 4*0.0025*4*1*4 + 2*0.05*0.5 = 1.01
    bound = 0.8 + 0.16 + 0.05
    assert rate_bite((100, 0.05, 2, 1, c), bound + 0.01) is None
    reason = rate_bite((100, 0.05, 2, 1, c), bound - 0.01)
    assert reason is not None and "1.01" in reason


@pytest.mark.slow
def test_the_default_plan_is_inconclusive_with_its_pre_asymptotic_finding_and_a_loose_estimated_bound():
    """The default plan's finding (module docstring of proofs_check.claims.yu2019.cnn): s <= 1/L holds along every
    run as far as the estimates tell, but f is not L-smooth, so the claim is INCONCLUSIVE; the data alone FAIL
    the rates in N T (flat curves, exponents above -0.45), and Theorem 1's bound with the estimated constants is
    far above the measured average (tightness < 0.1)."""
    verdict = get_claim("yu2019.cnn").evaluate(VerifySettings(seeds=4, progress=False)).verdict
    rates = [c.verdict for c in verdict.checks if c.name.startswith("rate in N T")]
    assert verdict.status is Status.INCONCLUSIVE and len(rates) == 2
    assert all(v.status is Status.INCONCLUSIVE and v.interval[0] > -0.45 for v in rates)
    assert all("The data alone give FAIL" in v.notes for v in rates)
    assert all(h.met for v in rates for h in v.hypotheses if not h.name.startswith("f L-smooth"))
    assert all(u.verdict.tightness.ratio < 0.1 for u in verdict.uninformative)
