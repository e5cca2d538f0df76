"""Tests for convergence.fixed_point: the exact limit of FedAvg on least squares."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convergence.fixed_point import FixedPoint, fedavg_fixed_point
from problems._base import FederatedProblem


def heterogeneous_problem(mu: float = 0.1, seed: int = 0) -> FederatedProblem:
    """Three clients with 4, 5, 6 rows of 3 features, different data, weights 0.2, 0.3, 0.5."""
    rng = np.random.default_rng(seed)
    sizes = (4, 5, 6)
    X = np.vstack([rng.normal(loc=k, scale=1.0, size=(n, 3)) for k, n in enumerate(sizes)])
    y = rng.normal(size=X.shape[0])
    return FederatedProblem(
        name="hetero", loss="least_squares", X=X, y=y, offsets=np.cumsum((0, *sizes)), weights=[0.2, 0.3, 0.5], mu=mu
    )


def scalar_problem() -> FederatedProblem:
    """Two one-row clients in d = 1, p = (1/2, 1/2), mu = 0.

    Client 1: x = 1, y = 2, so Q_1 = 1, c_1 = 2; client 2: x = 2, y = 2, so Q_2 = 4, c_2 = 4.
    """
    return FederatedProblem(
        name="scalar", loss="least_squares", X=[[1.0], [2.0]], y=[2.0, 2.0], offsets=[0, 1, 2], weights=[0.5, 0.5], mu=0
    )


def normal_equations(problem: FederatedProblem) -> tuple[np.ndarray, np.ndarray]:
    """(sum_k p_k Q_k, sum_k p_k c_k) built from the raw client data: grad F(w) = A w - b."""
    d = problem.dim
    A, b = np.zeros((d, d)), np.zeros(d)
    for k, p in enumerate(problem.weights):
        X_k, y_k = problem.client_data(k)
        A += p * (X_k.T @ X_k / len(y_k) + problem.mu * np.eye(d))
        b += p * X_k.T @ y_k / len(y_k)
    return A, b


def normal_equations_minimiser(problem: FederatedProblem) -> np.ndarray:
    """w* solving sum_k p_k Q_k w = sum_k p_k c_k (grad F = 0)."""
    return np.linalg.solve(*normal_equations(problem))


def simulated_round(
    problem: FederatedProblem, w: np.ndarray, eta: float, local_steps: int, server_lr: float
) -> np.ndarray:
    """One FedAvg round with plain loops: E exact gradient steps per client, then the server step."""
    average = np.zeros_like(w)
    for k, p in enumerate(problem.weights):
        w_k = w.copy()
        for _ in range(local_steps):
            w_k = w_k - eta * problem.local_gradient(w_k, k)
        average += p * w_k
    return w + server_lr * (average - w)


def smoothness(problem: FederatedProblem) -> float:
    """L = max_k lambda_max(Q_k)."""
    return max(
        np.linalg.eigvalsh(X_k.T @ X_k / len(y_k)).max() + problem.mu
        for X_k, y_k in (problem.client_data(k) for k in range(problem.n_clients))
    )


def test_scalar_example_closed_form() -> None:
    # E = 2, s = 1, M_k = 1 - eta Q_k. Eq. (32):
    #   1 - sum_k p_k M_k^2 = eta sum_k p_k Q_k (2 - eta Q_k) = eta (5 - 8.5 eta),
    #   eta sum_k p_k (1 + M_k) c_k = eta sum_k p_k (2 - eta Q_k) c_k = eta (6 - 9 eta),
    # so w~ = (6 - 9 eta) / (5 - 8.5 eta) and P = 1 - eta (5 - 8.5 eta); w* = 3 / 2.5 = 1.2.
    # Client drift: w~ - w* = 1.2 eta / (5 - 8.5 eta) = Theta((E - 1) eta), as in Li et al. Thm 4.
    problem = scalar_problem()
    for eta in (1e-3, 0.01, 0.1):
        fp = fedavg_fixed_point(problem, eta, 2)
        assert isinstance(fp, FixedPoint)
        assert fp.w[0] == pytest.approx((6 - 9 * eta) / (5 - 8.5 * eta), rel=1e-13)
        assert fp.spectral_radius == pytest.approx(1 - eta * (5 - 8.5 * eta), rel=1e-13)
        assert fp.converges
        assert fp.w[0] - 1.2 == pytest.approx(1.2 * eta / (5 - 8.5 * eta), rel=1e-9)
    assert normal_equations_minimiser(problem)[0] == pytest.approx(1.2)


@pytest.mark.parametrize("server_lr", [0.5, 1.0, 1.3])
@pytest.mark.parametrize("mu", [0.0, 0.1])
def test_gradient_descent_reaches_the_minimiser(mu: float, server_lr: float) -> None:
    # E = 1: P = I - s eta sum_k p_k Q_k and q = s eta sum_k p_k c_k, so (I - P) w = q is the
    # normal equations: the fixed point is w* whatever eta and s.
    problem = heterogeneous_problem(mu=mu)
    eta = 0.5 / smoothness(problem)
    fp = fedavg_fixed_point(problem, eta, 1, server_lr=server_lr)
    np.testing.assert_allclose(fp.w, normal_equations_minimiser(problem), rtol=1e-10, atol=1e-12)
    assert fp.converges


@pytest.mark.parametrize("local_steps", [1, 2, 3, 5, 8])
def test_round_map_is_one_simulated_round(local_steps: int) -> None:
    problem = heterogeneous_problem()
    eta = 0.5 / smoothness(problem)
    fp = fedavg_fixed_point(problem, eta, local_steps, server_lr=0.7)
    w = np.random.default_rng(1).normal(size=problem.dim)
    expected = simulated_round(problem, w, eta, local_steps, 0.7)
    np.testing.assert_allclose(fp.round_matrix @ w + fp.round_offset, expected, rtol=1e-12, atol=1e-13)


def test_fixed_point_is_the_limit_of_fedavg() -> None:
    # Iterating the simulated round from w = 0 contracts the error by rho per round; after R
    # rounds with rho^R < 1e-13 the iterate equals the fixed point to rounding.
    problem = heterogeneous_problem()
    eta, local_steps, server_lr = 0.5 / smoothness(problem), 3, 0.8
    fp = fedavg_fixed_point(problem, eta, local_steps, server_lr)
    assert fp.spectral_radius < 0.99
    rounds = math.ceil(math.log(1e-13) / math.log(fp.spectral_radius))
    w = np.zeros(problem.dim)
    for _ in range(rounds):
        w = simulated_round(problem, w, eta, local_steps, server_lr)
    np.testing.assert_allclose(w, fp.w, rtol=1e-9, atol=1e-11)
    # Heterogeneous clients with E > 1: the limit is not the minimiser (client drift).
    assert np.linalg.norm(fp.w - normal_equations_minimiser(problem)) > 1e-4


def test_fixed_point_does_not_depend_on_server_lr() -> None:
    # I - P = s (I - sum_k p_k M_k^E) and q is proportional to s: the solution is free of s.
    problem = heterogeneous_problem()
    eta = 0.5 / smoothness(problem)
    points = [fedavg_fixed_point(problem, eta, 4, server_lr=s) for s in (0.3, 1.0, 1.5)]
    for fp in points[1:]:
        np.testing.assert_allclose(fp.w, points[0].w, rtol=1e-10)
    assert points[0].spectral_radius > points[1].spectral_radius


def test_step_too_large_does_not_converge() -> None:
    # E = 1: the eigenvalues of P are 1 - eta lambda_i(sum_k p_k Q_k); eta = 2.5 / lambda_max
    # gives the eigenvalue 1 - 2.5 = -1.5 and the others lie in (-1.5, 1), so rho = 1.5.
    problem = heterogeneous_problem()
    eta = 2.5 / np.linalg.eigvalsh(normal_equations(problem)[0]).max()
    fp = fedavg_fixed_point(problem, eta, 1)
    assert not fp.converges
    assert fp.spectral_radius == pytest.approx(1.5, rel=1e-12)
    np.testing.assert_allclose(fp.w, normal_equations_minimiser(problem), rtol=1e-9)  # still the map's fixed point
    assert not fedavg_fixed_point(problem, 2.5 / smoothness(problem), 4).converges


@settings(max_examples=30, deadline=None)
@given(
    local_steps=st.integers(min_value=1, max_value=10),
    server_lr=st.floats(min_value=0.1, max_value=1.5),
    weight=st.floats(min_value=0.05, max_value=0.95),
    mu=st.floats(min_value=0.0, max_value=1.0),
)
def test_identical_clients_have_no_drift(local_steps: int, server_lr: float, weight: float, mu: float) -> None:
    # Q_k = Q and c_k = c for all k: w* = Q^{-1} c satisfies w* - eta (Q w* - c) = w*, so every
    # local step fixes w*, hence so does the round: the fixed point is w* for any E and s.
    rng = np.random.default_rng(2)
    X_k, y_k = rng.normal(size=(6, 3)), rng.normal(size=6)
    problem = FederatedProblem(
        name="iid",
        loss="least_squares",
        X=np.vstack([X_k, X_k]),
        y=np.concatenate([y_k, y_k]),
        offsets=[0, 6, 12],
        weights=[weight, 1.0 - weight],
        mu=mu,
    )
    fp = fedavg_fixed_point(problem, 0.5 / smoothness(problem), local_steps, server_lr)
    w_star = np.linalg.solve(X_k.T @ X_k / 6 + mu * np.eye(3), X_k.T @ y_k / 6)
    np.testing.assert_allclose(fp.w, w_star, rtol=1e-8, atol=1e-10)
    assert fp.converges


def test_arrays_are_read_only() -> None:
    fp = fedavg_fixed_point(scalar_problem(), 0.1, 2)
    for arr in (fp.w, fp.round_matrix, fp.round_offset):
        with pytest.raises(ValueError):
            arr[0] = 1.0


def test_singular_map_raises() -> None:
    # mu = 0 and every row is (1, 0): sum_k p_k Q_k = diag(1, 0) is singular, so for E = 1
    # I - P = eta diag(1, 0) has no inverse and the fixed points form a line.
    problem = FederatedProblem(
        name="rank1",
        loss="least_squares",
        X=[[1.0, 0.0], [1.0, 0.0]],
        y=[1.0, 2.0],
        offsets=[0, 1, 2],
        weights=[0.5, 0.5],
        mu=0.0,
    )
    with pytest.raises(ValueError, match="^problem: I - P is singular"):
        fedavg_fixed_point(problem, 0.1, 1)


def test_non_least_squares_names_problem_loss() -> None:
    problem = FederatedProblem(
        name="logit", loss="logistic", X=[[1.0], [2.0]], y=[0.0, 1.0], offsets=[0, 1, 2], weights=[0.5, 0.5], mu=0.1
    )
    with pytest.raises(ValueError, match=r"^problem\.loss:.*'logistic'"):
        fedavg_fixed_point(problem, 0.1, 2)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"eta": 0.0}, "eta"),
        ({"eta": -0.1}, "eta"),
        ({"eta": math.nan}, "eta"),
        ({"eta": math.inf}, "eta"),
        ({"eta": True}, "eta"),
        ({"local_steps": 0}, "local_steps"),
        ({"local_steps": 2.5}, "local_steps"),
        ({"local_steps": True}, "local_steps"),
        ({"server_lr": 0.0}, "server_lr"),
        ({"server_lr": math.nan}, "server_lr"),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict, name: str) -> None:
    args = {"problem": scalar_problem(), "eta": 0.1, "local_steps": 2, "server_lr": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}:"):
        fedavg_fixed_point(**args)
