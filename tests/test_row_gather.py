"""The minibatch row gather and prefetch of the local-SGD kernels (``local_steps.gather_rows``,
``local_steps.prefetch_minibatch``).

``gather_rows`` must copy exactly the sampled rows, and compile to a contiguous vector copy: with
signed flat indices Numba adds negative-index wraparound and LLVM turns the copy into masked
gathers (``vgatherqpd``), which made bench's W2 client-step ~0.6 us slower; that regression is
what the code-generation tests catch, on the routine and on the whole minibatch step. The prefetch changes no value: the kernel gives the same
bits as the NumPy reference's rows (``tests/test_fedavg_kernel.py``), and here it is called on the
edge rows of a client without touching anything.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

from convergence._rng import sample_index, seed_key, stream_key
from convergence.algorithms.local_steps import gather_rows, prefetch_minibatch


def test_gather_rows_copies_the_sampled_rows() -> None:
    rng = np.random.default_rng(0)
    n_rows, m, first = 50, 13, 3
    rows = rng.normal(size=(first + n_rows) * m)
    idx = rng.integers(0, n_rows, 24)
    idx[:2] = 0, n_rows - 1  # the client's first and last rows
    Xb = np.full(30 * m, np.nan)
    gather_rows(rows, first * m, m, idx, 24, Xb)
    expected = rows[first * m:].reshape(n_rows, m)[idx]
    assert np.array_equal(Xb[: 24 * m].reshape(24, m), expected)
    assert np.isnan(Xb[24 * m:]).all()  # nothing past the n rows asked for is written


def test_gather_rows_compiles_to_a_vector_copy() -> None:
    fresh = njit(gather_rows.py_func)  # a fresh compilation: Numba cannot inspect cached code
    rows, Xb, idx = np.random.default_rng(1).normal(size=1000), np.empty(100), np.arange(5, dtype=np.int64)
    fresh(rows, 3, 10, idx, 5, Xb)
    llvm_ir = fresh.inspect_llvm(fresh.signatures[0])
    assert "masked.gather" not in llvm_ir
    assert re.search(r"load <\d+ x double>", llvm_ir), "the row copy is not vectorised"


def test_prefetch_reads_the_minibatch_without_writing() -> None:
    rng = np.random.default_rng(2)
    n_k, m, batch = 7, 5, 40
    rows, targets = rng.normal(size=n_k * m), rng.integers(0, 3, n_k).astype(np.float64)
    before = rows.copy(), targets.copy()
    stream = stream_key(seed_key(3), 4, 0, 1)
    drawn = {sample_index(stream, b, n_k) for b in range(batch)}
    assert drawn == set(range(n_k))  # every row, the last one included, is prefetched
    prefetch_minibatch(rows, 0, m, targets, 0, n_k, batch, stream)
    assert np.array_equal(rows, before[0]) and np.array_equal(targets, before[1])


def test_minibatch_gradient_step_has_no_masked_gathers() -> None:
    """The whole BLAS-path step (sampler, gather, products, softmax residual) compiled fresh: no
    masked gathers anywhere, and its gradient is X_b' r / b from NumPy's rows (to 1e-12)."""
    from convergence.algorithms.local_steps import BLAS_MIN_WORK, data_gradient
    from problems.models.softmax import SoftmaxLoss

    rng = np.random.default_rng(4)
    n_k, m, C, batch = 40, 61, 10, 24
    assert batch * m * C >= BLAS_MIN_WORK  # the BLAS path, bench's W2 shapes
    rows, targets = rng.normal(size=n_k * m), rng.integers(0, C, n_k).astype(np.float64)
    W, G = rng.normal(size=m * C) * 0.1, np.empty(m * C)
    Xb, Z, idx = np.empty(batch * m), np.empty((batch, C)), np.empty(batch, dtype=np.int64)
    stream = stream_key(seed_key(5), 2, 0, 1)
    fresh = njit(data_gradient.py_func)
    fresh(SoftmaxLoss(C), C, rows, 0, m, targets, 0, n_k, batch, stream, W, G, Xb, Z, idx)
    assert "masked.gather" not in fresh.inspect_llvm(fresh.signatures[0])
    X = rows.reshape(n_k, m)[[sample_index(stream, b, n_k) for b in range(batch)]]
    logits = X @ W.reshape(m, C)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    P[np.arange(batch), targets[idx].astype(np.int64)] -= 1.0
    np.testing.assert_allclose(G, (X.T @ P / batch).reshape(-1), rtol=1e-12, atol=1e-15)
