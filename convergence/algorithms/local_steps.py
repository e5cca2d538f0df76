"""Local-step primitives shared by every algorithm's Numba kernel: a client's data gradient over
its (sampled) rows through the model oracle, the exact least-squares gradient from a packed Gram
matrix, the divergence threshold and the squared distances it is tested on (``sq_dist``,
``sq_norm``), and the off-support scalar of a client's model under a
proximal local objective (``off_support_scale``) with its gradient norm (``off_support_gradient_sq``),
which FedAvg (mu_prox = 0) and FedProx share.

A client's rows are stored support-restricted and row-major: row i of client k is
``rows[row_base + i m : row_base + (i + 1) m]`` with m = |S_k| features; parameters are (m, C)
row-major. The loss's derivative comes from ``problems.models.kernels.margin_residuals``, so the
kernels compile once per model tag and stay cached across processes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from problems.models.kernels import margin_residuals

from .._rng import sample_index
from .flat_products import matmul, matmul_t
from .prefetch import prefetch

__all__ = [
    "BLAS_MIN_WORK", "DIVERGENCE_FACTOR", "data_gradient", "gram_gradient", "off_support_gradient_sq",
    "off_support_scale", "prefetch_minibatch", "sq_dist", "sq_norm",
]

DIVERGENCE_FACTOR = 1e30
"""A run has diverged once ||w - w*||^2 exceeds this factor times (1 + ||w_0 - w*||^2)."""


@njit(cache=True)
def sq_norm(a):
    """||a||^2 of a (n,) array of any float dtype, accumulated in float64 in index order."""
    s = 0.0
    for q in range(a.size):
        s += np.float64(a[q]) * np.float64(a[q])
    return s


@njit(cache=True)
def sq_dist(a, b):
    """||a - b||^2 of two (n,) arrays of any float dtypes, accumulated in float64 in index order."""
    s = 0.0
    for q in range(a.size):
        diff = np.float64(a[q]) - np.float64(b[q])
        s += diff * diff
    return s


BLAS_MIN_WORK = 2048
"""Minibatches with n_used * |S_k| * C >= this many multiply-adds use BLAS (np.dot) for the two
products; smaller ones (e.g. the counterexample's 5 x 5 blocks) use plain loops, where a BLAS
call would cost more than the arithmetic."""


@njit(cache=True)
def gather_rows(rows, row_base, m, idx, n, Xb):
    """Xb[b m : (b + 1) m] <- rows[row_base + idx[b] m : row_base + (idx[b] + 1) m] for b < n."""
    for b in range(n):  # unsigned indices: no negative-index wraparound, so a contiguous vector copy
        src, dst = np.uint64(row_base + idx[b] * m), np.uint64(b * m)
        for j in range(np.uint64(m)):
            Xb[dst + j] = rows[src + j]


@njit(cache=True, _nrt=False)
def data_gradient(loss, C, rows, row_base, m, targets, sample_base, n_k, batch, stream, W, G, Xb, Z, idx):
    """G[:m C] <- the data gradient of the client at W (m*C,) over its sampled rows.

    Rows are client k's support-restricted rows; with a minibatch they are gathered into Xb
    (batch, m), with exact gradients the client's block is used in place. Work buffers: Xb
    (>= batch * m,), Z (n, C) and idx (n,) with n >= the number of rows used.

    It makes no array view (the products index the flat arrays in place, ``flat_products``) and is
    compiled without Numba's reference counting (``_nrt=False``: it allocates nothing, every array
    is its caller's), as is the loss's residual (``kernels.register_loss``). With views and
    counting, each call made ~22 atomic reference-count updates and four calls of Numba's reshape
    helper (5.7% of bench W2's samples under ``perf``, 0.8% left); the kernel ran 1.08x faster
    [1.06, 1.10] without them (7 alternated pairs of processes, CPU time, load 14-16), same bits.
    """
    n_used = n_k if batch == 0 else batch
    wt = 1.0 / n_used
    for b in range(n_used):
        idx[b] = b if batch == 0 else sample_index(stream, b, n_k)
    if n_used * m * C >= BLAS_MIN_WORK:
        if batch == 0:
            matmul(rows, row_base, W, 0, Z, 0, n_used, m, C)
            margin_residuals(loss, Z, targets, sample_base, idx, n_used, wt)
            matmul_t(rows, row_base, Z, 0, G, 0, m, n_used, C)
        else:
            gather_rows(rows, row_base, m, idx, n_used, Xb)
            matmul(Xb, 0, W, 0, Z, 0, n_used, m, C)
            margin_residuals(loss, Z, targets, sample_base, idx, n_used, wt)
            matmul_t(Xb, 0, Z, 0, G, 0, m, n_used, C)
        return
    _loop_margins(C, rows, row_base, m, n_used, W, Z, idx)
    margin_residuals(loss, Z, targets, sample_base, idx, n_used, wt)
    _loop_gradient(C, rows, row_base, m, n_used, Z, G, idx)


@njit(cache=True, _nrt=False)
def _loop_margins(C, rows, row_base, m, n, W, Z, idx):
    """Z[b, c] <- sum_j x_b[j] W[j C + c] for b < n (x_b the client's row idx[b]), each sum in
    order of j from 0.0: the small-minibatch path's first product, four rows at a time so that
    four independent sums are in flight (one row at a time, each addition waited for the last
    one's store). With ``_loop_gradient``'s C = 1 loop, the step is 1.1-1.6x faster for C = 5-10
    and 3.4-4.0x for C = 1 (b x m x C = 8x21x10 ... 24x61x1, 5 alternated process pairs, CPU);
    BLAS would still be 1.6-2.6x faster at these shapes but gives other bits."""
    for b in range(n):
        for c in range(C):
            Z[b, c] = 0.0
    b = 0
    while b + 4 <= n:
        r0, r1, r2, r3 = (row_base + idx[b] * m, row_base + idx[b + 1] * m, row_base + idx[b + 2] * m,
                          row_base + idx[b + 3] * m)
        for j in range(m):
            x0, x1, x2, x3 = rows[r0 + j], rows[r1 + j], rows[r2 + j], rows[r3 + j]
            for c in range(C):
                w = W[j * C + c]
                Z[b, c] += x0 * w
                Z[b + 1, c] += x1 * w
                Z[b + 2, c] += x2 * w
                Z[b + 3, c] += x3 * w
        b += 4
    for rest in range(b, n):
        r0 = row_base + idx[rest] * m
        for j in range(m):
            x0 = rows[r0 + j]
            for c in range(C):
                Z[rest, c] += x0 * W[j * C + c]


@njit(cache=True, _nrt=False)
def _loop_gradient(C, rows, row_base, m, n, Z, G, idx):
    """G[j C + c] <- sum_b x_b[j] Z[b, c] over b < n in order from 0.0: the small-minibatch path's
    second product (with C = 1 a loop over j alone, which vectorises)."""
    for q in range(m * C):
        G[q] = 0.0
    for b in range(n):
        base = row_base + idx[b] * m
        if C == 1:  # unsigned indices: no wraparound check, so contiguous vector loads (not gathers)
            zb, start = Z[b, 0], np.uint64(base)
            for j in range(np.uint64(m)):
                G[j] += rows[start + j] * zb
            continue
        for j in range(m):
            xj = rows[base + j]
            for c in range(C):
                G[j * C + c] += xj * Z[b, c]


@njit(cache=True)
def prefetch_minibatch(rows, row_base, m, targets, sample_base, n_k, batch, stream):
    """Prefetch every cache line of the rows and the labels ``data_gradient`` reads for the
    minibatch ``stream`` of a client (n_k rows of m features at ``row_base``, its labels at
    ``sample_base``); the values computed do not change."""
    for b in range(batch):
        i = sample_index(stream, b, n_k)
        base = row_base + i * m
        for q in range(0, m, 8):  # 8 doubles per 64-byte line, then the row's last line
            prefetch(rows, base + q)
        prefetch(rows, base + m - 1)
        prefetch(targets, sample_base + i)


@njit(cache=True)
def gram_gradient(gram, gram_base, rhs, rhs_base, m, W, G):
    """G (m,) <- Q_k W - c_k, the exact least-squares data gradient from the packed Gram."""
    for j in range(m):
        acc = -rhs[rhs_base + j]
        row = gram_base + j * m
        for l in range(m):
            acc += gram[row + l] * W[l]
        G[j] = acc


@njit(cache=True)
def off_support_scale(s, eta, mu, mu_prox):
    """The scalar s of client k's local model off its support S_k after one more step.

    Off S_k the data gradient of F_k vanishes, so a coordinate j that starts the round at the
    global value W_j stays s W_j with one scalar s for all of them (s = 1 at the start of the
    round): the step w_j <- w_j - eta (mu w_j + mu_prox (w_j - W_j)) maps s W_j to

        s W_j - eta (mu s W_j + mu_prox (s W_j - W_j)) = [s - eta (mu s + mu_prox (s - 1))] W_j,

    so s <- s - eta (mu s + mu_prox (s - 1)). With mu_prox = 0 this is s (1 - eta mu), computed
    as such (FedAvg's arithmetic to the bit).
    """
    if mu_prox == 0.0:
        return s * (1.0 - eta * mu)
    return s - eta * (mu * s + mu_prox * (s - 1.0))


@njit(cache=True)
def off_support_gradient_sq(s, mu, mu_prox, off_sq):
    """||g||^2 of the local-objective gradient off the support, where w_j = s W_j.

    There g_j = mu s W_j + mu_prox (s - 1) W_j, so ||g_off||^2 = (mu s + mu_prox (s - 1))^2 off_sq
    with off_sq = sum_{j not in S_k} W_j^2 (clipped at 0 against rounding). With mu_prox = 0 this
    is mu^2 s^2 off_sq, computed as such (FedAvg's arithmetic to the bit).
    """
    if mu_prox == 0.0:
        return mu * mu * s * s * max(off_sq, 0.0)
    c = mu * s + mu_prox * (s - 1.0)
    return c * c * max(off_sq, 0.0)
