"""The Numba path of a whole network: forward, predictions, loss, backward and SGD steps over the
layout table.

Everything here takes plain arrays as arguments (the layout's int64 table, the flat parameters,
the images, labels and preallocated work buffers), never a Python object, so a caller's own
kernel (an algorithm's round loop) can call ``network_loss_grad`` in its step loop without
reference-counted tuple reads (``docs/architecture.md``, "The model oracle"). Work buffers, for a
batch of B: ``acts`` and ``dacts`` (B * layout.activation_size,) of the parameters' dtype and
``pool_index`` (B * layout.pool_index_size,) int8; ``grad`` has the parameters' length and dtype.
The layer functions are those of ``conv2d``, ``max_pool``, ``relu``, ``tanh``, ``dense``, ``cross_entropy``.

Each conv layer takes one of two paths (``conv2d_gemm.conv2d_uses_gemm``, by its shape): the planar
filters (``conv2d``) or im2col and one BLAS product per pass and batch (``conv2d_gemm``); dense
layers call BLAS above ``dense.DENSE_BLAS_MIN_WORK``. The convolutions' scratch (the GEMM layers'
patch matrices for the batch, then one buffer of the largest ``conv2d_planar_scratch_size`` over
the planar layers, per image) is allocated once per call of ``network_forward`` or
``network_loss_grad``, and once per call of ``sgd_steps`` for all its steps.

Calls by address (``loss_grad_address``, ``call_loss_grad``, ``network_loss_grad_at``): the
round loops call the network's loss and gradient through the address of ``_loss_grad``'s machine
code, compiled (or loaded from Numba's cache) once per dtype and process. Numba links the library of
every compiled callee into its caller's and runs LLVM's optimiser over the whole linked module again
(``numba.core.codegen.CodeLibrary.finalize``), so each compiled function above ``_loss_grad`` (a round
loop, its model pieces, the step helpers) re-optimised the whole network once more when it was
built: 3-5 s of a cold compile per function and dtype. Called by address, nothing of the network
is linked into the caller, whose compile costs its own code only; a call costs what a call that
LLVM does not inline costs. The address belongs to the process that took it: the round loops'
bundles that hold it (``NetworkClients``, ``NetworkCyclicData``) are built where their kernel runs,
once per seed. The arguments' types must be ``loss_grad_args``' (C-contiguous, writable arrays of
the parameters' dtype); other types are a typing error naming the argument, never a call of code
compiled for other types.

Numba's ``np.dot`` loads SciPy's BLAS at its first call; this module imports it on import, so that
a BLAS thread limit set afterwards (``problems.blas_threads.one_blas_thread``, bench's
``threadpool_limits``) finds and limits it (else it would run on every core, spinning under load).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg.cython_blas  # noqa: F401  (loads the BLAS of np.dot: module docstring)
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.callconv import excinfo_t
from numba.core.errors import TypingError
from numba.extending import intrinsic

from .conv2d import (
    conv2d_backward_input_planar,
    conv2d_backward_params_planar,
    conv2d_forward_planar,
    conv2d_planar_scratch_size,
)
from .conv2d_gemm import (
    conv2d_backward_input_gemm,
    conv2d_backward_params_gemm,
    conv2d_forward_gemm,
    conv2d_patches_size,
    conv2d_uses_gemm,
)
from .cross_entropy import cross_entropy
from .dense import dense_backward_input, dense_backward_params, dense_forward
from .layout import (
    COL_IN_C,
    COL_IN_H,
    COL_IN_W,
    COL_KERNEL,
    COL_OP,
    COL_OUT_ACT,
    COL_OUT_C,
    OP_CONV,
    OP_DENSE,
    OP_POOL,
    OP_RELU,
    OP_TANH,
)
from .max_pool import max_pool_backward, max_pool_forward
from .relu import relu_backward, relu_forward
from .tanh import tanh_backward, tanh_forward

__all__ = [
    "call_loss_grad", "loss_grad_address", "loss_grad_args", "network_forward", "network_loss_grad",
    "network_loss_grad_at", "network_predict", "sgd_steps",
]


@njit(cache=True)
def _patches_before(table, end, batch):
    """Entries of the patch matrices (``conv2d_gemm``) of the GEMM conv layers before layer ``end``
    at batch ``batch``: where layer ``end``'s patches start in the scratch (``end`` = the number of
    layers: their total)."""
    total = 0
    for l in range(end):
        if table[l, COL_OP] == OP_CONV and conv2d_uses_gemm(table[l, COL_IN_C], table[l, COL_OUT_C], table[l, COL_KERNEL]):
            total += conv2d_patches_size(batch, table[l, COL_IN_H], table[l, COL_IN_W], table[l, COL_IN_C], table[l, COL_KERNEL])
    return total


@njit(cache=True)
def _scratch(table, batch, dtype_of):
    """The convolutions' scratch for the conv layers of ``table`` at batch size ``batch`` (or less),
    of the dtype of ``dtype_of``: every GEMM layer's patch matrix, then one planar scratch (the
    largest over the planar layers)."""
    size = 0
    for l in range(table.shape[0]):
        h, w, c, k, oc = table[l, COL_IN_H], table[l, COL_IN_W], table[l, COL_IN_C], table[l, COL_KERNEL], table[l, COL_OUT_C]
        if table[l, COL_OP] == OP_CONV and not conv2d_uses_gemm(c, oc, k):
            size = max(size, conv2d_planar_scratch_size(h, w, c, k, oc))
    return np.empty(_patches_before(table, table.shape[0], batch) + size, dtype=dtype_of.dtype)


@njit(cache=True)
def network_forward(table, params, images, acts, pool_index):
    """Run the layers on images (B, H, W, C): acts <- every activation; returns the logits (B, classes)
    as a view of ``acts``."""
    return _forward(table, params, images, acts, pool_index, _scratch(table, images.shape[0], acts))


@njit(cache=True)
def network_predict(table, params, images, acts, pool_index, classes):
    """classes[i] <- the predicted class of images[i] (n, H, W, C): the first largest logit (the
    rule of ``np.argmax``: a tie goes to the smaller class, a NaN logit wins), computed in the
    parameters' dtype in chunks of B = acts.size // layout.activation_size images (``acts`` and
    ``pool_index`` sized for B as in the module docstring; one scratch for all chunks). classes (n,)
    int64."""
    L = table.shape[0]
    n_classes = table[L - 1, COL_OUT_C]
    per_image = table[L - 1, COL_OUT_ACT] + n_classes
    chunk = acts.size // per_image
    n = images.shape[0]
    scratch = _scratch(table, min(n, chunk), acts)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        logits = _forward(table, params, images[lo:hi], acts, pool_index, scratch)
        for i in range(hi - lo):
            best, top = 0, logits[i, 0]
            for j in range(1, n_classes):
                v = logits[i, j]
                if v > top or (v != v and top == top):  # np.argmax: the first NaN, else the first maximum
                    best, top = j, v
            classes[lo + i] = best
    return classes


@njit(cache=True)
def _forward(table, params, images, acts, pool_index, scratch):
    """``network_forward`` with the convolutions' scratch given."""
    B = images.shape[0]
    n_in = images.shape[1] * images.shape[2] * images.shape[3]
    acts[: B * n_in].reshape(images.shape)[...] = images
    planar = scratch[_patches_before(table, table.shape[0], B) :]
    patches_at = 0
    for l in range(table.shape[0]):
        op, h, w, c, oh, ow, oc, k, p, ia, oa, ga = table[l]
        x = acts[B * ia : B * (ia + h * w * c)]
        y = acts[B * oa : B * (oa + oh * ow * oc)]
        if op == OP_CONV:
            nw = k * k * c * oc
            x4 = x.reshape((B, h, w, c))
            w4 = params[p : p + nw].reshape((k, k, c, oc))
            y4 = y.reshape((B, oh, ow, oc))
            if conv2d_uses_gemm(c, oc, k):
                conv2d_forward_gemm(x4, w4, params[p + nw : p + nw + oc], y4, scratch[patches_at:])
                patches_at += conv2d_patches_size(B, h, w, c, k)
            else:
                conv2d_forward_planar(x4, w4, params[p + nw : p + nw + oc], y4, planar)
        elif op == OP_RELU:
            relu_forward(x, y)
        elif op == OP_TANH:
            tanh_forward(x, y)
        elif op == OP_POOL:
            arg = pool_index[B * ga : B * (ga + oh * ow * oc)]
            max_pool_forward(x.reshape((B, h, w, c)), y.reshape((B, oh, ow, oc)), arg.reshape((B, oh, ow, oc)))
        elif op == OP_DENSE:
            nw = c * oc
            w2 = params[p : p + nw].reshape((c, oc))
            dense_forward(x.reshape((B, c)), w2, params[p + nw : p + nw + oc], y.reshape((B, oc)))
    classes = table[table.shape[0] - 1, COL_OUT_C]
    logits_at = B * table[table.shape[0] - 1, COL_OUT_ACT]
    return acts[logits_at : logits_at + B * classes].reshape((B, classes))


