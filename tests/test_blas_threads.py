"""``problems.blas_threads.one_blas_thread``: every loaded BLAS on one thread inside, the
previous limits back outside, and libraries found again after new imports."""

import sys

import numpy
import scipy.linalg
from threadpoolctl import ThreadpoolController, threadpool_limits

from problems import blas_threads
from problems.blas_threads import one_blas_thread

LOADED = (numpy.__name__, scipy.linalg.__name__)
"""Imported for their BLAS libraries: NumPy's, and SciPy's, which the Numba kernels call."""


def _blas_threads() -> dict[str, int]:
    """Threads per loaded BLAS library, by file (a single-threaded build, such as the OpenBLAS that
    cvxpy's SCS solver ships, stays at 1 whatever limit is asked)."""
    return {lib["filepath"]: lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()}


def test_one_thread_inside_and_previous_limits_restored():
    with threadpool_limits(limits=2, user_api="blas"):
        outside = _blas_threads()
        assert 2 in outside.values()  # NumPy's threaded OpenBLAS took the limit of 2
        with one_blas_thread():
            assert set(_blas_threads().values()) == {1}
        assert _blas_threads() == outside


def test_controller_cached_until_the_modules_change(monkeypatch):
    with one_blas_thread():
        first = blas_threads._controller
    with one_blas_thread():
        assert blas_threads._controller is first  # no new scan: the same (count, controller)
    monkeypatch.setitem(sys.modules, "planted_new_extension", object())
    with one_blas_thread():
        assert blas_threads._controller is not first
        assert blas_threads._controller[0] == len(sys.modules)
