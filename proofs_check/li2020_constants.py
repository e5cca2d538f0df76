"""The constants of Li et al. (ICLR 2020) Theorem 1, computed for a problem and a run.

Assumptions 1-4 of the paper: every F_k is L-smooth and mu-strongly convex; the stochastic
gradient of client k has variance <= sigma_k^2 and second moment <= G^2 at every iterate.
Theorem 1 (eq. 4-5), with kappa = L/mu, gamma = max{8 kappa, E}, eta_t = 2/(mu (gamma + t)):

    E F(w_T) - F* <= kappa / (gamma + T - 1) * (2B/mu + mu gamma / 2 * ||w_1 - w*||^2),
    B = sum_k p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2.

How each constant is obtained here:
* L = max_k L_k, mu = min_k mu_k from problems.problem_constants (exact for least squares,
  the standard bounds for logistic / softmax); Gamma = F* - sum_k p_k F_k* from exact optima.
* sigma_k^2 and G^2 only need to hold at the iterates, so they are bounded over the region the
  run visits: the ball of radius R = max_{t,k} ||w_t^k - w*|| around w*, with R measured
  exactly by the kernel over every local iterate. For a minibatch of b rows drawn uniformly with
  replacement the variance at w is exactly (1/b) mean_i ||g_i(w) - gbar_k(w)||^2 (g_i the
  per-sample gradient); each g_i is l_i-Lipschitz with l_i = c ||x_i||^2 (c = 1 least squares,
  1/4 logistic, 1/2 softmax) and gbar_k is (L_k - mu)-Lipschitz, hence over the ball
      sigma_k^2 <= (1/b) mean_i (||g_i(w*) - gbar_k(w*)|| + (l_i + L_k - mu) R)^2,
      G^2 <= max_k [(||grad F_k(w*)|| + L_k R)^2 + sigma_k^2]   (E||g||^2 = ||grad F_k||^2 + var).
  With exact gradients sigma_k = 0 and G^2 is the largest ||grad F_k(w_t^k)||^2 over every
  local iterate of the run, measured exactly by the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem, LossKind, Optimum, heterogeneity_gamma, problem_constants

__all__ = ["LiConstants", "li_theorem1_constants", "li_theorem1_bound", "SAMPLE_CURVATURE"]

SAMPLE_CURVATURE = {LossKind.LEAST_SQUARES: 1.0, LossKind.LOGISTIC: 0.25, LossKind.SOFTMAX: 0.5}
"""c with ||Hessian of one sample's loss|| <= c ||x||^2: 1 (least squares), sigma' <= 1/4 (logistic),
lambda_max(diag(p) - pp') <= 1/2 (softmax)."""


@dataclass(frozen=True)
class LiConstants:
    """Theorem 1's constants for one problem and run (see the module docstring)."""

    L: float
    mu: float
    kappa: float
    gamma: float
    local_steps: int
    sigma_sq: np.ndarray
    G_sq: float
    Gamma: float
    B: float
    init_dist_sq: float
    radius: float
    G_method: str

    def as_dict(self) -> dict[str, float | str]:
        """JSON-able summary."""
        return {
            "L": self.L, "mu": self.mu, "kappa": self.kappa, "gamma": self.gamma, "E": self.local_steps,
            "sum_k p_k^2 sigma_k^2": float(self.B - 6 * self.L * self.Gamma - 8 * (self.local_steps - 1) ** 2 * self.G_sq),
            "G^2": self.G_sq, "Gamma": self.Gamma, "B": self.B, "||w_1 - w*||^2": self.init_dist_sq,
            "R = max ||w_t^k - w*||": self.radius, "G^2 method": self.G_method,
        }


def _sample_terms(problem: FederatedProblem, w_star: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(||g_i(w*) - gbar_k(w*)||, l_i) for the rows of client k."""
    lo, hi = problem.offsets[k], problem.offsets[k + 1]
    grads = problem.sample_gradients(w_star, slice(lo, hi))
    deviation = np.linalg.norm(grads - grads.mean(axis=0), axis=1)
    curvature = SAMPLE_CURVATURE[problem.loss] * np.sum(problem.X[lo:hi] ** 2, axis=1)
    return deviation, curvature


def li_theorem1_constants(
    problem: FederatedProblem,
    optimum: Optimum,
    local_steps: int,
    batch_size: int,
    radius: float,
    observed_grad_sq: float,
) -> LiConstants:
    """Theorem 1's constants; ``radius`` and ``observed_grad_sq`` come from a tracked run (the
    max over seeds of Trajectory.max_radius_sq ** 0.5 and of Trajectory.max_grad_sq)."""
    consts = problem_constants(problem)
    L, mu = float(consts.L), float(consts.mu)
    gamma = max(8 * L / mu, local_steps)
    w_star = optimum.w_star
    sigma_sq = np.zeros(problem.n_clients)
    if batch_size == 0:
        G_sq = float(observed_grad_sq)
        method = "exact gradients: largest ||grad F_k(w_t^k)||^2 over every local iterate of the run"
    else:
        full = problem.local_gradients(w_star)
        second_moment = np.zeros(problem.n_clients)
        for k in range(problem.n_clients):
            deviation, curvature = _sample_terms(problem, w_star, k)
            data_L = consts.L_k[k] - problem.mu
            sigma_sq[k] = np.mean((deviation + (curvature + data_L) * radius) ** 2) / batch_size
            second_moment[k] = (np.linalg.norm(full[k]) + consts.L_k[k] * radius) ** 2 + sigma_sq[k]
        G_sq = float(second_moment.max())
        method = (f"certified bound over the ball of radius R = {radius:.4g} around w* that contains every local "
                  f"iterate (observed max ||g||^2 = {observed_grad_sq:.4g})")
    Gamma = heterogeneity_gamma(problem, optimum)
    B = float(problem.weights**2 @ sigma_sq + 6 * L * Gamma + 8 * (local_steps - 1) ** 2 * G_sq)
    return LiConstants(
        L, mu, L / mu, gamma, local_steps, sigma_sq, G_sq, float(Gamma), B, float(w_star @ w_star), float(radius), method
    )


def li_theorem1_bound(c: LiConstants, steps: np.ndarray) -> np.ndarray:
    """Eq. 4 after ``steps`` local steps from w_1 = 0 (Li's T - 1 = steps; w_1 - w* = -w*)."""
    steps = np.asarray(steps, dtype=float)
    return c.kappa / (c.gamma + steps) * (2 * c.B / c.mu + c.mu * c.gamma / 2 * c.init_dist_sq)