@njit(cache=True)
def network_loss_grad(table, params, images, labels, acts, dacts, pool_index, grad):
    """The minibatch's mean cross-entropy (float64); grad <- its gradient in the flat layout."""
    return _loss_grad(table, params, images, labels, acts, dacts, pool_index, grad, _scratch(table, images.shape[0], acts))


@njit(cache=True)
def _loss_grad(table, params, images, labels, acts, dacts, pool_index, grad, scratch):
    """``network_loss_grad`` with the convolutions' scratch given."""
    B = images.shape[0]
    logits = _forward(table, params, images, acts, pool_index, scratch)
    L = table.shape[0]
    classes = table[L - 1, COL_OUT_C]
    logits_at = B * table[L - 1, COL_OUT_ACT]
    dlogits = dacts[logits_at : logits_at + B * classes].reshape((B, classes))
    loss = cross_entropy(logits, labels, dlogits)
    planar = scratch[_patches_before(table, L, B) :]
    for l in range(L - 1, -1, -1):
        op, h, w, c, oh, ow, oc, k, p, ia, oa, ga = table[l]
        x = acts[B * ia : B * (ia + h * w * c)]
        g = dacts[B * oa : B * (oa + oh * ow * oc)]
        dx = dacts[B * ia : B * (ia + h * w * c)]
        if op == OP_CONV:
            nw = k * k * c * oc
            x4 = x.reshape((B, h, w, c))
            g4 = g.reshape((B, oh, ow, oc))
            dw4, db = grad[p : p + nw].reshape((k, k, c, oc)), grad[p + nw : p + nw + oc]
            w4 = params[p : p + nw].reshape((k, k, c, oc))
            if conv2d_uses_gemm(c, oc, k):
                patches = scratch[_patches_before(table, l, B) :]
                conv2d_backward_params_gemm(x4.shape, k, g4, dw4, db, patches)
                if l > 0:
                    conv2d_backward_input_gemm(w4, g4, dx.reshape((B, h, w, c)), patches)
            else:
                conv2d_backward_params_planar(x4, g4, dw4, db, planar)
                if l > 0:
                    conv2d_backward_input_planar(w4, g4, dx.reshape((B, h, w, c)), planar)
        elif op == OP_RELU:
            relu_backward(x, g, dx)
        elif op == OP_TANH:
            tanh_backward(acts[B * oa : B * (oa + oh * ow * oc)], g, dx)
        elif op == OP_POOL:
            arg = pool_index[B * ga : B * (ga + oh * ow * oc)]
            max_pool_backward(arg.reshape((B, oh, ow, oc)), g.reshape((B, oh, ow, oc)), dx.reshape((B, h, w, c)))
        elif op == OP_DENSE:
            nw = c * oc
            x2 = x.reshape((B, c))
            g2 = g.reshape((B, oc))
            dense_backward_params(x2, g2, grad[p : p + nw].reshape((c, oc)), grad[p + nw : p + nw + oc])
            if l > 0:
                dense_backward_input(params[p : p + nw].reshape((c, oc)), g2, dx.reshape((B, c)))
    return loss


