"""random_quadratic and synthetic families; gradients and Hessians against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from problems import FederatedProblem, ProblemError, random_quadratic, synthetic
from problems._rows import global_rows, local_rows


def small_problem(loss: str, seed: int = 0, mu: float = 0.05) -> FederatedProblem:
    """Three clients of unequal sizes with random rows; labels suited to the loss."""
    rng = np.random.default_rng(seed)
    sizes = np.array([4, 7, 5])
    n, f, C = sizes.sum(), 3, 4
    X = rng.normal(size=(n, f))
    y = {"least_squares": rng.normal(size=n), "logistic": rng.integers(0, 2, n), "softmax": rng.integers(0, C, n)}[loss]
    return FederatedProblem(
        name=f"small {loss}",
        loss=loss,
        X=X,
        y=y,
        offsets=np.r_[0, np.cumsum(sizes)],
        weights=np.array([0.2, 0.5, 0.3]),
        mu=mu,
        n_classes=C if loss == "softmax" else 1,
        constants=np.array([0.1, -0.2, 0.3]),
    )


def central_difference(fun, w: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """(f(w + h e_j) - f(w - h e_j)) / (2h) for every coordinate j (error O(h^2))."""
    out = []
    for j in range(w.size):
        e = np.zeros_like(w)
        e[j] = h
        out.append((fun(w + e) - fun(w - e)) / (2 * h))
    return np.array(out)


LOSSES = ["least_squares", "logistic", "softmax"]


@pytest.mark.parametrize("loss", LOSSES)
def test_the_gradient_is_the_weighted_sum_of_the_local_gradients(loss: str) -> None:
    """grad F = sum_k p_k grad F_k (the definition, from the per-sample gradients of each client) equals
    the row-weighted form ``gradient`` computes in one pass (problems._base: sum_k p_k = 1), on unequal
    client weights and sizes."""
    problem = small_problem(loss)
    assert len(set(problem.client_sizes.tolist())) > 1 or len(set(problem.weights.tolist())) > 1
    w = np.random.default_rng(2).normal(size=problem.dim)
    by_clients = problem.weights @ np.array([problem.local_gradient(w, k) for k in range(problem.n_clients)])
    np.testing.assert_allclose(problem.gradient(w), by_clients, rtol=1e-12, atol=1e-14 * np.abs(by_clients).max())


@pytest.mark.parametrize("loss", LOSSES)
def test_gradients_match_finite_differences(loss: str) -> None:
    problem = small_problem(loss)
    w = np.random.default_rng(1).normal(size=problem.dim)
    np.testing.assert_allclose(problem.gradient(w), central_difference(problem.objective, w), atol=1e-7)
    for k in range(problem.n_clients):
        numeric = central_difference(lambda v, k=k: problem.local_objective(v, k), w)
        np.testing.assert_allclose(problem.local_gradient(w, k), numeric, atol=1e-7)


@pytest.mark.parametrize("loss", LOSSES)
def test_row_objectives_value_gradient_hessian(loss: str) -> None:
    # The exact-optimum solver's own objective code must agree with the problem's F, F_k and
    # its Hessian with finite differences of its gradient.
    problem = small_problem(loss)
    w = np.random.default_rng(2).normal(size=problem.dim)
    objectives = [(global_rows(problem), problem.objective)] + [
        (local_rows(problem, k), lambda v, k=k: problem.local_objective(v, k)) for k in range(problem.n_clients)
    ]
    for rows, reference in objectives:
        value, grad = rows.value_grad(w)
        assert value == pytest.approx(reference(w), rel=1e-13)
        np.testing.assert_allclose(grad, central_difference(reference, w), atol=1e-7)
        numeric_hessian = central_difference(lambda v, rows=rows: rows.value_grad(v)[1], w).T
        np.testing.assert_allclose(rows.hessian(w), numeric_hessian, atol=1e-7)


# ------------------------------------------------------------------ random_quadratic
def client_hessians(problem: FederatedProblem) -> list[np.ndarray]:
    """X_k'X_k/n_k + mu I, computed here independently of problems.constants."""
    out = []
    for k in range(problem.n_clients):
        X, _ = problem.client_data(k)
        out.append(X.T @ X / X.shape[0] + problem.mu * np.eye(problem.dim))
    return out


def client_minimisers(problem: FederatedProblem) -> np.ndarray:
    """argmin F_k = (X_k'X_k/n_k + mu I)^{-1} X_k'y_k/n_k for least-squares clients."""
    sols = []
    for k, H in enumerate(client_hessians(problem)):
        X, y = problem.client_data(k)
        sols.append(np.linalg.solve(H, X.T @ y / X.shape[0]))
    return np.array(sols)


