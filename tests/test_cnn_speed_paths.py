"""The CNN kernel's fast paths (problems.models.cnn): the planar convolution (channels-first wide
rows, tap filters in chunks of 5, 3, 2 and 1, weight-gradient dots in chunks of 5, 3 and 1, passes
padded to PLANAR_LANES; output channels in pairs and threes, ``planar_filters``, against one channel per pass)
against the NumPy im2col twin for kernel sizes that reach every chunk, rectangular inputs and a kernel as large as
the input; its scratch (any contents, any larger size: the same bits); the vectorised dot product;
and ``sgd_steps`` (one scratch for all steps) against the same steps through
``network_loss_grad``, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from problems.models.cnn import digits_net, tutorial_cifar_net
from problems.models.cnn.conv2d import (
    PLANAR_LANES,
    conv2d_backward_input,
    conv2d_backward_input_planar,
    conv2d_backward_np,
    conv2d_backward_params,
    conv2d_backward_params_planar,
    conv2d_forward,
    conv2d_forward_np,
    conv2d_forward_planar,
    conv2d_planar_scratch_size,
)
from problems.models.cnn.dot import dot
from problems.models.cnn.kernel import network_loss_grad, sgd_steps

RNG = np.random.default_rng(31)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|."""
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def planar_pass(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray, scratch: np.ndarray):
    """(y, dw, db, dx) of the three planar passes, every output prefilled with NaN (overwritten)."""
    B, H, W, _ = x.shape
    K, _, _, CO = w.shape
    y = np.full((B, H - K + 1, W - K + 1, CO), np.nan, dtype=x.dtype)
    dw, db, dx = np.full_like(w, np.nan), np.full_like(b, np.nan), np.full_like(x, np.nan)
    conv2d_forward_planar(x, w, b, y, scratch)
    conv2d_backward_params_planar(x, g, dw, db, scratch)
    conv2d_backward_input_planar(w, g, dx, scratch)
    return y, dw, db, dx


# (B, H, W, C_in), K, C_out: K = 1..8 reach the filter chunks 1, 2, 3, 2+2, 5, 5+1, 5+2, 5+3 and
# the dot chunks 1, 1+1, 3, 3+1, 5, 5+1, 5+1+1, 5+3;
# K = H = W leaves one output per channel (T = 1); W > H and H > W exercise the wide-row indexing.
SHAPES = [
    ((2, 6, 9, 3), 1, 4),
    ((1, 7, 5, 2), 2, 3),
    ((3, 8, 8, 1), 3, 8),
    ((2, 9, 11, 2), 4, 5),
    ((2, 14, 14, 6), 5, 16),
    ((1, 10, 13, 2), 6, 3),
    ((2, 12, 9, 1), 7, 2),
    ((1, 8, 8, 2), 8, 3),
    ((2, 32, 32, 3), 5, 6),
]


@pytest.mark.parametrize(("shape", "k", "c_out"), SHAPES)
def test_planar_conv_matches_im2col_reference(shape: tuple[int, ...], k: int, c_out: int) -> None:
    """float64: <= 1e-12 relative to the im2col twin in every output; the scratch-allocating
    wrappers give the same bits as the planar functions with a given scratch."""
    x = RNG.normal(size=shape)
    w = RNG.normal(size=(k, k, shape[3], c_out))
    b = RNG.normal(size=c_out)
    g = RNG.normal(size=(shape[0], shape[1] - k + 1, shape[2] - k + 1, c_out))
    scratch = np.empty(conv2d_planar_scratch_size(shape[1], shape[2], shape[3], k, c_out))
    y, dw, db, dx = planar_pass(x, w, b, g, scratch)
    dw_ref, db_ref, dx_ref = conv2d_backward_np(x, w, g)
    assert rel(y, conv2d_forward_np(x, w, b)) <= 1e-12
    assert rel(dw, dw_ref) <= 1e-12 and rel(db, db_ref) <= 1e-12 and rel(dx, dx_ref) <= 1e-12
    y2, dw2, db2, dx2 = np.empty_like(y), np.empty_like(dw), np.empty_like(db), np.empty_like(dx)
    conv2d_forward(x, w, b, y2)
    conv2d_backward_params(x, g, dw2, db2)
    conv2d_backward_input(w, g, dx2)
    for got, want in ((y2, y), (dw2, dw), (db2, db), (dx2, dx)):
        assert np.array_equal(got, want)


def test_planar_conv_float32_matches_float64() -> None:
    """The tutorial net's first convolution in float32 within 1e-5 relative of float64 (sums of 75
    terms of size ~1 in float32: rounding ~ 1e-7 x 75)."""
    shape, k, c_out = (2, 32, 32, 3), 5, 6
    x, w, b = RNG.normal(size=shape), RNG.normal(size=(k, k, 3, c_out)), RNG.normal(size=c_out)
    g = RNG.normal(size=(2, 28, 28, c_out))
    size = conv2d_planar_scratch_size(32, 32, 3, k, c_out)
    out64 = planar_pass(x, w, b, g, np.empty(size))
    out32 = planar_pass(*(a.astype(np.float32) for a in (x, w, b, g)), np.empty(size, dtype=np.float32))
    for a32, a64 in zip(out32, out64):
        assert a32.dtype == np.float32 and rel(a32.astype(np.float64), a64) <= 1e-5


def test_scratch_contents_and_size_do_not_change_the_bits() -> None:
    """A scratch full of NaN, one full of huge values and one twice the size (as a network's
    shared buffer is for its smaller layers) give bit-identical outputs: the padded passes read only
    zeros or data past the valid entries and never let junk reach an output."""
    shape, k, c_out = (2, 14, 14, 6), 5, 16
    x, w, b = RNG.normal(size=shape), RNG.normal(size=(k, k, 6, c_out)), RNG.normal(size=c_out)
    g = RNG.normal(size=(2, 10, 10, c_out))
    size = conv2d_planar_scratch_size(14, 14, 6, k, c_out)
    base = planar_pass(x, w, b, g, np.zeros(size))
    for scratch in (np.full(size, np.nan), np.full(size, 1e300), np.full(2 * size, np.nan)):
        for got, want in zip(planar_pass(x, w, b, g, scratch), base):
            assert np.array_equal(got, want)


def test_scratch_size_covers_the_padded_passes() -> None:
    """The tutorial net's first layer: T = 27 * 32 + 28 = 892 wide entries, passes of 896 (892
    rounded up to 32 lanes) forward and 896 (892 + 4) for the input gradient; 3 planes of
    max(32 * 32, 4 * 32 + 4 + 896, 4 * 32 + 896) = 1028, 6 wide rows of max(896, 896 + 4) = 900,
    and 6 * 3 * 25 taps. The second: T = 9 * 14 + 10 = 136, passes of 160 and 160 (140 rounded
    up); 6 planes of max(196, 56 + 4 + 160, 56 + 160) = 220, 16 rows of 164, 16 * 6 * 25 taps."""
    assert PLANAR_LANES == 32
    assert conv2d_planar_scratch_size(32, 32, 3, 5, 6) == 3 * 1028 + 6 * 900 + 450
    assert conv2d_planar_scratch_size(14, 14, 6, 5, 16) == 6 * 220 + 16 * 164 + 2400


@pytest.mark.parametrize("n", [0, 1, 7, 31, 32, 33, 200, 1000])
def test_dot_matches_numpy_and_repeats_bitwise(n: int) -> None:
    """float64 within 1e-13 of NumPy's dot, the same bits on a second call, float32 within its
    rounding bound; lengths around the vector widths and 0."""
    a, b = RNG.normal(size=n), RNG.normal(size=n)
    got = dot(a, b)
    assert abs(got - float(np.dot(a, b))) <= 1e-13 * max(1.0, float(np.abs(a) @ np.abs(b)))
    assert dot(a, b) == got
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    exact32 = float(np.dot(a32.astype(np.float64), b32.astype(np.float64)))
    # float32 partial sums: error <= n eps_32 sum |a b| (eps_32 = 6e-8)
    assert abs(dot(a32, b32) - exact32) <= max(n, 1) * 6e-8 * float(np.abs(a32) @ np.abs(b32)) + 1e-30


