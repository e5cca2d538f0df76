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
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from problems import FederatedProblem, LossKind

from .rates import _is_real

__all__ = ["FixedPoint", "fedavg_fixed_point"]


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
    if problem.loss is not LossKind.LEAST_SQUARES:
        raise ValueError(
            f"problem.loss: the FedAvg fixed point is exact for least squares only, got {problem.loss.value!r}"
        )
    if not (_is_real(eta) and eta > 0):
        raise ValueError(f"eta: the step size must be a finite number > 0, got {eta!r}")
    if isinstance(local_steps, bool) or not isinstance(local_steps, (int, np.integer)) or local_steps < 1:
        raise ValueError(f"local_steps: E must be an integer >= 1, got {local_steps!r}")
    if not (_is_real(server_lr) and server_lr > 0):
        raise ValueError(f"server_lr: the server learning rate must be a finite number > 0, got {server_lr!r}")
    eta, s = float(eta), float(server_lr)
    d = problem.dim
    identity = np.eye(d)
    round_matrix = (1.0 - s) * identity
    round_offset = np.zeros(d)
    for k in range(problem.n_clients):
        X_k, y_k = problem.client_data(k)
        n_k = X_k.shape[0]
        Q_k = X_k.T @ X_k / n_k + problem.mu * identity
        c_k = X_k.T @ y_k / n_k
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
