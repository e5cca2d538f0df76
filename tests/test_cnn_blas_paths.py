"""The CNN kernel's BLAS paths (problems.models.cnn): the im2col + GEMM convolution
(``conv2d_gemm``) and the dense layers' BLAS products against the NumPy im2col twin (float64,
<= 1e-12 relative) and float32 against float64 (1e-5: sums of up to a few hundred float32 terms of
size ~1, rounding ~6e-8 each); their bits independent of BLAS's thread count and of the patch
buffer's contents; and the network taking each path where its rule says (a test that fails when a
layer runs the other path: the two paths' bits differ on these inputs, checked first)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from problems.models.cnn import digits_net, lenet5, tutorial_cifar_net
from problems.models.cnn.conv2d import (
    conv2d_backward_np,
    conv2d_forward_np,
    conv2d_forward_planar,
    conv2d_planar_scratch_size,
)
from problems.models.cnn.conv2d_gemm import (
    GEMM_CHUNK_ENTRIES,
    conv2d_backward_input_gemm,
    conv2d_forward_chunk_images,
    conv2d_backward_params_gemm,
    conv2d_forward_gemm,
    conv2d_patches_size,
    conv2d_uses_gemm,
)
from problems.models.cnn.dense import (
    DENSE_BLAS_MIN_WORK,
    dense_backward_input,
    dense_backward_input_path,
    dense_backward_np,
    dense_backward_params,
    dense_backward_params_path,
    dense_forward,
    dense_forward_np,
    dense_forward_path,
    dense_uses_blas,
)
from problems.models.cnn.kernel import network_forward
from problems.models.cnn.layout import (
    COL_IN_ACT,
    COL_OP,
    COL_OUT_ACT,
    OP_CONV,
    OP_DENSE,
)

RNG = np.random.default_rng(29)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def gemm_pass(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray, patches: np.ndarray):
    """(y, dw, db, dx) of the GEMM path in the network's order (forward, weight gradient, input
    gradient), every output prefilled with NaN."""
    B, H, W, _ = x.shape
    K, _, _, CO = w.shape
    y = np.full((B, H - K + 1, W - K + 1, CO), np.nan, dtype=x.dtype)
    dw, db, dx = np.full_like(w, np.nan), np.full_like(b, np.nan), np.full_like(x, np.nan)
    conv2d_forward_gemm(x, w, b, y, patches)
    conv2d_backward_params_gemm(x.shape, K, g, dw, db, patches)
    conv2d_backward_input_gemm(w, g, dx, patches)
    return y, dw, db, dx


def conv_case(shape: tuple[int, ...], k: int, c_out: int, dtype: type = np.float64):
    x = RNG.normal(size=shape).astype(dtype)
    w = RNG.normal(size=(k, k, shape[3], c_out)).astype(dtype)
    b = RNG.normal(size=c_out).astype(dtype)
    g = RNG.normal(size=(shape[0], shape[1] - k + 1, shape[2] - k + 1, c_out)).astype(dtype)
    return x, w, b, g


# K = 1, a kernel as large as the input (one output per channel), rectangular inputs, the
# tutorial net's second layer at batch 2 and 32, LeNet-5's and the digits net's layers.
SHAPES = [
    ((2, 6, 9, 3), 1, 8),
    ((3, 8, 8, 1), 3, 8),
    ((1, 8, 8, 2), 8, 16),
    ((2, 9, 11, 2), 4, 9),
    ((2, 14, 14, 6), 5, 16),
    ((32, 14, 14, 6), 5, 16),
    ((7, 14, 14, 6), 5, 16),
    ((2, 12, 12, 6), 5, 16),
]


@pytest.mark.parametrize(("shape", "k", "c_out"), SHAPES)
def test_gemm_conv_matches_im2col_reference(shape: tuple[int, ...], k: int, c_out: int) -> None:
    x, w, b, g = conv_case(shape, k, c_out)
    patches = np.empty(conv2d_patches_size(*shape, k))
    y, dw, db, dx = gemm_pass(x, w, b, g, patches)
    dw_ref, db_ref, dx_ref = conv2d_backward_np(x, w, g)
    assert rel(y, conv2d_forward_np(x, w, b)) <= 1e-12
    assert rel(dw, dw_ref) <= 1e-12 and rel(db, db_ref) <= 1e-12 and rel(dx, dx_ref) <= 1e-12


def test_forward_chunks_fit_the_budget_and_give_the_bits_of_one_image_at_a_time() -> None:
    """The forward pass builds and multiplies the patch matrix in chunks of whole images within
    GEMM_CHUNK_ENTRIES (the tutorial net's conv2: 15,000 entries per image, chunks of 4; a batch
    below a chunk is one chunk; an image above the budget is a chunk alone); every output row has
    the bits it has when each image runs alone (BLAS's row sums do not depend on the chunk), at
    batch 32 (8 chunks) and 7 (a chunk of 4 and one of 3), in float32 and float64."""
    assert GEMM_CHUNK_ENTRIES // 15_000 == 4
    assert conv2d_forward_chunk_images(32, 14, 14, 6, 5) == 4
    assert conv2d_forward_chunk_images(2, 14, 14, 6, 5) == 2
    assert conv2d_forward_chunk_images(32, 12, 12, 6, 5) == 6  # LeNet-5's conv2: 9,600 entries per image
    assert conv2d_forward_chunk_images(3, 200, 200, 8, 5) == 1
    for batch in (32, 7):
        for dtype in (np.float32, np.float64):
            x, w, b, _ = conv_case((batch, 14, 14, 6), 5, 16, dtype)
            whole = np.full((batch, 10, 10, 16), np.nan, dtype)
            with threadpool_limits(limits=1, user_api="blas"):
                conv2d_forward_gemm(x, w, b, whole, np.empty(conv2d_patches_size(batch, 14, 14, 6, 5), dtype))
                alone = np.full_like(whole, np.nan)
                for n in range(batch):
                    conv2d_forward_gemm(x[n : n + 1], w, b, alone[n : n + 1], np.empty(15_000, dtype))
            assert np.array_equal(whole, alone)


def test_gemm_conv_float32_matches_float64() -> None:
    shape, k, c_out = (4, 14, 14, 6), 5, 16
    case = conv_case(shape, k, c_out)
    out64 = gemm_pass(*case, np.empty(conv2d_patches_size(*shape, k)))
    out32 = gemm_pass(*(a.astype(np.float32) for a in case), np.empty(conv2d_patches_size(*shape, k), np.float32))
    for a32, a64 in zip(out32, out64):
        assert a32.dtype == np.float32 and rel(a32.astype(np.float64), a64) <= 1e-5


def test_gemm_bits_do_not_depend_on_the_patch_buffer_or_blas_threads() -> None:
    """A NaN-filled patch buffer twice the size gives the same bits (every entry read is written
    first), and so do one and two BLAS threads (gemm splits the output, not the inner sums), for
    the convolution and for the dense products at the tutorial net's batch-32 shapes."""
    shape, k, c_out = (32, 14, 14, 6), 5, 16
    case = conv_case(shape, k, c_out, np.float32)
    size = conv2d_patches_size(*shape, k)
    with threadpool_limits(limits=1, user_api="blas"):
        base = gemm_pass(*case, np.zeros(size, np.float32))
        again = gemm_pass(*case, np.full(2 * size, np.nan, np.float32))
        dense_one = dense_outputs(32, 400, 120, np.float32, seed=3)
    with threadpool_limits(limits=2, user_api="blas"):
        two = gemm_pass(*case, np.zeros(size, np.float32))
        dense_two = dense_outputs(32, 400, 120, np.float32, seed=3)
    for got in (again, two):
        for a, b in zip(got, base):
            assert np.array_equal(a, b)
    for a, b in zip(dense_two, dense_one):
        assert np.array_equal(a, b)


def dense_outputs(batch: int, d_in: int, d_out: int, dtype: type, seed: int, blas: bool | None = None):
    """(y, dw, db, dx) of the dense layer's three functions (``blas`` None: by the rule)."""
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(batch, d_in)).astype(dtype), rng.normal(size=(d_in, d_out)).astype(dtype)
    b, g = rng.normal(size=d_out).astype(dtype), rng.normal(size=(batch, d_out)).astype(dtype)
    y, dw, db, dx = np.empty((batch, d_out), dtype), np.empty_like(w), np.empty_like(b), np.empty_like(x)
    if blas is None:
        dense_forward(x, w, b, y)
        dense_backward_params(x, g, dw, db)
        dense_backward_input(w, g, dx)
    else:
        dense_forward_path(x, w, b, y, blas)
        dense_backward_params_path(x, g, dw, db, blas)
        dense_backward_input_path(w, g, dx, blas)
    return y, dw, db, dx


