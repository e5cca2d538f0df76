"""Exact optima: stationarity, perturbation, Newton vs cvxpy, Li's Gamma, cache, failure paths."""

from __future__ import annotations

import numpy as np
import pytest

import problems.optimum as optimum_module
from problems import (
    FederatedProblem,
    OptimumError,
    ProblemError,
    exact_optimum,
    heterogeneity_gamma,
    li_counterexample,
    random_quadratic,
    synthetic,
)
from problems._newton import newton_minimise
from problems._rows import global_rows


def classification_problem(loss: str, mu: float = 0.1, seed: int = 0, n_clients: int = 3) -> FederatedProblem:
    """Small clients with Gaussian rows and random labels (not separable, well conditioned)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(15, 30, n_clients)
    C = 3 if loss == "softmax" else 1
    X = np.hstack([rng.normal(size=(sizes.sum(), 4)), np.ones((sizes.sum(), 1))])
    y = rng.integers(0, 2 if loss == "logistic" else C, sizes.sum())
    offsets = np.r_[0, np.cumsum(sizes)]
    constants = rng.normal(size=n_clients)
    return FederatedProblem(f"clf {loss} {seed}", loss, X, y, offsets, sizes / sizes.sum(), mu, C, constants)


def identical_clients(loss: str) -> FederatedProblem:
    """Four clients holding the same 12 rows, so F_k = G + c_k for one G."""
    rng = np.random.default_rng(1)
    n, C = 12, 3 if loss == "softmax" else 1
    X1 = rng.normal(size=(n, 4))
    labels = {"logistic": lambda: rng.integers(0, 2, n), "softmax": lambda: rng.integers(0, C, n)}
    y1 = labels.get(loss, lambda: rng.normal(size=n))()
    return FederatedProblem(
        f"identical {loss}", loss, np.tile(X1, (4, 1)), np.tile(y1, 4), np.arange(5) * n, [0.1, 0.2, 0.3, 0.4], 0.05, C,
        [0.0, 1.0, -2.0, 0.5],
    )


PROBLEMS = {
    "counterexample": lambda: li_counterexample(),
    "quadratic": lambda: random_quadratic(n_clients=4, dim=6, samples_per_client=8, seed=1),
    "logistic": lambda: classification_problem("logistic"),
    "softmax": lambda: classification_problem("softmax"),
    "synthetic": lambda: synthetic(n_clients=4, seed=2),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_stationarity_and_perturbation(name: str) -> None:
    problem = PROBLEMS[name]()
    optimum = exact_optimum(problem, crosscheck=False)
    grad = problem.gradient(optimum.w_star)
    assert np.linalg.norm(grad) <= 1e-10 * max(1.0, np.linalg.norm(problem.gradient(np.zeros(problem.dim))))
    assert optimum.grad_norm == pytest.approx(np.linalg.norm(grad), abs=1e-15)
    assert optimum.F_star == problem.objective(optimum.w_star)
    rng = np.random.default_rng(0)
    for radius in (1e-6, 1e-3, 1e-1):  # benchopt-style: no small perturbation decreases F*
        for _ in range(20):
            delta = rng.normal(size=problem.dim)
            assert problem.objective(optimum.w_star + radius * delta / np.linalg.norm(delta)) >= optimum.F_star
    # F_k* = min F_k <= F_k(w*)
    local_at_w_star = problem.local_objectives(optimum.w_star)
    assert np.all(optimum.local_F_star <= local_at_w_star + 1e-12)
    assert heterogeneity_gamma(problem, optimum) >= -1e-12


@pytest.mark.parametrize("loss", ["logistic", "softmax"])
@pytest.mark.parametrize("seed", [0, 1])
def test_newton_and_cvxpy_agree(loss: str, seed: int) -> None:
    problem = classification_problem(loss, seed=seed)
    optimum = exact_optimum(problem, crosscheck=True)
    report = optimum.crosscheck
    assert report is not None and report["status"] == "optimal"
    for key in ("w_star", "F_star", "local_w_star", "local_F_star"):
        assert report[key] <= 1e-8, key
    assert report["unconfirmed"] == []


def test_least_squares_crosscheck_and_closed_form() -> None:
    problem = random_quadratic(n_clients=3, dim=5, samples_per_client=7, seed=4)
    optimum = exact_optimum(problem)
    # normal equations of F: (sum_k p_k X_k'X_k/n_k + mu I) w = sum_k p_k X_k'y_k/n_k
    data = [problem.client_data(k) for k in range(3)]
    H = sum(p * X.T @ X / len(y) for p, (X, y) in zip(problem.weights, data, strict=True))
    g = sum(p * X.T @ y / len(y) for p, (X, y) in zip(problem.weights, data, strict=True))
    np.testing.assert_allclose(optimum.w_star, np.linalg.solve(H + problem.mu * np.eye(5), g), rtol=1e-12)
    assert optimum.crosscheck["w_star"] <= 1e-8 and optimum.crosscheck["local_F_star"] <= 1e-8


@pytest.mark.parametrize("loss", ["least_squares", "logistic", "softmax"])
def test_gamma_is_zero_for_identical_clients(loss: str) -> None:
    problem = identical_clients(loss)
    optimum = exact_optimum(problem, crosscheck=False)
    # F_k = G + c_k with a common G, so F* = G* + sum p_k c_k = sum_k p_k F_k*.
    assert heterogeneity_gamma(problem, optimum) == pytest.approx(0.0, abs=1e-12)
    common = optimum.F_star - problem.weights @ problem.constants  # G*
    np.testing.assert_allclose(optimum.local_F_star - problem.constants, common, atol=1e-12)


def test_gamma_zero_for_homogeneous_quadratic_and_positive_otherwise() -> None:
    same = random_quadratic(heterogeneity=0.0, seed=3)
    assert heterogeneity_gamma(same, exact_optimum(same, crosscheck=False)) == pytest.approx(0.0, abs=1e-12)
    apart = random_quadratic(heterogeneity=1.0, seed=3)
    assert heterogeneity_gamma(apart, exact_optimum(apart, crosscheck=False)) > 1e-3


def test_counterexample_gamma_closed_form() -> None:
    # mu = 0: F* = -(1/(2N)) (1 - 1/(Np+2)) (Prop. 1.4), F_1* = -1/2, F_k* = 0, p_k = 1/N, so
    # Gamma = F* + 1/(2N) = 1 / (2N (Np+2)).
    N, p = 5, 4
    problem = li_counterexample(N, p, 0.0)
    assert heterogeneity_gamma(problem, exact_optimum(problem)) == pytest.approx(1 / (2 * N * (N * p + 2)), rel=1e-10)


def test_results_are_cached_and_crosscheck_added_later() -> None:
    problem = classification_problem("logistic", seed=5)
    first = exact_optimum(problem, crosscheck=False)
    assert first.crosscheck is None and exact_optimum(problem, crosscheck=False) is first
    checked = exact_optimum(problem, crosscheck=True)
    assert checked.crosscheck is not None
    np.testing.assert_array_equal(checked.w_star, first.w_star)
    assert exact_optimum(problem, crosscheck=False) is checked
    # a different object with the same data hits the cache too (content fingerprint)
    clone = classification_problem("logistic", seed=5)
    assert exact_optimum(clone) is checked
    with pytest.raises(ValueError):
        checked.w_star[0] = 1.0  # read-only


@pytest.mark.parametrize(("loss", "seed", "w_shift", "f_shift", "status", "message"), [
    ("softmax", 7, 1e-4, 0.0, "optimal", "minimisers differ"),
    ("logistic", 8, 0.0, 1e-6, "optimal_inaccurate", "minima differ"),  # fails even if cvxpy is inaccurate
])
def test_crosscheck_fails_on_disagreement(monkeypatch: pytest.MonkeyPatch, loss: str, seed: int, w_shift: float,
                                          f_shift: float, status: str, message: str) -> None:
    def shifted(objective):
        w = newton_minimise(objective).w + w_shift
        return w, objective.value_grad(w)[0] + f_shift, status

    monkeypatch.setattr(optimum_module, "cvxpy_minimise", shifted)
    with pytest.raises(OptimumError, match=message):
        exact_optimum(classification_problem(loss, seed=seed), crosscheck=True)


def test_inaccurate_cvxpy_minimiser_only_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    def loose(objective):
        w = newton_minimise(objective).w
        return w + 1e-6, objective.value_grad(w)[0], "optimal_inaccurate"

    monkeypatch.setattr(optimum_module, "cvxpy_minimise", loose)
    with pytest.warns(RuntimeWarning, match="confirms these minimisers only loosely"):
        optimum = exact_optimum(classification_problem("logistic", seed=9), crosscheck=True)
    assert len(optimum.crosscheck["unconfirmed"]) == 4  # F and its three clients


def test_newton_reports_non_convergence() -> None:
    objective = global_rows(classification_problem("softmax", seed=10))
    assert not newton_minimise(objective, max_iter=1).converged
    result = newton_minimise(objective)
    assert result.converged and result.grad_norm <= result.tolerance


def test_mu_zero_classification_is_rejected() -> None:
    with pytest.raises(ProblemError, match="^mu:"):
        exact_optimum(classification_problem("logistic", mu=0.0), crosscheck=False)


def test_gamma_keeps_precision_when_it_is_tiny_next_to_F() -> None:
    # Two one-row clients, x = 1, targets c -/+ h, mu = 1: F_k(w) = 1/2 (w - y_k)^2 + 1/2 w^2, so
    # w_k* = y_k / 2, w* = c / 2, and F_k(w*) - F_k* = 1/2 * 2 * (h/2)^2: Gamma = h^2 / 4 exactly.
    # With c = 1e8 and h = 1e-3, F* and the F_k* are ~2.5e15 while Gamma = 2.5e-7: the difference
    # F* - sum p_k F_k* of the two sums would be pure rounding (~0.5); the per-client quadratic
    # form loses only what w* - w_k* loses (eps |w*| / |w* - w_k*| ~ 1e-16 * 5e7 / 5e-4 = 1e-5).
    from problems import FederatedProblem, exact_optimum, heterogeneity_gamma

    c, h = 1e8, 1e-3
    problem = FederatedProblem("tiny-gamma", "least_squares", np.ones((2, 1)), np.array([c - h, c + h]), [0, 1, 2],
                               [0.5, 0.5], 1.0)
    gamma = heterogeneity_gamma(problem, exact_optimum(problem, crosscheck=False))
    assert abs(gamma - h**2 / 4) <= 1e-4 * h**2 / 4


_real_minimise = optimum_module._minimise
"""The solver, wrapped by the test below to count solves."""


def test_without_local_optima_same_global_bits_then_upgraded(monkeypatch) -> None:
    """local_optima=False solves F only: w* and F* are the full solve's bits, F_k* is None, Gamma
    refuses it by name, and a later full request solves the F_k* (the module docstring)."""
    problem = classification_problem("softmax", seed=7)
    monkeypatch.setattr(optimum_module, "_CACHE", {})
    full = exact_optimum(problem, crosscheck=False)
    monkeypatch.setattr(optimum_module, "_CACHE", {})
    solved = []
    monkeypatch.setattr(optimum_module, "_minimise", lambda obj, what: solved.append(what) or _real_minimise(obj, what))
    partial = exact_optimum(problem, crosscheck=False, local_optima=False)
    assert solved == [f"{problem.name}: F"]  # one solve, not N + 1
    assert partial.local_F_star is None
    assert np.array_equal(partial.w_star, full.w_star) and partial.F_star == full.F_star
    with pytest.raises(ProblemError, match="optimum: Gamma needs the local optima"):
        heterogeneity_gamma(problem, partial)
    upgraded = exact_optimum(problem, crosscheck=False)
    assert len(solved) == 1 + 1 + problem.n_clients  # the upgrade solved F and every F_k
    assert np.array_equal(upgraded.local_F_star, full.local_F_star)
    assert heterogeneity_gamma(problem, upgraded) == heterogeneity_gamma(problem, full)


def test_crosscheck_needs_local_optima() -> None:
    with pytest.raises(ProblemError, match="local_optima: the cvxpy cross-check"):
        exact_optimum(classification_problem("logistic", seed=8), crosscheck=True, local_optima=False)

