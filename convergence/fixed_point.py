"""The exact limit of FedAvg with exact local gradients and a constant step on least squares.

Client k of a least-squares problem (problems._base) has
F_k(w) = 1/2 w'Q_k w - c_k'w + const with

    Q_k = X_k'X_k / n_k + mu I   (d, d),        c_k = X_k'y_k / n_k   (d,),

so grad F_k(w) = Q_k w - c_k. One FedAvg round with a constant step eta (every client starts
from the global model w and takes E exact gradient steps w <- w - eta (Q_k w - c_k), then the
server sets w <- w + s (sum_k p_k w_k - w), s the server learning rate) is the affine map
w -> P w + q with M_k = I - eta Q_k and

    w_k = M_k^E w + eta sum_{l<E} M_k^l c_k,
    P   = (1 - s) I + s sum_k p_k M_k^E,                     (d, d)
    q   = s sum_k p_k eta sum_{l<E} M_k^l c_k.               (d,)

FedAvg converges from every start iff the spectral radius rho(P) < 1, and then to the unique
solution w~ of (I - P) w = q. This is Li et al. 2020 ("On the Convergence of FedAvg on Non-IID
Data"), Appendix C.4 eq. (32), for their problem (mu = 0, p_k = 1/N, s = 1, A_k and b_k in place
of Q_k and c_k). Since I - P = s (I - sum_k p_k M_k^E), w~ does not depend on s; rho(P) does.
With E = 1, I - P = s eta sum_k p_k Q_k and w~ is the minimiser w* of F; with E > 1 and
heterogeneous clients w~ differs from w* in general (client drift).

The offset w~ - r from a reference point r (the optimum w*, say) is small when eta is small, and
subtracting two nearly equal solutions loses its digits (relative error ~ machine epsilon / eta).
``fedavg_limit_offset`` computes it without that cancellation. With the sums of powers

    G_k = sum_{l<E} M_k^l,    H_k = sum_{l<E} sum_{j<l} M_k^j = sum_{j<E-1} (E-1-j) M_k^j,

I - M_k^E = eta Q_k G_k and G_k = E I - eta Q_k H_k (both from M_k^l = I - eta Q_k sum_{j<l} M_k^j),
so with g_k = Q_k r - c_k = grad F_k(r):

    I - P = s eta sum_k p_k Q_k G_k,
    q - (I - P) r = -s eta sum_k p_k G_k g_k = s eta [-E sum_k p_k g_k + eta sum_k p_k Q_k H_k g_k],
    w~ - r = (sum_k p_k Q_k G_k)^{-1} [-E grad F(r) + eta sum_k p_k Q_k H_k g_k].              (*)

At r = w* the first term vanishes (grad F(w*) = 0) and nothing of size O(1) is subtracted to leave
O(eta). As eta -> 0, G_k -> E I and H_k -> E(E-1)/2 I, so

    (w~ - w*) / ((E-1) eta) -> 1/2 (sum_k p_k Q_k)^{-1} sum_k p_k Q_k grad F_k(w*),            (**)

the first-order client-drift bias; Li et al.'s Appendix C.5 expansion of eq. (33) is (**) for
their problem (see proofs_check.claims.li2020.thm4).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from problems import FederatedProblem

from .argument_checks import is_real

__all__ = ["FixedPoint", "fedavg_fixed_point", "fedavg_limit_offset"]


@dataclass(frozen=True, eq=False)
class FixedPoint:
    """The affine round map w -> round_matrix @ w + round_offset of FedAvg and its fixed point.

    ``w`` (d,) solves (I - round_matrix) w = round_offset; ``spectral_radius`` is
    max |eigenvalue| of ``round_matrix`` (d, d); ``converges`` is spectral_radius < 1, i.e. the
    iterates reach ``w`` from every start (otherwise ``w`` is still the fixed point of the map,
    but FedAvg does not approach it). Arrays are read-only.
    """

    w: np.ndarray
    spectral_radius: float
    converges: bool
    round_matrix: np.ndarray
    round_offset: np.ndarray


def fedavg_fixed_point(
    problem: FederatedProblem, eta: float, local_steps: int, server_lr: float = 1.0
) -> FixedPoint:
    """Round map, fixed point and spectral radius of FedAvg with exact gradients (module docstring).

    Args:
        problem: a least-squares FederatedProblem.
        eta: the constant local step size, finite and > 0.
        local_steps: E, the number of local steps per round, an integer >= 1.
        server_lr: s, the server learning rate, finite and > 0 (1 is plain FedAvg).

    Raises:
        ValueError: naming ``problem.loss`` (not least squares), ``eta``, ``local_steps`` or
            ``server_lr`` (invalid value), or ``problem`` when I - P is (numerically) singular,
            i.e. the map has no unique fixed point.
    """
    _check_arguments(problem, eta, local_steps)
    if not (is_real(server_lr) and server_lr > 0):
        raise ValueError(f"server_lr: the server learning rate must be a finite number > 0, got {server_lr!r}")
    eta, s = float(eta), float(server_lr)
    d = problem.dim
    identity = np.eye(d)
    round_matrix = (1.0 - s) * identity
    round_offset = np.zeros(d)
    for k in range(problem.n_clients):
        Q_k, c_k = _client_quadratic(problem, k)
        linear, offset = _affine_power(identity - eta * Q_k, eta * c_k, int(local_steps))
        round_matrix += s * problem.weights[k] * linear
        round_offset += s * problem.weights[k] * offset
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            w = scipy.linalg.solve(identity - round_matrix, round_offset)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning) as exc:
        raise ValueError(
            f"problem: I - P is singular for eta = {eta:g}, E = {local_steps}, so the FedAvg round map has no "
            f"unique fixed point (for E = 1 this means sum_k p_k Q_k is singular: mu = 0 with rank-deficient data)"
        ) from exc
    radius = float(np.max(np.abs(np.linalg.eigvals(round_matrix))))
    for arr in (w, round_matrix, round_offset):
        arr.setflags(write=False)
    return FixedPoint(
        w=w, spectral_radius=radius, converges=radius < 1.0, round_matrix=round_matrix, round_offset=round_offset
    )


def fedavg_limit_offset(
    problem: FederatedProblem, eta: float, local_steps: int, reference: np.ndarray
) -> np.ndarray:
    """w~ - reference, shape (d,), for the limit w~ of FedAvg with exact gradients and a constant step.

    Formula (*) of the module docstring: no O(1) quantities are subtracted, so at reference = w*
    the offset (the bias ||w~ - w*|| = O(eta)) keeps its relative accuracy as eta -> 0, where
    ``fedavg_fixed_point(...).w - w*`` loses digits like machine epsilon / eta. The offset does not
    depend on the server learning rate. O(N d^3 log E) operations.

    Args:
        problem: a least-squares FederatedProblem.
        eta: the constant local step size, finite and > 0.
        local_steps: E, an integer >= 1.
        reference: the point r (d,) the offset is measured from, finite.

    Raises:
        ValueError: naming ``problem.loss``, ``eta``, ``local_steps`` or ``reference`` (invalid
            value), or ``problem`` when sum_k p_k Q_k G_k is (numerically) singular.
    """
    _check_arguments(problem, eta, local_steps)
    d = problem.dim
    r = np.asarray(reference, dtype=np.float64)
    if r.shape != (d,) or not np.all(np.isfinite(r)):
        raise ValueError(f"reference: expected a finite vector of shape ({d},), got shape {np.shape(reference)}")
    eta, E = float(eta), int(local_steps)
    identity = np.eye(d)
    system = np.zeros((d, d))
    gradient = np.zeros(d)
    drift = np.zeros(d)
    for k in range(problem.n_clients):
        Q_k, c_k = _client_quadratic(problem, k)
        g_k = Q_k @ r - c_k
        G_k, H_k = _power_sums(identity - eta * Q_k, E)
        p_k = problem.weights[k]
        system += p_k * Q_k @ G_k
        gradient += p_k * g_k
        drift += p_k * Q_k @ (H_k @ g_k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            offset = scipy.linalg.solve(system, -E * gradient + eta * drift)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning) as exc:
        raise ValueError(
            f"problem: sum_k p_k Q_k G_k is singular for eta = {eta:g}, E = {E}, so the FedAvg round map has no "
            f"unique fixed point"
        ) from exc
    offset.setflags(write=False)
    return offset


def _check_arguments(problem: FederatedProblem, eta: float, local_steps: int) -> None:
    """The checks shared by fedavg_fixed_point and fedavg_limit_offset."""
    if not problem.model.quadratic:
        raise ValueError(
            f"problem.loss: the FedAvg fixed point is exact for least squares only, got {problem.loss.value!r}"
        )
    if not (is_real(eta) and eta > 0):
        raise ValueError(f"eta: the step size must be a finite number > 0, got {eta!r}")
    if isinstance(local_steps, bool) or not isinstance(local_steps, (int, np.integer)) or local_steps < 1:
        raise ValueError(f"local_steps: E must be an integer >= 1, got {local_steps!r}")


def _client_quadratic(problem: FederatedProblem, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q_k, c_k) of the module docstring, shapes (d, d) and (d,)."""
    X_k, y_k = problem.client_data(k)
    n_k = X_k.shape[0]
    return X_k.T @ X_k / n_k + problem.mu * np.eye(problem.dim), X_k.T @ y_k / n_k


