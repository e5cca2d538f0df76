"""Rectified linear unit, elementwise on any shape: y = max(x, 0), dL/dx = g [x > 0].

The derivative at x = 0 is taken as 0 (as torch.relu's backward does), on both paths.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["relu_forward", "relu_backward", "relu_forward_np", "relu_backward_np"]


@njit(cache=True)
def relu_forward(x, y):
    """y <- max(x, 0) over flat arrays of one size."""
    for i in range(x.size):
        v = x[i]
        y[i] = v if v > 0 else 0


@njit(cache=True)
def relu_backward(x, g, dx):
    """dx <- g [x > 0] over flat arrays of one size (x the layer's input)."""
    for i in range(x.size):
        dx[i] = g[i] if x[i] > 0 else 0


def relu_forward_np(x: np.ndarray) -> np.ndarray:
    """max(x, 0), same shape and dtype as x."""
    return np.where(x > 0, x, np.zeros((), dtype=x.dtype))


def relu_backward_np(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """g [x > 0] (x the layer's input)."""
    return np.where(x > 0, g, np.zeros((), dtype=g.dtype))
