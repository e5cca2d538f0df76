"""2-D convolution, stride 1, no padding ("valid"), as in the PyTorch CIFAR-10 tutorial net.

Shapes (NHWC, channels last): input x (B, H, W, C_in), weight w (K, K, C_in, C_out), bias b
(C_out,), output y (B, H - K + 1, W - K + 1, C_out):

    y[n, i, j, o] = b[o] + sum_{p, q < K} sum_{c < C_in} x[n, i + p, j + q, c] w[p, q, c, o]

(a cross-correlation, as torch.nn.Conv2d computes; torch stores w as (C_out, C_in, K, K), fedbound
as (K, K, C_in, C_out), so that one output pixel's K K C_in inputs and the weight rows meet in the
same order). Backward, for an upstream gradient g = dL/dy (B, H', W', C_out):

    dL/dw[p, q, c, o] = sum_{n, i, j} x[n, i + p, j + q, c] g[n, i, j, o]
    dL/db[o]          = sum_{n, i, j} g[n, i, j, o]
    dL/dx[n, r, s, c] = sum_{p, q, o} g[n, r - p, s - q, o] w[p, q, c, o]   (terms inside y's range)

The Numba functions loop directly, innermost over C_out (contiguous in y, w and g) except for
dL/dx, whose inner sum over C_out runs in index order; no BLAS, no fast-math reassociation, so the
results are bit-reproducible on any machine. With the tutorial net's few channels (6 and 16) the
inner loops are short: the two convolutions take ~90% of an SGD step (``bench``). The NumPy
reference builds the im2col patch matrix (B H' W', K K C_in) with ``sliding_window_view`` and
multiplies (BLAS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "conv2d_forward",
    "conv2d_backward_params",
    "conv2d_backward_input",
    "conv2d_forward_np",
    "conv2d_backward_np",
]


@njit(cache=True)
def conv2d_forward(x, w, b, y):
    """y <- conv(x, w) + b in place (shapes in the module docstring)."""
    B, OH, OW, CO = y.shape
    K = w.shape[0]
    CI = w.shape[2]
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    y[n, i, j, o] = b[o]
                for p in range(K):
                    for q in range(K):
                        for c in range(CI):
                            v = x[n, i + p, j + q, c]
                            for o in range(CO):
                                y[n, i, j, o] += v * w[p, q, c, o]


@njit(cache=True)
def conv2d_backward_params(x, g, dw, db):
    """dw <- dL/dw and db <- dL/db (overwritten) from the input x and the upstream gradient g."""
    B, OH, OW, CO = g.shape
    K = dw.shape[0]
    CI = dw.shape[2]
    dw[...] = 0
    db[...] = 0
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    db[o] += g[n, i, j, o]
                for p in range(K):
                    for q in range(K):
                        for c in range(CI):
                            v = x[n, i + p, j + q, c]
                            for o in range(CO):
                                dw[p, q, c, o] += v * g[n, i, j, o]


@njit(cache=True)
def conv2d_backward_input(w, g, dx):
    """dx <- dL/dx (overwritten) from the weight w and the upstream gradient g."""
    B, OH, OW, CO = g.shape
    K = w.shape[0]
    CI = w.shape[2]
    dx[...] = 0
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                for p in range(K):
                    for q in range(K):
                        for c in range(CI):
                            s = dx[n, i + p, j + q, c]
                            for o in range(CO):
                                s += w[p, q, c, o] * g[n, i, j, o]
                            dx[n, i + p, j + q, c] = s


def _patches(x: np.ndarray, k: int) -> np.ndarray:
    """The im2col matrix of x (B, H, W, C): rows (n, i, j), columns (p, q, c); (B H' W', K K C)."""
    windows = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))  # (B, H', W', C, K, K)
    B, OH, OW = windows.shape[:3]
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(B * OH * OW, -1)


def conv2d_forward_np(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The convolution of x (B, H, W, C_in) with w (K, K, C_in, C_out) plus b, by im2col."""
    B, H, W, _ = x.shape
    K, _, _, CO = w.shape
    y = _patches(x, K) @ w.reshape(-1, CO) + b
    return y.reshape(B, H - K + 1, W - K + 1, CO)


def conv2d_backward_np(
    x: np.ndarray, w: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dL/dw, dL/db, dL/dx) of the convolution for the upstream gradient g (B, H', W', C_out)."""
    K, _, CI, CO = w.shape
    _, OH, OW, _ = g.shape
    g2 = g.reshape(-1, CO)
    dw = (_patches(x, K).T @ g2).reshape(K, K, CI, CO)
    db = g2.sum(axis=0)
    dx = np.zeros_like(x)
    for p in range(K):
        for q in range(K):
            dx[:, p : p + OH, q : q + OW, :] += g @ w[p, q].T
    return dw, db, dx
