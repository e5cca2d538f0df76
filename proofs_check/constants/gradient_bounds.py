"""Certified bounds on the variance and second moment of minibatch gradients over a ball.

Assumptions 3-4 of Li et al. (ICLR 2020) bound, at every client's own iterate, the variance sigma^2
and the second moment G^2 of that client's stochastic gradient (the one definition is
``proofs_check.constants.run_moments.IterateMoments``); Ding et al. (2020) state theirs for every x of the
ball of their Assumption 5. Over a ball that contains every iterate of the run (its centre and
radius come from quantities the kernels track exactly) the bounds below are upper estimates of
those constants: valid in an upper bound, too large for a check that needs the constant itself.

For a minibatch of b rows drawn uniformly with replacement from client k's n_k rows, at w:
    var_k(w) = (1/b) mean_i ||g_i(w) - gbar_k(w)||^2              (exact for finite data),
    E||g||^2 = ||grad F_k(w)||^2 + var_k(w),
with g_i the gradient of row i's loss (the l2 term cancels in g_i - gbar_k). Each g_i is
l_i-Lipschitz with l_i = c ||x_i||^2, c the model's per-sample curvature ``curvature.upper`` (1 least
squares, 1/4 logistic, 1/2 softmax; ``problems.models.linear``), valid for a convex loss
(0 <= D(z) <= c I), and gbar_k is (L_k - mu)-Lipschitz, so over the ball ||w - centre|| <= R:
    var_k <= (1/b) mean_i (||g_i(c) - gbar_k(c)|| + (l_i + L_k - mu) R)^2,
    E||g||^2 <= (||grad F_k(c)|| + L_k R)^2 + that variance bound.

The estimators of ``proofs_check.constants.assumptions`` and ``proofs_check.constants.bgd`` take,
for a model that is not quadratic, the Lipschitz bound from the centre c0 and, where the model
bounds its residual (per-sample gradient x_i (x) r_i with ||r_i||^2 <= beta, the model's
``gradient_bound``: beta = 1 logistic since |sigmoid(z) - y| <= 1, beta = 2 softmax since
||softmax(z) - e_y||^2 <= 2 (1 - p_y)^2 <= 2), the smaller of it and a bounded-gradient bound
(``CentreTerms`` holds what they need at c0); a model without a gradient bound (beta = None) keeps
the Lipschitz bounds alone:
    var_k <= (1/b) min{mean_i (||g_i(c0) - gbar_k(c0)|| + (l_i + L_k - mu) R)^2, beta mean_i ||x_i||^2},
    ||grad F_k|| <= min{||grad F_k(c0)|| + L_k R, sqrt(beta) mean_i ||x_i|| + mu (||c0|| + R)} (and so for F),
    ||grad F_k - grad F|| <= min{||grad F_k(c0) - grad F(c0)|| + (max(L_k, L_F) - mu) R,
                                 sqrt(beta) (m_k + sum_j p_j m_j)},  m_k = mean_i ||x_i|| over client k
(the difference of two gradients has Lipschitz constant max(L_k, L_F) - mu, the difference of two
PSD data Hessians, again by convexity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem, problem_constants

from .regions import Ball

__all__ = [
    "GradientBounds",
    "stochastic_gradient_bounds",
    "sample_curvature",
    "CentreTerms",
    "centre_terms",
    "gradient_norm_bounds",
    "variance_bounds",
    "dissimilarity_bounds",
]

def sample_curvature(problem: FederatedProblem) -> float:
    """c with ||Hessian of one row's loss|| <= c ||x||^2 at every w: the model's ``curvature.upper``
    for a convex loss (0 <= D(z) <= c I); ValueError naming ``problem`` for a model whose curvature
    can be negative (neither this Lipschitz constant nor the PSD-difference argument holds there)."""
    bounds = problem.model.curvature
    if bounds.lower < 0.0:
        raise ValueError(f"problem: certified bounds over a ball need a convex loss, but the {problem.model.name} "
                         f"model's curvature lower bound is {bounds.lower:g} < 0")
    return bounds.upper


@dataclass(frozen=True)
class GradientBounds:
    """Per-client bounds over a ball: variance sigma_k^2 (N,) and second moment G_k^2 (N,)."""

    sigma_sq: np.ndarray
    second_moment: np.ndarray
    radius: float
    batch_size: int

    @property
    def G_sq(self) -> float:
        """max_k G_k^2, the G^2 of the assumptions."""
        return float(self.second_moment.max())

    def describe(self) -> str:
        return (f"certified over the ball of radius {self.radius:.4g} that contains every iterate, "
                f"minibatch of {self.batch_size} rows with replacement")


def stochastic_gradient_bounds(
    problem: FederatedProblem, center: np.ndarray, radius: float, batch_size: int
) -> GradientBounds:
    """Bounds of the module docstring for every client; batch_size >= 1 (exact gradients have no variance)."""
    if batch_size < 1:
        raise ValueError(f"batch_size: minibatch bounds need batch_size >= 1, got {batch_size}")
    if not np.isfinite(radius) or radius < 0:
        raise ValueError(f"radius: must be finite and >= 0, got {radius}")
    c = sample_curvature(problem)
    consts = problem_constants(problem)
    full = problem.local_gradients(center)
    sigma_sq = np.zeros(problem.n_clients)
    second = np.zeros(problem.n_clients)
    for k in range(problem.n_clients):
        lo, hi = problem.offsets[k], problem.offsets[k + 1]
        grads = problem.sample_gradients(center, slice(lo, hi))
        deviation = np.linalg.norm(grads - grads.mean(axis=0), axis=1)
        curvature = c * np.sum(problem.X[lo:hi] ** 2, axis=1)
        data_L = consts.L_k[k] - problem.mu
        sigma_sq[k] = np.mean((deviation + (curvature + data_L) * radius) ** 2) / batch_size
        second[k] = (np.linalg.norm(full[k]) + consts.L_k[k] * radius) ** 2 + sigma_sq[k]
    return GradientBounds(sigma_sq, second, float(radius), int(batch_size))


# -------------------------------------------------- certified bounds of non-quadratic models
@dataclass(frozen=True)
class CentreTerms:
    """What the certified bounds over a ball need, evaluated at its centre c0."""

    grad_norm: np.ndarray  # ||grad F_k(c0)|| (N,)
    grad_norm_F: float  # ||grad F(c0)||
    dissimilarity: np.ndarray  # ||grad F_k(c0) - grad F(c0)|| (N,)
    variance_lipschitz: np.ndarray  # mean_i (||g_i(c0) - gbar_k(c0)|| + (l_i + L_k - mu) R)^2 (N,), b = 1
    mean_row_norm: np.ndarray  # mean_i ||x_i|| over client k (N,)
    mean_row_sq: np.ndarray  # mean_i ||x_i||^2 over client k (N,)
    L_k: np.ndarray
    L_F: float


def centre_terms(problem: FederatedProblem, ball: Ball) -> CentreTerms:
    """The centre's values; the Lipschitz variance bound is ``stochastic_gradient_bounds`` at batch 1
    (it scales as 1/b)."""
    consts = problem_constants(problem)
    grads = problem.local_gradients(ball.centre)
    grad_F = problem.weights @ grads
    sq = np.sum(problem.X**2, axis=1)
    starts = problem.offsets[:-1]
    return CentreTerms(
        np.linalg.norm(grads, axis=1), float(np.linalg.norm(grad_F)), np.linalg.norm(grads - grad_F, axis=1),
        stochastic_gradient_bounds(problem, ball.centre, ball.radius, 1).sigma_sq,
        np.add.reduceat(np.sqrt(sq), starts) / problem.client_sizes, np.add.reduceat(sq, starts) / problem.client_sizes,
        consts.L_k, consts.L_global,
    )


def gradient_norm_bounds(problem: FederatedProblem, ball: Ball, t: CentreTerms) -> tuple[np.ndarray, float]:
    """Certified sup over the ball of ||grad F_k|| (N,) and of ||grad F||: ||grad(c0)|| + L R, or the
    smaller of that and sqrt(beta) mean_i ||x_i|| + mu (||c0|| + R) when the model has a gradient bound beta."""
    clients = t.grad_norm + t.L_k * ball.radius
    F = t.grad_norm_F + t.L_F * ball.radius
    beta = problem.model.gradient_bound
    if beta is None:
        return clients, F
    root = math.sqrt(beta)
    far = problem.mu * (float(np.linalg.norm(ball.centre)) + ball.radius)
    return (np.minimum(clients, root * t.mean_row_norm + far),
            min(F, root * float(problem.weights @ t.mean_row_norm) + far))


def variance_bounds(problem: FederatedProblem, b: int, t: CentreTerms) -> np.ndarray:
    """Certified sup over the ball of var_k (N,): (1/b) times the Lipschitz bound, or the smaller of it
    and beta mean_i ||x_i||^2 when the model has a gradient bound beta."""
    beta = problem.model.gradient_bound
    if beta is None:
        return t.variance_lipschitz / b
    return np.minimum(t.variance_lipschitz, beta * t.mean_row_sq) / b


def dissimilarity_bounds(problem: FederatedProblem, ball: Ball, t: CentreTerms) -> np.ndarray:
    """Certified sup over the ball of ||grad F_k - grad F|| (N,): the difference has Lipschitz constant
    max(L_k, L_F) - mu (difference of two PSD Hessians), and, when the model has a gradient bound
    beta, norm <= sqrt(beta)(m_k + sum_j p_j m_j)."""
    lipschitz = t.dissimilarity + (np.maximum(t.L_k, t.L_F) - problem.mu) * ball.radius
    beta = problem.model.gradient_bound
    if beta is None:
        return lipschitz
    return np.minimum(lipschitz, math.sqrt(beta) * (t.mean_row_norm + problem.weights @ t.mean_row_norm))