@njit(cache=True)
def sgd_steps(table, params, images, labels, batch, lr, n_steps, acts, dacts, pool_index, grad):
    """n_steps plain SGD steps theta <- theta - lr grad in place, step s on the minibatch of rows
    [(s b) mod n, (s b) mod n + b) of images (n, H, W, C) (n a multiple of b); returns the last loss."""
    n = images.shape[0]
    scratch = _scratch(table, batch, acts)
    loss = 0.0
    for s in range(n_steps):
        start = (s * batch) % n
        loss = _loss_grad(
            table, params, images[start : start + batch], labels[start : start + batch], acts, dacts, pool_index,
            grad, scratch,
        )
        for i in range(params.size):
            params[i] -= lr * grad[i]
    return loss


def loss_grad_args(dtype: types.Float) -> tuple[types.Array, ...]:
    """``_loss_grad``'s argument types as the round loops call it, for parameters of
    ``dtype``: table (L, 12) int64, params (d,), images (B, H, W, C), labels (B,) int64, acts and
    dacts, pool_index int8, grad (d,), scratch; every array C-contiguous and writable."""
    vec = types.Array(dtype, 1, "C")
    return (types.Array(types.int64, 2, "C"), vec, types.Array(dtype, 4, "C"), types.Array(types.int64, 1, "C"),
            vec, vec, types.Array(types.int8, 1, "C"), vec, vec)


