"""Softmax cross-entropy of a minibatch, averaged over it (torch.nn.CrossEntropyLoss's default):

    L(z, y) = (1/B) sum_n [ log sum_c exp(z[n, c]) - z[n, y_n] ],   z (B, classes), y (B,) in [0, classes)

computed stably as m_n + log sum_c exp(z[n, c] - m_n) with m_n = max_c z[n, c] (no overflow for
any finite logits). Gradient: dL/dz[n] = (softmax(z[n]) - e_{y_n}) / B.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["cross_entropy", "cross_entropy_np"]


@njit(cache=True)
def cross_entropy(z, labels, dz):
    """The mean loss (float64); dz <- dL/dz in place (shape of z, its dtype)."""
    B, C = z.shape
    total = 0.0
    for n in range(B):
        m = z[n, 0]
        for c in range(1, C):
            if z[n, c] > m:
                m = z[n, c]
        s = 0.0
        for c in range(C):
            e = math.exp(z[n, c] - m)
            dz[n, c] = e
            s += e
        total += m + math.log(s) - z[n, labels[n]]
        scale = 1.0 / (s * B)
        for c in range(C):
            dz[n, c] *= scale
        dz[n, labels[n]] -= 1.0 / B
    return total / B


def cross_entropy_np(z: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """(mean loss, dL/dz) for logits z (B, classes) and integer labels (B,)."""
    B = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    sums = exp.sum(axis=1, keepdims=True)
    rows = np.arange(B)
    loss = float(np.mean(np.log(sums[:, 0]) - shifted[rows, labels]))
    dz = exp / sums
    dz[rows, labels] -= 1.0
    return loss, (dz / B).astype(z.dtype, copy=False)