def _power_sums(M: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
    """(G, H) = (sum_{l<n} M^l, sum_{l<n} sum_{j<l} M^j) for n = ``power``, by binary powering.

    The triple (M^n, G_n, H_n) composes as (a + b steps): M^{a+b} = M^a M^b,
    G_{a+b} = G_a + M^a G_b, H_{a+b} = H_a + b G_a + M^a H_b (every factor is a polynomial in M,
    so they commute). O(d^3 log n) operations.
    """
    d = M.shape[0]
    result = (np.eye(d), np.zeros((d, d)), np.zeros((d, d)), 0)
    square = (M.copy(), np.eye(d), np.zeros((d, d)), 1)
    while power:
        if power & 1:
            result = _compose(result, square)
        power >>= 1
        if power:
            square = _compose(square, square)
    return result[1], result[2]


def _compose(
    first: tuple[np.ndarray, np.ndarray, np.ndarray, int], second: tuple[np.ndarray, np.ndarray, np.ndarray, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(M^a, G_a, H_a, a) and (M^b, G_b, H_b, b) -> (M^{a+b}, G_{a+b}, H_{a+b}, a + b) (see _power_sums)."""
    Ma, Ga, Ha, a = first
    Mb, Gb, Hb, b = second
    return Ma @ Mb, Ga + Ma @ Gb, Ha + b * Ga + Ma @ Hb, a + b


def _affine_power(A: np.ndarray, b: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
    """(A^power, sum_{l<power} A^l b): the map v -> A v + b composed ``power`` times, as (matrix, offset).

    Binary powering of affine maps, using (A1, b1) o (A2, b2) = (A1 A2, A1 b2 + b1); all factors
    are powers of one map, so they commute. O(d^3 log power) operations.
    """
    result_A, result_b = np.eye(A.shape[0]), np.zeros_like(b)
    square_A, square_b = A.copy(), b.copy()
    while power:
        if power & 1:
            result_A, result_b = square_A @ result_A, square_A @ result_b + square_b
        power >>= 1
        if power:
            square_A, square_b = square_A @ square_A, square_A @ square_b + square_b
    return result_A, result_b
