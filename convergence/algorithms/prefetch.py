"""A software prefetch for the Numba kernels: ask the CPU to bring one cache line into cache.

A minibatch step reads b random rows of its client's data (bench's W2: 24 rows of 61 doubles out
of a 17 MB data set, ~55% of them not in L2 when they are read); the rows of the next step are
known in advance (the counter-based sampler of ``_rng``), so the kernels prefetch them one step
ahead and the misses overlap the current step's arithmetic. A prefetch changes no value: results
are the same bits with or without it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]

_READ = 0
_KEEP_IN_ALL_LEVELS = 3
_DATA_CACHE = 1


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line holding ``array[index]`` (a 1-D array, an integer index; no bounds
    check: an address out of range is harmless, a prefetch never faults) for reading, into every
    cache level (LLVM's ``llvm.prefetch``; a no-op where the target has no prefetch instruction)."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [address, ir.Constant(i32, _READ), ir.Constant(i32, _KEEP_IN_ALL_LEVELS),
                          ir.Constant(i32, _DATA_CACHE)])
        return context.get_dummy_value()

    return types.none(array, index), codegen
