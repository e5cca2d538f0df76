"""The view-free products of the linear kernels (``flat_products``) and the minibatch step without
reference counts (``local_steps.data_gradient``, the loss's residual).

``matmul`` / ``matmul_t`` must give np.dot's bits in every branch of Numba's np.dot dispatch (gemm,
the two gemv cases, dot, an empty inner dimension), write nothing outside their block, and the
compiled step must make no NRT reference-count call and (outside the residual's exp) no call of
Numba's reshape helper: with views and counting, each step made ~22 atomic updates and 5 reshape
calls (5.7% of bench W2's samples).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit

from convergence._rng import seed_key, stream_key
from convergence.algorithms.flat_products import matmul, matmul_t
from convergence.algorithms.local_steps import BLAS_MIN_WORK, data_gradient
from problems.models.softmax import SoftmaxLoss


@njit(cache=True)
def _flat(x, x_start, w, w_start, out, out_start, rows, inner, cols, transposed):
    if transposed:
        matmul_t(x, x_start, w, w_start, out, out_start, rows, inner, cols)
    else:
        matmul(x, x_start, w, w_start, out, out_start, rows, inner, cols)


@njit(cache=True)
def _numba_dot(x, x_start, w, w_start, out, out_start, rows, inner, cols, transposed):
    """np.dot on the 2-D views, as the kernels made it before ``flat_products``."""
    W = w[w_start:w_start + inner * cols].reshape(inner, cols)
    O = out[out_start:out_start + rows * cols].reshape(rows, cols)
    if transposed:
        np.dot(x[x_start:x_start + inner * rows].reshape(inner, rows).T, W, O)
    else:
        np.dot(x[x_start:x_start + rows * inner].reshape(rows, inner), W, O)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("rows, inner, cols", [(24, 61, 10), (61, 24, 10), (1, 61, 10), (24, 61, 1), (1, 61, 1),
                                               (24, 0, 10), (7, 3, 2)])
def test_products_are_np_dot_bit_for_bit(dtype, transposed, rows, inner, cols) -> None:
    rng = np.random.default_rng(rows * 1000 + inner * 10 + cols)
    x, w = rng.normal(size=5 + rows * inner).astype(dtype), rng.normal(size=3 + inner * cols).astype(dtype)
    out, expected = np.full(4 + rows * cols + 6, np.nan, dtype), np.full(4 + rows * cols + 6, np.nan, dtype)
    _flat(x, 5, w, 3, out, 4, rows, inner, cols, transposed)
    _numba_dot(x, 5, w, 3, expected, 4, rows, inner, cols, transposed)
    assert np.array_equal(out, expected, equal_nan=True)  # the bits, and NaN (untouched) outside the block
    X = x[5:].reshape(inner, rows).T if transposed else x[5:].reshape(rows, inner)
    np.testing.assert_allclose(out[4:4 + rows * cols].reshape(rows, cols), X @ w[3:].reshape(inner, cols),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_products_reject_mixed_dtypes() -> None:
    from numba.core.errors import TypingError

    with pytest.raises(TypingError):
        _flat(np.ones(4), 0, np.ones(4, np.float32), 0, np.empty(4), 0, 2, 2, 2, False)


def _fresh(dispatcher):
    """A new compilation of a kernel with its own options (``_nrt`` among them) but no cache:
    Numba cannot inspect cached code."""
    options = {k: v for k, v in dispatcher.targetoptions.items() if k not in ("cache", "nopython")}
    return njit(**options)(dispatcher.py_func)


def _function_body(llvm_ir: str, name: str) -> str:
    """The one definition in ``llvm_ir`` whose mangled name contains ``name`` (Numba's, not its
    CPython wrapper)."""
    bodies = [m.group(0) for m in re.finditer(r'^define [^@]*@"?(_ZN[^"(]+)"?\(.*?^}', llvm_ir, re.MULTILINE | re.DOTALL)
              if name in m.group(1) and not m.group(1).startswith("_ZN7cpython")]
    assert len(bodies) == 1, f"{name}: {len(bodies)} definitions"
    return bodies[0]


def test_minibatch_step_counts_no_references() -> None:
    """The BLAS-path step compiled fresh with data_gradient's own options: neither it nor the softmax
    residual it calls makes an NRT call, the step calls no reshape helper, and its products are gemm
    calls (fails with the views and np.dot of before, or with reference counting on)."""
    rng = np.random.default_rng(6)
    n_k, m, C, batch = 40, 61, 10, 24
    assert batch * m * C >= BLAS_MIN_WORK
    rows, targets = rng.normal(size=n_k * m), rng.integers(0, C, n_k).astype(np.float64)
    rows.flags.writeable = targets.flags.writeable = False  # read-only, as the packed clients are
    W, G = rng.normal(size=m * C) * 0.1, np.empty(m * C)
    Xb, Z, idx = np.empty(batch * m), np.empty((batch, C)), np.empty(batch, dtype=np.int64)
    stream = stream_key(seed_key(7), 1, 0, 1)
    fresh = _fresh(data_gradient)
    fresh(SoftmaxLoss(C), C, rows, 0, m, targets, 0, n_k, batch, stream, W, G, Xb, Z, idx)
    llvm_ir = fresh.inspect_llvm(fresh.signatures[0])
    for name in ("13data_gradient", "10_residuals"):
        body = _function_body(llvm_ir, name)
        assert "@NRT_incref(" not in body and "@NRT_decref(" not in body, name
    step = _function_body(llvm_ir, "13data_gradient")
    assert "numba_attempt_nocopy_reshape" not in step  # the residual keeps one reshape, for its exp
    assert len(re.findall(r"call i32 @numba_xxgemm\(", step)) >= 2
    G_ref = np.empty(m * C)
    data_gradient(SoftmaxLoss(C), C, rows, 0, m, targets, 0, n_k, batch, stream, W, G_ref, Xb, Z, idx)
    assert np.array_equal(G, G_ref)


def _sequential_margins(rows, row_base, m, idx, n, W, C):
    """Z[b, c] = sum_j x_b[j] W[j C + c], each sum in order of j from 0.0 (plain Python floats)."""
    Z = np.zeros((n, C))
    for b in range(n):
        for c in range(C):
            acc = 0.0
            for j in range(m):
                acc += float(rows[row_base + idx[b] * m + j]) * float(W[j * C + c])
            Z[b, c] = acc
    return Z


@pytest.mark.parametrize("n, m, C", [(8, 21, 10), (7, 21, 10), (24, 21, 1), (23, 61, 1), (3, 11, 7), (1, 4, 2)])
def test_small_minibatch_path_is_the_sequential_sums(n, m, C) -> None:
    """Below BLAS_MIN_WORK the step's products are loops whose every sum runs in index order (the
    kernels' bits): four rows at a time for the margins (with the leftover rows), C = 1 on its own
    for the gradient; both equal the sequential sums exactly, and the step takes that path."""
    from convergence.algorithms.local_steps import _loop_gradient, _loop_margins
    from problems.models.least_squares import LeastSquaresLoss

    assert n * m * C < BLAS_MIN_WORK
    rng = np.random.default_rng(n * 100 + m + C)
    row_base, n_k = 2 * m, 30
    rows, W = rng.normal(size=row_base + n_k * m), rng.normal(size=m * C)
    idx = rng.integers(0, n_k, n).astype(np.int64)
    Z = np.full((n + 2, C), np.nan)
    _loop_margins(C, rows, row_base, m, n, W, Z, idx)
    expected = _sequential_margins(rows, row_base, m, idx, n, W, C)
    assert np.array_equal(Z[:n], expected) and np.isnan(Z[n:]).all()
    G = np.full(m * C + 2, np.nan)
    _loop_gradient(C, rows, row_base, m, n, Z, G, idx)
    G_expected = np.zeros(m * C)
    for b in range(n):  # over b in order, per entry
        for j in range(m):
            for c in range(C):
                G_expected[j * C + c] += float(rows[row_base + idx[b] * m + j]) * float(Z[b, c])
    assert np.array_equal(G[:m * C], G_expected) and np.isnan(G[m * C:]).all()
    if C == 1:  # the whole step on least squares: residual (z - y) / n, exact in Python too
        targets = rng.normal(size=3 + n_k)
        stream = np.uint64(stream_key(np.uint64(seed_key(9)), 0, 0, 1))
        G_step, Zs, drawn = np.empty(m), np.empty((n, 1)), np.empty(n, dtype=np.int64)
        step = _fresh(data_gradient)
        step(LeastSquaresLoss(1), 1, rows, row_base, m, targets, 3, n_k, n, stream, W, G_step, np.empty(n * m), Zs,
             drawn)  # its own dispatcher: other tests' calls may have compiled a signed stream
        R = _sequential_margins(rows, row_base, m, drawn, n, W, 1)[:, 0]
        R = (R - targets[3 + drawn]) * (1.0 / n)
        G_ref = np.zeros(m)
        for b in range(n):
            for j in range(m):
                G_ref[j] += float(rows[row_base + drawn[b] * m + j]) * float(R[b])
        assert np.array_equal(G_step, G_ref)


def test_small_gradient_with_one_class_vectorises() -> None:
    """With C = 1 the small path's gradient is a loop over the row's features alone, which LLVM
    turns into vector multiplies and adds over contiguous loads (the general loop's innermost trip
    count is C = 1; signed indices would make the loads masked gathers)."""
    from convergence.algorithms.local_steps import _loop_gradient

    fresh = _fresh(_loop_gradient)
    fresh(1, np.ones(40), 0, 8, 4, np.ones((4, 1)), np.empty(8), np.arange(4, dtype=np.int64))
    body = _function_body(fresh.inspect_llvm(fresh.signatures[0]), "14_loop_gradient")
    assert re.search(r"fmul <\d+ x double>", body) and re.search(r"fadd <\d+ x double>", body)
    assert "masked.gather" not in body