@pytest.mark.parametrize("mu,L,dim", [(0.1, 10.0, 20), (1e-3, 1.0, 5), (2.0, 2.5, 8)])
def test_random_quadratic_hits_mu_and_L_exactly(mu: float, L: float, dim: int) -> None:
    problem = random_quadratic(n_clients=6, dim=dim, mu=mu, L=L, samples_per_client=2 * dim, seed=3)
    for H in client_hessians(problem):
        eig = np.linalg.eigvalsh(H)
        assert eig[0] == pytest.approx(mu, rel=1e-10, abs=1e-12)  # exactly mu-strongly convex
        assert eig[-1] == pytest.approx(L, rel=1e-12)  # exactly L-smooth


def test_random_quadratic_heterogeneity_scales_distances() -> None:
    # Same seed => same centre c and offsets delta_k; w_k* = c + h delta_k, so pairwise
    # differences of client optima scale linearly in h, and h = 0 gives identical optima.
    opt = {h: client_minimisers(random_quadratic(heterogeneity=h, seed=5)) for h in (0.0, 1.0, 2.5)}
    np.testing.assert_allclose(opt[0.0], np.broadcast_to(opt[0.0][0], opt[0.0].shape), atol=1e-12)
    spread = {h: opt[h] - opt[h][0] for h in opt}
    np.testing.assert_allclose(spread[2.5], 2.5 * spread[1.0], atol=1e-10)
    assert np.linalg.norm(spread[1.0]) > 0.5


def test_random_quadratic_weights_and_determinism() -> None:
    balanced = random_quadratic(n_clients=7)
    np.testing.assert_allclose(balanced.weights, 1 / 7)
    unbalanced = random_quadratic(n_clients=7, weighting="dirichlet")
    assert unbalanced.weights.sum() == pytest.approx(1.0) and np.ptp(unbalanced.weights) > 0.01
    again = random_quadratic(n_clients=7)
    np.testing.assert_array_equal(balanced.X, again.X)
    np.testing.assert_array_equal(balanced.y, again.y)
    assert not np.array_equal(balanced.X, random_quadratic(n_clients=7, seed=1).X)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"L": 0.1}, "L"),
        ({"mu": 0.0}, "mu"),
        ({"samples_per_client": 10}, "samples_per_client"),
        ({"dim": 1}, "dim"),
        ({"heterogeneity": -1.0}, "heterogeneity"),
        ({"weighting": "power"}, "weighting"),
        ({"seed": -1}, "seed"),
    ],
)
def test_random_quadratic_rejects_bad_input(kwargs: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=rf"^{field}:"):
        random_quadratic(**kwargs)


# ------------------------------------------------------------------------ synthetic
def test_synthetic_shapes_labels_sizes() -> None:
    problem = synthetic(n_clients=12, seed=4)
    sizes = problem.client_sizes
    assert problem.n_clients == 12 and problem.n_features == 61 and problem.n_classes == 10
    assert problem.dim == 610  # (60 + 1) x 10: W and the bias b (Li, App. D.1)
    np.testing.assert_array_equal(problem.X[:, -1], 1.0)  # the appended constant feature
    assert np.all(sizes >= 50)  # n_k = int(lognormal(4, 2)) + 50
    np.testing.assert_allclose(problem.weights, sizes / sizes.sum())  # p_k = n_k / n
    assert set(np.unique(problem.y)) <= set(range(10)) and np.all(problem.y == np.round(problem.y))
    assert problem.mu == pytest.approx(2e-4)  # mu = 2 lambda, lambda = 1e-4
    assert problem.loss.value == "softmax"


def test_synthetic_is_deterministic_by_seed() -> None:
    a, b, c = synthetic(n_clients=5, seed=2), synthetic(n_clients=5, seed=2), synthetic(n_clients=5, seed=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    assert a.X.shape != c.X.shape or not np.array_equal(a.X, c.X)


def test_synthetic_feature_scales_follow_j_power() -> None:
    # Within a client x ~ N(v_k, diag(j^-1.2)): coordinate j has standard deviation j^-0.6.
    problem = synthetic(n_clients=30, seed=0)
    k = int(np.argmax(problem.client_sizes))
    X, _ = problem.client_data(k)
    assert X.shape[0] > 800
    j = np.arange(1, 61)
    np.testing.assert_allclose(X[:, :60].std(axis=0), j**-0.6, rtol=0.12)


def test_synthetic_heterogeneity_parameters() -> None:
    # alpha = beta = 0: u_k = B_k = 0, so client means v_k ~ N(0, 1) have overall spread ~1,
    # while beta = 5 makes the client means B_k ~ N(0, 5^2) spread far more.
    def spread_of_client_means(beta: float) -> float:
        problem = synthetic(alpha=0.0, beta=beta, n_clients=40, seed=6)
        means = [problem.client_data(k)[0][:, :60].mean() for k in range(problem.n_clients)]
        return float(np.std(means))

    assert spread_of_client_means(0.0) < 0.6
    assert spread_of_client_means(5.0) > 2.5


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"alpha": -1.0}, "alpha"),
        ({"n_classes": 1}, "n_classes"),
        ({"l2": -1e-4}, "l2"),
        ({"n_clients": 0}, "n_clients"),
    ],
)
def test_synthetic_rejects_bad_input(kwargs: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=rf"^{field}:"):
        synthetic(**kwargs)
