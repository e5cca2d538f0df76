"""Random strongly convex quadratic clients with prescribed constants and heterogeneity.

Construction (for each client k, dimension d, n = samples_per_client rows, all from one
``numpy.random.default_rng(seed)`` stream):

1. Client optima. A centre c ~ N(0, I_d / d) and offsets delta_k ~ N(0, I_d / d) (so both have
   norm about 1); the client optimum is w_k* = c + heterogeneity * delta_k. heterogeneity = 0
   gives identical optima (then Li's Gamma = F* - sum_k p_k F_k* is 0), and the distance
   between optima grows linearly with it.
2. Curvature. S_k = Q_k diag(s_k) Q_k' with s_k = (0, L - mu, s_3, ..., s_d), s_j ~ U[0, L - mu]
   for j >= 3, Q_k orthogonal whose first column q_k (the direction of the zero eigenvalue) is a
   random direction orthogonal to w_k*. The Hessian of F_k is S_k + mu I, whose eigenvalues are
   exactly mu and L at the two ends: every F_k is mu-strongly convex and L-smooth with the best
   constants mu_k = mu and L_k = L (so max_k L_k = L and min_k mu_k = mu exactly).
3. Rows. X_k = sqrt(n) U_k diag(sqrt(s_k)) Q_k', with U_k in R^{n x d} having orthonormal
   columns (QR of a Gaussian matrix; needs n >= d), so that X_k'X_k / n = S_k.
4. Targets. b_k = (S_k + mu I) w_k* makes w_k* the minimiser of 1/2 w'(S_k + mu I)w - b_k'w.
   b_k lies in range(S_k) because q_k'b_k = mu q_k'w_k* = 0, so y_k = sqrt(n) U_k diag(s_k^+)^{1/2}
   Q_k' b_k (pseudo-inverse square root) satisfies X_k'y_k / n = b_k, and the least-squares client
   F_k(w) = (1/(2n)) ||X_k w - y_k||^2 + mu/2 ||w||^2 has gradient (S_k + mu I) w - b_k, minimiser
   w_k*.
5. Weights. ``weighting="balanced"`` gives p_k = 1/N; ``"dirichlet"`` draws p ~ Dirichlet(1, ..., 1)
   (uniform on the simplex) for unbalanced aggregation.

This family is a test bed for the assumptions of Li et al. (ICLR 2020), Assumptions 1-2 (every
F_k L-smooth and mu-strongly convex), with kappa = L / mu under direct control.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind, ProblemError
from ._params import as_choice
from .spec import FamilySpec
from .validation import check_int, check_problem_size, check_real

__all__ = ["random_quadratic"]

_WEIGHTINGS = ("balanced", "dirichlet")
_MAX_CURVATURE = 1e150  # L^2 ||w - w_k*||^2 <= 1e300 * ||w - w_k*||^2: finite in float64 for distances up to 1e4


def _orthogonal(rng: np.random.Generator, first: np.ndarray) -> np.ndarray:
    """A random d x d orthogonal matrix whose first column is ``first`` / ||first|| (d = first.size)."""
    G = rng.standard_normal((first.size, first.size))
    G[:, 0] = first
    Q, R = np.linalg.qr(G)
    return Q * np.sign(np.diag(R))  # fix signs so that Q[:, 0] is +first/||first||


def _null_direction(rng: np.random.Generator, w: np.ndarray) -> np.ndarray:
    """A random direction orthogonal to w (any random direction when w = 0)."""
    g = rng.standard_normal(w.size)
    ww = w @ w
    return g - (g @ w / ww) * w if ww > 0 else g


def random_quadratic(
    n_clients: int = 10,
    dim: int = 20,
    mu: float = 0.1,
    L: float = 10.0,
    heterogeneity: float = 1.0,
    samples_per_client: int = 50,
    seed: int = 0,
    weighting: str = "balanced",
) -> FederatedProblem:
    """N least-squares clients, each exactly mu-strongly convex and L-smooth (module docstring).

    Shapes: X (N * samples_per_client, dim), y (N * samples_per_client,), d = dim. Requires
    mu > 0, L > mu, L <= 1e150 (so that squared gradient norms stay finite), dim >= 2,
    samples_per_client >= dim, heterogeneity >= 0.
    """
    N = check_int("n_clients", n_clients, minimum=1)
    d = check_int("dim", dim, minimum=2)
    mu = check_real("mu", mu, minimum=0.0, strict=True)
    L = check_real("L", L)
    if L <= mu:
        raise ProblemError(f"L: must exceed mu = {mu}, got {L}")
    if L > _MAX_CURVATURE:
        raise ProblemError(f"L: must be at most {_MAX_CURVATURE:g}, got {L:g}: squared gradient norms, up to "
                           f"L^2 ||w - w_k*||^2, overflow float64 (largest {np.finfo(np.float64).max:.3g}) beyond it")
    h = check_real("heterogeneity", heterogeneity, minimum=0.0)
    n = check_int("samples_per_client", samples_per_client, minimum=d)
    seed = check_int("seed", seed, minimum=0)
    check_problem_size("n_clients, dim, samples_per_client", N * n, d, d)
    weighting = as_choice("weighting", weighting, _WEIGHTINGS)

    rng = np.random.default_rng(seed)
    centre = rng.standard_normal(d) / np.sqrt(d)
    optima = centre + h * rng.standard_normal((N, d)) / np.sqrt(d)
    X = np.empty((N, n, d))
    y = np.empty((N, n))
    for k in range(N):
        s = np.concatenate(([0.0, L - mu], rng.uniform(0.0, L - mu, d - 2)))
        Q = _orthogonal(rng, _null_direction(rng, optima[k]))
        U = np.linalg.qr(rng.standard_normal((n, d)))[0]  # (n, d), orthonormal columns
        X[k] = np.sqrt(n) * (U * np.sqrt(s)) @ Q.T
        a = Q.T @ optima[k]  # w_k* in the eigenbasis; a[0] = 0 because q_k is orthogonal to w_k*
        coef = np.zeros(d)  # y_k = sqrt(n) U_k coef, coef = diag(s^+)^{1/2} Q'b_k, Q'b_k = (s + mu) a
        pos = s > 0
        coef[pos] = (s[pos] + mu) * a[pos] / np.sqrt(s[pos])
        y[k] = np.sqrt(n) * U @ coef
    weights = np.full(N, 1.0 / N) if weighting == "balanced" else rng.dirichlet(np.ones(N))
    params = {
        "n_clients": N,
        "dim": d,
        "mu": mu,
        "L": L,
        "heterogeneity": h,
        "samples_per_client": n,
        "seed": seed,
        "weighting": weighting,
    }
    return FederatedProblem(
        name=f"random_quadratic(N={N}, d={d}, mu={mu:g}, L={L:g}, h={h:g}, seed={seed})",
        loss=LossKind.LEAST_SQUARES,
        X=X.reshape(N * n, d),
        y=y.reshape(-1),
        offsets=np.arange(N + 1) * n,
        weights=weights,
        mu=mu,
        spec=FamilySpec("random_quadratic", params),
        notes="Exact constants: every F_k has Hessian eigenvalues in [mu, L] with both ends attained.",
    )
