"""Assumption constants against closed forms, and property tests that sampled points never beat
the reported suprema nor violate the reported curvature constants.

Tiny least-squares problems are built by hand; F_k(w) = (1/(2 n_k)) ||X_k w - y_k||^2 + mu/2 ||w||^2,
so grad F_k(w) = (S_k + mu I) w - c_k with S_k = X_k'X_k / n_k and c_k = X_k'y_k / n_k.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problems import FederatedProblem, exact_optimum, random_quadratic
from proofs_check.constants import assumptions
from proofs_check.constants.bgd import bgd_curve, bgd_pair, bgd_threshold
from proofs_check.constants.minibatch_moments import gradient_variance
from proofs_check.constants.regions import Ball, EVERYWHERE, Points
from proofs_check.falsifier.strategies import logistic_problems, quadratic_problems, softmax_problems
from proofs_check.constants.trust_region import Quadratic

E1, E2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])


def least_squares(blocks: list[tuple[list[list[float]], list[float]]], mu: float, weights: list[float] | None = None):
    """A least-squares problem from per-client (rows, targets)."""
    X = np.vstack([np.asarray(rows, dtype=float) for rows, _ in blocks])
    y = np.concatenate([np.asarray(t, dtype=float) for _, t in blocks])
    sizes = [len(t) for _, t in blocks]
    p = np.full(len(blocks), 1 / len(blocks)) if weights is None else np.asarray(weights)
    return FederatedProblem("hand", "least_squares", X, y, np.concatenate([[0], np.cumsum(sizes)]), p, mu)


# Two clients with the same rows e1, e2 (S_k = I/2) and targets y_1 = (1, 0), y_2 = (-1, 0):
# c_1 = (1/2, 0), c_2 = (-1/2, 0), cbar = sum_k p_k c_k = 0 for p = (1/2, 1/2).
OPPOSED = least_squares([([[1, 0], [0, 1]], [1, 0]), ([[1, 0], [0, 1]], [-1, 0])], mu=0.5)


def test_curvature_constants_closed_form() -> None:
    # client 1: rows (2, 0), (0, 1): S_1 = diag(4, 1)/2 = diag(2, 1/2); client 2: rows e1, e2: S_2 = I/2.
    # With mu = 0.1: L_1 = 2.1, mu_1 = 0.6, L_2 = mu_2 = 0.6, so Li's L = 2.1 and mu = 0.6; F has
    # Hessian diag(1.25, 0.5) + 0.1 I: L_F = 1.35, mu_F = 0.6.
    problem = least_squares([([[2, 0], [0, 1]], [0, 0]), ([[1, 0], [0, 1]], [0, 0])], mu=0.1)
    assert assumptions.smoothness(problem).value == pytest.approx(2.1)
    assert assumptions.strong_convexity(problem).value == pytest.approx(0.6)
    assert assumptions.smoothness(problem, "global").value == pytest.approx(1.35)
    assert assumptions.strong_convexity(problem, "global").value == pytest.approx(0.6)
    assert assumptions.smoothness(problem).exact
    with pytest.raises(ValueError, match="scope"):
        assumptions.smoothness(problem, "everything")  # type: ignore[arg-type]


def test_identical_clients_have_no_heterogeneity() -> None:
    # Every client holds the same rows and targets, so F_k = F: Gamma = F* - sum p_k F_k* = 0, every
    # grad F_k - grad F = 0 (sigma_G^2 = 0) and sum p_k ||grad F_k||^2 = ||grad F||^2 (G^2 = 0 at B^2 = 1).
    rows, targets = [[1, 2], [0, 1], [3, -1]], [1.0, -2.0, 0.5]
    problem = least_squares([(rows, targets)] * 3, mu=0.2)
    ball = Ball(np.array([1.0, -1.0]), 2.0)
    assert assumptions.heterogeneity(problem).value == pytest.approx(0.0, abs=1e-12)
    for weighting in ("uniform", "p"):
        estimate = assumptions.gradient_dissimilarity(problem, ball, weighting)
        assert estimate.value == pytest.approx(0.0, abs=1e-12) and estimate.exact
    assert bgd_pair(problem, ball, 1.0).G_sq == pytest.approx(0.0, abs=1e-12)


def test_one_row_clients_have_no_variance() -> None:
    # A client with one row returns that row's gradient for every minibatch (drawn with
    # replacement), so sigma_k^2 = 0 for any batch size, in particular b = n_k = 1.
    problem = least_squares([([[1, 2]], [1]), ([[0, 3]], [-1])], mu=0.1)
    w = np.array([0.3, -0.7])
    np.testing.assert_allclose(gradient_variance(problem, w, 1), 0.0, atol=1e-14)
    bound = assumptions.variance_bound(problem, Ball(w, 3.0), 1)
    np.testing.assert_allclose(bound.values, 0.0, atol=1e-12)
    assert bound.exact


def test_variance_closed_form_and_its_sup() -> None:
    # Rows e1, e2 with targets (1, -1): g_1 = (w1 - 1, 0), g_2 = (0, w2 + 1), both at squared distance
    # ((w1 - 1)^2 + (w2 + 1)^2) / 4 from their mean, so sigma^2(w, b) = ||w - (1, -1)||^2 / (4 b).
    # Over the ball B(c, R) the sup is (||c - (1, -1)|| + R)^2 / (4 b).
    problem = least_squares([([[1, 0], [0, 1]], [1, -1])], mu=0.3)
    w, b = np.array([2.0, 0.5]), 3
    assert gradient_variance(problem, w, b)[0] == pytest.approx(np.sum((w - [1, -1]) ** 2) / (4 * b))
    centre, R = np.array([0.0, 0.0]), 1.5
    bound = assumptions.variance_bound(problem, Ball(centre, R), b)
    assert bound.values[0] == pytest.approx((math.sqrt(2) + R) ** 2 / (4 * b), rel=1e-12)
    assert bound.attained[0] == pytest.approx(bound.values[0], rel=1e-9) and bound.exact
    assert gradient_variance(problem, w, 0)[0] == 0.0  # exact gradients


def test_second_moment_closed_form() -> None:
    # One client with rows e1, e2, targets (1, 1): S = I/2, c = (1/2, 1/2); with mu = 0.5 and exact
    # gradients, grad F(w) = w - c, so G^2 over B(0, R) is (R + ||c||)^2 (at w = -R c/||c||).
    problem = least_squares([([[1, 0], [0, 1]], [1, 1])], mu=0.5)
    R = 2.0
    estimate = assumptions.second_moment_bound(problem, Ball(np.zeros(2), R), 0)
    assert estimate.value == pytest.approx((R + math.sqrt(0.5)) ** 2, rel=1e-12) and estimate.exact
    # with b = 2 add the variance: per-sample gradients (w1 - 1, 0), (0, w2 - 1) deviate by
    # ||w - (1, 1)||^2 / 4 from their mean; at w = -R c/||c|| that is (R + sqrt 2)^2 / 8, so
    # E||g||^2 = (R + sqrt(1/2))^2 + (R + sqrt 2)^2 / 8 there, and both terms peak at that point.
    stochastic = assumptions.second_moment_bound(problem, Ball(np.zeros(2), R), 2)
    assert stochastic.value == pytest.approx((R + math.sqrt(0.5)) ** 2 + (R + math.sqrt(2)) ** 2 / 8, rel=1e-12)


def test_dissimilarity_bgd_and_gamma_closed_forms() -> None:
    # OPPOSED: equal Hessians H = (1/2 + mu) I = I, so grad F_k - grad F = -(c_k - cbar) = -c_k is
    # constant: sigma_G^2 = sum_k q_k ||c_k||^2 = 1/4 on any region, for q = 1/N or p.
    ball = Ball(np.array([3.0, -2.0]), 1.0)
    for weighting in ("uniform", "p"):
        assert assumptions.gradient_dissimilarity(OPPOSED, ball, weighting).value == pytest.approx(0.25, rel=1e-12)
    # BGD: sum_k p_k ||w - c_k||^2 - B^2 ||w||^2 = (1 - B^2) ||w||^2 + 1/4 (cross terms vanish as
    # cbar = 0). On R^d: unbounded for B^2 < 1, G^2 = 1/4 for B^2 >= 1 (threshold exactly 1).
    assert bgd_threshold(OPPOSED).value == pytest.approx(1.0)
    curve = bgd_curve(OPPOSED, EVERYWHERE, [0.5, 1.0, 2.0])
    assert curve[0].G_sq == math.inf
    assert curve[1].G_sq == pytest.approx(0.25) and curve[2].G_sq == pytest.approx(0.25)
    # On B(0, 2) with B^2 = 0.5: (1/2) * 4 + 1/4 = 2.25.
    assert bgd_pair(OPPOSED, Ball(np.zeros(2), 2.0), 0.5).G_sq == pytest.approx(2.25, rel=1e-12)
    # Gamma: F_k = 1/2 ||w||^2 - c_k'w + const_k, F_k* = const_k - ||c_k||^2 / 2, F* = sum p_k const_k
    # (w* = 0), so Gamma = sum_k p_k ||c_k||^2 / 2 = 1/8.
    assert assumptions.heterogeneity(OPPOSED).value == pytest.approx(0.125, rel=1e-12)


def test_parameter_bound_and_points() -> None:
    assert assumptions.parameter_bound(Ball(np.array([3.0, 4.0]), 1.0)).value == pytest.approx(6.0)
    points = Points(np.array([[1.0, 0.0], [0.0, -2.0]]))
    assert assumptions.parameter_bound(points).value == pytest.approx(2.0)
    # on a finite set the constants are the exact maxima of the defining quantities
    sigma = assumptions.variance_bound(OPPOSED, points, 1)
    direct = np.max([gradient_variance(OPPOSED, w, 1) for w in points.points], axis=0)
    np.testing.assert_allclose(sigma.values, direct, rtol=1e-12)
    G = assumptions.second_moment_bound(OPPOSED, points, 0).value
    assert G == pytest.approx(max(np.max(np.sum(OPPOSED.local_gradients(w) ** 2, axis=1)) for w in points.points))


def test_bad_input_names_the_field() -> None:
    ball = Ball(np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="radius"):
        Ball(np.zeros(2), -1.0)
    with pytest.raises(ValueError, match="region"):
        assumptions.variance_bound(OPPOSED, Ball(np.zeros(3), 1.0), 1)
    with pytest.raises(ValueError, match="region"):
        assumptions.gradient_dissimilarity(OPPOSED, EVERYWHERE)
    with pytest.raises(ValueError, match="weighting"):
        assumptions.gradient_dissimilarity(OPPOSED, ball, "square")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        gradient_variance(OPPOSED, np.zeros(2), -1)
    with pytest.raises(ValueError, match="B_sq_grid"):
        bgd_curve(OPPOSED, ball, [-1.0])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**16), st.floats(0.1, 3.0), st.booleans())
def test_ball_maximum_of_a_quadratic(dim: int, seed: int, radius: float, hard: bool) -> None:
    # The trust-region maximum of q(w) = w'Aw - 2a'w + s (A indefinite): the dual bound and the
    # attained value agree, and no point of the ball does better. ``hard`` plants the hard case
    # (the linear term has no component along the top eigenvector).
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    lam = np.sort(rng.uniform(-2, 2, dim))
    A_mat = Q @ np.diag(lam) @ Q.T
    centre = rng.standard_normal(dim)
    g = rng.standard_normal(dim)
    if hard:
        g -= (g @ Q[:, -1]) * Q[:, -1]
    quad = Quadratic(A_mat, A_mat @ centre - g, 0.7)  # g = A c - a
    upper, attained = quad.max_on_ball(Ball(centre, radius))
    assert upper - attained <= 1e-8 * max(1.0, abs(upper))
    directions = rng.standard_normal((2000, dim))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    points = centre + radius * rng.random((2000, 1)) ** (1 / dim) * directions
    assert np.max(quad.at(points)) <= upper + 1e-9 * max(1.0, abs(upper))


def _pairs(problem: FederatedProblem, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return 2 * rng.standard_normal((8, problem.dim)), 2 * rng.standard_normal((8, problem.dim))


@settings(max_examples=25, deadline=None)
@given(st.one_of(quadratic_problems(), logistic_problems(), softmax_problems()), st.integers(0, 2**16))
def test_sampled_pairs_respect_mu_and_L(problem: FederatedProblem, seed: int) -> None:
    # Li et al. Assumptions 1-2 for every client: with F_k(v) - F_k(w) - <grad F_k(w), v - w> = D,
    # mu/2 ||v - w||^2 <= D <= L/2 ||v - w||^2 and ||grad F_k(v) - grad F_k(w)|| <= L ||v - w||.
    L, mu = assumptions.smoothness(problem).value, assumptions.strong_convexity(problem).value
    for v, w in zip(*_pairs(problem, seed)):
        gap = np.sum((v - w) ** 2)
        D = problem.local_objectives(v) - problem.local_objectives(w) - problem.local_gradients(w) @ (v - w)
        slack = 1e-9 * (1 + np.abs(problem.local_objectives(v)) + np.abs(problem.local_objectives(w)))
        assert np.all(D >= mu / 2 * gap - slack)
        assert np.all(D <= L / 2 * gap + slack)
        change = np.linalg.norm(problem.local_gradients(v) - problem.local_gradients(w), axis=1)
        assert np.all(change <= L * math.sqrt(gap) * (1 + 1e-9) + 1e-12)


@settings(max_examples=20, deadline=None)
@given(
    st.one_of(quadratic_problems(), logistic_problems(), softmax_problems()),
    st.integers(0, 4), st.floats(0.1, 2.0), st.integers(0, 2**16),
)
def test_sampled_points_never_exceed_the_sup_bounds(problem: FederatedProblem, b: int, radius: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ball = Ball(rng.standard_normal(problem.dim), radius)
    directions = rng.standard_normal((30, problem.dim))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    points = ball.centre + radius * rng.random((30, 1)) ** (1 / problem.dim) * directions
    tol = 1e-9
    sigma = assumptions.variance_bound(problem, ball, b)
    G = assumptions.second_moment_bound(problem, ball, b)
    dissimilarity = assumptions.gradient_dissimilarity(problem, ball, "uniform")
    bgd = bgd_pair(problem, ball, 0.5)
    for w in points:
        variance = gradient_variance(problem, w, b)
        assert np.all(variance <= sigma.values * (1 + tol) + tol)
        grads = problem.local_gradients(w)
        assert np.max(np.sum(grads**2, axis=1) + variance) <= G.value * (1 + tol) + tol
        global_grad = problem.weights @ grads
        assert np.mean(np.sum((grads - global_grad) ** 2, axis=1)) <= dissimilarity.value * (1 + tol) + tol
        excess = problem.weights @ np.sum(grads**2, axis=1) - 0.5 * global_grad @ global_grad
        assert excess <= bgd.G_sq * (1 + tol) + tol
    for estimate in (G, dissimilarity):
        assert estimate.attained <= estimate.value * (1 + tol) + tol
    assert np.all(sigma.attained <= sigma.values * (1 + tol) + tol)


def test_default_problem_constants_are_consistent() -> None:
    # A random least-squares problem: every sup over the ball of radius ||w*|| around w* is exact.
    problem = random_quadratic(3, 4, 0.2, 3.0, 1.0, 6, 0)
    w_star = exact_optimum(problem, crosscheck=False).w_star
    ball = Ball(w_star, float(np.linalg.norm(w_star)))
    curve = bgd_curve(problem, ball, [0.0, 0.5, 1.0, 2.0, 4.0])
    values = [pair.G_sq for pair in curve]
    assert all(pair.exact for pair in curve)
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))  # G^2(B^2) is non-increasing
    # q = p and B^2 = 1: sum p_k ||grad F_k||^2 - ||grad F||^2 = sum p_k ||grad F_k - grad F||^2
    assert curve[2].G_sq == pytest.approx(assumptions.gradient_dissimilarity(problem, ball, "p").value, rel=1e-9)
