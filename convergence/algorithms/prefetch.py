"""A software prefetch for the Numba kernels: ask the CPU to bring one cache line into cache.

A minibatch step reads b random rows of its client's data (bench's W2: 24 rows of 61 doubles out
of a 17 MB data set, ~55% of them not in L2 when they are read); the rows of the next step are
known in advance (the counter-based sampler of ``_rng``), so the kernels prefetch them one step
ahead, with the line of each row's label (the softmax residual reads it), and the misses overlap
the current step's arithmetic. A prefetch changes no value: results
are the same bits with or without it.

The lines are asked for into L2, not L1 (LLVM locality 2, x86 ``prefetcht1``): on W2 (AMD EPYC,
Zen 4) the kernel prefetching into L2 ran 0.92x the CPU time of one prefetching nothing at E = 20
(5 alternating pairs, 0.86-0.94) and 0.98x at E = 80, while prefetching into every level
(``prefetcht0``, a burst of 192 lines a step) ran 1.03x and 1.05x of nothing: its misses held the
L1's fill buffers and stalled the step instead of overlapping it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]

_READ = 0
_INTO_L2 = 2
_DATA_CACHE = 1


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line holding ``array[index]`` (a 1-D array, an integer index; no bounds
    check: an address out of range is harmless, a prefetch never faults) for reading, into L2 and
    the levels beyond it (LLVM's ``llvm.prefetch`` with locality 2; a no-op where the target has no
    prefetch instruction)."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [address, ir.Constant(i32, _READ), ir.Constant(i32, _INTO_L2),
                          ir.Constant(i32, _DATA_CACHE)])
        return context.get_dummy_value()

    return types.none(array, index), codegen