def loss_grad_address(dtype: np.dtype | type) -> int:
    """The address of ``_loss_grad``'s machine code for parameters of ``dtype`` (float32 or
    float64) in this process, compiled or loaded from Numba's cache on first use."""
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype: expected float32 or float64, got {dt}")
    args = loss_grad_args(types.float32 if dt == np.float32 else types.float64)
    if args not in _loss_grad.overloads:
        _loss_grad.compile(args)
    compiled = _loss_grad.overloads[args]
    return compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)


@intrinsic
def call_loss_grad(typingctx, address, table, params, images, labels, acts, dacts, pool_index, grad, scratch):
    """``_loss_grad(table, params, ..., scratch)`` through the machine code at ``address``
    (``loss_grad_address`` of the parameters' dtype): returns the loss (float64), grad <- the gradient."""
    args = (table, params, images, labels, acts, dacts, pool_index, grad, scratch)
    if not isinstance(address, types.Integer):
        raise TypingError(f"address: expected an integer (loss_grad_address), got {address}")
    if not isinstance(params, types.Array) or params.dtype not in (types.float32, types.float64):
        raise TypingError(f"params: expected a float32 or float64 array, got {params}")
    names = ("table", "params", "images", "labels", "acts", "dacts", "pool_index", "grad", "scratch")
    for name, got, want in zip(names, args, loss_grad_args(params.dtype)):
        if got != want:
            raise TypingError(f"{name}: expected {want} (_loss_grad's compiled signature), got {got}")
    signature = types.float64(address, *args)

    def codegen(context, builder, sig, llargs):
        argtypes = sig.args[1:]
        callconv = context.call_conv
        callee = builder.inttoptr(llargs[0], callconv.get_function_type(types.float64, argtypes).as_pointer())
        result_type = callconv.get_return_type(types.float64).pointee
        result = cgutils.alloca_once(builder, result_type)
        builder.store(cgutils.get_null_value(result_type), result)
        excinfo = cgutils.alloca_once(builder, ir.PointerType(excinfo_t), name="excinfo")
        packed = list(callconv._get_arg_packer(argtypes).as_arguments(builder, llargs[1:]))
        code = builder.call(callee, [result, excinfo] + packed)
        status = callconv._get_return_status(builder, code, builder.load(excinfo))
        with cgutils.if_unlikely(builder, status.is_error):
            callconv.return_status_propagate(builder, status)
        return context.get_returned_value(builder, types.float64, builder.load(result))

    return signature, codegen


@njit(cache=True, inline="always")
def network_loss_grad_at(address, table, params, images, labels, acts, dacts, pool_index, grad):
    """``network_loss_grad`` through ``address`` (``loss_grad_address``): the minibatch's mean
    cross-entropy (float64), grad <- its gradient; the convolutions' scratch allocated per call."""
    return call_loss_grad(address, table, params, images, labels, acts, dacts, pool_index, grad,
                          _scratch(table, images.shape[0], acts))
