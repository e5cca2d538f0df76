"""The Numba path of a whole network: forward, predictions, loss, backward and SGD steps over the
layout table.

Everything here takes plain arrays as arguments (the layout's int64 table, the flat parameters,
the images, labels and preallocated work buffers), never a Python object, so a caller's own
kernel (an algorithm's round loop) can call ``network_loss_grad`` in its step loop without
reference-counted tuple reads (``docs/architecture.md``, "The model oracle"). Work buffers, for a
batch of B: ``acts`` and ``dacts`` (B * layout.activation_size,) of the parameters' dtype and
``pool_index`` (B * layout.pool_index_size,) int8; ``grad`` has the parameters' length and dtype.
The layer functions are those of ``conv2d``, ``max_pool``, ``relu``, ``tanh``, ``dense``, ``cross_entropy``.

The convolutions' scratch (``conv2d``: one buffer of the largest ``conv2d_planar_scratch_size``
over the conv layers; per image, not per batch) is allocated once per call of ``network_forward``
or ``network_loss_grad``, and once per call of ``sgd_steps`` for all its steps.
"""

from __future__ import annotations

from numba import njit

import numpy as np

from .conv2d import (
    conv2d_backward_input_planar,
    conv2d_backward_params_planar,
    conv2d_forward_planar,
    conv2d_planar_scratch_size,
)
from .cross_entropy import cross_entropy
from .dense import dense_backward_input, dense_backward_params, dense_forward
from .layout import COL_IN_C, COL_IN_H, COL_IN_W, COL_KERNEL, COL_OP, COL_OUT_ACT, COL_OUT_C, OP_CONV, OP_DENSE, OP_POOL, OP_RELU, OP_TANH
from .max_pool import max_pool_backward, max_pool_forward
from .relu import relu_backward, relu_forward
from .tanh import tanh_backward, tanh_forward

__all__ = ["network_forward", "network_loss_grad", "network_predict", "sgd_steps"]


@njit(cache=True)
def _scratch(table, dtype_of):
    """The convolutions' scratch for the conv layers of ``table``, of the dtype of ``dtype_of``."""
    size = 0
    for l in range(table.shape[0]):
        if table[l, COL_OP] == OP_CONV:
            h, w, c = table[l, COL_IN_H], table[l, COL_IN_W], table[l, COL_IN_C]
            size = max(size, conv2d_planar_scratch_size(h, w, c, table[l, COL_KERNEL], table[l, COL_OUT_C]))
    return np.empty(size, dtype=dtype_of.dtype)


@njit(cache=True)
def network_forward(table, params, images, acts, pool_index):
    """Run the layers on images (B, H, W, C): acts <- every activation; returns the logits (B, classes)
    as a view of ``acts``."""
    return _forward(table, params, images, acts, pool_index, _scratch(table, acts))


@njit(cache=True)
def network_predict(table, params, images, acts, pool_index, classes):
    """classes[i] <- the predicted class of images[i] (n, H, W, C): the first largest logit (the
    rule of ``np.argmax``: a tie goes to the smaller class, a NaN logit wins), computed in the
    parameters' dtype in chunks of B = acts.size // layout.activation_size images (``acts`` and
    ``pool_index`` sized for B as in the module docstring; one scratch for all chunks). classes (n,)
    int64."""
    L = table.shape[0]
    n_classes = table[L - 1, COL_OUT_C]
    per_image = table[L - 1, COL_OUT_ACT] + n_classes
    chunk = acts.size // per_image
    scratch = _scratch(table, acts)
    n = images.shape[0]
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        logits = _forward(table, params, images[lo:hi], acts, pool_index, scratch)
        for i in range(hi - lo):
            best, top = 0, logits[i, 0]
            for j in range(1, n_classes):
                v = logits[i, j]
                if v > top or (v != v and top == top):  # np.argmax: the first NaN, else the first maximum
                    best, top = j, v
            classes[lo + i] = best
    return classes


