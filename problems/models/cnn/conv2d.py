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

The Numba functions compute on planes (channels first, "wide rows"). Per image, the input's
channels are copied to planes xc (C_in, H W), row-major in (h, w), and each output channel is
computed as one wide row of T = (H' - 1) W + W' entries, t = i W + j: output (i, j < W') sits at
t = i W + j, and the W - W' entries per row between outputs (j >= W') are junk that the copy back
to (B, H', W', C_out) skips. With that indexing, the inputs that meet one output channel are
contiguous runs of the planes:

    y[n, i, j, o] = b[o] + sum_{c, p} sum_{q < K} w[p, q, c, o] xc[c, p W + q + t],

so each (o, c, p) is one pass over t adding a K-tap filter (``planar_filters.filter_row``; three
output channels per pass, ``filter_row_triple``, then a pair or one for the rest, loading each input
once for all of them: the same bits as one channel per pass): long, contiguous,
vectorised loops, where loops over channels last (innermost over C_out = 6 or 16) are short and
load and store the output per multiply-add. The input gradient is the same filter with the taps
reversed, over the upstream gradient laid out in wide rows (junk entries 0) after K - 1 zeros,

    dL/dxc[c, p W + s] = sum_o sum_{q < K} w[p, K - 1 - q, c, o] gpad[o, s + q],   s < T + K - 1,

and the weight gradient one dot product per weight, dL/dw[p, q, c, o] = sum_n sum_{t < T} gw[n, o, t]
xc[n, c, p W + q + t] (``planar_filters.filter_dots``, two output channels per pass: the 2 K dots
of a pair (o, o + 1) at (c, p) share their loads of xc;
vectorised with reassociation, as ``dot.dot`` is, the order fixed by the compiled code). The passes
run over a multiple of PLANAR_LANES entries (the reads past the data hit zeros, the writes past it
junk), so no scalar remainder loop follows the vectorised one. No BLAS; the filters are compiled
with FMA contraction (a x + b in one rounding where the CPU has FMA, ~9% of a step), so, like
``dot.dot``, they are bit-reproducible on one machine for any thread count, not across machines.
A network runs this path for its layers with few output channels (the tutorial net's first, 3 ->
6), where it beats BLAS; wider layers take im2col and BLAS (``conv2d_gemm``).

The ``*_planar`` functions take their scratch (``conv2d_planar_scratch_size`` entries of the dtype,
per image: the planes, the wide rows and the weights as taps (C_out, C_in, K, K), which the weight
gradient uses as its accumulators) so that a network's step loop allocates it once;
``conv2d_forward``, ``conv2d_backward_params`` and ``conv2d_backward_input`` allocate their own. The NumPy reference builds the im2col patch matrix
(B H' W', K K C_in) with ``sliding_window_view`` and multiplies (BLAS).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .planar_filters import filter_dots, filter_dots_pair, filter_row, filter_row_pair, filter_row_triple

__all__ = [
    "PLANAR_LANES",
    "conv2d_planar_scratch_size",
    "conv2d_forward_planar",
    "conv2d_backward_params_planar",
    "conv2d_backward_input_planar",
    "conv2d_forward",
    "conv2d_backward_params",
    "conv2d_backward_input",
    "conv2d_forward_np",
    "conv2d_backward_np",
]


PLANAR_LANES = 32
"""Passes over wide rows run over a multiple of this many entries (zeros or junk past the data), so
that the compiled loops (8 float32 lanes x 4 unrolled) have no scalar remainder."""


@njit(cache=True)
def _round_up(n, m):
    return (n + m - 1) // m * m


@njit(cache=True)
def _planar_geometry(h, w, k):
    """(T, forward pass length, input-gradient pass length, plane length, wide-row length) for an
    (h, w) input and a k x k kernel: T = (h - k) w + w - k + 1 wide entries hold the outputs; the
    passes run over multiples of PLANAR_LANES; a plane holds h w entries and the zeros the padded
    passes read past them, a wide row the longest pass plus its k - 1 taps."""
    t = (h - k) * w + w - k + 1
    n_forward = _round_up(t, PLANAR_LANES)
    n_input = _round_up(t + k - 1, PLANAR_LANES)
    plane = max(h * w, (k - 1) * w + k - 1 + n_forward, (k - 1) * w + n_input)
    wide = max(n_forward, n_input + k - 1)
    return t, n_forward, n_input, plane, wide


@njit(cache=True)
def conv2d_planar_scratch_size(h, w, c, k, oc):
    """Entries of the planar path's scratch for an (h, w, c) input and a k x k kernel to oc channels:
    c planes, oc wide rows (``_planar_geometry``) and the oc c k k taps."""
    _, _, _, plane, wide = _planar_geometry(h, w, k)
    return c * plane + oc * wide + oc * c * k * k


@njit(cache=True)
def _planar_views(scratch, h, w, c, k, oc):
    """(planes (c, plane length), wide rows (oc, wide length), taps (oc, c, k, k)) carved from scratch."""
    _, _, _, plane, wide = _planar_geometry(h, w, k)
    a = c * plane
    b = a + oc * wide
    planes = scratch[:a].reshape((c, plane))
    rows = scratch[a:b].reshape((oc, wide))
    taps = scratch[b : b + oc * c * k * k].reshape((oc, c, k, k))
    return planes, rows, taps


@njit(cache=True)
def _to_planes(image, planes):
    """planes[c, h W + w] <- image[h, w, c] for one image (H, W, C); the planes' tails past H W <- 0.
    One channel at a time over flat unsigned offsets: contiguous writes (2.1x faster than the
    pixel-major loop on the tutorial net's 32 x 32 x 3 images)."""
    H, W, C = image.shape
    src = image.reshape(H * W * C)
    dst = planes.reshape(planes.size)
    plane, hw, cc = uint64(planes.shape[1]), uint64(H * W), uint64(C)
    for c in range(cc):
        d0 = c * plane
        for t in range(hw):
            dst[d0 + t] = src[t * cc + c]
    planes[:, H * W :] = 0


@njit(cache=True)
def _to_wide(grad, wide, W, lead):
    """wide[o, lead + i W + j] <- grad[i, j, o] for one image's (H', W', C_out) gradient; every
    other entry (the junk columns j >= W', the lead) 0. One channel at a time over flat unsigned
    offsets (2.1x faster than the pixel-major loop at 28 x 28 x 6)."""
    OH, OW, CO = grad.shape
    wide[...] = 0
    src = grad.reshape(grad.size)
    dst = wide.reshape(wide.size)
    row, co = uint64(wide.shape[1]), uint64(CO)
    for o in range(co):
        for i in range(uint64(OH)):
            d0 = o * row + uint64(lead) + i * uint64(W)
            s0 = i * uint64(OW) * co + o
            for j in range(uint64(OW)):
                dst[d0 + j] = src[s0 + j * co]


@njit(cache=True)
def conv2d_forward_planar(x, w, b, y, scratch):
    """y <- conv(x, w) + b in place (shapes in the module docstring); scratch 1-D of x's dtype with
    at least ``conv2d_planar_scratch_size(H, W, C_in, K, C_out)`` entries, overwritten."""
    B, H, W, CI = x.shape
    K = w.shape[0]
    CO = w.shape[3]
    OH, OW = y.shape[1], y.shape[2]
    planes, wide, taps = _planar_views(scratch, H, W, CI, K, CO)
    n_pass = _planar_geometry(H, W, K)[1]
    planes_flat, plane_len = planes.reshape(planes.size), planes.shape[1]
    wide_flat, wide_len = wide.reshape(wide.size), wide.shape[1]
    for o in range(CO):
        for c in range(CI):
            for p in range(K):
                for q in range(K):
                    taps[o, c, p, q] = w[p, q, c, o]
    for n in range(B):
        _to_planes(x[n], planes)
        for o in range(CO):
            wide[o, :n_pass] = b[o]
        o = 0
        while CO - o >= 3:  # output channels in threes: one load of the planes for all three
            for c in range(CI):
                for p in range(K):
                    filter_row_triple(wide_flat, o * wide_len, (o + 1) * wide_len, (o + 2) * wide_len, planes_flat,
                                      c * plane_len + p * W, taps[o, c, p], taps[o + 1, c, p], taps[o + 2, c, p], n_pass)
            o += 3
        if CO - o == 2:
            for c in range(CI):
                for p in range(K):
                    filter_row_pair(wide_flat, o * wide_len, (o + 1) * wide_len, planes_flat, c * plane_len + p * W,
                                    taps[o, c, p], taps[o + 1, c, p], n_pass)
        elif CO - o == 1:
            for c in range(CI):
                for p in range(K):
                    filter_row(wide_flat, o * wide_len, planes_flat, c * plane_len + p * W, taps[o, c, p], n_pass)
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    y[n, i, j, o] = wide[o, i * W + j]


@njit(cache=True)
def conv2d_backward_params_planar(x, g, dw, db, scratch):
    """dw <- dL/dw and db <- dL/db (overwritten) from x and the upstream gradient g; scratch as for
    ``conv2d_forward_planar``."""
    B, H, W, CI = x.shape
    K = dw.shape[0]
    CO = dw.shape[3]
    OH, OW = g.shape[1], g.shape[2]
    planes, wide, grads = _planar_views(scratch, H, W, CI, K, CO)
    n_pass = _planar_geometry(H, W, K)[1]
    planes_flat, plane_len = planes.reshape(planes.size), planes.shape[1]
    wide_flat, wide_len = wide.reshape(wide.size), wide.shape[1]
    grads[...] = 0
    db[...] = 0
    for n in range(B):
        _to_planes(x[n], planes)
        _to_wide(g[n], wide, W, 0)
        for i in range(OH):
            for j in range(OW):
                for o in range(CO):
                    db[o] += g[n, i, j, o]
        for o in range(0, CO - 1, 2):  # output channels in pairs: one load of the planes for both
            for c in range(CI):
                for p in range(K):
                    filter_dots_pair(grads[o, c, p], grads[o + 1, c, p], wide_flat, o * wide_len, (o + 1) * wide_len,
                                     planes_flat, c * plane_len + p * W, n_pass)
        if CO % 2 == 1:
            o = CO - 1
            for c in range(CI):
                for p in range(K):
                    filter_dots(grads[o, c, p], wide_flat, o * wide_len, planes_flat, c * plane_len + p * W, n_pass)
    for o in range(CO):
        for c in range(CI):
            for p in range(K):
                for q in range(K):
                    dw[p, q, c, o] = grads[o, c, p, q]


@njit(cache=True)
def conv2d_backward_input_planar(w, g, dx, scratch):
    """dx <- dL/dx (overwritten) from the weight w and the upstream gradient g; scratch as for
    ``conv2d_forward_planar``."""
    B, H, W, CI = dx.shape
    K = w.shape[0]
    CO = w.shape[3]
    planes, wide, taps = _planar_views(scratch, H, W, CI, K, CO)
    n_pass = _planar_geometry(H, W, K)[2]
    planes_flat, plane_len = planes.reshape(planes.size), planes.shape[1]
    wide_flat, wide_len = wide.reshape(wide.size), wide.shape[1]
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
                    filter_row(planes_flat, c * plane_len + p * W, wide_flat, o * wide_len, taps[o, c, p], n_pass)
        for h in range(H):
            for ww in range(W):
                for c in range(CI):
                    dx[n, h, ww, c] = planes[c, h * W + ww]


@njit(cache=True)
def _scratch_for(x_shape, k, oc, dtype_of):
    """A scratch buffer for an input of shape (B, H, W, C), a k x k kernel and oc channels."""
    return np.empty(conv2d_planar_scratch_size(x_shape[1], x_shape[2], x_shape[3], k, oc), dtype=dtype_of.dtype)


@njit(cache=True)
def conv2d_forward(x, w, b, y):
    """y <- conv(x, w) + b in place (shapes in the module docstring)."""
    conv2d_forward_planar(x, w, b, y, _scratch_for(x.shape, w.shape[0], w.shape[3], y))


@njit(cache=True)
def conv2d_backward_params(x, g, dw, db):
    """dw <- dL/dw and db <- dL/db (overwritten) from the input x and the upstream gradient g."""
    conv2d_backward_params_planar(x, g, dw, db, _scratch_for(x.shape, dw.shape[0], dw.shape[3], dw))


@njit(cache=True)
def conv2d_backward_input(w, g, dx):
    """dx <- dL/dx (overwritten) from the weight w and the upstream gradient g."""
    conv2d_backward_input_planar(w, g, dx, _scratch_for(dx.shape, w.shape[0], w.shape[3], dx))


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
