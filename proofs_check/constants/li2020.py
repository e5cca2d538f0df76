"""The constants of Li et al. (ICLR 2020) Theorem 1, computed for a problem and a run.

Assumptions 1-4 of the paper: every F_k is L-smooth and mu-strongly convex; the stochastic
gradient of client k has variance <= sigma_k^2 and second moment <= G^2 at every iterate.
Theorem 1 (eq. 4-5), with kappa = L/mu, gamma = max{8 kappa, E}, eta_t = 2/(mu (gamma + t)):

    E F(w_T) - F* <= kappa / (gamma + T - 1) * (2B/mu + mu gamma / 2 * ||w_1 - w*||^2),
    B = sum_k p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2.

How each constant is obtained here:
* L = max_k L_k, mu = min_k mu_k from problems.problem_constants (exact for least squares,
  the standard bounds for logistic / softmax); Gamma = F* - sum_k p_k F_k* from exact optima.
* sigma_k^2 and G^2 are defined once, as Assumptions 3-4 state them (``run_moments.IterateMoments``):
  sigma_k^2 = max_t E var_k(w_t^k, b), G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch
  gradient at client k's own iterate. The theorem's runs do not store the iterates, so for a
  minibatch run fedbound uses an upper estimate: the supremum of client k's own var_k and
  E||g_k||^2 (per client, then the max over k) over the ball of radius R = max_{s,t,k} ||w_t^k - w*||
  around w*, which contains every client's iterates of every seed (R measured exactly by the
  kernel); the sups are those of ``assumption_constants`` (exact for least squares, certified bounds for
  logistic / softmax). Larger than the constants themselves, this is valid in the upper bound of
  eq. 4 only (it makes the bound looser, never wrong).
  With exact gradients sigma_k = 0 and the run is deterministic, so G^2 is the definition itself:
  the largest ||grad F_k(w_t^k)||^2 over every local iterate of the run, measured exactly by the kernel.

``li_theorem1_B`` and ``li_theorem1_rate_bound`` state B and eq. 4 once, for the theorem's check
(``proofs_check.claims.li2020.thm1``) and for the falsifier's exact version (``proofs_check.falsifier.claims``).

Partial participation (Sec. 3.3, ``proofs_check.claims.li2020.sampling_checks``): Theorems 2 and 3 state eq. 6, which
is eq. 4 with B replaced by B + C,

    Scheme I (Theorem 2):   C = (4/K) E^2 G^2,
    Scheme II (Theorem 3):  C = (N-K)/(N-1) (4/K) E^2 G^2,

``li_sampling_C`` states C and ``li_theorem1_bound(c, steps, C)`` the bound. For transformed Scheme II
(F~_k = N p_k F_k, simple average: a balanced problem with F~ = (1/N) sum_k F~_k = F) Theorem 3 holds
with L, mu, sigma_k, G replaced by nu L, varsigma mu, sqrt(nu) sigma_k, sqrt(nu) G, nu = N max_k p_k,
varsigma = N min_k p_k (the paper's replacement, taken as stated) and the weights 1/N in B;
Gamma is unchanged (F~* = F* and (1/N) sum_k min F~_k = sum_k p_k F_k*): ``li_transformed_constants``.
A remark on that replacement: grad F~_k(w, xi) = N p_k grad F_k(w, xi) has variance (N p_k)^2 sigma_k^2
and second moment (N p_k)^2 G^2, up to nu^2 (not nu) times the original's, so substituting directly
would give nu sigma_k and nu G; the paper's sqrt(nu) is smaller when nu > 1. fedbound checks the
statement as printed (li2020.thm3 reports nu and nu^2 beside its verdict).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem, Optimum, check_int, check_real, heterogeneity_gamma, problem_constants

from .assumptions import second_moment_bound, variance_bound
from .regions import Ball

__all__ = [
    "LiConstants", "li_theorem1_constants", "li_theorem1_bound", "li_theorem1_B", "li_theorem1_rate_bound",
    "SAMPLING_SCHEMES", "li_sampling_C", "li_transform_factors", "li_transformed_constants",
]

SAMPLING_SCHEMES = ("scheme_i", "scheme_ii")
"""The sampling schemes with a theorem: Scheme I (Theorem 2) and Scheme II (Theorem 3; transformed
Scheme II is Scheme II on the transformed, balanced problem)."""


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


def li_theorem1_constants(
    problem: FederatedProblem,
    optimum: Optimum,
    local_steps: int,
    batch_size: int,
    radius: float,
    observed_grad_sq: float,
) -> LiConstants:
    """Theorem 1's constants; ``radius`` and ``observed_grad_sq`` come from a tracked run (the
    max over seeds of FedAvgExtras.max_radius_sq ** 0.5 and of FedAvgExtras.max_grad_sq)."""
    consts = problem_constants(problem)
    L, mu = float(consts.L), float(consts.mu)
    gamma = max(8 * L / mu, local_steps)
    w_star = optimum.w_star
    sigma_sq = np.zeros(problem.n_clients)
    if batch_size == 0:
        G_sq = float(observed_grad_sq)
        method = ("exact gradients: the definition itself (Assumption 4 along a deterministic run), the largest "
                  "||grad F_k(w_t^k)||^2 over every client's own local iterates")
    else:
        ball = Ball(w_star, radius)
        sigma = variance_bound(problem, ball, batch_size)
        G = second_moment_bound(problem, ball, batch_size)
        sigma_sq, G_sq = sigma.values, G.value
        method = (f"upper estimate of Assumptions 3-4's constants (valid in an upper bound only): client k's own "
                  f"sup over the ball of radius R = {radius:.4g} around w* that contains every client's iterates, "
                  f"{G.method} (observed max ||g||^2 = {observed_grad_sq:.4g})")
    Gamma = heterogeneity_gamma(problem, optimum)
    B = li_theorem1_B(problem.weights, sigma_sq, L, Gamma, local_steps, G_sq)
    return LiConstants(
        L, mu, L / mu, gamma, local_steps, sigma_sq, G_sq, float(Gamma), B, float(w_star @ w_star), float(radius), method
    )


def li_theorem1_B(
    weights: np.ndarray, sigma_sq: np.ndarray, L: float, Gamma: float, local_steps: int, G_sq: float
) -> float:
    """B = sum_k p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2 (Theorem 1, eq. 5); weights, sigma_sq (N,)."""
    return float(weights**2 @ sigma_sq + 6 * L * Gamma + 8 * (local_steps - 1) ** 2 * G_sq)


def li_theorem1_rate_bound(
    kappa: float, mu: float, gamma: float, B: float, init_dist_sq: float, horizon: np.ndarray
) -> np.ndarray:
    """kappa / horizon * (2B/mu + mu gamma/2 ||w_1 - w*||^2), shape of ``horizon``: eq. 4 with
    horizon = gamma + T - 1 (its numerator kappa (2B/mu + ...) is Theorem 1's constant C)."""
    return kappa / horizon * (2 * B / mu + mu * gamma / 2 * init_dist_sq)


def li_theorem1_bound(c: LiConstants, steps: np.ndarray, C: float = 0.0) -> np.ndarray:
    """Eq. 4 after ``steps`` local steps from w_1 = 0 (Li's T - 1 = steps; w_1 - w* = -w*), shape of
    ``steps``; with ``C`` (``li_sampling_C``) eq. 6 of Theorems 2-3, B replaced by B + C."""
    steps = np.asarray(steps, dtype=float)
    C = check_real("C", C, 0.0)
    return li_theorem1_rate_bound(c.kappa, c.mu, c.gamma, c.B + C, c.init_dist_sq, c.gamma + steps)


def li_sampling_C(scheme: str, participants: int, n_clients: int, local_steps: int, G_sq: float) -> float:
    """C of eq. 6: (4/K) E^2 G^2 for ``scheme`` "scheme_i" (Theorem 2), (N-K)/(N-1) (4/K) E^2 G^2 for
    "scheme_ii" (Theorem 3; N = 1 leaves no one to sample, K = N gives C = 0: full participation).
    ValueError naming the argument otherwise (K > N for Scheme II, an unknown scheme)."""
    if scheme not in SAMPLING_SCHEMES:
        raise ValueError(f"scheme: expected one of {', '.join(SAMPLING_SCHEMES)}, got {scheme!r}")
    N = check_int("n_clients", n_clients, minimum=1)
    K = check_int("participants", participants, minimum=1)
    E = check_int("local_steps", local_steps, minimum=1)
    G_sq = check_real("G_sq", G_sq, 0.0)
    C = 4.0 / K * E**2 * G_sq
    if scheme == "scheme_i":
        return C
    if K > N:
        raise ValueError(f"participants: Scheme II samples without replacement, so K <= N = {N}; got {K}")
    return 0.0 if K == N else (N - K) / (N - 1) * C


def li_transform_factors(weights: np.ndarray) -> tuple[float, float]:
    """(nu, varsigma) = (N max_k p_k, N min_k p_k) of the client weights p (N,), Sec. 3.3; ValueError
    naming ``weights`` unless every p_k > 0 (F~_k = N p_k F_k must stay strongly convex)."""
    p = np.asarray(weights, dtype=float)
    if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"weights: transformed Scheme II needs N >= 1 finite weights p_k > 0, got {weights!r}")
    return p.size * float(p.max()), p.size * float(p.min())


