"""The dot product of the CNN kernels' reductions: sum_t a[t] b[t] over two 1-D arrays of one length.

Compiled with reassociation and FMA contraction allowed (``fastmath={"reassoc", "contract"}``,
nothing else: no assumptions about NaN or infinity), so LLVM vectorises it into partial sums,
which a plain loop's sequential order forbids. The order of those partial sums is fixed by the
compiled code: bit-reproducible on one machine and for any thread count (the kernels call it
serially), not across machines whose vector widths or FMA support differ. It sums in the dtype of ``a`` (float32 on the fast
path), as the loops it replaces did.
"""

from __future__ import annotations

from numba import njit

__all__ = ["dot"]


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot(a, b):
    """sum_t a[t] b[t] (a, b 1-D of one length), in a's dtype."""
    s = a.dtype.type(0)
    for t in range(a.shape[0]):
        s += a[t] * b[t]
    return s
