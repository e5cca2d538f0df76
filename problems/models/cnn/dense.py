"""Fully connected layer: y = x w + b for x (B, D_in), w (D_in, D_out), b (D_out,), y (B, D_out).

torch.nn.Linear stores the transpose (D_out, D_in); fedbound stores w as (D_in, D_out), row-major,
so that the innermost loops run over D_out, contiguous in y, w and the gradients. Backward, for an
upstream gradient g = dL/dy (B, D_out): dL/dw = x' g, dL/db = sum_n g[n], dL/dx = g w' (one
vectorised ``dot.dot`` per entry: a row of w against a row of g).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .dot import dot

__all__ = ["dense_forward", "dense_backward_params", "dense_backward_input", "dense_forward_np", "dense_backward_np"]


@njit(cache=True)
def dense_forward(x, w, b, y):
    """y <- x w + b in place."""
    B, DI = x.shape
    DO = w.shape[1]
    for n in range(B):
        for o in range(DO):
            y[n, o] = b[o]
        for i in range(DI):
            v = x[n, i]
            for o in range(DO):
                y[n, o] += v * w[i, o]


@njit(cache=True)
def dense_backward_params(x, g, dw, db):
    """dw <- x' g and db <- sum_n g[n] (overwritten)."""
    B, DI = x.shape
    DO = g.shape[1]
    dw[...] = 0
    db[...] = 0
    for n in range(B):
        for o in range(DO):
            db[o] += g[n, o]
        for i in range(DI):
            v = x[n, i]
            for o in range(DO):
                dw[i, o] += v * g[n, o]


@njit(cache=True)
def dense_backward_input(w, g, dx):
    """dx <- g w' (overwritten)."""
    B, DI = dx.shape
    for n in range(B):
        gn = g[n]
        for i in range(DI):
            dx[n, i] = dot(w[i], gn)


def dense_forward_np(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x w + b."""
    return x @ w + b


def dense_backward_np(x: np.ndarray, w: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dL/dw, dL/db, dL/dx) for the upstream gradient g (B, D_out)."""
    return x.T @ g, g.sum(axis=0), g @ w.T
