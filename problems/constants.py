"""Smoothness and strong-convexity constants of a federated problem.

Li et al. (ICLR 2020), Assumptions 1-2: every F_k is L-smooth and mu-strongly convex; the paper's
L and mu are therefore L = max_k L_k and mu = min_k mu_k over the clients' constants. We also give
the constants of F = sum_k p_k F_k itself (L_global <= L, mu_global >= mu).

With G_k = X_k'X_k / n_k (f x f) and G = sum_k p_k G_k, the Hessians are bounded as follows
(constants over all of R^d; each model states its curvature bounds, ``LinearModel.curvature``):

* least squares: the Hessian of F_k is G_k + mu I at every w, so L_k = lambda_max(G_k) + mu and
  mu_k = lambda_min(G_k) + mu exactly (the same with G for F).
* logistic: Hessian = sum_i (1/n_k) s'(x_i'w) x_i x_i' + mu I with 0 < s' <= 1/4 and s'(0) = 1/4,
  so L_k = lambda_max(G_k)/4 + mu (the standard bound, attained at w = 0) and mu_k = mu (the
  standard bound; it is the infimum over R^d: along w = t u, u'Hu -> mu as t -> infinity). Both are
  the best constants valid on all of R^d, so they are reported as exact.
* softmax: Hessian = sum_i (1/n_k) (x_i x_i') kron (diag(pi_i) - pi_i pi_i') + mu I. For a unit
  vector v, v'(diag(pi) - pi pi')v is the variance of a variable taking values v_c with
  probabilities pi_c, at most (max_c v_c - min_c v_c)^2 / 4 <= 1/2, so L_k = lambda_max(G_k)/2 + mu
  (an upper bound, in general not attained), and mu_k = mu exactly (the data Hessian annihilates
  every W = a 1', a constant shift of the logits). Reported as not exact.

Eigenvalues come from ``scipy.linalg.eigvalsh``; a computed lambda_min(G_k) < 0 (rounding on a
singular PSD matrix) is clipped to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigvalsh

from ._base import FederatedProblem

__all__ = ["ProblemConstants", "problem_constants"]



@dataclass(frozen=True, eq=False)
class ProblemConstants:
    """L_k, mu_k per client (N,), Li's L = max_k L_k and mu = min_k mu_k, and the constants of F.

    ``exact`` says whether every value is the best constant over R^d (not merely a bound);
    ``method`` says how the values were obtained.
    """

    L_k: np.ndarray
    mu_k: np.ndarray
    L: float
    mu: float
    L_global: float
    mu_global: float
    exact: bool
    method: str

    @property
    def kappa(self) -> float:
        """Li's condition number kappa = L / mu."""
        return self.L / self.mu


def _gram_matrices(problem: FederatedProblem) -> np.ndarray:
    """G_k = X_k'X_k / n_k for every client, shape (N, f, f)."""
    grams = np.empty((problem.n_clients, problem.n_features, problem.n_features))
    for k in range(problem.n_clients):
        X, _ = problem.client_data(k)
        grams[k] = X.T @ X / X.shape[0]
    return grams


def _extreme_eigenvalues(G: np.ndarray) -> tuple[float, float]:
    """(lambda_min clipped at 0, lambda_max) of a symmetric PSD matrix."""
    eig = eigvalsh(G)
    return max(float(eig[0]), 0.0), float(eig[-1])


def problem_constants(problem: FederatedProblem) -> ProblemConstants:
    """The constants L_k, mu_k, L, mu, L_global, mu_global of ``problem`` (module docstring)."""
    grams = _gram_matrices(problem)
    G = np.einsum("k,kij->ij", problem.weights, grams)
    mu = problem.mu
    client = np.array([_extreme_eigenvalues(g) for g in grams])
    glob = _extreme_eigenvalues(G)
    bounds = problem.model.curvature  # lower I <= d^2 loss / dz^2 <= upper I over all margins
    L_k, mu_k = bounds.upper * client[:, 1] + mu, bounds.lower * client[:, 0] + mu
    L_global, mu_global = bounds.upper * glob[1] + mu, bounds.lower * glob[0] + mu
    exact = bounds.exact_upper
    method = (
        f"{problem.loss.value}: L_k = {bounds.upper:g} lambda_max(X_k'X_k/n_k) + mu "
        f"({'exact' if exact else 'upper bound'}), mu_k = {bounds.lower:g} lambda_min(X_k'X_k/n_k) + mu "
        "(the infimum over R^d); the same with sum_k p_k X_k'X_k/n_k for F"
    )
    for array in (L_k, mu_k):
        array.setflags(write=False)
    return ProblemConstants(
        L_k=L_k,
        mu_k=mu_k,
        L=float(L_k.max()),
        mu=float(mu_k.min()),
        L_global=float(L_global),
        mu_global=float(mu_global),
        exact=exact,
        method=method,
    )
