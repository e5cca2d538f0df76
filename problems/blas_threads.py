"""BLAS limited to one thread around a call, at the cost of a dictionary lookup.

``threadpool_limits(limits=1, user_api="blas")`` finds the loaded BLAS libraries anew on every
call (it walks the process's shared objects: ~4 ms, measured on bench's W2, whose 10-round run
takes ~75 ms: 5% of it, and more for the short runs of a sweep; 2.36 ms a call in a verify
worker). ``one_blas_thread`` keeps one ``ThreadpoolController`` and finds the libraries again
only when the number of imported modules has changed since (a new BLAS arrives with the import
of the extension that links it), so every library a call can reach is limited, as before, for
~0.02 ms a call. Its users: every kernel call (``convergence.run_seed``), the exact optima
(``optimum.exact_optimum``) and every claim's evaluator (``proofs_check.Claim.evaluate``). It
lives in the first layer so that all three share the one controller.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

__all__ = ["one_blas_thread"]

_controller: tuple[int, ThreadpoolController] | None = None
_lock = threading.Lock()


def _blas_controller() -> ThreadpoolController:
    """The cached controller, made anew when len(sys.modules) differs from when it was made."""
    global _controller
    with _lock:
        modules = len(sys.modules)
        if _controller is None or _controller[0] != modules:
            _controller = (modules, ThreadpoolController())
        return _controller[1]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Every loaded BLAS runs on one thread inside (the previous limits are restored on exit)."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield
