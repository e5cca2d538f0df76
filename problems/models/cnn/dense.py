"""Fully connected layer: y = x w + b for x (B, D_in), w (D_in, D_out), b (D_out,), y (B, D_out).

torch.nn.Linear stores the transpose (D_out, D_in); fedbound stores w as (D_in, D_out), row-major,
so that the innermost loops run over D_out, contiguous in y, w and the gradients. Backward, for an
upstream gradient g = dL/dy (B, D_out): dL/dw = x' g, dL/db = sum_n g[n], dL/dx = g w'.

Two paths by the size of the product, B D_in D_out multiply-adds: from ``DENSE_BLAS_MIN_WORK`` on,
each product is one ``np.dot`` (BLAS gemm, as ``conv2d_gemm``'s; its summation order, its bits
independent of BLAS's thread count); below it, plain loops (dL/dx one vectorised ``dot.dot`` per
entry: a row of w against a row of g), where a BLAS call costs more than the arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .dot import dot

__all__ = [
    "DENSE_BLAS_MIN_WORK",
    "dense_uses_blas",
    "dense_forward",
    "dense_backward_params",
    "dense_backward_input",
    "dense_forward_path",
    "dense_backward_params_path",
    "dense_backward_input_path",
    "dense_forward_np",
    "dense_backward_np",
]


DENSE_BLAS_MIN_WORK = 4096
"""Products of at least this many multiply-adds (B D_in D_out) go to BLAS. Measured on this
machine's OpenBLAS (float32, one thread): at 4,608 (72 x 32 at batch 2) BLAS takes 0.5-1.0x the
loops' time, at 1,680 (84 x 10 at batch 2) 0.5-1.4x; at batch 32 of the tutorial net's 400 x 120
layer 0.45-0.55x, of its 84 x 10 layer 0.13-0.3x."""


@njit(cache=True)
def dense_uses_blas(b, d_in, d_out):
    """True when a dense layer D_in -> D_out at batch b takes the BLAS path."""
    return b * d_in * d_out >= DENSE_BLAS_MIN_WORK


@njit(cache=True)
def dense_forward(x, w, b, y):
    """y <- x w + b in place (BLAS from ``DENSE_BLAS_MIN_WORK`` multiply-adds on)."""
    dense_forward_path(x, w, b, y, dense_uses_blas(x.shape[0], x.shape[1], w.shape[1]))


@njit(cache=True)
def dense_backward_params(x, g, dw, db):
    """dw <- x' g and db <- sum_n g[n] (overwritten; BLAS as in ``dense_forward``)."""
    dense_backward_params_path(x, g, dw, db, dense_uses_blas(x.shape[0], x.shape[1], g.shape[1]))


@njit(cache=True)
def dense_backward_input(w, g, dx):
    """dx <- g w' (overwritten; BLAS as in ``dense_forward``)."""
    dense_backward_input_path(w, g, dx, dense_uses_blas(dx.shape[0], dx.shape[1], g.shape[1]))


@njit(cache=True)
def dense_forward_path(x, w, b, y, blas):
    """``dense_forward`` by BLAS (``blas``) or by the loops."""
    B, DI = x.shape
    DO = w.shape[1]
    if blas:
        np.dot(x, w, y)
        for n in range(B):
            yn = y[n]
            for o in range(DO):
                yn[o] += b[o]
        return
    for n in range(B):
        for o in range(DO):
            y[n, o] = b[o]
        for i in range(DI):
            v = x[n, i]
            for o in range(DO):
                y[n, o] += v * w[i, o]


@njit(cache=True)
def dense_backward_params_path(x, g, dw, db, blas):
    """``dense_backward_params`` by BLAS (``blas``) or by the loops."""
    B, DI = x.shape
    DO = g.shape[1]
    db[...] = 0
    for n in range(B):
        gn = g[n]
        for o in range(DO):
            db[o] += gn[o]
    if blas:
        np.dot(x.T, g, dw)
        return
    dw[...] = 0
    for n in range(B):
        for i in range(DI):
            v = x[n, i]
            for o in range(DO):
                dw[i, o] += v * g[n, o]


@njit(cache=True)
def dense_backward_input_path(w, g, dx, blas):
    """``dense_backward_input`` by BLAS (``blas``) or by the loops (one ``dot.dot`` per entry)."""
    B, DI = dx.shape
    if blas:
        np.dot(g, w.T, dx)
        return
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
