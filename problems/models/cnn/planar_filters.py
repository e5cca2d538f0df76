"""The planar convolution's inner passes (``conv2d``'s module docstring): K-tap filters along a
wide row, and the K dot products of a weight row's gradient, for one output channel or for two at
once.

A pair shares each load of the input between its two channels: on the tutorial net's first layer
(3 -> 6 channels, 5 x 5, batch 32) the forward pass takes 0.73x and the weight gradient 0.71x the
CPU of one channel per pass (measured on this machine, Zen 4); three channels per pass
(``filter_row_triple``, the forward's 5-tap chunks) take the forward's filter passes from 9.5 to
8.6 us per image at batch 32 (~94 GFLOP/s counting the wide rows' junk entries, against the
core's ~115 peak). ``filter_row_pair`` and ``filter_row_triple`` compute each channel's sums in the
expression order of ``filter_row`` (the same bits);
``filter_dots_pair`` vectorises with reassociation as ``filter_dots`` does, in an order the
compiled code fixes, which differs from ``filter_dots``'s (float32 results differ in the last
bits; the float32-against-float64 tolerance of the tests is unchanged). The offsets and t are
unsigned, so the loads need no negative-index wraparound and vectorise.
"""

from __future__ import annotations

from numba import njit, uint64

__all__ = ["filter_row", "filter_dots", "filter_row_pair", "filter_row_triple", "filter_dots_pair"]


@njit(cache=True, fastmath={"contract"})
def filter_row(dst, d0, src, s0, taps, n):
    """dst[d0 + t] += sum_{q < K} taps[q] src[s0 + t + q] for t < n (dst, src flat; K = taps.size),
    the taps in chunks of at most 5 so that each pass over t loads dst once for several taps. The
    offsets and t are unsigned, so the loads need no negative-index wraparound and vectorise."""
    K = taps.shape[0]
    q = 0
    while q < K:
        m = K - q
        u0 = uint64(s0 + q)
        v0 = uint64(d0)
        if m >= 5:
            a0, a1, a2, a3, a4 = taps[q], taps[q + 1], taps[q + 2], taps[q + 3], taps[q + 4]
            for t in range(uint64(n)):
                u = u0 + t
                dst[v0 + t] += (
                    a0 * src[u] + a1 * src[u + uint64(1)] + a2 * src[u + uint64(2)] + a3 * src[u + uint64(3)]
                    + a4 * src[u + uint64(4)]
                )
            q += 5
        elif m == 3:
            a0, a1, a2 = taps[q], taps[q + 1], taps[q + 2]
            for t in range(uint64(n)):
                u = u0 + t
                dst[v0 + t] += a0 * src[u] + a1 * src[u + uint64(1)] + a2 * src[u + uint64(2)]
            q += 3
        elif m >= 2:
            a0, a1 = taps[q], taps[q + 1]
            for t in range(uint64(n)):
                u = u0 + t
                dst[v0 + t] += a0 * src[u] + a1 * src[u + uint64(1)]
            q += 2
        else:
            a0 = taps[q]
            for t in range(uint64(n)):
                dst[v0 + t] += a0 * src[u0 + t]
            q += 1


@njit(cache=True, fastmath={"reassoc", "contract"})
def filter_dots(acc, a, a0, src, s0, n):
    """acc[q] += sum_{t < n} a[a0 + t] src[s0 + t + q] for q < K = acc.size (a, src flat): the
    K dot products of one weight row's gradient, in chunks of 5, 3 or 1 sharing each load of a;
    vectorised as ``dot.dot`` is (reassociation, order fixed by the compiled code)."""
    K = acc.shape[0]
    v0 = uint64(a0)
    q = 0
    while q < K:
        u0 = uint64(s0 + q)
        if K - q >= 5:
            r0 = r1 = r2 = r3 = r4 = acc.dtype.type(0)
            for t in range(uint64(n)):
                g = a[v0 + t]
                u = u0 + t
                r0 += g * src[u]
                r1 += g * src[u + uint64(1)]
                r2 += g * src[u + uint64(2)]
                r3 += g * src[u + uint64(3)]
                r4 += g * src[u + uint64(4)]
            acc[q] += r0
            acc[q + 1] += r1
            acc[q + 2] += r2
            acc[q + 3] += r3
            acc[q + 4] += r4
            q += 5
        elif K - q >= 3:
            r0 = r1 = r2 = acc.dtype.type(0)
            for t in range(uint64(n)):
                g = a[v0 + t]
                u = u0 + t
                r0 += g * src[u]
                r1 += g * src[u + uint64(1)]
                r2 += g * src[u + uint64(2)]
            acc[q] += r0
            acc[q + 1] += r1
            acc[q + 2] += r2
            q += 3
        else:
            r0 = acc.dtype.type(0)
            for t in range(uint64(n)):
                r0 += a[v0 + t] * src[u0 + t]
            acc[q] += r0
            q += 1