@njit(cache=True)
def _forward(table, params, images, acts, pool_index, scratch):
    """``network_forward`` with the convolutions' scratch given."""
    B = images.shape[0]
    n_in = images.shape[1] * images.shape[2] * images.shape[3]
    acts[: B * n_in].reshape(images.shape)[...] = images
    for l in range(table.shape[0]):
        op, h, w, c, oh, ow, oc, k, p, ia, oa, ga = table[l]
        x = acts[B * ia : B * (ia + h * w * c)]
        y = acts[B * oa : B * (oa + oh * ow * oc)]
        if op == OP_CONV:
            nw = k * k * c * oc
            x4 = x.reshape((B, h, w, c))
            w4 = params[p : p + nw].reshape((k, k, c, oc))
            conv2d_forward_planar(x4, w4, params[p + nw : p + nw + oc], y.reshape((B, oh, ow, oc)), scratch)
        elif op == OP_RELU:
            relu_forward(x, y)
        elif op == OP_TANH:
            tanh_forward(x, y)
        elif op == OP_POOL:
            arg = pool_index[B * ga : B * (ga + oh * ow * oc)]
            max_pool_forward(x.reshape((B, h, w, c)), y.reshape((B, oh, ow, oc)), arg.reshape((B, oh, ow, oc)))
        elif op == OP_DENSE:
            nw = c * oc
            w2 = params[p : p + nw].reshape((c, oc))
            dense_forward(x.reshape((B, c)), w2, params[p + nw : p + nw + oc], y.reshape((B, oc)))
    classes = table[table.shape[0] - 1, COL_OUT_C]
    logits_at = B * table[table.shape[0] - 1, COL_OUT_ACT]
    return acts[logits_at : logits_at + B * classes].reshape((B, classes))


@njit(cache=True)
def network_loss_grad(table, params, images, labels, acts, dacts, pool_index, grad):
    """The minibatch's mean cross-entropy (float64); grad <- its gradient in the flat layout."""
    return _loss_grad(table, params, images, labels, acts, dacts, pool_index, grad, _scratch(table, acts))


@njit(cache=True)
def _loss_grad(table, params, images, labels, acts, dacts, pool_index, grad, scratch):
    """``network_loss_grad`` with the convolutions' scratch given."""
    B = images.shape[0]
    logits = _forward(table, params, images, acts, pool_index, scratch)
    L = table.shape[0]
    classes = table[L - 1, COL_OUT_C]
    logits_at = B * table[L - 1, COL_OUT_ACT]
    dlogits = dacts[logits_at : logits_at + B * classes].reshape((B, classes))
    loss = cross_entropy(logits, labels, dlogits)
    for l in range(L - 1, -1, -1):
        op, h, w, c, oh, ow, oc, k, p, ia, oa, ga = table[l]
        x = acts[B * ia : B * (ia + h * w * c)]
        g = dacts[B * oa : B * (oa + oh * ow * oc)]
        dx = dacts[B * ia : B * (ia + h * w * c)]
        if op == OP_CONV:
            nw = k * k * c * oc
            x4 = x.reshape((B, h, w, c))
            g4 = g.reshape((B, oh, ow, oc))
            conv2d_backward_params_planar(
                x4, g4, grad[p : p + nw].reshape((k, k, c, oc)), grad[p + nw : p + nw + oc], scratch
            )
            if l > 0:
                w4 = params[p : p + nw].reshape((k, k, c, oc))
                conv2d_backward_input_planar(w4, g4, dx.reshape((B, h, w, c)), scratch)
        elif op == OP_RELU:
            relu_backward(x, g, dx)
        elif op == OP_TANH:
            tanh_backward(acts[B * oa : B * (oa + oh * ow * oc)], g, dx)
        elif op == OP_POOL:
            arg = pool_index[B * ga : B * (ga + oh * ow * oc)]
            max_pool_backward(arg.reshape((B, oh, ow, oc)), g.reshape((B, oh, ow, oc)), dx.reshape((B, h, w, c)))
        elif op == OP_DENSE:
            nw = c * oc
            x2 = x.reshape((B, c))
            g2 = g.reshape((B, oc))
            dense_backward_params(x2, g2, grad[p : p + nw].reshape((c, oc)), grad[p + nw : p + nw + oc])
            if l > 0:
                dense_backward_input(params[p : p + nw].reshape((c, oc)), g2, dx.reshape((B, c)))
    return loss


@njit(cache=True)
def sgd_steps(table, params, images, labels, batch, lr, n_steps, acts, dacts, pool_index, grad):
    """n_steps plain SGD steps theta <- theta - lr grad in place, step s on the minibatch of rows
    [(s b) mod n, (s b) mod n + b) of images (n, H, W, C) (n a multiple of b); returns the last loss."""
    n = images.shape[0]
    scratch = _scratch(table, acts)
    loss = 0.0
    for s in range(n_steps):
        start = (s * batch) % n
        loss = _loss_grad(
            table, params, images[start : start + batch], labels[start : start + batch], acts, dacts, pool_index,
            grad, scratch,
        )
        for i in range(params.size):
            params[i] -= lr * grad[i]
    return loss
