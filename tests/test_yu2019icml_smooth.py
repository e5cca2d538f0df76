"""yu2019icml.thm3 on the smooth network (``thm3_smooth``): the equal-size label-sorted family, the
per-client constants against a direct computation from single-row gradients, the sub-check on a small
instance, and the planted variant (the bound divided by 100) FAILing the claim at the quick horizon."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from convergence import Status
from problems import ProblemError, build_block_cyclic, problem_spec
from proofs_check import get_claim
from proofs_check.claims.yu2019icml.bound import theorem3_terms
from proofs_check.claims.yu2019icml.thm3_smooth import client_moments

evaluate_thm3 = get_claim("yu2019icml.thm3").evaluate
SMOOTH = "explicit bound, digits_tanh_mlp (estimated constants), N = 10"


def small_problem(N: int = 4, n: int = 40):
    return build_block_cyclic(problem_spec("sorted_images", n_clients=N, n_train=n)).combined


def test_sorted_images_equal_clients_in_label_order() -> None:
    f = small_problem()
    assert np.array_equal(f.offsets, [0, 10, 20, 30, 40]) and np.allclose(f.weights, 0.25)
    labels = [f.client_data(k)[1] for k in range(4)]
    assert all(a.max() <= b.min() for a, b in itertools.pairwise(labels))
    with pytest.raises(ProblemError, match="^n_train"):
        small_problem(N=3, n=40)


def test_client_moments_against_single_row_gradients() -> None:
    f, b = small_problem(), 3
    x = f.initial_model(1) + 0.1
    full = f.gradient(x)
    m = client_moments(f, x, b)
    for k in range(4):
        n_k = f.offsets[k + 1] - f.offsets[k]
        rows = np.array([f.client_gradient(x, k, rows=np.array([i])) for i in range(n_k)])
        mean = f.client_gradient(x, k)
        np.testing.assert_allclose(rows.mean(axis=0), mean, rtol=1e-9, atol=1e-12)
        # b rows drawn with replacement: E||g_b - grad f_k||^2 = (1/b) (1/n_k) sum_i ||g_i - grad f_k||^2
        variance = np.mean(np.sum((rows - mean) ** 2, axis=1)) / b
        assert m.variance[k] == pytest.approx(variance, rel=1e-9)
        assert m.second[k] == pytest.approx(mean @ mean + variance, rel=1e-9)
        assert m.dissimilarity[k] == pytest.approx(np.sum((mean - full) ** 2), rel=1e-9)
    assert m.grad_sq == pytest.approx(full @ full, rel=1e-9)
    assert m.sigma_G_sq == pytest.approx(np.mean(m.dissimilarity))


def test_smooth_subcheck_on_a_small_instance(quick_settings) -> None:
    verdict = evaluate_thm3(quick_settings, smooth_horizon=256, smooth_sync_interval=16).verdict
    [check] = [c.verdict for c in verdict.checks if c.name == SMOOTH]
    assert check.status is Status.PASS, check.notes
    row = verdict.evidence["constants"][-1]
    assert row["6 L s K (estimated L)"] <= 1 < row["6 L s K (certified L)"]
    # the reported bound is Theorem 3's with the reported (estimated) constants
    rhs = theorem3_terms(np.array(check.evidence["x"]), s=row["s"], K=16, N=10, L=row["L (estimate)"],
                         G_sq=row["G^2 (estimate)"], sigma_sq=row["sigma^2 (estimate)"],
                         sigma_G_sq=row["sigma_G^2 (estimate)"], f0=row["f(xbar^0) - 0"]).total()
    np.testing.assert_allclose(check.evidence["bound"], rhs, rtol=1e-12)
    assert "ESTIMATED" in check.notes


def test_smooth_subcheck_fails_with_the_bound_divided_by_100(quick_settings) -> None:
    # at the quick horizon (T = 4,096) the measured average reaches about 0.07 of the bound as stated
    planted = evaluate_thm3(quick_settings, smooth_bound_scale=0.01).verdict
    assert planted.status is Status.FAIL, planted.notes
    assert [c.name for c in planted.checks if c.verdict.status is Status.FAIL] == [SMOOTH]
