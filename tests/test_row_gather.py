"""The minibatch row gather and prefetch of the local-SGD kernels (``local_steps.gather_rows``,
``local_steps.prefetch_minibatch``).

``gather_rows`` must copy exactly the sampled rows, and compile to a contiguous vector copy: with
signed flat indices Numba adds negative-index wraparound and LLVM turns the copy into masked
gathers (``vgatherqpd``), which made bench's W2 client-step ~0.6 us slower; that regression is
what the code-generation test catches. The prefetch changes no value: the kernel gives the same
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
