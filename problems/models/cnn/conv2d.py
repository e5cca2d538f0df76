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



# --- The planar (channels-first, "wide row") path -------------------------------------------------
#
# Per image, the input's channels are copied to planes xc (C_in, H W) (row-major h, w), and an output
# channel is computed as one "wide" row of T = (H' - 1) W + W' entries, t = i W + j: the outputs
# (i, j < W') sit at t = i W + j and the W - W' entries per row between them (j >= W') are junk that
# the copy back to (B, H', W', C_out) skips. With that indexing the K K C_in input rows that meet
# one output channel are contiguous slices of the planes,
#
#     y[n, i, j, o] = b[o] + sum_{c, p} sum_{q < K} w[p, q, c, o] xc[c, p W + q + t],
#
# so each (o, c, p) is one pass over t adding a K-tap filter (``_filter_row``): long, contiguous,
# vectorised loops, which the channels-last loops (innermost over C_out, short when C_out is small)
# are not. The input gradient is the same filter with the taps reversed over the upstream gradient
# in wide rows (junk entries 0) padded by K - 1 zeros on the left,
#
#     dL/dxc[c, p W + s] = sum_{o} sum_{q < K} w[p, K - 1 - q, c, o] gpad[o, s + q],  s < T + K - 1,
#
# and the weight gradient one dot product per weight, dL/dw[p, q, c, o] = sum_n sum_{t < T}
# gw[n, o, t] xc[n, c, p W + q + t] (``_dot``: vectorised with reassociation, its order fixed by
# the compiled code, so bit-reproducible on one machine for any thread count). Scratch: one flat
# buffer of ``conv2d_planar_scratch_size`` entries (planes, wide rows, taps).


@njit(cache=True)
def conv2d_planar_scratch_size(h, w, c, k, oc):
    """Entries of the planar path's scratch for an (h, w, c) input and a k x k kernel to oc channels:
    planes c h w, wide rows oc (T + 2 (k - 1)), taps oc c k k, with T = (h - k) w + w - k + 1."""
    t = (h - k) * w + w - k + 1
    return c * h * w + oc * (t + 2 * (k - 1)) + oc * c * k * k


@njit(cache=True)
def _planar_views(scratch, h, w, c, k, oc):
    """(planes (c, h w), wide rows (oc, T + 2 (k - 1)), taps (oc, c, k, k), T) carved from scratch."""
    t = (h - k) * w + w - k + 1
    tw = t + 2 * (k - 1)
    a = c * h * w
    b = a + oc * tw
    planes = scratch[:a].reshape((c, h * w))
    wide = scratch[a:b].reshape((oc, tw))
    taps = scratch[b : b + oc * c * k * k].reshape((oc, c, k, k))
    return planes, wide, taps, t


@njit(cache=True)
def _to_planes(image, planes):
    """planes[c, h W + w] <- image[h, w, c] for one image (H, W, C)."""
    H, W, C = image.shape
    for h in range(H):
        for w in range(W):
            for c in range(C):
                planes[c, h * W + w] = image[h, w, c]


@njit(cache=True)
def _to_wide(grad, wide, W, lead):
    """wide[o, lead + i W + j] <- grad[i, j, o] for one image's (H', W', C_out) gradient; every
    other entry (the junk columns j >= W', the lead) 0."""
    OH, OW, CO = grad.shape
    wide[...] = 0
    for i in range(OH):
        for j in range(OW):
            for o in range(CO):
                wide[o, lead + i * W + j] = grad[i, j, o]


