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
* sigma_k^2 (Li, Assumption 3, li2020_fedavg_noniid.txt l.137): E||g_k(w_t^k) - grad F_k(w_t^k)||^2 <= sigma_k^2,
  g_k client k's minibatch gradient at client k's own iterate w_t^k. For finite data and b rows
  drawn with replacement the variance at a point w is exactly var_k(w, b) =
  (1/b) (1/n_k) sum_i ||g_i(w) - gbar_k(w)||^2, g_i the per-sample gradient of the loss, gbar_k
  their mean (the mu w term is deterministic and cancels); b = 0 (exact gradients) gives 0.
* G^2 (Li, Assumption 4, l.141): E||g_k(w_t^k)||^2 = E[||grad F_k(w_t^k)||^2 + var_k(w_t^k, b)] <= G^2
  for all k and t.

  The one definition fedbound uses for Li's Assumptions 3-4 (``IterateMoments``, ``iterate_moments``):
  sigma_k^2 = max_t E var_k(w_t^k, b) and G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, where client k's
  minibatch gradient is taken at client k's own iterate (never at another client's) and E is the
  expectation over the run (exact over the step's minibatch, over the history: the mean over
  seeds, or exact where ``proofs_check.falsify`` propagates the moments of a least-squares run).
  These are the smallest constants for which the assumptions, as the paper states them, hold
  along the run; Lemmas 2-3 and Theorem 1 use them so (Li's proof of Lemma 3 bounds
  sum_k p_k E||g_k(w_t^k)||^2 by G^2). Where the iterates are not stored (long theorem runs), a
  supremum over a region that contains every client's iterates (``variance_bound``,
  ``second_moment_bound`` on a ``Ball``) is an upper estimate of these constants: valid in an
  upper bound, never in a check that needs the constant itself.
  Ding et al. 2020 (Assumptions 3-4) state theirs for all x (and Assumption 5 keeps every x in the
  ball ||x|| <= B), so their constants are the region form over Ball(0, B) (``proofs_check.ding_lemmas``).
  The lecture note's Yu et al. assumption is also "for all x", infinite for least squares on R^d;
  its drift lemma's proof uses it only at the clients' own iterates, so the iterate form applies.