@njit(cache=True, fastmath={"contract"})
def filter_row_pair(dst, d0, e0, src, s0, taps_a, taps_b, n):
    """``filter_row`` for two channels over one input: dst[d0 + t] += sum_q taps_a[q] src[s0 + t + q]
    and dst[e0 + t] += sum_q taps_b[q] src[s0 + t + q] for t < n, each in ``filter_row``'s order
    (taps in chunks of 5, 3, 2, 1), the chunk's inputs loaded once for both."""
    K = taps_a.shape[0]
    q = 0
    while q < K:
        m = K - q
        u0 = uint64(s0 + q)
        v0 = uint64(d0)
        w0 = uint64(e0)
        if m >= 5:
            a0, a1, a2, a3, a4 = taps_a[q], taps_a[q + 1], taps_a[q + 2], taps_a[q + 3], taps_a[q + 4]
            b0, b1, b2, b3, b4 = taps_b[q], taps_b[q + 1], taps_b[q + 2], taps_b[q + 3], taps_b[q + 4]
            for t in range(uint64(n)):
                u = u0 + t
                x0, x1, x2 = src[u], src[u + uint64(1)], src[u + uint64(2)]
                x3, x4 = src[u + uint64(3)], src[u + uint64(4)]
                dst[v0 + t] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3 + a4 * x4
                dst[w0 + t] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3 + b4 * x4
            q += 5
        elif m == 3:
            a0, a1, a2 = taps_a[q], taps_a[q + 1], taps_a[q + 2]
            b0, b1, b2 = taps_b[q], taps_b[q + 1], taps_b[q + 2]
            for t in range(uint64(n)):
                u = u0 + t
                x0, x1, x2 = src[u], src[u + uint64(1)], src[u + uint64(2)]
                dst[v0 + t] += a0 * x0 + a1 * x1 + a2 * x2
                dst[w0 + t] += b0 * x0 + b1 * x1 + b2 * x2
            q += 3
        elif m >= 2:
            a0, a1 = taps_a[q], taps_a[q + 1]
            b0, b1 = taps_b[q], taps_b[q + 1]
            for t in range(uint64(n)):
                u = u0 + t
                x0, x1 = src[u], src[u + uint64(1)]
                dst[v0 + t] += a0 * x0 + a1 * x1
                dst[w0 + t] += b0 * x0 + b1 * x1
            q += 2
        else:
            a0, b0 = taps_a[q], taps_b[q]
            for t in range(uint64(n)):
                x0 = src[u0 + t]
                dst[v0 + t] += a0 * x0
                dst[w0 + t] += b0 * x0
            q += 1


