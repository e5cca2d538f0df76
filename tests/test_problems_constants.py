"""Smoothness / strong-convexity constants: exact for least squares (eigenvalues, and closed forms
for Li's counterexample), valid and tight where claimed for logistic / softmax."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problems import FederatedProblem, li_counterexample, problem_constants, random_quadratic, synthetic
from problems._rows import global_rows


def classification_problem(loss: str, mu: float = 0.01, seed: int = 0) -> FederatedProblem:
    """Four clients with shifted Gaussian rows (so their Gram matrices differ) and random labels."""
    rng = np.random.default_rng(seed)
    sizes = np.array([6, 9, 4, 11])
    C = 3 if loss == "softmax" else 1
    X = np.vstack([rng.normal(loc=k, size=(n, 3)) for k, n in enumerate(sizes)])
    y = rng.integers(0, 2 if loss == "logistic" else C, sizes.sum())
    return FederatedProblem("clf", loss, X, y, np.r_[0, np.cumsum(sizes)], np.array([0.1, 0.4, 0.2, 0.3]), mu, C)


def test_least_squares_constants_are_eigenvalues() -> None:
    problem = random_quadratic(n_clients=5, dim=6, mu=0.3, L=4.0, samples_per_client=9, seed=2)
    consts = problem_constants(problem)
    grams = []
    for k in range(problem.n_clients):
        X, _ = problem.client_data(k)
        grams.append(X.T @ X / X.shape[0])
        eig = np.linalg.eigvalsh(grams[-1] + problem.mu * np.eye(6))
        assert consts.L_k[k] == pytest.approx(eig[-1], rel=1e-12)
        assert consts.mu_k[k] == pytest.approx(eig[0], rel=1e-9)
    eig = np.linalg.eigvalsh(np.einsum("k,kij->ij", problem.weights, grams) + problem.mu * np.eye(6))
    assert consts.L_global == pytest.approx(eig[-1], rel=1e-12)
    assert consts.mu_global == pytest.approx(eig[0], rel=1e-12)
    assert consts.L == pytest.approx(4.0, rel=1e-12) and consts.mu == pytest.approx(0.3, rel=1e-9)
    assert consts.exact and consts.kappa == pytest.approx(4.0 / 0.3, rel=1e-9)


def test_counterexample_constants_closed_form() -> None:
    N, p, mu = 5, 4, 2e-4
    consts = problem_constants(li_counterexample(N, p, mu))
    d = N * p + 1
    # Middle clients: A_k = B_k, a path Laplacian on p+1 nodes: lambda_max = 2 - 2 cos(p pi / (p+1)).
    np.testing.assert_allclose(consts.L_k[1:-1], 2 - 2 * np.cos(p * np.pi / (p + 1)) + mu, rtol=1e-12)
    # Every A_k is singular (rank <= p+1 < d), so mu_k = mu exactly.
    np.testing.assert_allclose(consts.mu_k, mu, rtol=1e-9)
    # F's Hessian is A/N + mu I; the tridiagonal A has eigenvalues 2 - 2 cos(j pi / (d+1)), j = 1..d.
    assert consts.L_global == pytest.approx((2 - 2 * np.cos(d * np.pi / (d + 1))) / N + mu, rel=1e-12)
    assert consts.mu_global == pytest.approx((2 - 2 * np.cos(np.pi / (d + 1))) / N + mu, rel=1e-10)
    assert consts.L <= 4 + mu  # Prop. 1.1


def bregman(problem: FederatedProblem, k: int | None, w: np.ndarray, v: np.ndarray) -> float:
    """F(v) - F(w) - <grad F(w), v - w> for F_k (k given) or F (k None)."""
    if k is None:
        return problem.objective(v) - problem.objective(w) - problem.gradient(w) @ (v - w)
    return problem.local_objective(v, k) - problem.local_objective(w, k) - problem.local_gradient(w, k) @ (v - w)


@pytest.mark.parametrize("loss", ["logistic", "softmax"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-2, 30.0), step=st.floats(1e-2, 10.0))
def test_sampled_pairs_respect_smoothness_and_strong_convexity(loss: str, seed: int, scale: float, step: float) -> None:
    # mu/2 ||v - w||^2 <= F(v) - F(w) - <grad F(w), v - w> <= L/2 ||v - w||^2 for every pair.
    problem = classification_problem(loss)
    consts = problem_constants(problem)
    rng = np.random.default_rng(seed)
    w = scale * rng.normal(size=problem.dim)
    v = w + step * rng.normal(size=problem.dim)
    dist = float((v - w) @ (v - w))
    slack = 1e-9 * (1 + abs(problem.objective(w)) + abs(problem.objective(v)))
    for k, L, mu in [(k, consts.L_k[k], consts.mu_k[k]) for k in range(problem.n_clients)] + [
        (None, consts.L_global, consts.mu_global)
    ]:
        gap = bregman(problem, k, w, v)
        assert mu / 2 * dist - slack <= gap <= L / 2 * dist + slack


def test_logistic_L_is_attained_at_zero() -> None:
    # s'(0) = 1/4, so the Hessian at w = 0 is X'X/(4n) + mu I: its curvature along the top
    # eigenvector of X_k'X_k/n_k equals L_k (a second difference of F_k measures it).
    problem = classification_problem("logistic")
    consts = problem_constants(problem)
    assert consts.exact
    for k in range(problem.n_clients):
        X, _ = problem.client_data(k)
        u = np.linalg.eigh(X.T @ X / X.shape[0])[1][:, -1]
        t = 1e-3
        F_k = problem.local_objective
        curvature = (F_k(t * u, k) + F_k(-t * u, k) - 2 * F_k(0 * u, k)) / t**2
        assert curvature == pytest.approx(consts.L_k[k], rel=1e-5)


def test_softmax_mu_is_attained_along_logit_shifts() -> None:
    # Adding a 1' to W shifts every logit of a row by the same amount: the data term is flat
    # along such directions, so the curvature there is exactly mu (mu_k = mu is exact).
    problem = classification_problem("softmax", mu=0.07)
    consts = problem_constants(problem)
    assert not consts.exact and np.all(consts.mu_k == problem.mu)
    rng = np.random.default_rng(3)
    w = rng.normal(size=problem.dim)
    a = rng.normal(size=problem.n_features)
    u = np.outer(a, np.ones(problem.n_classes)).reshape(-1)
    u /= np.linalg.norm(u)
    t = 1e-2
    for k in range(problem.n_clients):
        F_k = problem.local_objective
        curvature = (F_k(w + t * u, k) + F_k(w - t * u, k) - 2 * F_k(w, k)) / t**2
        assert curvature == pytest.approx(problem.mu, rel=1e-6)


def test_softmax_L_bounds_the_hessian() -> None:
    # lambda_max of the exact Hessian at sampled points never exceeds L_global.
    problem = classification_problem("softmax")
    consts = problem_constants(problem)
    rows = global_rows(problem)
    rng = np.random.default_rng(4)
    top = max(np.linalg.eigvalsh(rows.hessian(s * rng.normal(size=problem.dim)))[-1] for s in (0.0, 0.3, 1.0, 3.0))
    assert top <= consts.L_global
    assert top > problem.mu  # not vacuous: the data term contributes


def test_synthetic_constants_are_finite_and_ordered() -> None:
    consts = problem_constants(synthetic(n_clients=8, seed=1))
    assert consts.L_k.shape == (8,) and np.all(np.isfinite(consts.L_k))
    assert consts.mu == pytest.approx(2e-4) and consts.mu_global == pytest.approx(2e-4)
    assert consts.L_global <= consts.L and consts.L == consts.L_k.max()