@njit(cache=True, inline="always")
def _filter_row(dst, src, taps, n):
    """dst[t] += sum_{q < K} taps[q] src[t + q] for t < n (K = taps.size), the taps in chunks of at
    most 5 so that each pass over t loads dst once for several taps."""
    K = taps.shape[0]
    q = 0
    while q < K:
        m = K - q
        if m >= 5:
            a0, a1, a2, a3, a4 = taps[q], taps[q + 1], taps[q + 2], taps[q + 3], taps[q + 4]
            s0, s1, s2 = src[q : q + n], src[q + 1 : q + 1 + n], src[q + 2 : q + 2 + n]
            s3, s4 = src[q + 3 : q + 3 + n], src[q + 4 : q + 4 + n]
            for t in range(n):
                dst[t] += a0 * s0[t] + a1 * s1[t] + a2 * s2[t] + a3 * s3[t] + a4 * s4[t]
            q += 5
        elif m == 3:
            a0, a1, a2 = taps[q], taps[q + 1], taps[q + 2]
            s0, s1, s2 = src[q : q + n], src[q + 1 : q + 1 + n], src[q + 2 : q + 2 + n]
            for t in range(n):
                dst[t] += a0 * s0[t] + a1 * s1[t] + a2 * s2[t]
            q += 3
        elif m >= 2:
            a0, a1 = taps[q], taps[q + 1]
            s0, s1 = src[q : q + n], src[q + 1 : q + 1 + n]
            for t in range(n):
                dst[t] += a0 * s0[t] + a1 * s1[t]
            q += 2
        else:
            a0 = taps[q]
            s0 = src[q : q + n]
            for t in range(n):
                dst[t] += a0 * s0[t]
            q += 1


@njit(cache=True, fastmath={"reassoc"})
def _dot(a, b):
    """sum_t a[t] b[t] over two 1-D arrays of one length, in the dtype of a (vectorised: the
    compiled code fixes the order of the partial sums)."""
    s = a.dtype.type(0)
    for t in range(a.shape[0]):
        s += a[t] * b[t]
    return s


@njit(cache=True)
def conv2d_forward_planar(x, w, b, y, scratch):
    """y <- conv(x, w) + b in place by the planar path (the shapes of ``conv2d_forward``; scratch
    1-D of the dtype with at least ``conv2d_planar_scratch_size`` entries)."""
    B, H, W, CI = x.shape
    K = w.shape[0]
    CO = w.shape[3]
    OH, OW = y.shape[1], y.shape[2]
    planes, wide, taps, T = _planar_views(scratch, H, W, CI, K, CO)
    for o in range(CO):
        for c in range(CI):
            for p in range(K):
                for q in range(K):
                    taps[o, c, p, q] = w[p, q, c, o]
    for n in range(B):
        _to_planes(x[n], planes)
        for o in range(CO):
            row = wide[o, :T]
            bo = b[o]
            for t in range(T):
                row[t] = bo
            for c in range(CI):
                for p in range(K):
                    _filter_row(row, planes[c, p * W :], taps[o, c, p], T)
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    y[n, i, j, o] = wide[o, i * W + j]


@njit(cache=True)
def conv2d_backward_params_planar(x, g, dw, db, scratch):
    """dw <- dL/dw and db <- dL/db (overwritten) by the planar path (shapes of
    ``conv2d_backward_params``, scratch as for ``conv2d_forward_planar``)."""
    B, H, W, CI = x.shape
    K = dw.shape[0]
    CO = dw.shape[3]
    OH, OW = g.shape[1], g.shape[2]
    planes, wide, _, T = _planar_views(scratch, H, W, CI, K, CO)
    dw[...] = 0
    db[...] = 0
    for n in range(B):
        _to_planes(x[n], planes)
        _to_wide(g[n], wide, W, 0)
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    db[o] += g[n, i, j, o]
        for o in range(CO):
            go = wide[o, :T]
            for c in range(CI):
                for p in range(K):
                    for q in range(K):
                        dw[p, q, c, o] += _dot(go, planes[c, p * W + q : p * W + q + T])


@njit(cache=True)
def conv2d_backward_input_planar(w, g, dx, scratch):
    """dx <- dL/dx (overwritten) by the planar path (shapes of ``conv2d_backward_input``, scratch
    as for ``conv2d_forward_planar``)."""
    B, H, W, CI = dx.shape
    K = w.shape[0]
    CO = w.shape[3]
    planes, wide, taps, T = _planar_views(scratch, H, W, CI, K, CO)
    for o in range(CO):
        for c in range(CI):
            for p in range(K):
                for q in range(K):
                    taps[o, c, p, q] = w[p, K - 1 - q, c, o]
    for n in range(B):
        _to_wide(g[n], wide, W, K - 1)
        planes[...] = 0
        for c in range(CI):
            for o in range(CO):
                for p in range(K):
                    _filter_row(planes[c, p * W :], wide[o], taps[o, c, p], T + K - 1)
        for h in range(H):
            for ww in range(W):
                for c in range(CI):
                    dx[n, h, ww, c] = planes[c, h * W + ww]


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
