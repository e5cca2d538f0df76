"""Certified bounds on the variance and second moment of minibatch gradients over a ball.

Assumptions 3-4 of Li et al. (ICLR 2020) bound, at every client's own iterate, the variance sigma^2
and the second moment G^2 of that client's stochastic gradient (the one definition is
``proofs_check.assumptions.IterateMoments``); Ding et al. (2020) state theirs for every x of the
ball of their Assumption 5. Over a ball that contains every iterate of the run (its centre and
radius come from quantities the kernels track exactly) the bounds below are upper estimates of
those constants: valid in an upper bound, too large for a check that needs the constant itself.

For a minibatch of b rows drawn uniformly with replacement from client k's n_k rows, at w:
    var_k(w) = (1/b) mean_i ||g_i(w) - gbar_k(w)||^2              (exact for finite data),
    E||g||^2 = ||grad F_k(w)||^2 + var_k(w),
with g_i the gradient of row i's loss (the l2 term cancels in g_i - gbar_k). Each g_i is
l_i-Lipschitz with l_i = c ||x_i||^2 (c = 1 least squares, 1/4 logistic, 1/2 softmax) and gbar_k
is (L_k - mu)-Lipschitz, so over the ball ||w - centre|| <= R:
    var_k <= (1/b) mean_i (||g_i(c) - gbar_k(c)|| + (l_i + L_k - mu) R)^2,
    E||g||^2 <= (||grad F_k(c)|| + L_k R)^2 + that variance bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem, LossKind, problem_constants

__all__ = ["GradientBounds", "stochastic_gradient_bounds", "SAMPLE_CURVATURE"]

SAMPLE_CURVATURE = {LossKind.LEAST_SQUARES: 1.0, LossKind.LOGISTIC: 0.25, LossKind.SOFTMAX: 0.5}
"""c with ||Hessian of one row's loss|| <= c ||x||^2: 1 (least squares), sigma' <= 1/4 (logistic),
lambda_max(diag(p) - pp') <= 1/2 (softmax)."""


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
    consts = problem_constants(problem)
    full = problem.local_gradients(center)
    sigma_sq = np.zeros(problem.n_clients)
    second = np.zeros(problem.n_clients)
    for k in range(problem.n_clients):
        lo, hi = problem.offsets[k], problem.offsets[k + 1]
        grads = problem.sample_gradients(center, slice(lo, hi))
        deviation = np.linalg.norm(grads - grads.mean(axis=0), axis=1)
        curvature = SAMPLE_CURVATURE[problem.loss] * np.sum(problem.X[lo:hi] ** 2, axis=1)
        data_L = consts.L_k[k] - problem.mu
        sigma_sq[k] = np.mean((deviation + (curvature + data_L) * radius) ** 2) / batch_size
        second[k] = (np.linalg.norm(full[k]) + consts.L_k[k] * radius) ** 2 + sigma_sq[k]
    return GradientBounds(sigma_sq, second, float(radius), int(batch_size))
