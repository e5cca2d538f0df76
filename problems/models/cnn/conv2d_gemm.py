"""2-D convolution (``conv2d``'s: stride 1, valid, NHWC, w (K, K, C_in, C_out)) by im2col and one
BLAS matrix product per pass, layer and batch: the path of the layers whose products are large
enough for BLAS to beat the planar filters (``conv2d_uses_gemm``).

With P (B H' W', K K C_in) the im2col patch matrix of x (row (n, i, j), columns (p, q, c):
P[(n, i, j), (p, q, c)] = x[n, i + p, j + q, c]) and W2 = w viewed as (K K C_in, C_out) (the same
(p, q, c) order, row-major), the three passes of ``conv2d``'s module docstring are

    y  = P W2 + b                 (B H' W', C_out)        forward
    dw = P' G                     (K K C_in, C_out)       weight gradient, G = g as (B H' W', C_out)
    dP = G W2',  dx = col2im(dP)  (B H' W', K K C_in)     input gradient: dx[n, i + p, j + q, c]
                                                          summed over the patches that hold it

and db = sum over the rows of G. P is built once in the forward pass into the caller's
``patches`` buffer (``conv2d_patches_size`` entries), in chunks of whole images that fit in L2
(``GEMM_CHUNK_ENTRIES``), each multiplied as soon as it is built, and read again by the weight
gradient; the
input gradient then overwrites it with dP (the backward pass computes dw before dx). Each row's
K runs of x[n, i + p, j : j + K, :] are contiguous K C_in entries in NHWC, copied over flat
unsigned offsets (per-row 1-D views cost a reshape call each: im2col 7.0 -> 2.2 us and col2im 5.7
-> 4.4 us per image for the tutorial net's conv2 at batch 32; the same bits, col2im adding in the
same order).

The weight gradient is computed as its transpose dw' = G' P (C_out, K K C_in) and copied back:
SciPy's OpenBLAS (0.3.30, the one Numba calls) takes 10.7 us per image for it at the tutorial
net's conv2 at batch 32 against 12.3-15.0 for P' G, with the same bits (the same gemm with its
operands' roles swapped). The products are ``np.dot`` in Numba (BLAS gemm through SciPy's BLAS, as the linear kernels'
products are; one thread inside ``one_blas_thread``). Their summation order is BLAS's, not the
planar filters': float64 agrees with the im2col reference to rounding (<= 1e-12 relative in the
tests), float32 with float64 to float32 rounding of sums of K K C_in terms (the planar path's
tolerance). BLAS gemm splits its work over the output, never the inner sum, so the bits do not
depend on BLAS's thread count (checked in the tests); like the planar path, they may differ across
machines (vector widths, FMA).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

__all__ = [
    "GEMM_CHUNK_ENTRIES",
    "GEMM_MIN_CHANNELS",
    "conv2d_uses_gemm",
    "conv2d_forward_chunk_images",
    "conv2d_patches_size",
    "conv2d_forward_gemm",
    "conv2d_backward_params_gemm",
    "conv2d_backward_input_gemm",
]

GEMM_CHUNK_ENTRIES = 1 << 16
"""The forward pass builds and multiplies the patch matrix in chunks of whole images of at most
this many entries (256 KB in float32), so that BLAS reads each chunk from L2 right after im2col
wrote it. Measured on this machine (one thread, float32, the tutorial net's conv2 at batch 32,
chunks of 4 images): the forward pass 10.5 -> 6.7 us per image; chunks of 8 images (480 KB) 8.4.
BLAS sums each output row in the same order whatever the chunk's rows (the same bits as one product over
the batch: checked in the tests)."""

GEMM_MIN_CHANNELS = 8
"""A conv layer takes this path when it has at least this many output channels (the n of its
products). Measured on this machine's OpenBLAS (Zen 4, one thread, float32, the tutorial net):
conv 6 -> 16 5x5 on 14 x 14 (products of n = 16) costs 0.33-0.4x the planar passes at batch 2 and
32, conv 3 -> 6 5x5 on 32 x 32 (n = 6) 1.0x forward and 1.4x in the weight gradient, where
BLAS's kernels waste most of their register tile on 6 columns."""


@njit(cache=True)
def conv2d_uses_gemm(c_in, c_out, k):
    """True when a conv layer C_in -> C_out with a k x k kernel takes this module's path."""
    return c_out >= GEMM_MIN_CHANNELS


@njit(cache=True)
def conv2d_patches_size(b, h, w, c, k):
    """Entries of the patch matrix (b H' W', k k c) of a batch of b (h, w, c) inputs."""
    return b * (h - k + 1) * (w - k + 1) * k * k * c


