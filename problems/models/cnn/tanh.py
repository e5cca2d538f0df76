"""Hyperbolic tangent, elementwise on any shape: y = tanh(x), dL/dx = g (1 - y^2).

Smooth (unlike ReLU): tanh' = 1 - tanh^2 in (0, 1] and |tanh''| = |2 tanh (1 - tanh^2)| <= 4/(3 sqrt 3),
the facts ``smooth_bounds`` certifies a network's L with. The backward pass reads the layer's output y
(not its input), which the kernel keeps among its activations.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["tanh_forward", "tanh_backward", "tanh_forward_np", "tanh_backward_np"]


@njit(cache=True)
def tanh_forward(x, y):
    """y <- tanh(x) over flat arrays of one size."""
    for i in range(x.size):
        y[i] = np.tanh(x[i])


@njit(cache=True)
def tanh_backward(y, g, dx):
    """dx <- g (1 - y^2) over flat arrays of one size (y the layer's output)."""
    for i in range(y.size):
        dx[i] = g[i] * (1 - y[i] * y[i])


def tanh_forward_np(x: np.ndarray) -> np.ndarray:
    """tanh(x), same shape and dtype as x."""
    return np.tanh(x)


def tanh_backward_np(y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """g (1 - y^2) (y the layer's output)."""
    return g * (1 - y * y)
