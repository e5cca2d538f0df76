"""The (G, B)-bounded gradient dissimilarity pair of a federated problem.

(G, B)-BGD (Karimireddy et al. ICML 2020; liu_lecture_fl_fedavg.md l.431, THEOREMS.md l.115): with
weights q_k = 1/N ("uniform") or p_k ("p"),

    sum_k q_k ||grad F_k(w)||^2 <= G^2 + B^2 ||grad F(w)||^2    on the region;

for a given B^2 the smallest such G^2 >= 0 is max(0, sup_w [sum_k q_k ||grad F_k(w)||^2 -
B^2 ||grad F(w)||^2]) (the "excess"). Over a ball the excess of a quadratic model (least squares,
``problem.model.quadratic``) is a quadratic in w (``least_squares_moments``), maximised exactly
(``trust_region``); other models (logistic, softmax) get a certified bound (``gradient_bounds``):
sum_k q_k (sup ||grad F_k||)^2 for any B^2 and, for q = p, since sum_k p_k ||grad F_k||^2 =
||grad F||^2 + sum_k p_k ||grad F_k - grad F||^2, also max(0, 1 - B^2) (sup ||grad F||)^2 + (the
sigma_G^2 bound with weights p).

Over R^d (``EVERYWHERE``, quadratic models only) the excess has A = M - B^2 H^2 (M = sum_k q_k H_k^2,
H = sum_k p_k H_k, H_k the Hessian of F_k): it is bounded above iff B^2 >= the largest generalised
eigenvalue of (M, H^2), and the whole curve G^2(B^2) follows from one generalised
eigen-decomposition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh

from problems import FederatedProblem

from .assumptions import Estimate, Weighting, dissimilarity_weights
from .gradient_bounds import centre_terms, dissimilarity_bounds, gradient_norm_bounds
from .least_squares_moments import LeastSquaresMoments
from .minibatch_moments import all_client_terms
from .regions import Ball, Everywhere, Points, Region, ball_samples, check_region
from .trust_region import EXACT_RTOL, exact_gap

__all__ = ["BGDPair", "bgd_pair", "bgd_curve", "bgd_threshold"]


@dataclass(frozen=True)
class BGDPair:
    """The (G, B)-BGD pair for one B^2: ``G_sq`` the smallest G^2 >= 0 (exact) or a certified upper
    bound of it (inf when none exists), ``attained`` the largest excess found at a point."""

    B_sq: float
    G_sq: float
    exact: bool
    method: str
    attained: float


def _bgd_excess_at(problem: FederatedProblem, W: np.ndarray, q: np.ndarray, B_sq: float) -> np.ndarray:
    grads, _ = all_client_terms(problem, W)
    global_grad = np.einsum("k,kmd->md", problem.weights, grads)
    return np.einsum("k,km->m", q, np.sum(grads**2, axis=2)) - B_sq * np.sum(global_grad**2, axis=1)


def bgd_pair(problem: FederatedProblem, region: Region, B_sq: float, weighting: Weighting = "p") -> BGDPair:
    """The smallest G^2 >= 0 with sum_k q_k ||grad F_k||^2 <= G^2 + B^2 ||grad F||^2 on the region."""
    return bgd_curve(problem, region, [B_sq], weighting)[0]


def bgd_curve(
    problem: FederatedProblem, region: Region, B_sq_grid: list[float] | np.ndarray, weighting: Weighting = "p"
) -> tuple[BGDPair, ...]:
    """``bgd_pair`` for every B^2 of the grid: the Pareto curve G^2(B^2), non-increasing and convex."""
    check_region(problem, region, allow_everywhere=True)
    grid = [float(B) for B in np.atleast_1d(np.asarray(B_sq_grid, dtype=np.float64))]
    if not grid or any(not (math.isfinite(B) and B >= 0) for B in grid):
        raise ValueError("B_sq_grid: need at least one finite B^2 >= 0")
    q = dissimilarity_weights(problem, weighting)
    if isinstance(region, Everywhere):
        return _bgd_everywhere(problem, q, grid)
    if isinstance(region, Points):
        method = f"exact maximum over {region.describe()}"
        values = [max(0.0, float(np.max(_bgd_excess_at(problem, region.points, q, B)))) for B in grid]
        return tuple(BGDPair(B, v, True, method, v) for B, v in zip(grid, values))
    if problem.model.quadratic:
        moments = LeastSquaresMoments.of(problem)
        method = f"least squares: the excess is a quadratic in w, maximised exactly over {region.describe()}"
        pairs = []
        for B in grid:
            upper, attained = moments.weighted_grad_sq(q, B, problem.weights).max_on_ball(region)
            pairs.append(BGDPair(B, max(0.0, upper), exact_gap(upper, attained), method, max(0.0, attained)))
        return tuple(pairs)
    return _bgd_certified(problem, region, q, weighting, grid)


def _bgd_certified(
    problem: FederatedProblem, ball: Ball, q: np.ndarray, weighting: Weighting, grid: list[float]
) -> tuple[BGDPair, ...]:
    """Certified upper bounds for a model that is not quadratic (logistic, softmax): sum_k q_k
    (sup ||grad F_k||)^2 for any B^2, and for q = p, since sum_k p_k ||grad F_k||^2 = ||grad F||^2
    + sum_k p_k ||grad F_k - grad F||^2, also max(0, 1 - B^2) (sup ||grad F||)^2 + (sigma_G^2 bound
    with weights p)."""
    terms = centre_terms(problem, ball)
    grad_bounds, grad_F_bound = gradient_norm_bounds(problem, ball, terms)
    generic = float(q @ grad_bounds**2)
    dissimilarity = float(problem.weights @ dissimilarity_bounds(problem, ball, terms) ** 2)
    samples = ball_samples(ball)
    method = (f"certified bound over {ball.describe()}: min(sum_k q_k sup||grad F_k||^2"
              + (", max(0, 1 - B^2) sup||grad F||^2 + sigma_G^2 bound (weights p)" if weighting == "p" else "")
              + "); attained: 64 sampled points")
    pairs = []
    for B in grid:
        bound = generic
        if weighting == "p":
            bound = min(bound, max(0.0, 1.0 - B) * grad_F_bound**2 + dissimilarity)
        sampled = max(0.0, float(np.max(_bgd_excess_at(problem, samples, q, B))))
        pairs.append(BGDPair(B, bound, False, method, sampled))
    return tuple(pairs)


def _generalised_eigen(problem: FederatedProblem, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, LeastSquaresMoments]:
    """Eigenvalues lam and vectors V of M V = H^2 V diag(lam), V'H^2 V = I (quadratic models)."""
    if not problem.model.quadratic:
        raise ValueError(f"region: the BGD pair on all of R^d is available for quadratic models (least squares) "
                         f"only, not {problem.model.name}")
    moments = LeastSquaresMoments.of(problem)
    H = np.einsum("k,kij->ij", problem.weights, moments.H)
    M = np.einsum("k,kij,kjl->il", q, moments.H, moments.H)
    try:
        lam, V = eigh(0.5 * (M + M.T), H @ H)
    except np.linalg.LinAlgError:
        raise ValueError("problem: the Hessian of F is singular, so ||grad F|| does not control w on R^d") from None
    return lam, V, moments


