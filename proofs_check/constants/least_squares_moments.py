"""Quadratic models: every assumption constant is a quadratic in w, built from per-client data moments.

A model quadratic in one margin (``LinearModel.quadratic``, least squares and any other) is least
squares in the rows and targets of its least-squares form (``LinearModel.least_squares_form``:
l(x_i'w, y_i) = (1/2)(u_i'w - v_i)^2 + const, u_i = sqrt(a) x_i, v_i = sqrt(a) t(y_i); least
squares itself has u = x, v = y). Below, x_i and y_i stand for u_i and v_i. The per-sample
gradient x_i (x_i'w - y_i) is then affine in w, so the minibatch
variance var_k(w, b), ||grad F_k(w)||^2, the gradient dissimilarity sum_k q_k ||grad F_k - grad F||^2
and the (G, B)-BGD excess sum_k q_k ||grad F_k||^2 - B^2 ||grad F||^2 are quadratics
q(w) = w'Aw - 2a'w + s (``trust_region.Quadratic``), whose maximum over a ball is solved exactly.
The data moments of client k (n_k rows, ``LeastSquaresMoments``) are

    S_k = X_k'X_k / n_k,  c_k = X_k'y_k / n_k,  H_k = S_k + mu I (the Hessian of F_k),
    W4_k = (1/n_k) sum_i ||x_i||^2 x_i x_i',  w3_k = (1/n_k) sum_i ||x_i||^2 y_i x_i,
    w2_k = (1/n_k) sum_i ||x_i||^2 y_i^2,

so that grad F_k(w) = H_k w - c_k and mean_i ||g_i(w)||^2 = w'W4_k w - 2 w3_k'w + w2_k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem

from .trust_region import Quadratic

__all__ = ["LeastSquaresMoments"]


@dataclass(frozen=True)
class LeastSquaresMoments:
    """Per-client moments of a quadratic model's least-squares form (N clients, d = f), shapes
    S, W4, H (N, d, d), c, w3 (N, d), w2 (N,) (module docstring)."""

    S: np.ndarray
    c: np.ndarray
    W4: np.ndarray
    w3: np.ndarray
    w2: np.ndarray
    H: np.ndarray

    @classmethod
    def of(cls, problem: FederatedProblem) -> LeastSquaresMoments:
        """The moments of every client; ValueError naming ``model`` when the problem's model is not
        quadratic in one margin (``LinearModel.least_squares_form``)."""
        N, d = problem.n_clients, problem.dim
        S, W4, c, w3, w2 = np.empty((N, d, d)), np.empty((N, d, d)), np.empty((N, d)), np.empty((N, d)), np.empty(N)
        for k in range(N):
            X, y = problem.model.least_squares_form(*problem.client_data(k))
            n, sq = X.shape[0], np.sum(X**2, axis=1)
            S[k], c[k] = X.T @ X / n, X.T @ y / n
            W4[k], w3[k], w2[k] = (X.T * sq) @ X / n, X.T @ (sq * y) / n, float(sq @ y**2) / n
        return cls(S, c, W4, w3, w2, S + problem.mu * np.eye(d)[None])

    def variance(self, k: int, b: int) -> Quadratic:
        """var_k(w) = (1/b) [mean_i ||x_i||^2 (x_i'w - y_i)^2 - ||S_k w - c_k||^2]."""
        S, c = self.S[k], self.c[k]
        return Quadratic((self.W4[k] - S @ S) / b, (self.w3[k] - S @ c) / b, float(self.w2[k] - c @ c) / b)

    def grad_sq(self, k: int) -> Quadratic:
        """||grad F_k(w)||^2 = ||H_k w - c_k||^2."""
        H, c = self.H[k], self.c[k]
        return Quadratic(H @ H, H @ c, float(c @ c))

    def weighted_grad_sq(self, q: np.ndarray, B_sq: float, p: np.ndarray) -> Quadratic:
        """sum_k q_k ||H_k w - c_k||^2 - B^2 ||H w - c||^2 with H = sum p_k H_k, c = sum p_k c_k."""
        H, c = np.einsum("k,kij->ij", p, self.H), p @ self.c
        A = np.einsum("k,kij,kjl->il", q, self.H, self.H) - B_sq * H @ H
        a = np.einsum("k,kij,kj->i", q, self.H, self.c) - B_sq * H @ c
        return Quadratic(A, a, float(q @ np.sum(self.c**2, axis=1) - B_sq * c @ c))

    def dissimilarity(self, q: np.ndarray, p: np.ndarray) -> Quadratic:
        """sum_k q_k ||(S_k - S)w - (c_k - c)||^2 with S = sum p_k S_k, c = sum p_k c_k."""
        D = self.S - np.einsum("k,kij->ij", p, self.S)[None]
        e = self.c - (p @ self.c)[None]
        A = np.einsum("k,kij,kjl->il", q, D, D)
        return Quadratic(A, np.einsum("k,kij,kj->i", q, D, e), float(q @ np.sum(e**2, axis=1)))