@pytest.mark.parametrize(("batch", "d_in", "d_out"), [(2, 84, 10), (2, 400, 120), (32, 120, 84), (1, 72, 32)])
@pytest.mark.parametrize("blas", [False, True])
def test_dense_paths_match_the_reference(batch: int, d_in: int, d_out: int, blas: bool) -> None:
    y, dw, db, dx = dense_outputs(batch, d_in, d_out, np.float64, seed=batch + d_in, blas=blas)
    rng = np.random.default_rng(batch + d_in)
    x, w = rng.normal(size=(batch, d_in)), rng.normal(size=(d_in, d_out))
    b, g = rng.normal(size=d_out), rng.normal(size=(batch, d_out))
    dw_ref, db_ref, dx_ref = dense_backward_np(x, w, g)
    assert rel(y, dense_forward_np(x, w, b)) <= 1e-12
    assert rel(dw, dw_ref) <= 1e-12 and rel(db, db_ref) <= 1e-12 and rel(dx, dx_ref) <= 1e-12


@pytest.mark.parametrize(("batch", "d_in", "d_out"), [(2, 84, 10), (32, 400, 120), (2, 400, 120), (1, 32, 10)])
def test_dense_layer_takes_the_path_of_its_rule(batch: int, d_in: int, d_out: int) -> None:
    """The rule (BLAS from DENSE_BLAS_MIN_WORK multiply-adds) and the bits of the path it names;
    the two paths differ on these inputs (so a wrong path would fail the check)."""
    blas = batch * d_in * d_out >= DENSE_BLAS_MIN_WORK
    assert dense_uses_blas(batch, d_in, d_out) == blas
    by_rule = dense_outputs(batch, d_in, d_out, np.float32, seed=7)
    named = dense_outputs(batch, d_in, d_out, np.float32, seed=7, blas=blas)
    other = dense_outputs(batch, d_in, d_out, np.float32, seed=7, blas=not blas)
    assert all(np.array_equal(a, b) for a, b in zip(by_rule, named))
    assert not all(np.array_equal(a, b) for a, b in zip(by_rule, other))


