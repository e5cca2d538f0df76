"""Moments of a run at each client's own iterates: the one definition of Li's sigma_k^2 and G^2.

Li et al. (ICLR 2020), Assumptions 3-4 (``papers/li2020_fedavg_noniid.txt`` l.137-143): client k's
minibatch gradient g_k(w_t^k, xi) at client k's own iterate w_t^k has
E||g_k(w_t^k) - grad F_k(w_t^k)||^2 <= sigma_k^2 and E||g_k(w_t^k)||^2 <= G^2 for all k and t. The
one definition fedbound uses (``IterateMoments``):

    sigma_k^2 = max_t E var_k(w_t^k, b),        G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2
                                                    = max_{t,k} E[||grad F_k(w_t^k)||^2 + var_k(w_t^k, b)],

var_k(w, b) the exact minibatch variance at w (``minibatch_moments``), E the expectation over the
run. These are the smallest constants for which the assumptions, as the paper states them, hold
along the run; Lemmas 2-3 and Theorem 1 use them so (Li's proof of Lemma 3 bounds
sum_k p_k E||g_k(w_t^k)||^2 by G^2). Two ways to obtain E:

* ``iterate_moments``: the mean over seeds of the moments given each seed's stored iterates (the
  step's minibatch integrated exactly; an estimate of E, exact for a deterministic run): the lemma
  checks of ``proofs_check.lemmas.fedavg``.
* ``exact_expectations``: exact expectations along a least-squares FedAvg run (below): the falsifier's
  built-in claims (``proofs_check.falsifier.claims``).

Where the iterates are not stored (long theorem runs), a supremum over a region that contains
every client's iterates (``assumption_constants.variance_bound``, ``second_moment_bound`` on a
``Ball``) is an upper estimate of these constants: valid in an upper bound, never in a check that
needs the constant itself.

Exact expectations (``exact_expectations``). On least squares a local step is affine in the model,
w <- (I - eta (A_b + mu I)) w + eta c_b, with A_b, c_b the minibatch moments, and the clients draw
independent minibatches. So the first and second moments of the stacked local models
z = (w^1, ..., w^N, 1) evolve exactly: Y <- P Y P' + corrections, P = E[step map] (block
diagonal), and for client k the correction (eta^2 / b) [(1/n_k) sum_i (x~_i' Y_k x~_i) x_i x_i'
- S~_k Y_k S~_k'] of its own block (the covariance of a b-row minibatch drawn with replacement;
x~_i = (x_i, -y_i), S~_k = X_k'X~_k / n_k, Y_k client k's augmented block); averaging maps Y to
R Y R'. Every side of Li's Lemmas 1-3, Yu's drift and E F(w_T) - F* = (1/2) E (w_T - w*)'H(w_T - w*)
is a linear function of Y, hence exact up to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence import FedAvgConfig
from problems import FederatedProblem

from .minibatch_moments import as_batch_size, client_terms, gradient_variance

__all__ = ["IterateMoments", "iterate_moments", "ExactExpectations", "exact_expectations"]


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
    full_gradient_sq: np.ndarray | None = None,
    exact: bool = False,
) -> IterateMoments:
    """``IterateMoments`` of S realisations of a run: ``local_models`` (S, T, N, d) holds w_t^k, client
    k's own iterate before local step t; ``full_gradient_sq`` (S, T, N), ||grad F_k(w_t^k)||^2, when
    the run recorded it (``FedAvgTrace.full_gradient_sq``; else computed). ``exact`` says the realisations are the expectation itself
    (a deterministic run: exact gradients and every client in every round)."""
    b = as_batch_size(batch_size)
    W = np.asarray(local_models, dtype=np.float64)
    N, d = problem.n_clients, problem.dim
    if W.ndim != 4 or W.shape[2:] != (N, d) or W.shape[0] == 0 or W.shape[1] == 0:
        raise ValueError(f"local_models: expected shape (S, T, {N}, {d}) with S, T >= 1, got {W.shape}")
    if full_gradient_sq is None:
        flat = W.reshape(-1, N, d)
        grads = np.stack([client_terms(problem, k, flat[:, k])[0] for k in range(N)], axis=1).reshape(W.shape)
        grad_sq = np.sum(grads**2, axis=3)
    else:
        grad_sq = np.asarray(full_gradient_sq, dtype=np.float64)
        if grad_sq.shape != W.shape[:3]:
            raise ValueError(f"full_gradient_sq: expected shape {W.shape[:3]} matching local_models, got {grad_sq.shape}")
    S = W.shape[0]
    how = ("exact (deterministic run)" if exact else
           f"mean over {S} seed(s) of the exact moments given each seed's iterates (an estimate of E over the run)")
    method = (f"Li et al. Assumptions 3-4 at client k's own iterates w_t^k, batch {b or 'exact'}: "
              f"sigma_k^2 = max_t E var_k(w_t^k), G^2 = max_(t,k) E||g_k(w_t^k)||^2, E {how}")
    return IterateMoments(grad_sq, gradient_variance(problem, W, b), bool(exact), method)



@dataclass(frozen=True, eq=False)
class ExactExpectations:
    """Exact expectations along a least-squares FedAvg run, steps t = 0..T-1 (module docstring).

    moments: E var_k(w_t^k, b) and E||grad F_k(w_t^k)||^2 as ``IterateMoments`` (one exact
    realisation, shapes (1, T, N)), hence sigma_k^2 and G^2 of Li's Assumptions 3-4; spread (T,)
    E sum_k p_k ||wbar_t - w_t^k||^2; drift (T, N) E||xbar_t - w_t^i||^2 (xbar the plain mean);
    dist (T,) E||wbar_t - w*||^2; dist_next (T,) E||vbar_{t+1} - w*||^2; size (T,)
    E sum_k p_k ||w_t^k||^2 + ||w*||^2 (the scale of the squared distances, for rounding);
    gap (R,) and gap_size (R,): E F(w) - F* after rounds 1..R and (1/2)(E w'Hw + w*'Hw*); Gamma:
    Li's F* - sum_k p_k F_k* = sum_k p_k (1/2)(w* - w_k*)'H_k(w* - w_k*) (exact for quadratics, and
    free of the large constants ||y_k||^2 / (2 n_k) that F* and F_k* carry, which ill-conditioned
    data make dominate; problems.heterogeneity_gamma agrees where those constants are moderate).
    """

    eta: np.ndarray
    moments: IterateMoments
    spread: np.ndarray
    drift: np.ndarray
    dist: np.ndarray
    dist_next: np.ndarray
    size: np.ndarray
    gap: np.ndarray
    gap_size: np.ndarray
    Gamma: float

    @property
    def variance(self) -> np.ndarray:
        """E var_k(w_t^k, b), shape (T, N)."""
        return self.moments.expected_variance

    @property
    def grad_sq(self) -> np.ndarray:
        """E||grad F_k(w_t^k)||^2, shape (T, N)."""
        return self.moments.grad_sq[0]


def exact_expectations(problem: FederatedProblem, config: FedAvgConfig, w_star: np.ndarray) -> ExactExpectations:
    """Propagate the second moment Y of (w^1, ..., w^N, 1) through every step (module docstring).

    Client data are stacked and padded with zero rows (x = 0, y = 0 adds nothing to the sums, which
    are divided by the true n_k): rows (N, n_max, d), lifted rows x~ = (x, -y) (N, n_max, d+1).
    """
    if not problem.model.quadratic or config.server_lr != 1.0:
        raise ValueError("instance: exact expectations need a quadratic model (least squares) and server_lr = 1")
    N, d, b, E, T = problem.n_clients, problem.dim, config.batch_size, config.local_steps, config.total_steps
    p, D, sizes = problem.weights, problem.n_clients * problem.dim + 1, problem.client_sizes
    eta = config.step_size.at(np.arange(T), E)
    lifted = np.zeros((N, int(sizes.max()), d + 1))
    for k in range(N):
        X, y = problem.model.least_squares_form(*problem.client_data(k))  # rows and targets (U, v)
        lifted[k, : sizes[k]] = np.column_stack([X, -y])
    rows = lifted[:, :, :d]
    gram = np.einsum("kni,knj->kij", rows, lifted) / sizes[:, None, None]  # S~_k = [S_k, -c_k]
    hess = gram + problem.mu * np.eye(d, d + 1)[None]  # [S_k + mu I, -c_k]: grad F_k(w) = H~_k (w, 1)
    Q = np.zeros((D, D))
    for k in range(N):
        Q[k * d : (k + 1) * d, k * d : (k + 1) * d] = hess[k, :, :d]
        Q[k * d : (k + 1) * d, -1] = hess[k, :, d]
    H = np.einsum("k,kij->ij", p, hess[:, :, :d])
    average = np.eye(D)
    average[: N * d, : N * d] = np.kron(np.ones((N, 1)), np.kron(p[None, :], np.eye(d)))
    index = np.array([np.r_[k * d : (k + 1) * d, D - 1] for k in range(N)])  # client k's augmented block
    diagonal = (index[:, :d, None], index[:, None, :d])
    Y = np.zeros((D, D))
    Y[-1, -1] = 1.0  # w_0 = 0
    spread, dist, dist_next, size = np.empty(T), np.empty(T), np.empty(T), np.empty(T)
    variance, grad_sq, drift = np.zeros((T, N)), np.empty((T, N)), np.empty((T, N))
    gap, gap_size = np.empty(config.rounds), np.empty(config.rounds)
    star, star_H = float(w_star @ w_star), float(w_star @ H @ w_star)
    local_star = np.linalg.solve(hess[:, :, :d], -hess[:, :, d:])[:, :, 0]  # H_k w_k* = c_k
    offset = w_star[None] - local_star
    Gamma = 0.5 * float(p @ np.einsum("ki,kij,kj->k", offset, hess[:, :, :d], offset))

    def distance(traces: np.ndarray, means: np.ndarray) -> float:
        return float(p @ traces @ p - 2 * w_star @ (p @ means) + star)

    def blocks(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.einsum("kili->kl", Y[: N * d, : N * d].reshape(N, d, N, d)), Y[: N * d, -1].reshape(N, d)

    for t in range(T):
        traces, means = blocks(Y)
        own = np.diag(traces)
        spread[t] = p @ own - p @ traces @ p
        drift[t] = own - 2 * traces.sum(axis=1) / N + traces.sum() / N**2
        dist[t] = distance(traces, means)
        size[t] = p @ own + star
        Yk = Y[index[:, :, None], index[:, None, :]]  # (N, d+1, d+1)
        grad_sq[t] = np.einsum("kij,kjl,kil->k", hess, Yk, hess)
        P = np.eye(D) - eta[t] * Q
        Y = P @ Y @ P.T
        if b:
            q = np.einsum("kni,kij,knj->kn", lifted, Yk, lifted)
            cov = (np.einsum("kni,kn,knj->kij", rows, q, rows) / sizes[:, None, None]
                   - np.einsum("kia,kab,kjb->kij", gram, Yk, gram))
            variance[t] = np.einsum("kii->k", cov) / b
            Y[diagonal] += eta[t] ** 2 / b * cov
        dist_next[t] = distance(*blocks(Y))
        if (t + 1) % E == 0:
            Y = average @ Y @ average.T
            r = (t + 1) // E - 1
            second = float(np.sum(H * Y[:d, :d]))
            gap[r] = 0.5 * (second - 2 * w_star @ H @ Y[:d, -1] + star_H)
            gap_size[r] = 0.5 * (second + star_H)
        Y = 0.5 * (Y + Y.T)
    moments = IterateMoments(grad_sq[None], variance[None], True,
                             "Li et al. Assumptions 3-4 at client k's own iterates, exact expectations "
                             "(second moments propagated through the least-squares run)")
    return ExactExpectations(eta, moments, spread, drift, dist, dist_next, size, gap, gap_size, Gamma)

