"""2x2 max-pooling with stride 2 over each channel: x (B, H, W, C) -> y (B, H // 2, W // 2, C).

    y[n, i, j, c] = max_{p, q in {0, 1}} x[n, 2i + p, 2j + q, c]

A trailing odd row or column is dropped (floor, as torch.nn.MaxPool2d(2)). The forward pass
records which window element won, as the index a = 2p + q in [0, 4) (int8, shape of y); backward
routes the upstream gradient g = dL/dy to that element only:

    dL/dx[n, 2i + p, 2j + q, c] = g[n, i, j, c] if 2p + q = a[n, i, j, c] else 0.

Ties: the first maximum in the order (0, 0), (0, 1), (1, 0), (1, 1) wins (the Numba loop replaces
only on a strictly larger value; the NumPy path's ``argmax`` returns the first occurrence), so both
paths send a tied window's gradient to the same single element.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["max_pool_forward", "max_pool_backward", "max_pool_forward_np", "max_pool_backward_np"]


@njit(cache=True)
def max_pool_forward(x, y, arg):
    """y <- the 2x2 maxima of x, arg <- the winners' window index 2p + q (in place)."""
    B, OH, OW, C = y.shape
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                for c in range(C):
                    best = x[n, 2 * i, 2 * j, c]
                    a = 0
                    for k in range(1, 4):
                        v = x[n, 2 * i + k // 2, 2 * j + k % 2, c]
                        if v > best:
                            best = v
                            a = k
                    y[n, i, j, c] = best
                    arg[n, i, j, c] = a


@njit(cache=True)
def max_pool_backward(arg, g, dx):
    """dx <- the upstream gradient g routed to each window's winner (dx overwritten)."""
    B, OH, OW, C = g.shape
    dx[...] = 0
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                for c in range(C):
                    a = arg[n, i, j, c]
                    dx[n, 2 * i + a // 2, 2 * j + a % 2, c] = g[n, i, j, c]


def _windows(x: np.ndarray) -> np.ndarray:
    """x's 2x2 windows as (B, H // 2, W // 2, C, 4), the last axis in the order 2p + q."""
    B, H, W, C = x.shape
    OH, OW = H // 2, W // 2
    blocks = x[:, : 2 * OH, : 2 * OW, :].reshape(B, OH, 2, OW, 2, C)
    return blocks.transpose(0, 1, 3, 5, 2, 4).reshape(B, OH, OW, C, 4)


def max_pool_forward_np(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y, arg): the 2x2 maxima and the winners' window indices (first maximum on ties)."""
    windows = _windows(x)
    arg = np.argmax(windows, axis=-1).astype(np.int8)
    return np.take_along_axis(windows, arg[..., None].astype(np.intp), axis=-1)[..., 0], arg


def max_pool_backward_np(arg: np.ndarray, g: np.ndarray, input_shape: tuple[int, ...]) -> np.ndarray:
    """dL/dx of shape ``input_shape`` (B, H, W, C): g at each window's winner, 0 elsewhere."""
    B, OH, OW, C = g.shape
    onehot = np.arange(4) == arg[..., None]  # (B, OH, OW, C, 4)
    routed = np.where(onehot, g[..., None], np.zeros((), dtype=g.dtype))
    blocks = routed.reshape(B, OH, OW, C, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(B, 2 * OH, 2 * OW, C)
    dx = np.zeros(input_shape, dtype=g.dtype)
    dx[:, : 2 * OH, : 2 * OW, :] = blocks
    return dx