def bgd_threshold(problem: FederatedProblem, weighting: Weighting = "p") -> Estimate:
    """Least squares: the smallest B^2 for which some finite G^2 satisfies the BGD inequality on all of
    R^d, the largest generalised eigenvalue of (sum_k q_k H_k^2, H^2) (>= 1 for q = p by Jensen)."""
    lam, _, _ = _generalised_eigen(problem, dissimilarity_weights(problem, weighting))
    return Estimate(
        f"B^2 threshold ({weighting})", float(lam[-1]), True,
        "largest generalised eigenvalue of (sum_k q_k H_k^2, H^2), H_k = X_k'X_k/n_k + mu I (scipy.linalg.eigh)",
    )


def _bgd_everywhere(problem: FederatedProblem, q: np.ndarray, grid: list[float]) -> tuple[BGDPair, ...]:
    """G^2(B^2) on R^d: with w = V z the excess is z'(diag(lam) - B^2 I)z - 2 (V'a)'z + s, bounded iff
    B^2 >= lam_j wherever (V'a)_j != 0; then its maximum is s + sum_j (V'a)_j^2 / (B^2 - lam_j)."""
    lam, V, moments = _generalised_eigen(problem, q)
    method = "least squares on all of R^d: generalised eigen-decomposition of (sum_k q_k H_k^2, H^2)"
    tol = EXACT_RTOL * max(1.0, float(np.abs(lam).max()))
    pairs = []
    for B in grid:
        quad = moments.weighted_grad_sq(q, B, problem.weights)
        h = V.T @ quad.a
        gap = B - lam
        flat = np.abs(gap) <= tol
        h_tol = 1e-8 * max(1.0, float(np.linalg.norm(h)))
        if np.any(gap < -tol) or np.any(np.abs(h[flat]) > h_tol):
            pairs.append(BGDPair(B, math.inf, True, method + f"; B^2 = {B:g} < threshold {lam[-1]:.6g}: unbounded", math.inf))
            continue
        value = max(0.0, quad.s + float(np.sum(h[~flat] ** 2 / gap[~flat])))
        pairs.append(BGDPair(B, value, True, method, value))
    return tuple(pairs)