@njit(cache=True, fastmath={"reassoc", "contract"})
def filter_dots_pair(acc_a, acc_b, a, a0, b0, src, s0, n):
    """``filter_dots`` for two channels over one input: acc_a[q] += sum_t a[a0 + t] src[s0 + t + q]
    and acc_b[q] += sum_t a[b0 + t] src[s0 + t + q] for q < K = acc_a.size, in chunks of 5, 3 or 1
    taps whose inputs are loaded once for both."""
    K = acc_a.shape[0]
    v0 = uint64(a0)
    w0 = uint64(b0)
    q = 0
    while q < K:
        u0 = uint64(s0 + q)
        zero = acc_a.dtype.type(0)
        if K - q >= 5:
            r0 = r1 = r2 = r3 = r4 = zero
            p0 = p1 = p2 = p3 = p4 = zero
            for t in range(uint64(n)):
                g, h = a[v0 + t], a[w0 + t]
                u = u0 + t
                x0, x1, x2 = src[u], src[u + uint64(1)], src[u + uint64(2)]
                x3, x4 = src[u + uint64(3)], src[u + uint64(4)]
                r0 += g * x0
                r1 += g * x1
                r2 += g * x2
                r3 += g * x3
                r4 += g * x4
                p0 += h * x0
                p1 += h * x1
                p2 += h * x2
                p3 += h * x3
                p4 += h * x4
            acc_a[q] += r0
            acc_a[q + 1] += r1
            acc_a[q + 2] += r2
            acc_a[q + 3] += r3
            acc_a[q + 4] += r4
            acc_b[q] += p0
            acc_b[q + 1] += p1
            acc_b[q + 2] += p2
            acc_b[q + 3] += p3
            acc_b[q + 4] += p4
            q += 5
        elif K - q >= 3:
            r0 = r1 = r2 = zero
            p0 = p1 = p2 = zero
            for t in range(uint64(n)):
                g, h = a[v0 + t], a[w0 + t]
                u = u0 + t
                x0, x1, x2 = src[u], src[u + uint64(1)], src[u + uint64(2)]
                r0 += g * x0
                r1 += g * x1
                r2 += g * x2
                p0 += h * x0
                p1 += h * x1
                p2 += h * x2
            acc_a[q] += r0
            acc_a[q + 1] += r1
            acc_a[q + 2] += r2
            acc_b[q] += p0
            acc_b[q + 1] += p1
            acc_b[q + 2] += p2
            q += 3
        else:
            r0 = p0 = zero
            for t in range(uint64(n)):
                x0 = src[u0 + t]
                r0 += a[v0 + t] * x0
                p0 += a[w0 + t] * x0
            acc_a[q] += r0
            acc_b[q] += p0
            q += 1


@njit(cache=True, fastmath={"contract"})
def filter_row_triple(dst, d0, e0, f0, src, s0, taps_a, taps_b, taps_c, n):
    """``filter_row`` for three channels over one input (dst offsets d0, e0, f0; taps_a, taps_b,
    taps_c), each in ``filter_row``'s order: chunks of 5 taps with the chunk's inputs loaded once
    for all three, then the remaining taps by ``filter_row_pair`` and ``filter_row`` (whose chunks
    continue ``filter_row``'s: 3, 2, 1)."""
    K = taps_a.shape[0]
    q = 0
    v0, w0, x0_ = uint64(d0), uint64(e0), uint64(f0)
    while K - q >= 5:
        u0 = uint64(s0 + q)
        a0, a1, a2, a3, a4 = taps_a[q], taps_a[q + 1], taps_a[q + 2], taps_a[q + 3], taps_a[q + 4]
        b0, b1, b2, b3, b4 = taps_b[q], taps_b[q + 1], taps_b[q + 2], taps_b[q + 3], taps_b[q + 4]
        c0, c1, c2, c3, c4 = taps_c[q], taps_c[q + 1], taps_c[q + 2], taps_c[q + 3], taps_c[q + 4]
        for t in range(uint64(n)):
            u = u0 + t
            x0, x1, x2 = src[u], src[u + uint64(1)], src[u + uint64(2)]
            x3, x4 = src[u + uint64(3)], src[u + uint64(4)]
            dst[v0 + t] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3 + a4 * x4
            dst[w0 + t] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3 + b4 * x4
            dst[x0_ + t] += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3 + c4 * x4
        q += 5
    if q < K:
        filter_row_pair(dst, d0, e0, src, s0 + q, taps_a[q:], taps_b[q:], n)
        filter_row(dst, f0, src, s0 + q, taps_c[q:], n)