* B (parameter bound, Ding et al. 2020, Assumption 5 ||x||^2 <= B^2): max ||w|| over the region.
* Gamma (Li, Sec. 3.1; THEOREMS.md l.15): F* - sum_k p_k F_k*, delegated to ``problems.heterogeneity_gamma``.
* sigma_G^2 (Yu, Jin, Yang, ICML 2019, "bounded gradient dissimilarity"; liu_lecture_fl_fedavg.md l.427,
  THEOREMS.md l.111-115):
  sup_w sum_k q_k ||grad F_k(w) - grad F(w)||^2 with q_k = 1/N ("uniform", the note's (1/N) sum)
  or q_k = p_k ("p"); grad F = sum_k p_k grad F_k is the gradient of the problem's objective.
* (G, B)-BGD (Karimireddy et al. ICML 2020; liu_lecture_fl_fedavg.md l.431, THEOREMS.md l.115):
  sum_k q_k ||grad F_k(w)||^2 <= G^2 + B^2 ||grad F(w)||^2 on the region; for a given B^2 the
  smallest such G^2 >= 0 is max(0, sup_w [sum_k q_k ||grad F_k(w)||^2 - B^2 ||grad F(w)||^2]).

Regions: ``Ball(centre, radius)``, ``Points(points)`` (a finite set, e.g. the iterates a run
visited: the constant is then exact on that set and says nothing elsewhere) and ``EVERYWHERE``
(all of R^d; only the BGD pair of least squares is finite there).

Least squares: the per-sample gradient x_i (x_i'w - y_i) is affine in w, so var_k(w),
||grad F_k(w)||^2, the dissimilarity and the BGD excess are quadratics q(w) = w'Aw - 2a'w + s.
Their maximum over a ball is a trust-region subproblem, solved exactly from the eigen-decomposition
of A (Moré & Sorensen, "Computing a trust region step", 1983): for nu >= max(0, lambda_max(A)),
nu > lambda_max, the Lagrangian dual nu R^2 + g'(nu I - A)^{-1} g + q(centre) (g = A centre - a) is
an upper bound, equal to the maximum at the root of ||(nu I - A)^{-1} g|| = R; the reported value is
this dual bound and ``attained`` the primal value at the corresponding point, equal to rounding.
Over R^d the BGD excess has A = M - B^2 H^2 (M = sum_k q_k H_k^2, H = sum_k p_k H_k, H_k the
Hessian of F_k): it is bounded above iff B^2 >= the largest generalised eigenvalue of (M, H^2),
and the whole curve G^2(B^2) follows from one generalised eigen-decomposition.

Logistic / softmax (per-sample gradient x_i (x) r_i with ||r_i||^2 <= beta, beta = 1 logistic,
2 softmax, and g_i Lipschitz with constant l_i = c ||x_i||^2, c = 1/4 or 1/2): certified bounds
over a ball of radius R around c0, each the smaller of a Lipschitz bound from the centre and a
bounded-gradient bound, e.g. var_k <= (1/b) min{mean_i (||g_i(c0) - gbar_k(c0)|| + (l_i + L_k - mu) R)^2,
beta mean_i ||x_i||^2} (the first term is ``proofs_check.gradient_bounds``); ``attained`` is the
maximum over 64 sampled points of the ball (its centre, 32 points of its sphere, 31 inside it;
seeded, so reproducible).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import brentq
from scipy.special import expit, softmax

from problems import FederatedProblem, LossKind, Optimum, exact_optimum, heterogeneity_gamma, problem_constants

from .gradient_bounds import stochastic_gradient_bounds

__all__ = [
    "Ball",
    "Points",
    "Everywhere",
    "EVERYWHERE",
    "Region",
    "Estimate",
    "ClientEstimate",
    "BGDPair",
    "IterateMoments",
    "iterate_moments",
    "smoothness",
    "strong_convexity",
    "gradient_variance",
    "variance_bound",
    "second_moment_bound",
    "parameter_bound",
    "heterogeneity",
    "gradient_dissimilarity",
    "bgd_pair",
    "bgd_curve",
    "bgd_threshold",
]

Weighting = Literal["uniform", "p"]
Scope = Literal["clients", "global"]

_GRADIENT_BOUND = {LossKind.LOGISTIC: 1.0, LossKind.SOFTMAX: 2.0}
"""beta with ||r_i||^2 <= beta: |sigmoid(z) - y| <= 1; ||softmax(z) - e_y||^2 <= 2 (1 - p_y)^2 <= 2."""
_N_SAMPLES = 64  # points sampled in a ball for the lower estimates of non-least-squares suprema
_SAMPLE_SEED = 0
_EXACT_RTOL = 1e-9  # dual bound and attained primal value within this relative gap: exact
_BLOCK = 1 << 22  # entries of the (points, rows, classes) residual block evaluated at once


# ----------------------------------------------------------------------------------- regions
@dataclass(frozen=True, eq=False)
class Ball:
    """The closed ball {w : ||w - centre|| <= radius}; centre has shape (d,)."""

    centre: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        centre = np.array(self.centre, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(centre)):
            raise ValueError("centre: the centre of a ball must be finite")
        if not (math.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"radius: must be finite and >= 0, got {self.radius!r}")
        centre.setflags(write=False)
        object.__setattr__(self, "centre", centre)
        object.__setattr__(self, "radius", float(self.radius))

    def describe(self) -> str:
        return f"the ball of radius {self.radius:.6g} around a centre of norm {np.linalg.norm(self.centre):.6g}"


@dataclass(frozen=True, eq=False)
class Points:
    """A finite set of points, shape (m, d) (for example every iterate a run visited)."""

    points: np.ndarray

    def __post_init__(self) -> None:
        points = np.array(self.points, dtype=np.float64)
        if points.ndim != 2 or points.shape[0] == 0 or not np.all(np.isfinite(points)):
            raise ValueError(f"points: expected a non-empty finite (m, d) array, got shape {points.shape}")
        points.setflags(write=False)
        object.__setattr__(self, "points", points)

    def describe(self) -> str:
        return f"the {self.points.shape[0]} given points (exact on that set only)"


@dataclass(frozen=True)
class Everywhere:
    """All of R^d."""

    def describe(self) -> str:
        return "all of R^d"


EVERYWHERE = Everywhere()
Region = Ball | Points | Everywhere


# ----------------------------------------------------------------------------------- results
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


@dataclass(frozen=True)
class BGDPair:
    """The (G, B)-BGD pair for one B^2: ``G_sq`` the smallest G^2 >= 0 (exact) or a certified upper
    bound of it (inf when none exists), ``attained`` the largest excess found at a point."""

    B_sq: float
    G_sq: float
    exact: bool
    method: str
    attained: float


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


# ------------------------------------------------------------------- quantities at points
def _residuals(problem: FederatedProblem, X: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """r_i at every point: the per-sample data gradient is x_i (x) r_i; W (m, d) -> (m, n, C)."""
    m, f, C = W.shape[0], problem.n_features, problem.n_classes
    Z = np.einsum("nf,mfc->mnc", X, W.reshape(m, f, C))
    if problem.loss is LossKind.LEAST_SQUARES:
        return Z - y[None, :, None]
    if problem.loss is LossKind.LOGISTIC:
        return expit(Z) - y[None, :, None]
    P = softmax(Z, axis=2)
    P[:, np.arange(y.size), y.astype(np.int64)] -= 1.0
    return P


def _client_terms(problem: FederatedProblem, k: int, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(grad F_k at the points (m, d), population variance (1/n_k) sum_i ||g_i - gbar_k||^2 (m,))."""
    X, y = problem.client_data(k)
    sq_norms = np.sum(X**2, axis=1)
    grads, variances = np.empty_like(W), np.empty(W.shape[0])
    chunk = max(1, _BLOCK // (X.shape[0] * problem.n_classes))
    for lo in range(0, W.shape[0], chunk):
        R = _residuals(problem, X, y, W[lo : lo + chunk])
        mean_grad = np.einsum("nf,mnc->mfc", X, R).reshape(R.shape[0], -1) / X.shape[0]
        second = np.einsum("n,mnc->m", sq_norms, R**2) / X.shape[0]
        variances[lo : lo + chunk] = np.maximum(second - np.sum(mean_grad**2, axis=1), 0.0)
        grads[lo : lo + chunk] = mean_grad + problem.mu * W[lo : lo + chunk]
    return grads, variances


def _all_terms(problem: FederatedProblem, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """grad F_k (N, m, d) and population variances (N, m) at every point of W (m, d)."""
    terms = [_client_terms(problem, k, W) for k in range(problem.n_clients)]
    return np.stack([g for g, _ in terms]), np.stack([v for _, v in terms])


def gradient_variance(problem: FederatedProblem, w: np.ndarray, batch_size: int) -> np.ndarray:
    """sigma_k^2(w, b) for every client, exactly: (1/b)(1/n_k) sum_i ||g_i(w) - gbar_k(w)||^2.

    ``w`` is one point (d,) used by every client (result (N,)), or client points of shape
    (..., N, d) where [..., k, :] is client k's own iterate w_t^k (result (..., N)); batch_size = 0
    (exact gradients) gives zeros.
    """
    b = _batch(batch_size)
    W = np.asarray(w, dtype=np.float64)
    N, d = problem.n_clients, problem.dim
    if W.ndim == 1:
        W = np.broadcast_to(W, (N, W.size))
    if W.ndim < 2 or W.shape[-2:] != (N, d):
        raise ValueError(f"w: expected shape ({d},) or (..., {N}, {d}), got {np.shape(w)}")
    if b == 0:
        return np.zeros(W.shape[:-1])
    flat = W.reshape(-1, N, d)
    values = np.stack([_client_terms(problem, k, flat[:, k])[1] for k in range(N)], axis=1) / b
    return values.reshape(W.shape[:-1])


def _batch(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 0:
        raise ValueError(f"batch_size: must be an integer >= 0 (0 = exact gradients), got {batch_size!r}")
    return int(batch_size)


# ------------------------------------------------------- Li's Assumptions 3-4 along a run
@dataclass(frozen=True, eq=False)
class IterateMoments:
    """Li et al. (ICLR 2020) Assumptions 3-4 along a run: the one definition of sigma_k^2 and G^2.

    ``grad_sq`` and ``variance`` have shape (S, T, N): for each of S realisations of the run (seeds),
    each local step t = 0..T-1 and each client k, ||grad F_k(w_t^k)||^2 and var_k(w_t^k, b) at client
    k's own iterate (the step's minibatch integrated exactly). The expectation over the run is the
    mean over the S realisations: exact when ``exact`` (a deterministic run, or moments propagated
    in closed form and passed as S = 1), else an estimate whose sampling error is not part of any
    interval that uses it. Then (module docstring, Li's Assumptions 3-4, l.137-143)

        sigma_k^2 = max_t E var_k(w_t^k, b)                           (N,)
        G^2       = max_{t,k} E[||grad F_k(w_t^k)||^2 + var_k(w_t^k, b)].
    """

    grad_sq: np.ndarray
    variance: np.ndarray
    exact: bool
    method: str

    def __post_init__(self) -> None:
        arrays = []
        for name in ("grad_sq", "variance"):
            array = np.array(getattr(self, name), dtype=np.float64)
            if array.ndim != 3 or 0 in array.shape or not np.all(np.isfinite(array)):
                raise ValueError(f"{name}: expected a non-empty finite (S, T, N) array (moments, >= 0 up to "
                                 f"rounding), got shape {array.shape}")
            array.setflags(write=False)
            object.__setattr__(self, name, array)
            arrays.append(array)
        if arrays[0].shape != arrays[1].shape:
            raise ValueError(f"variance: shape {arrays[1].shape} differs from grad_sq's {arrays[0].shape}")

    @property
    def expected_variance(self) -> np.ndarray:
        """E var_k(w_t^k, b), shape (T, N)."""
        return self.variance.mean(axis=0)

    @property
    def second_moment(self) -> np.ndarray:
        """E||g_k(w_t^k, xi)||^2 = E||grad F_k(w_t^k)||^2 + E var_k(w_t^k, b), shape (T, N)."""
        return self.grad_sq.mean(axis=0) + self.expected_variance

    @property
    def sigma_sq(self) -> np.ndarray:
        """sigma_k^2 = max_t E var_k(w_t^k, b), shape (N,)."""
        return self.expected_variance.max(axis=0)

    @property
    def G_sq(self) -> float:
        """G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2."""
        return float(self.second_moment.max())

    def describe(self) -> str:
        """Where G^2 and max_k sigma_k^2 are attained, with the method."""
        second = self.second_moment
        t, k = np.unravel_index(int(np.argmax(second)), second.shape)
        return (f"G^2 = {self.G_sq:.6g} (attained at step t = {t}, client {k}), max_k sigma_k^2 = {self.sigma_sq.max():.6g}; "
                f"{self.method}")


def iterate_moments(
    problem: FederatedProblem,
    local_models: np.ndarray,
    batch_size: int,
    *,
    full_gradients: np.ndarray | None = None,
    exact: bool = False,
) -> IterateMoments:
    """``IterateMoments`` of S realisations of a run: ``local_models`` (S, T, N, d) holds w_t^k, client
    k's own iterate before local step t; ``full_gradients`` (S, T, N, d), grad F_k(w_t^k), when the
    run recorded them (else computed). ``exact`` says the realisations are the expectation itself
    (a deterministic run: exact gradients and every client in every round)."""
    b = _batch(batch_size)
    W = np.asarray(local_models, dtype=np.float64)
    N, d = problem.n_clients, problem.dim
    if W.ndim != 4 or W.shape[2:] != (N, d) or W.shape[0] == 0 or W.shape[1] == 0:
        raise ValueError(f"local_models: expected shape (S, T, {N}, {d}) with S, T >= 1, got {W.shape}")
    if full_gradients is None:
        flat = W.reshape(-1, N, d)
        grads = np.stack([_client_terms(problem, k, flat[:, k])[0] for k in range(N)], axis=1).reshape(W.shape)
    else:
        grads = np.asarray(full_gradients, dtype=np.float64)
        if grads.shape != W.shape:
            raise ValueError(f"full_gradients: expected shape {W.shape} matching local_models, got {grads.shape}")
    S = W.shape[0]
    how = ("exact (deterministic run)" if exact else
           f"mean over {S} seed(s) of the exact moments given each seed's iterates (an estimate of E over the run)")
    method = (f"Li et al. Assumptions 3-4 at client k's own iterates w_t^k, batch {b or 'exact'}: "
              f"sigma_k^2 = max_t E var_k(w_t^k), G^2 = max_(t,k) E||g_k(w_t^k)||^2, E {how}")
    return IterateMoments(np.sum(grads**2, axis=3), gradient_variance(problem, W, b), bool(exact), method)


# ------------------------------------------------------------------- quadratics on a ball
@dataclass(frozen=True)
class _Quadratic:
    """q(w) = w'Aw - 2a'w + s with A symmetric (d, d), a (d,)."""

    A: np.ndarray
    a: np.ndarray
    s: float

    def at(self, W: np.ndarray) -> np.ndarray:
        """q at the rows of W (m, d)."""
        return np.einsum("md,de,me->m", W, self.A, W) - 2.0 * W @ self.a + self.s

    def max_on_ball(self, ball: Ball) -> tuple[float, float]:
        """(dual upper bound, attained primal value) of max q over the ball (module docstring)."""
        c, R = ball.centre, ball.radius
        q0 = float(self.at(c[None, :])[0])
        if R == 0.0:
            return q0, q0
        lam, Q = eigh(0.5 * (self.A + self.A.T))
        h = Q.T @ (self.A @ c - self.a)
        norm_h = float(np.linalg.norm(h))
        scale = max(float(np.abs(lam).max()), norm_h / R, np.finfo(float).tiny)

        def step_norm(nu: float) -> float:
            return float(np.linalg.norm(h / (nu - lam)))

        hard = False
        if lam[-1] < 0 and step_norm(0.0) <= R:
            nu = 0.0  # interior maximiser of a concave quadratic
        else:
            low = max(float(lam[-1]), 0.0) + 1e-13 * scale
            hard = step_norm(low) <= R  # g has (almost) no component along the top eigenvector
            if hard:
                nu = low
            else:
                high = max(float(lam[-1]), 0.0) + norm_h / R + 1e-13 * scale
                nu = brentq(lambda v: step_norm(v) - R, low, high, xtol=1e-15 * scale, rtol=4 * np.finfo(float).eps)
        u = Q @ (h / (nu - lam))
        if hard:  # move along the top eigenvector onto the sphere: ||u + tau q|| = R, the better root
            top = Q[:, -1]
            along = float(u @ top)
            reach = math.sqrt(max(along**2 + R**2 - float(u @ u), 0.0))
            u = max((u + (-along + reach) * top, u + (-along - reach) * top),
                    key=lambda v: float(self.at((c + v)[None, :])[0]))
        norm_u = float(np.linalg.norm(u))
        if norm_u > R:
            u *= R / norm_u
        upper = float(nu * R**2 + np.sum(h**2 / (nu - lam)) + q0)
        attained = float(self.at((c + u)[None, :])[0])
        return max(upper, attained), attained


@dataclass(frozen=True)
class _LeastSquaresMoments:
    """Per-client moments of least-squares data (N clients, d = f):
    S_k = X_k'X_k/n_k, c_k = X_k'y_k/n_k, W4_k = (1/n_k) sum_i ||x_i||^2 x_i x_i',
    w3_k = (1/n_k) sum_i ||x_i||^2 y_i x_i, w2_k = (1/n_k) sum_i ||x_i||^2 y_i^2, and H_k = S_k + mu I."""

    S: np.ndarray
    c: np.ndarray
    W4: np.ndarray
    w3: np.ndarray
    w2: np.ndarray
    H: np.ndarray

    @classmethod
    def of(cls, problem: FederatedProblem) -> _LeastSquaresMoments:
        N, d = problem.n_clients, problem.dim
        S, W4, c, w3, w2 = np.empty((N, d, d)), np.empty((N, d, d)), np.empty((N, d)), np.empty((N, d)), np.empty(N)
        for k in range(N):
            X, y = problem.client_data(k)
            n, sq = X.shape[0], np.sum(X**2, axis=1)
            S[k], c[k] = X.T @ X / n, X.T @ y / n
            W4[k], w3[k], w2[k] = (X.T * sq) @ X / n, X.T @ (sq * y) / n, float(sq @ y**2) / n
        return cls(S, c, W4, w3, w2, S + problem.mu * np.eye(d)[None])

    def variance(self, k: int, b: int) -> _Quadratic:
        """var_k(w) = (1/b) [mean_i ||x_i||^2 (x_i'w - y_i)^2 - ||S_k w - c_k||^2]."""
        S, c = self.S[k], self.c[k]
        return _Quadratic((self.W4[k] - S @ S) / b, (self.w3[k] - S @ c) / b, float(self.w2[k] - c @ c) / b)

    def grad_sq(self, k: int) -> _Quadratic:
        """||grad F_k(w)||^2 = ||H_k w - c_k||^2."""
        H, c = self.H[k], self.c[k]
        return _Quadratic(H @ H, H @ c, float(c @ c))

    def weighted_grad_sq(self, q: np.ndarray, B_sq: float, p: np.ndarray) -> _Quadratic:
        """sum_k q_k ||H_k w - c_k||^2 - B^2 ||H w - c||^2 with H = sum p_k H_k, c = sum p_k c_k."""
        H, c = np.einsum("k,kij->ij", p, self.H), p @ self.c
        A = np.einsum("k,kij,kjl->il", q, self.H, self.H) - B_sq * H @ H
        a = np.einsum("k,kij,kj->i", q, self.H, self.c) - B_sq * H @ c
        return _Quadratic(A, a, float(q @ np.sum(self.c**2, axis=1) - B_sq * c @ c))

    def dissimilarity(self, q: np.ndarray, p: np.ndarray) -> _Quadratic:
        """sum_k q_k ||(S_k - S)w - (c_k - c)||^2 with S = sum p_k S_k, c = sum p_k c_k."""
        D = self.S - np.einsum("k,kij->ij", p, self.S)[None]
        e = self.c - (p @ self.c)[None]
        A = np.einsum("k,kij,kjl->il", q, D, D)
        return _Quadratic(A, np.einsum("k,kij,kj->i", q, D, e), float(q @ np.sum(e**2, axis=1)))


def _exact_gap(upper: float, attained: float) -> bool:
    return upper - attained <= _EXACT_RTOL * max(1.0, abs(upper))


# -------------------------------------------------------------- certified bounds (non-LS)
@dataclass(frozen=True)
class _CentreTerms:
    """What the certified bounds over a ball need, evaluated at its centre c0."""

    grad_norm: np.ndarray  # ||grad F_k(c0)|| (N,)
    grad_norm_F: float  # ||grad F(c0)||
    dissimilarity: np.ndarray  # ||grad F_k(c0) - grad F(c0)|| (N,)
    variance_lipschitz: np.ndarray  # mean_i (||g_i(c0) - gbar_k(c0)|| + (l_i + L_k - mu) R)^2 (N,), b = 1
    mean_row_norm: np.ndarray  # mean_i ||x_i|| over client k (N,)
    mean_row_sq: np.ndarray  # mean_i ||x_i||^2 over client k (N,)
    L_k: np.ndarray
    L_F: float


def _centre_terms(problem: FederatedProblem, ball: Ball) -> _CentreTerms:
    """The centre's values; the Lipschitz variance bound is ``gradient_bounds.stochastic_gradient_bounds``
    at batch 1 (it scales as 1/b)."""
    consts = problem_constants(problem)
    grads = problem.local_gradients(ball.centre)
    grad_F = problem.weights @ grads
    sq = np.sum(problem.X**2, axis=1)
    starts = problem.offsets[:-1]
    return _CentreTerms(
        np.linalg.norm(grads, axis=1), float(np.linalg.norm(grad_F)), np.linalg.norm(grads - grad_F, axis=1),
        stochastic_gradient_bounds(problem, ball.centre, ball.radius, 1).sigma_sq,
        np.add.reduceat(np.sqrt(sq), starts) / problem.client_sizes, np.add.reduceat(sq, starts) / problem.client_sizes,
        consts.L_k, consts.L_global,
    )


def _grad_norm_bounds(problem: FederatedProblem, ball: Ball, t: _CentreTerms) -> tuple[np.ndarray, float]:
    """Certified sup over the ball of ||grad F_k|| (N,) and of ||grad F||: the smaller of
    ||grad(c0)|| + L R and sqrt(beta) mean_i ||x_i|| + mu (||c0|| + R)."""
    beta = math.sqrt(_GRADIENT_BOUND[problem.loss])
    far = problem.mu * (float(np.linalg.norm(ball.centre)) + ball.radius)
    clients = np.minimum(t.grad_norm + t.L_k * ball.radius, beta * t.mean_row_norm + far)
    F = min(t.grad_norm_F + t.L_F * ball.radius, beta * float(problem.weights @ t.mean_row_norm) + far)
    return clients, F


def _variance_bounds(problem: FederatedProblem, b: int, t: _CentreTerms) -> np.ndarray:
    """Certified sup over the ball of var_k (N,): (1/b) min(Lipschitz bound, beta mean_i ||x_i||^2)."""
    return np.minimum(t.variance_lipschitz, _GRADIENT_BOUND[problem.loss] * t.mean_row_sq) / b


def _dissimilarity_bounds(problem: FederatedProblem, ball: Ball, t: _CentreTerms) -> np.ndarray:
    """Certified sup over the ball of ||grad F_k - grad F|| (N,): the difference has Lipschitz constant
    max(L_k, L_F) - mu (difference of two PSD Hessians), and norm <= sqrt(beta)(m_k + sum_j p_j m_j)."""
    beta = math.sqrt(_GRADIENT_BOUND[problem.loss])
    lipschitz = t.dissimilarity + (np.maximum(t.L_k, t.L_F) - problem.mu) * ball.radius
    return np.minimum(lipschitz, beta * (t.mean_row_norm + problem.weights @ t.mean_row_norm))


def _ball_samples(ball: Ball) -> np.ndarray:
    """The centre, 32 points on the sphere and 31 inside the ball, shape (64, d), seeded."""
    rng = np.random.default_rng(_SAMPLE_SEED)
    d = ball.centre.size
    directions = rng.standard_normal((_N_SAMPLES - 1, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    half = _N_SAMPLES // 2
    radii = np.concatenate([np.ones(half), rng.random(_N_SAMPLES - 1 - half) ** (1.0 / d)]) * ball.radius
    return np.vstack([ball.centre, ball.centre + radii[:, None] * directions])


# ---------------------------------------------------------------------- public estimators
def _check_region(problem: FederatedProblem, region: Region, allow_everywhere: bool = False) -> None:
    if isinstance(region, Ball):
        size = region.centre.size
    elif isinstance(region, Points):
        size = region.points.shape[1]
    elif isinstance(region, Everywhere):
        if not allow_everywhere:
            raise ValueError("region: this constant is infinite on all of R^d; give a Ball or Points")
        return
    else:
        raise ValueError(f"region: expected Ball, Points or EVERYWHERE, got {type(region).__name__}")
    if size != problem.dim:
        raise ValueError(f"region: points have dimension {size}, the problem has d = {problem.dim}")


def _weights(problem: FederatedProblem, weighting: Weighting) -> np.ndarray:
    if weighting == "uniform":
        return np.full(problem.n_clients, 1.0 / problem.n_clients)
    if weighting == "p":
        return problem.weights
    raise ValueError(f"weighting: expected 'uniform' (1/N) or 'p' (p_k), got {weighting!r}")


def variance_bound(problem: FederatedProblem, region: Region, batch_size: int) -> ClientEstimate:
    """sigma_k^2 = sup over the region of the minibatch-gradient variance of client k, shape (N,)."""
    b = _batch(batch_size)
    _check_region(problem, region)
    N = problem.n_clients
    name = f"sigma_k^2 (batch {b})"
    if b == 0:
        return ClientEstimate(name, np.zeros(N), True, "exact gradients: no variance", np.zeros(N))
    if isinstance(region, Points):
        _, variances = _all_terms(problem, region.points)
        values = variances.max(axis=1) / b
        return ClientEstimate(name, values, True, f"exact maximum over {region.describe()}", values)
    if problem.loss is LossKind.LEAST_SQUARES:
        moments = _LeastSquaresMoments.of(problem)
        pairs = np.array([moments.variance(k, b).max_on_ball(region) for k in range(N)])
        exact = all(_exact_gap(u, a) for u, a in pairs)
        method = f"least squares: variance is a quadratic in w, maximised exactly over {region.describe()}"
        return ClientEstimate(name, pairs[:, 0], exact, method, pairs[:, 1])
    bounds = _variance_bounds(problem, b, _centre_terms(problem, region))
    _, variances = _all_terms(problem, _ball_samples(region))
    method = (f"certified bound over {region.describe()}: (1/b) min(mean_i (||g_i(c0) - gbar_k(c0)|| + "
              "(l_i + L_k - mu) R)^2, beta mean_i ||x_i||^2); attained: max over 64 sampled points")
    return ClientEstimate(name, bounds, False, method, variances.max(axis=1) / b)


def second_moment_bound(problem: FederatedProblem, region: Region, batch_size: int) -> Estimate:
    """G^2 = sup over the region and the clients of E||g_k(w)||^2 = ||grad F_k(w)||^2 + var_k(w)."""
    b = _batch(batch_size)
    _check_region(problem, region)
    name = f"G^2 (batch {b})"
    if isinstance(region, Points):
        grads, variances = _all_terms(problem, region.points)
        value = float(np.max(np.sum(grads**2, axis=2) + (variances / b if b else 0.0)))
        return Estimate(name, value, True, f"exact maximum over the clients and {region.describe()}", value)
    if problem.loss is LossKind.LEAST_SQUARES:
        moments = _LeastSquaresMoments.of(problem)
        pairs = []
        for k in range(problem.n_clients):
            quad = moments.grad_sq(k)
            if b:
                var = moments.variance(k, b)
                quad = _Quadratic(quad.A + var.A, quad.a + var.a, quad.s + var.s)
            pairs.append(quad.max_on_ball(region))
        upper, attained = max(u for u, _ in pairs), max(a for _, a in pairs)
        method = f"least squares: ||grad F_k||^2 + var_k is a quadratic in w, maximised exactly over {region.describe()}"
        return Estimate(name, upper, all(_exact_gap(u, a) for u, a in pairs), method, attained)
    terms = _centre_terms(problem, region)
    grad_bounds, _ = _grad_norm_bounds(problem, region, terms)
    variance = _variance_bounds(problem, b, terms) if b else np.zeros(problem.n_clients)
    grads, variances = _all_terms(problem, _ball_samples(region))
    sampled = float(np.max(np.sum(grads**2, axis=2) + (variances / b if b else 0.0)))
    method = (f"certified bound over {region.describe()}: max_k (sup ||grad F_k||)^2 + sup var_k, "
              "each from the centre's values and Lipschitz / bounded-gradient constants; attained: 64 sampled points")
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
    _check_region(problem, region)
    q = _weights(problem, weighting)
    name = f"sigma_G^2 ({weighting})"
    if isinstance(region, Points):
        value = float(np.max(_dissimilarity_at(problem, region.points, q)))
        return Estimate(name, value, True, f"exact maximum over {region.describe()}", value)
    if problem.loss is LossKind.LEAST_SQUARES:
        upper, attained = _LeastSquaresMoments.of(problem).dissimilarity(q, problem.weights).max_on_ball(region)
        method = f"least squares: the dissimilarity is a quadratic in w, maximised exactly over {region.describe()}"
        return Estimate(name, upper, _exact_gap(upper, attained), method, attained)
    bounds = _dissimilarity_bounds(problem, region, _centre_terms(problem, region))
    sampled = float(np.max(_dissimilarity_at(problem, _ball_samples(region), q)))
    method = (f"certified bound over {region.describe()}: sum_k q_k (||D_k(c0)|| + (max(L_k, L_F) - mu) R)^2, "
              "each term capped by the bounded-gradient bound; attained: 64 sampled points")
    return Estimate(name, float(q @ bounds**2), False, method, sampled)


def _dissimilarity_at(problem: FederatedProblem, W: np.ndarray, q: np.ndarray) -> np.ndarray:
    grads, _ = _all_terms(problem, W)
    global_grad = np.einsum("k,kmd->md", problem.weights, grads)
    return np.einsum("k,km->m", q, np.sum((grads - global_grad[None]) ** 2, axis=2))


def _bgd_excess_at(problem: FederatedProblem, W: np.ndarray, q: np.ndarray, B_sq: float) -> np.ndarray:
    grads, _ = _all_terms(problem, W)
    global_grad = np.einsum("k,kmd->md", problem.weights, grads)
    return np.einsum("k,km->m", q, np.sum(grads**2, axis=2)) - B_sq * np.sum(global_grad**2, axis=1)


def bgd_pair(problem: FederatedProblem, region: Region, B_sq: float, weighting: Weighting = "p") -> BGDPair:
    """The smallest G^2 >= 0 with sum_k q_k ||grad F_k||^2 <= G^2 + B^2 ||grad F||^2 on the region."""
    return bgd_curve(problem, region, [B_sq], weighting)[0]


def bgd_curve(
    problem: FederatedProblem, region: Region, B_sq_grid: list[float] | np.ndarray, weighting: Weighting = "p"
) -> tuple[BGDPair, ...]:
    """``bgd_pair`` for every B^2 of the grid: the Pareto curve G^2(B^2), non-increasing and convex."""
    _check_region(problem, region, allow_everywhere=True)
    grid = [float(B) for B in np.atleast_1d(np.asarray(B_sq_grid, dtype=np.float64))]
    if not grid or any(not (math.isfinite(B) and B >= 0) for B in grid):
        raise ValueError("B_sq_grid: need at least one finite B^2 >= 0")
    q = _weights(problem, weighting)
    if isinstance(region, Everywhere):
        return _bgd_everywhere(problem, q, grid)
    if isinstance(region, Points):
        method = f"exact maximum over {region.describe()}"
        values = [max(0.0, float(np.max(_bgd_excess_at(problem, region.points, q, B)))) for B in grid]
        return tuple(BGDPair(B, v, True, method, v) for B, v in zip(grid, values))
    if problem.loss is LossKind.LEAST_SQUARES:
        moments = _LeastSquaresMoments.of(problem)
        method = f"least squares: the excess is a quadratic in w, maximised exactly over {region.describe()}"
        pairs = []
        for B in grid:
            upper, attained = moments.weighted_grad_sq(q, B, problem.weights).max_on_ball(region)
            pairs.append(BGDPair(B, max(0.0, upper), _exact_gap(upper, attained), method, max(0.0, attained)))
        return tuple(pairs)
    return _bgd_certified(problem, region, q, weighting, grid)


def _bgd_certified(
    problem: FederatedProblem, ball: Ball, q: np.ndarray, weighting: Weighting, grid: list[float]
) -> tuple[BGDPair, ...]:
    """Certified upper bounds for logistic / softmax: sum_k q_k (sup ||grad F_k||)^2 for any B^2, and
    for q = p, since sum_k p_k ||grad F_k||^2 = ||grad F||^2 + sum_k p_k ||grad F_k - grad F||^2,
    also max(0, 1 - B^2) (sup ||grad F||)^2 + (sigma_G^2 bound with weights p)."""
    terms = _centre_terms(problem, ball)
    grad_bounds, grad_F_bound = _grad_norm_bounds(problem, ball, terms)
    generic = float(q @ grad_bounds**2)
    dissimilarity = float(problem.weights @ _dissimilarity_bounds(problem, ball, terms) ** 2)
    samples = _ball_samples(ball)
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


def _generalised_eigen(problem: FederatedProblem, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, _LeastSquaresMoments]:
    """Eigenvalues lam and vectors V of M V = H^2 V diag(lam), V'H^2 V = I (least squares)."""
    if problem.loss is not LossKind.LEAST_SQUARES:
        raise ValueError("region: the BGD pair on all of R^d is available for least-squares problems only")
    moments = _LeastSquaresMoments.of(problem)
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
    lam, _, _ = _generalised_eigen(problem, _weights(problem, weighting))
    return Estimate(
        f"B^2 threshold ({weighting})", float(lam[-1]), True,
        "largest generalised eigenvalue of (sum_k q_k H_k^2, H^2), H_k = X_k'X_k/n_k + mu I (scipy.linalg.eigh)",
    )


def _bgd_everywhere(problem: FederatedProblem, q: np.ndarray, grid: list[float]) -> tuple[BGDPair, ...]:
    """G^2(B^2) on R^d: with w = V z the excess is z'(diag(lam) - B^2 I)z - 2 (V'a)'z + s, bounded iff
    B^2 >= lam_j wherever (V'a)_j != 0; then its maximum is s + sum_j (V'a)_j^2 / (B^2 - lam_j)."""
    lam, V, moments = _generalised_eigen(problem, q)
    method = "least squares on all of R^d: generalised eigen-decomposition of (sum_k q_k H_k^2, H^2)"
    tol = _EXACT_RTOL * max(1.0, float(np.abs(lam).max()))
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