def li_transformed_constants(c: LiConstants, weights: np.ndarray) -> LiConstants:
    """Theorem 3's constants for transformed Scheme II (module docstring) from the constants ``c`` of
    the original problem with client weights p (N,): L~ = nu L, mu~ = varsigma mu, sigma~_k^2 =
    nu sigma_k^2, G~^2 = nu G^2, kappa~ = L~/mu~, gamma~ = max{8 kappa~, E} and B~ with weights 1/N;
    Gamma, ||w_1 - w*||^2 and the radius are the original problem's."""
    if np.shape(weights) != c.sigma_sq.shape:
        raise ValueError(f"weights: expected shape {c.sigma_sq.shape} (one weight per client), got {np.shape(weights)}")
    N = c.sigma_sq.size
    nu, varsigma = li_transform_factors(weights)
    L, mu, sigma_sq, G_sq = nu * c.L, varsigma * c.mu, nu * c.sigma_sq, nu * c.G_sq
    B = li_theorem1_B(np.full(N, 1.0 / N), sigma_sq, L, c.Gamma, c.local_steps, G_sq)
    method = f"nu = N max p_k = {nu:.6g} times G^2 of the original problem ({c.G_method})"
    return LiConstants(L, mu, L / mu, max(8 * L / mu, c.local_steps), c.local_steps, sigma_sq, G_sq, c.Gamma, B,
                       c.init_dist_sq, c.radius, method)