@njit(cache=True)
def _im2col(x, k, patches):
    """patches (B H' W', k k C) <- the patch matrix of x (B, H, W, C) (module docstring): per patch
    row, k runs of k C contiguous entries, copied over flat unsigned offsets (``_flat``)."""
    B, H, W, C = x.shape
    OH, OW = H - k + 1, W - k + 1
    src, dst = _flat(x), _flat(patches)
    run = uint64(k * C)
    row = uint64(k) * run
    for n in range(B):
        for i in range(OH):
            for j in range(OW):
                d = uint64((n * OH + i) * OW + j) * row
                for p in range(k):
                    s = uint64(((n * H + i + p) * W + j) * C)
                    e = d + uint64(p) * run
                    for t in range(run):
                        dst[e + t] = src[s + t]


@njit(cache=True)
def _col2im(dpatches, k, dx):
    """dx (B, H, W, C) <- the sum, over the patches that hold each entry, of dpatches' rows, added in
    patch-row order (i, p, j) as a copy back of ``_im2col`` over flat unsigned offsets."""
    B, H, W, C = dx.shape
    OH, OW = H - k + 1, W - k + 1
    src, dst = _flat(dpatches), _flat(dx)
    run = uint64(k * C)
    row = uint64(k) * run
    dst[:] = 0
    for n in range(B):
        for i in range(OH):
            for p in range(k):
                for j in range(OW):
                    s = uint64((n * OH + i) * OW + j) * row + uint64(p) * run
                    d = uint64(((n * H + i + p) * W + j) * C)
                    for t in range(run):
                        dst[d + t] += src[s + t]


@njit(cache=True)
def _flat(a):
    """a (C-contiguous) as a 1-D view."""
    return a.reshape(a.size)


@njit(cache=True)
def conv2d_forward_chunk_images(b, h, w, c, k):
    """Images per forward chunk (``conv2d_forward_gemm``): as many as keep a chunk of the patch
    matrix within GEMM_CHUNK_ENTRIES entries, at least one, at most b."""
    per_image = (h - k + 1) * (w - k + 1) * k * k * c
    return min(b, max(1, GEMM_CHUNK_ENTRIES // per_image))


@njit(cache=True)
def conv2d_forward_gemm(x, w, b, y, patches):
    """y <- conv(x, w) + b in place; patches (1-D, at least ``conv2d_patches_size`` entries of x's
    dtype) <- the patch matrix, which ``conv2d_backward_params_gemm`` reads. Built and multiplied
    in chunks of ``conv2d_forward_chunk_images`` images (module docstring)."""
    B, H, W, CI = x.shape
    K = w.shape[0]
    CO = w.shape[3]
    per_image = (H - K + 1) * (W - K + 1)
    rows = B * per_image
    P = patches[: rows * K * K * CI].reshape((rows, K * K * CI))
    y2 = y.reshape((rows, CO))
    w2 = w.reshape((K * K * CI, CO))
    chunk = conv2d_forward_chunk_images(B, H, W, CI, K)
    for n0 in range(0, B, chunk):
        n1 = min(B, n0 + chunk)
        r0, r1 = n0 * per_image, n1 * per_image
        _im2col(x[n0:n1], K, P[r0:r1])
        np.dot(P[r0:r1], w2, y2[r0:r1])
    for r in range(rows):
        yr = y2[r]
        for o in range(CO):
            yr[o] += b[o]


@njit(cache=True)
def conv2d_backward_params_gemm(x_shape, k, g, dw, db, patches):
    """dw <- dL/dw, db <- dL/db (overwritten) from the upstream gradient g (B, H', W', C_out) and
    the patch matrix that ``conv2d_forward_gemm`` left in patches for an input of shape x_shape."""
    B, H, W, CI = x_shape
    CO = g.shape[3]
    rows = B * (H - k + 1) * (W - k + 1)
    P = patches[: rows * k * k * CI].reshape((rows, k * k * CI))
    g2 = g.reshape((rows, CO))
    dw2 = dw.reshape((k * k * CI, CO))
    dwt = np.empty((CO, k * k * CI), dtype=dw.dtype)
    np.dot(g2.T, P, dwt)  # dw' = G' P: BLAS's faster orientation here, the same sums (module docstring)
    dw2[...] = dwt.T
    db[...] = 0
    for r in range(rows):
        gr = g2[r]
        for o in range(CO):
            db[o] += gr[o]


@njit(cache=True)
def conv2d_backward_input_gemm(w, g, dx, patches):
    """dx <- dL/dx (overwritten) from the weight w and the upstream gradient g; patches is
    overwritten with dP (module docstring)."""
    B, H, W, CI = dx.shape
    K = w.shape[0]
    CO = w.shape[3]
    rows = B * (H - K + 1) * (W - K + 1)
    dP = patches[: rows * K * K * CI].reshape((rows, K * K * CI))
    np.dot(g.reshape((rows, CO)), w.reshape((K * K * CI, CO)).T, dP)
    _col2im(dP, K, dx)
