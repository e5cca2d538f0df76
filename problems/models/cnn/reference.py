"""The plain-NumPy reference path of a whole network (no Numba): the same layers, written with
im2col and matrix products (``conv2d_*_np``, ``dense_*_np``, ...), walked over the same layout.
It is the twin the Numba kernel is tested against (<= 1e-10 relative in float64)."""

from __future__ import annotations

import numpy as np

from .conv2d import conv2d_backward_np, conv2d_forward_np
from .cross_entropy import cross_entropy_np
from .dense import dense_backward_np, dense_forward_np
from .layers import Conv2d, Dense, MaxPool2d, Tanh
from .layout import NetworkLayout
from .max_pool import max_pool_backward_np, max_pool_forward_np
from .relu import relu_backward_np, relu_forward_np
from .tanh import tanh_backward_np, tanh_forward_np

__all__ = ["forward_np", "loss_grad_np", "sgd_steps_np"]


def _weights(layout: NetworkLayout, params: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Layer index -> (weight, bias) views of the flat parameters."""
    views = {}
    for block in layout.parameter_blocks:
        w = params[block.offset : block.offset + block.weight_size].reshape(block.weight_shape)
        b = params[block.offset + block.weight_size : block.offset + block.size]
        views[block.layer] = (w, b)
    return views


def forward_np(layout: NetworkLayout, params: np.ndarray, images: np.ndarray) -> tuple[list[np.ndarray], list]:
    """(activations act_0..act_L, per-layer caches): act_L the logits (B, classes); a max-pool
    layer's cache is its winners' indices."""
    weights = _weights(layout, params)
    acts = [images]
    caches: list = []
    for i, layer in enumerate(layout.layers):
        x = acts[-1]
        cache = None
        if isinstance(layer, Conv2d):
            y = conv2d_forward_np(x, *weights[i])
        elif isinstance(layer, MaxPool2d):
            y, cache = max_pool_forward_np(x)
        elif isinstance(layer, Dense):
            y = dense_forward_np(x.reshape(x.shape[0], -1), *weights[i])
        elif isinstance(layer, Tanh):
            y = tanh_forward_np(x)
        else:
            y = relu_forward_np(x)
        acts.append(y)
        caches.append(cache)
    return acts, caches


def loss_grad_np(
    layout: NetworkLayout, params: np.ndarray, images: np.ndarray, labels: np.ndarray
) -> tuple[float, np.ndarray]:
    """(mean cross-entropy, its gradient in the flat layout) of the minibatch."""
    weights = _weights(layout, params)
    acts, caches = forward_np(layout, params, images)
    loss, g = cross_entropy_np(acts[-1], labels)
    grad = np.zeros_like(params)
    blocks = {block.layer: block for block in layout.parameter_blocks}
    for i in range(len(layout.layers) - 1, -1, -1):
        layer, x = layout.layers[i], acts[i]
        if isinstance(layer, Conv2d):
            dw, db, dx = conv2d_backward_np(x, weights[i][0], g)
        elif isinstance(layer, Dense):
            dw, db, dx = dense_backward_np(x.reshape(x.shape[0], -1), weights[i][0], g)
            dx = dx.reshape(x.shape)
        elif isinstance(layer, MaxPool2d):
            dx = max_pool_backward_np(caches[i], g, x.shape)
        elif isinstance(layer, Tanh):
            dx = tanh_backward_np(acts[i + 1], g)
        else:
            dx = relu_backward_np(x, g)
        if i in blocks:
            block = blocks[i]
            grad[block.offset : block.offset + block.weight_size] = dw.ravel()
            grad[block.offset + block.weight_size : block.offset + block.size] = db
        g = dx
    return loss, grad


def sgd_steps_np(
    layout: NetworkLayout,
    params: np.ndarray,
    images: np.ndarray,
    labels: np.ndarray,
    batch: int,
    lr: float,
    n_steps: int,
) -> float:
    """NumPy twin of ``kernel.sgd_steps``: n_steps SGD steps on params in place, step s on rows
    [(s b) mod n, (s b) mod n + b); returns the last loss."""
    n = images.shape[0]
    loss = 0.0
    for s in range(n_steps):
        start = (s * batch) % n
        loss, grad = loss_grad_np(layout, params, images[start : start + batch], labels[start : start + batch])
        params -= (lr * grad).astype(params.dtype, copy=False)
    return loss
