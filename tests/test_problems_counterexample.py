"""Li et al. (ICLR 2020), Appendix C: the matrices of eq. 28-29, Proposition 1, and the factorised
least-squares problem (eq. 30). Expected values come from the paper's closed forms, cited inline."""

from __future__ import annotations

import numpy as np
import pytest

from problems import ProblemError, exact_optimum, li_counterexample, li_counterexample_matrices

SIZES = [(2, 2), (3, 3), (5, 4), (4, 7)]


def tridiagonal(d: int) -> np.ndarray:
    """Eq. 28: 2 on the diagonal, -1 on the first off-diagonals."""
    return 2 * np.eye(d) - np.eye(d, k=1) - np.eye(d, k=-1)


@pytest.mark.parametrize("N,p", SIZES)
def test_matrices_partition_A_and_b(N: int, p: int) -> None:
    A_list, b_list = li_counterexample_matrices(N, p)
    d = N * p + 1
    assert A_list.shape == (N, d, d) and b_list.shape == (N, d)
    np.testing.assert_array_equal(A_list.sum(axis=0), tridiagonal(d))  # A = sum_k A_k
    e1 = np.eye(d)[0]
    np.testing.assert_array_equal(b_list[0], e1)  # b_1 = b = e_1
    np.testing.assert_array_equal(b_list[1:], 0.0)  # b_k = 0, k >= 2


@pytest.mark.parametrize("N,p", SIZES)
def test_proposition_1_psd_norm_and_rank(N: int, p: int) -> None:
    A_list, _ = li_counterexample_matrices(N, p)
    for k, A_k in enumerate(A_list):
        np.testing.assert_array_equal(A_k, A_k.T)
        eig = np.linalg.eigvalsh(A_k)
        assert eig.min() >= -1e-12  # Prop. 1.1: PSD
        assert eig.max() <= 4 + 1e-12  # Prop. 1.1: ||A_k||_2 <= 4
        expected_rank = p + 1 if k in (0, N - 1) else p  # Prop. 1.2
        assert np.linalg.matrix_rank(A_k) == expected_rank


@pytest.mark.parametrize("N,p", SIZES)
def test_block_support_and_lemma_6_products(N: int, p: int) -> None:
    A_list, _ = li_counterexample_matrices(N, p)
    for k, A_k in enumerate(A_list):  # Prop. 1.3: nonzeros only on the block I_k (0-based k p .. k p + p)
        mask = np.zeros_like(A_k, dtype=bool)
        mask[k * p : k * p + p + 1, k * p : k * p + p + 1] = True
        assert not np.any(A_k[~mask])
    for k in range(2, N):  # proof of Lemma 6 (C.5): A_1 A_k = 0 for k >= 3, but A_1 A_2 != 0
        np.testing.assert_array_equal(A_list[0] @ A_list[k], 0.0)
    assert np.any(A_list[0] @ A_list[1] != 0)


def test_path_laplacian_spectrum_of_middle_blocks() -> None:
    # B_k is the Laplacian of a path on p+1 nodes: eigenvalues 2 - 2 cos(j pi / (p+1)), j = 0..p.
    N, p = 4, 5
    A_list, _ = li_counterexample_matrices(N, p)
    expected = np.sort(2 - 2 * np.cos(np.arange(p + 1) * np.pi / (p + 1)))
    block = A_list[1][p : 2 * p + 1, p : 2 * p + 1]
    np.testing.assert_allclose(np.linalg.eigvalsh(block), expected, atol=1e-12)


