"""Matrix products over row-major blocks of flat arrays, by the BLAS calls ``np.dot`` makes, with
no array views.

``matmul(x, x_start, w, w_start, out, out_start, rows, inner, cols)`` writes

    out[out_start:][: rows cols] as (rows, cols) <- X W,

X (rows, inner) at x[x_start:], W (inner, cols) at w[w_start:], and ``matmul_t`` the same with X^T, where X (inner, rows) is stored at x[x_start:], all blocks
row-major and contiguous, the arrays C-contiguous of any number of dimensions (read as flat).
Each is the call Numba's ``np.dot(a, b, out)`` makes for ``a = x[...].reshape(rows, inner)`` (or
``x[...].reshape(inner, rows).T``), ``b = w[...].reshape(inner, cols)`` and ``out`` the 2-D view:
the same dispatch (an empty product zeroes ``out``; ``cols == 1`` is a matrix-vector product
(gemv) or, with ``rows == 1`` too, a dot; ``rows == 1`` alone a vector-matrix gemv; otherwise
gemm) through Numba's own BLAS wrappers (``numba.np.linalg.call_xxgemm`` etc.), with the same
transposition flags, sizes and leading dimensions, so the same bits. What it saves is the views:
in a minibatch step of the linear kernels every ``reshape``, slice and transpose that feeds
``np.dot`` is an NRT reference count (an atomic increment and decrement) and often a call to
Numba's reshape helper, and ``np.dot`` itself counts its operands; bench's W2 step made 20-odd of
them.

No bounds are checked (the kernels size their blocks); the dtypes must agree (float32 or float64).
The wrappers are Numba internals, not public API: a Numba release that changes them shows in
``tests/test_flat_products.py``, which compares every branch with Numba's ``np.dot`` bit for bit.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.linalg import (
    call_xxdot,
    call_xxgemm,
    call_xxgemv,
    check_c_int,
    ensure_blas,
)

__all__ = ["matmul", "matmul_t"]


def _check(x, w, out, ints):
    arrays = (x, w, out)
    if not all(isinstance(a, types.Array) and a.layout == "C" for a in arrays):
        return False
    if not all(isinstance(i, types.Integer) for i in ints):
        return False
    return x.dtype == w.dtype == out.dtype and x.dtype in (types.float32, types.float64)


def _typed(x_layout: str, x, x_start, w, w_start, out, out_start, rows, inner, cols):
    """The signature and code generator of a product whose X is stored row-major as itself
    (``x_layout`` "C") or as X^T ("F")."""
    if not _check(x, w, out, (x_start, w_start, out_start, rows, inner, cols)):
        return None

    def codegen(context, builder, sig, args):
        ensure_blas()
        dtype = sig.args[0].dtype
        x_ty, w_ty, out_ty = (types.Array(dtype, 2, layout) for layout in (x_layout, "C", "C"))

        def pointer(i_array, i_start):
            data = context.make_array(sig.args[i_array])(context, builder, args[i_array]).data
            start = context.cast(builder, args[i_start], sig.args[i_start], types.intp)
            return builder.gep(data, [start])

        x_data, w_data, out_data = pointer(0, 1), pointer(2, 3), pointer(4, 5)
        rows, inner, cols = (context.cast(builder, args[i], sig.args[i], types.intp) for i in (6, 7, 8))
        for n in (rows, inner, cols):
            check_c_int(context, builder, n)
        x_shapes, w_shapes, out_shapes = (rows, inner), (inner, cols), (rows, cols)
        zero, one = context.get_constant(types.intp, 0), context.get_constant(types.intp, 1)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(dtype)))
        empty = builder.or_(builder.icmp_signed("==", inner, zero),
                            builder.or_(builder.icmp_signed("==", rows, zero), builder.icmp_signed("==", cols, zero)))
        # numba.np.linalg.dot_3_mm's dispatch, branch for branch
        with builder.if_else(empty, likely=False) as (is_empty, nonempty):
            with is_empty:
                cgutils.memset(builder, out_data, builder.mul(builder.mul(rows, cols), itemsize), 0)
            with nonempty:
                is_left_vec = builder.icmp_signed("==", rows, one)
                is_right_vec = builder.icmp_signed("==", cols, one)
                with builder.if_else(is_right_vec) as (r_vec, r_mat):
                    with r_vec, builder.if_else(is_left_vec) as (v_v, m_v):
                        with v_v:
                            call_xxdot(context, builder, False, dtype, inner, x_data, w_data, out_data)
                        with m_v:
                            call_xxgemv(context, builder, x_ty.layout == out_ty.layout, x_ty, x_shapes, x_data,
                                        w_data, out_data)
                    with r_mat, builder.if_else(is_left_vec) as (v_m, m_m):
                        with v_m:
                            call_xxgemv(context, builder, w_ty.layout != out_ty.layout, w_ty, w_shapes, w_data,
                                        x_data, out_data)
                        with m_m:
                            call_xxgemm(context, builder, x_ty, x_shapes, x_data, w_ty, w_shapes, w_data,
                                        out_ty, out_shapes, out_data)
        return context.get_dummy_value()

    return types.none(x, x_start, w, w_start, out, out_start, rows, inner, cols), codegen


@intrinsic
def matmul(typingctx, x, x_start, w, w_start, out, out_start, rows, inner, cols):
    """out (rows, cols) at out[out_start:] <- X W with X (rows, inner) at x[x_start:] and W
    (inner, cols) at w[w_start:] (module docstring)."""
    return _typed("C", x, x_start, w, w_start, out, out_start, rows, inner, cols)


@intrinsic
def matmul_t(typingctx, x, x_start, w, w_start, out, out_start, rows, inner, cols):
    """out (rows, cols) at out[out_start:] <- X^T W with X (inner, rows) at x[x_start:] and W
    (inner, cols) at w[w_start:] (module docstring)."""
    return _typed("F", x, x_start, w, w_start, out, out_start, rows, inner, cols)