@pytest.mark.parametrize("net", [tutorial_cifar_net(), lenet5(), digits_net()], ids=lambda n: n.name)
@pytest.mark.parametrize("batch", [2, 32])
def test_network_conv_layers_take_the_path_of_their_rule(net, batch: int) -> None:
    """Every conv layer's output in ``network_forward`` equals, bit for bit, the path that
    ``conv2d_uses_gemm`` names (GEMM for >= 8 output channels: the tutorial net's and LeNet-5's
    second layers, the digits net's only one; planar for their 6-channel first layers), run on the
    layer's input activation; the other path's bits differ. Dense layers likewise."""
    table = net.layout.table
    params = net.init_params(1, np.float32)
    images = RNG.normal(size=(batch, *net.input_shape)).astype(np.float32)
    acts = np.empty(batch * net.layout.activation_size, np.float32)
    network_forward(table, params, images, acts, np.empty(batch * net.layout.pool_index_size, np.int8))
    shapes = net.layout.activation_shapes()
    blocks = {block.layer: block for block in net.layout.parameter_blocks}
    paths = []
    for l, row in enumerate(table):
        if row[COL_OP] not in (OP_CONV, OP_DENSE):
            continue
        (h, w, c), (oh, ow, oc) = shapes[l], shapes[l + 1]
        x = acts[batch * row[COL_IN_ACT] : batch * (row[COL_IN_ACT] + h * w * c)]
        got = acts[batch * row[COL_OUT_ACT] : batch * (row[COL_OUT_ACT] + oh * ow * oc)]
        block = blocks[l]
        weight = params[block.offset : block.offset + block.weight_size].reshape(block.weight_shape)
        bias = params[block.offset + block.weight_size : block.offset + block.size]
        if row[COL_OP] == OP_CONV:
            k = block.weight_shape[0]
            x4 = x.reshape(batch, h, w, c)
            gemm, planar = np.empty((batch, oh, ow, oc), np.float32), np.empty((batch, oh, ow, oc), np.float32)
            conv2d_forward_gemm(x4, weight, bias, gemm, np.empty(conv2d_patches_size(batch, h, w, c, k), np.float32))
            conv2d_forward_planar(x4, weight, bias, planar, np.empty(conv2d_planar_scratch_size(h, w, c, k, oc), np.float32))
            uses = conv2d_uses_gemm(c, oc, k)
            assert uses == (oc >= 8)
            chosen, other = (gemm, planar) if uses else (planar, gemm)
        else:
            x2 = x.reshape(batch, c * h * w)
            blas, loops = np.empty((batch, oc), np.float32), np.empty((batch, oc), np.float32)
            dense_forward_path(x2, weight, bias, blas, True)
            dense_forward_path(x2, weight, bias, loops, False)
            uses = dense_uses_blas(batch, c * h * w, oc)
            chosen, other = (blas, loops) if uses else (loops, blas)
        assert not np.array_equal(chosen, other)
        assert np.array_equal(got.reshape(chosen.shape), chosen)
        paths.append(bool(uses))
    if net.name == "tutorial_cifar_net":
        # conv1 planar, conv2 GEMM; the dense layers 400x120, 120x84, 84x10 (BLAS from 4,096 multiply-adds)
        assert paths == [False, True, True, True, batch == 32]
