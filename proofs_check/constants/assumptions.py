"""Assumption constants of the convergence theorems, computed for any ``FederatedProblem``.

Every estimator returns a small frozen dataclass with the value, an ``exact`` flag and a
``method`` sentence. ``exact`` means the value is the constant itself (up to floating-point
rounding); otherwise it is a certified bound (an upper bound of a supremum, a lower bound of an
infimum) and ``attained`` is the largest value of the defined quantity found at a point of the
region, a lower estimate of the supremum. Notation as in ``shared/THEOREMS.md``: N clients,
weights p_k, F = sum_k p_k F_k, minibatches of b rows drawn uniformly with replacement.

Definitions and sources (line numbers of ``shared/THEOREMS.md`` and ``shared/papers/``):

* L, mu (Li et al., ICLR 2020, Assumptions 1-2): every F_k is L-smooth and mu-strongly convex;
  Li's L = max_k L_k, mu = min_k mu_k (scope "clients"; THEOREMS.md l.13-15), or the constants of
  F ("global").
  Delegated to ``problems.problem_constants``: exact for least squares and logistic, mu exact and
  L a certified upper bound for softmax.
* sigma_k^2 (Li, Assumption 3, li2020_fedavg_noniid.txt l.137) and G^2 (Li, Assumption 4, l.141)
  over a region: sigma_k^2 = sup_w var_k(w, b), G^2 = sup_{w,k} ||grad F_k(w)||^2 + var_k(w, b)
  (``minibatch_moments``). The one definition along a run, at each client's own iterates, is
  ``proofs_check.constants.run_moments.IterateMoments``; a supremum over a region that contains every
  client's iterates is an upper estimate of it, valid in an upper bound only.
  Ding et al. 2020 (Assumptions 3-4) state theirs for all x (and Assumption 5 keeps every x in the
  ball ||x|| <= B), so their constants are the region form over Ball(0, B) (``proofs_check.lemmas.ding2020``).
  The lecture note's Yu et al. assumption is also "for all x", infinite for least squares on R^d;
  its drift lemma's proof uses it only at the clients' own iterates, so the iterate form applies.
* B (parameter bound, Ding et al. 2020, Assumption 5 ||x||^2 <= B^2): max ||w|| over the region.
* Gamma (Li, Sec. 3.1; THEOREMS.md l.15): F* - sum_k p_k F_k*, delegated to ``problems.heterogeneity_gamma``.
* sigma_G^2 (Yu, Jin, Yang, ICML 2019, "bounded gradient dissimilarity"; liu_lecture_fl_fedavg.md l.427,
  THEOREMS.md l.111-115):
  sup_w sum_k q_k ||grad F_k(w) - grad F(w)||^2 with q_k = 1/N ("uniform", the note's (1/N) sum)
  or q_k = p_k ("p"); grad F = sum_k p_k grad F_k is the gradient of the problem's objective.
* The (G, B)-BGD pair: ``proofs_check.constants.bgd``.

Regions (``proofs_check.constants.regions``): a ``Ball``, a finite set of ``Points`` (the constant is then the
exact maximum over them) or ``EVERYWHERE``. Over a ball, a quadratic model (``problem.model.quadratic``:
least squares) is exact (each quantity is a quadratic in w, ``least_squares_moments``, maximised by
``trust_region``); other models (logistic, softmax) get certified bounds (``gradient_bounds``: from
the model's curvature and, where it has one, its gradient bound) and ``attained`` is the maximum
over the 64 points of ``regions.ball_samples``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from problems import FederatedProblem, Optimum, exact_optimum, heterogeneity_gamma, problem_constants

from .gradient_bounds import centre_terms, dissimilarity_bounds, gradient_norm_bounds, variance_bounds
from .least_squares_moments import LeastSquaresMoments
from .minibatch_moments import all_client_terms, as_batch_size
from .regions import Ball, Points, Region, ball_samples, check_region
from .trust_region import Quadratic, exact_gap

__all__ = [
    "Weighting",
    "Scope",
    "Estimate",
    "ClientEstimate",
    "smoothness",
    "strong_convexity",
    "variance_bound",
    "second_moment_bound",
    "parameter_bound",
    "heterogeneity",
    "gradient_dissimilarity",
    "dissimilarity_weights",
]

Weighting = Literal["uniform", "p"]
Scope = Literal["clients", "global"]


@dataclass(frozen=True)
class Estimate:
    """A constant: ``value`` (exact, or a certified bound when not ``exact``), how it was obtained,
    and ``attained``: the largest value of the defining quantity found at a point of the region
    (None where the constant is not a supremum over a region)."""

    name: str
    value: float
    exact: bool
    method: str
    attained: float | None = None


@dataclass(frozen=True, eq=False)
class ClientEstimate:
    """A per-client constant: values (N,), exact flag, method, attained (N,) as in ``Estimate``."""

    name: str
    values: np.ndarray
    exact: bool
    method: str
    attained: np.ndarray

    @property
    def max(self) -> float:
        """max_k of the values."""
        return float(self.values.max())

    def weighted_sum(self, coefficients: np.ndarray) -> float:
        """sum_k coefficients_k values_k (e.g. coefficients p_k^2 for Li's sum_k p_k^2 sigma_k^2)."""
        return float(np.asarray(coefficients, dtype=np.float64) @ self.values)


# ------------------------------------------------------------------------ curvature constants
def smoothness(problem: FederatedProblem, scope: Scope = "clients") -> Estimate:
    """L: Li's max_k L_k ("clients") or the smoothness constant of F ("global")."""
    consts = problem_constants(problem)
    value = consts.L if scope == "clients" else _scoped(scope, consts.L_global)
    return Estimate(f"L ({scope})", float(value), consts.exact, f"problems.problem_constants: {consts.method}")


def strong_convexity(problem: FederatedProblem, scope: Scope = "clients") -> Estimate:
    """mu: Li's min_k mu_k ("clients") or the strong-convexity constant of F ("global"); exact for
    every loss kind (problems.constants: lambda_min + mu, the infimum mu, the flat logit shifts)."""
    consts = problem_constants(problem)
    value = consts.mu if scope == "clients" else _scoped(scope, consts.mu_global)
    return Estimate(f"mu ({scope})", float(value), True, f"problems.problem_constants: {consts.method}")


def _scoped(scope: str, value: float) -> float:
    if scope != "global":
        raise ValueError(f"scope: expected 'clients' or 'global', got {scope!r}")
    return value


def dissimilarity_weights(problem: FederatedProblem, weighting: Weighting) -> np.ndarray:
    """q_k of the dissimilarity and BGD sums: 1/N ("uniform") or p_k ("p"); ValueError naming ``weighting``."""
    if weighting == "uniform":
        return np.full(problem.n_clients, 1.0 / problem.n_clients)
    if weighting == "p":
        return problem.weights
    raise ValueError(f"weighting: expected 'uniform' (1/N) or 'p' (p_k), got {weighting!r}")


def variance_bound(problem: FederatedProblem, region: Region, batch_size: int) -> ClientEstimate:
    """sigma_k^2 = sup over the region of the minibatch-gradient variance of client k, shape (N,)."""
    b = as_batch_size(batch_size)
    check_region(problem, region)
    N = problem.n_clients
    name = f"sigma_k^2 (batch {b})"
    if b == 0:
        return ClientEstimate(name, np.zeros(N), True, "exact gradients: no variance", np.zeros(N))
    if isinstance(region, Points):
        _, variances = all_client_terms(problem, region.points)
        values = variances.max(axis=1) / b
        return ClientEstimate(name, values, True, f"exact maximum over {region.describe()}", values)
    if problem.model.quadratic:
        moments = LeastSquaresMoments.of(problem)
        pairs = np.array([moments.variance(k, b).max_on_ball(region) for k in range(N)])
        exact = all(exact_gap(u, a) for u, a in pairs)
        method = f"least squares: variance is a quadratic in w, maximised exactly over {region.describe()}"
        return ClientEstimate(name, pairs[:, 0], exact, method, pairs[:, 1])
    bounds = variance_bounds(problem, b, centre_terms(problem, region))
    _, variances = all_client_terms(problem, ball_samples(region))
    lipschitz = "mean_i (||g_i(c0) - gbar_k(c0)|| + (l_i + L_k - mu) R)^2"
    capped = f"min({lipschitz}, beta mean_i ||x_i||^2)" if problem.model.gradient_bound is not None else lipschitz
    method = f"certified bound over {region.describe()}: (1/b) {capped}; attained: max over 64 sampled points"
    return ClientEstimate(name, bounds, False, method, variances.max(axis=1) / b)


def second_moment_bound(problem: FederatedProblem, region: Region, batch_size: int) -> Estimate:
    """G^2 = sup over the region and the clients of E||g_k(w)||^2 = ||grad F_k(w)||^2 + var_k(w)."""
    b = as_batch_size(batch_size)
    check_region(problem, region)
    name = f"G^2 (batch {b})"
    if isinstance(region, Points):
        grads, variances = all_client_terms(problem, region.points)
        value = float(np.max(np.sum(grads**2, axis=2) + (variances / b if b else 0.0)))
        return Estimate(name, value, True, f"exact maximum over the clients and {region.describe()}", value)
    if problem.model.quadratic:
        moments = LeastSquaresMoments.of(problem)
        pairs = []
        for k in range(problem.n_clients):
            quad = moments.grad_sq(k)
            if b:
                var = moments.variance(k, b)
                quad = Quadratic(quad.A + var.A, quad.a + var.a, quad.s + var.s)
            pairs.append(quad.max_on_ball(region))
        upper, attained = max(u for u, _ in pairs), max(a for _, a in pairs)
        method = f"least squares: ||grad F_k||^2 + var_k is a quadratic in w, maximised exactly over {region.describe()}"
        return Estimate(name, upper, all(exact_gap(u, a) for u, a in pairs), method, attained)
    terms = centre_terms(problem, region)
    grad_bounds, _ = gradient_norm_bounds(problem, region, terms)
    variance = variance_bounds(problem, b, terms) if b else np.zeros(problem.n_clients)
    grads, variances = all_client_terms(problem, ball_samples(region))
    sampled = float(np.max(np.sum(grads**2, axis=2) + (variances / b if b else 0.0)))
    constants = "Lipschitz / bounded-gradient" if problem.model.gradient_bound is not None else "Lipschitz"
    method = (f"certified bound over {region.describe()}: max_k (sup ||grad F_k||)^2 + sup var_k, "
              f"each from the centre's values and {constants} constants; attained: 64 sampled points")
    return Estimate(name, float(np.max(grad_bounds**2 + variance)), False, method, sampled)


def parameter_bound(region: Region) -> Estimate:
    """B = max ||w|| over the region: ||centre|| + radius for a ball, the largest norm for points."""
    if isinstance(region, Ball):
        value = float(np.linalg.norm(region.centre)) + region.radius
        return Estimate("B = max ||w||", value, True, f"||centre|| + radius of {region.describe()}", value)
    if isinstance(region, Points):
        value = float(np.max(np.linalg.norm(region.points, axis=1)))
        return Estimate("B = max ||w||", value, True, f"largest norm among {region.describe()}", value)
    raise ValueError("region: max ||w|| is infinite on all of R^d; give a Ball or Points")


def heterogeneity(problem: FederatedProblem, optimum: Optimum | None = None) -> Estimate:
    """Li's Gamma = F* - sum_k p_k F_k* (problems.heterogeneity_gamma on the exact optima)."""
    optimum = exact_optimum(problem, crosscheck=False) if optimum is None else optimum
    value = heterogeneity_gamma(problem, optimum)
    return Estimate("Gamma", float(value), True, f"F* - sum_k p_k F_k* with optima from {optimum.method}")


def gradient_dissimilarity(problem: FederatedProblem, region: Region, weighting: Weighting = "uniform") -> Estimate:
    """sigma_G^2 = sup over the region of sum_k q_k ||grad F_k(w) - grad F(w)||^2 (q_k = 1/N or p_k)."""
    check_region(problem, region)
    q = dissimilarity_weights(problem, weighting)
    name = f"sigma_G^2 ({weighting})"
    if isinstance(region, Points):
        value = float(np.max(_dissimilarity_at(problem, region.points, q)))
        return Estimate(name, value, True, f"exact maximum over {region.describe()}", value)
    if problem.model.quadratic:
        upper, attained = LeastSquaresMoments.of(problem).dissimilarity(q, problem.weights).max_on_ball(region)
        method = f"least squares: the dissimilarity is a quadratic in w, maximised exactly over {region.describe()}"
        return Estimate(name, upper, exact_gap(upper, attained), method, attained)
    bounds = dissimilarity_bounds(problem, region, centre_terms(problem, region))
    sampled = float(np.max(_dissimilarity_at(problem, ball_samples(region), q)))
    capped = ", each term capped by the bounded-gradient bound" if problem.model.gradient_bound is not None else ""
    method = (f"certified bound over {region.describe()}: sum_k q_k (||D_k(c0)|| + (max(L_k, L_F) - mu) R)^2"
              f"{capped}; attained: 64 sampled points")
    return Estimate(name, float(q @ bounds**2), False, method, sampled)


def _dissimilarity_at(problem: FederatedProblem, W: np.ndarray, q: np.ndarray) -> np.ndarray:
    grads, _ = all_client_terms(problem, W)
    global_grad = np.einsum("k,kmd->md", problem.weights, grads)
    return np.einsum("k,km->m", q, np.sum((grads - global_grad[None]) ** 2, axis=2))