@pytest.mark.parametrize("N,p", SIZES)
def test_factorised_problem_equals_matrices(N: int, p: int) -> None:
    mu = 0.03
    problem = li_counterexample(N, p, mu)
    A_list, b_list = li_counterexample_matrices(N, p)
    d = N * p + 1
    assert problem.dim == d and problem.n_clients == N
    np.testing.assert_array_equal(problem.client_sizes, p + 1)  # padded to n_k = p + 1 (App. C.3)
    np.testing.assert_allclose(problem.weights, 1.0 / N)
    for k in range(N):
        X, y = problem.client_data(k)
        np.testing.assert_allclose(X.T @ X / (p + 1), A_list[k], atol=1e-14)  # X_k'X_k/n_k = A_k
        np.testing.assert_allclose(X.T @ y / (p + 1), b_list[k], atol=1e-14)  # X_k'y_k/n_k = b_k
    rng = np.random.default_rng(7)
    for _ in range(5):
        w = rng.normal(size=d) * 3
        eq30 = np.array([0.5 * (w @ A @ w - 2 * b @ w + mu * w @ w) for A, b in zip(A_list, b_list, strict=True)])
        np.testing.assert_allclose(problem.local_objectives(w), eq30, rtol=1e-12, atol=1e-12)  # eq. 30 exactly
        grads = np.array([A @ w - b + mu * w for A, b in zip(A_list, b_list, strict=True)])
        np.testing.assert_allclose(problem.local_gradients(w), grads, atol=1e-12)
        A, b = A_list.sum(0), b_list.sum(0)
        eq27 = (w @ A @ w - 2 * b @ w) / (2 * N) + mu / 2 * w @ w
        assert problem.objective(w) == pytest.approx(eq27, rel=1e-12, abs=1e-12)  # eq. 27


def test_constant_of_client_one() -> None:
    # c_1 = -||y_1||^2 / (2 n_1) with y_1 = sqrt(n_1) X_1 w~ and X_1 w~ = e_1-row indicator: c_1 = -1/2.
    problem = li_counterexample(3, 3, 0.0)
    np.testing.assert_allclose(problem.constants, [-0.5, 0.0, 0.0])
    w_tilde = np.r_[np.ones(4), np.zeros(6)]
    assert problem.local_objective(w_tilde, 0) == pytest.approx(-0.5)  # F_1(w~) = 1/2 w~'A_1 w~ - w~_1 = -1/2


@pytest.mark.parametrize("N,p", SIZES)
def test_closed_form_optimum_for_mu_zero(N: int, p: int) -> None:
    problem = li_counterexample(N, p, mu=0.0)
    optimum = exact_optimum(problem)
    d = N * p + 1
    i = np.arange(1, d + 1)
    closed_form = 1 - i / (N * p + 2)  # Prop. 1.4: (w*)_i = 1 - i / (Np + 2)
    np.testing.assert_allclose(optimum.w_star, closed_form, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.linalg.solve(tridiagonal(d), np.eye(d)[0]), closed_form, atol=1e-13)
    # F* = -(1/(2N)) b'A^{-1}b = -(1/(2N)) (w*)_1 from eq. 27
    assert optimum.F_star == pytest.approx(-closed_form[0] / (2 * N), rel=1e-12)
    # F_1* = -1/2 b_1'A_1^+ b_1 = -1/2 (A_1 w~ = e_1, w~_1 = 1); F_k* = 0 for k >= 2 (b_k = 0)
    np.testing.assert_allclose(optimum.local_F_star, [-0.5] + [0.0] * (N - 1), atol=1e-12)


def test_local_minima_with_regularisation() -> None:
    N, p, mu = 5, 4, 2e-4  # the paper's illustration (App. C.2)
    A_list, b_list = li_counterexample_matrices(N, p)
    optimum = exact_optimum(li_counterexample(N, p, mu))
    eye = np.eye(N * p + 1)
    # min of 1/2 [w'(A_k + mu I)w - 2 b_k'w] is -1/2 b_k'(A_k + mu I)^{-1} b_k
    expected = [-0.5 * b @ np.linalg.solve(A + mu * eye, b) for A, b in zip(A_list, b_list, strict=True)]
    np.testing.assert_allclose(optimum.local_F_star, expected, rtol=1e-10, atol=1e-14)
    A, b = A_list.sum(0), b_list.sum(0)
    np.testing.assert_allclose(optimum.w_star, np.linalg.solve(A / N + mu * eye, b / N), rtol=1e-10)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"N": 1}, "N"),
        ({"p": 1}, "p"),
        ({"p": 2.5}, "p"),
        ({"N": "5"}, "N"),
        ({"mu": -1e-3}, "mu"),
        ({"mu": float("nan")}, "mu"),
    ],
)
def test_invalid_arguments_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=rf"^{field}:"):
        li_counterexample(**kwargs)


def test_matrices_validate_too() -> None:
    with pytest.raises(ProblemError, match="^p:"):
        li_counterexample_matrices(3, 1)