@pytest.mark.parametrize("net", [tutorial_cifar_net(), digits_net()], ids=["tutorial", "digits"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_steps_equal_loss_grad_steps_bitwise(net, dtype: type) -> None:
    """Three SGD steps by ``sgd_steps`` (one scratch for all steps) and by three calls of
    ``network_loss_grad`` (a scratch each) followed by theta <- theta - lr grad: the same bits."""
    params = net.init_params(3, dtype)
    images = RNG.normal(size=(6, *net.input_shape)).astype(dtype)
    labels = RNG.integers(0, net.n_classes, size=6)
    table = net.layout.table
    fused = params.copy()
    loss = sgd_steps(table, fused, images, labels, 2, 0.05, 3, *net.workspace(2, dtype))
    stepped = params.copy()
    work = net.workspace(2, dtype)
    for s in range(3):
        last = network_loss_grad(table, stepped, images[2 * s : 2 * s + 2], labels[2 * s : 2 * s + 2], *work)
        stepped[:] = stepped.astype(np.float64) - 0.05 * work.grad.astype(np.float64)  # as the kernel rounds
    assert loss == last
    assert np.array_equal(fused, stepped) and not np.array_equal(fused, params)


@pytest.mark.parametrize("k", range(1, 9))
def test_paired_filters_match_one_channel_passes(k: int) -> None:
    """K = 1..8 reach every chunk (5, 3, 2, 1 taps; 5, 3, 1 dots): the pair's filter gives each
    channel the bits of ``filter_row`` (the same expression order), and the pair's dots agree with
    ``filter_dots`` to float64 rounding (reassociated in another order)."""
    from problems.models.cnn.planar_filters import (
        filter_dots,
        filter_dots_pair,
        filter_row,
        filter_row_pair,
    )

    n = 3 * PLANAR_LANES
    src = RNG.normal(size=n + k + 40)
    taps = RNG.normal(size=(2, k))
    pair = RNG.normal(size=2 * n + 17)
    single = pair.copy()
    filter_row_pair(pair, 5, n + 11, src, 3, taps[0], taps[1], n)
    filter_row(single, 5, src, 3, taps[0], n)
    filter_row(single, n + 11, src, 3, taps[1], n)
    assert np.array_equal(pair, single)
    a = RNG.normal(size=2 * n + 9)
    acc_pair, acc_single = RNG.normal(size=(2, k)), np.empty((2, k))
    acc_single[...] = acc_pair
    filter_dots_pair(acc_pair[0], acc_pair[1], a, 2, n + 9, src, 4, n)
    filter_dots(acc_single[0], a, 2, src, 4, n)
    filter_dots(acc_single[1], a, n + 9, src, 4, n)
    assert rel(acc_pair, acc_single) <= 1e-13


@pytest.mark.parametrize("k", range(1, 13))
def test_three_channel_filter_matches_one_channel_passes(k: int) -> None:
    """K = 1..12 reach one and two chunks of 5 taps and every remainder (3, 2, 1 and 3 + 1): the
    three-channel filter gives each channel the bits of ``filter_row`` (the same expression order)."""
    from problems.models.cnn.planar_filters import filter_row, filter_row_triple

    n = 3 * PLANAR_LANES
    src = RNG.normal(size=n + k + 40)
    taps = RNG.normal(size=(3, k))
    triple = RNG.normal(size=3 * n + 30)
    single, before = triple.copy(), triple.copy()
    filter_row_triple(triple, 5, n + 11, 2 * n + 20, src, 3, taps[0], taps[1], taps[2], n)
    for o, d0 in enumerate((5, n + 11, 2 * n + 20)):
        filter_row(single, d0, src, 3, taps[o], n)
    assert np.array_equal(triple, single) and not np.array_equal(triple, before)
