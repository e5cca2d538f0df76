"""CNN layers (problems.models.cnn): each layer's Numba forward and backward against its NumPy
reference (<= 1e-10 relative in float64), the NumPy backward against central finite differences,
max-pool ties routed the same way on both paths, and hand-derived cases."""

from __future__ import annotations

import numpy as np
import pytest

from problems.models.cnn.conv2d import (
    conv2d_backward_input,
    conv2d_backward_np,
    conv2d_backward_params,
    conv2d_forward,
    conv2d_forward_np,
)
from problems.models.cnn.cross_entropy import cross_entropy, cross_entropy_np
from problems.models.cnn.dense import (
    dense_backward_input,
    dense_backward_np,
    dense_backward_params,
    dense_forward,
    dense_forward_np,
)
from problems.models.cnn.max_pool import (
    max_pool_backward,
    max_pool_backward_np,
    max_pool_forward,
    max_pool_forward_np,
)
from problems.models.cnn.relu import relu_backward, relu_backward_np, relu_forward, relu_forward_np

RNG = np.random.default_rng(12)
REL = 1e-10


def close(a: np.ndarray, b: np.ndarray, rel: float = REL) -> bool:
    """max |a - b| <= rel max |b| (relative to the array's scale)."""
    return a.shape == b.shape and float(np.max(np.abs(a - b))) <= rel * float(np.max(np.abs(b)))


def central_difference(f, x: np.ndarray, coords: list[tuple[int, ...]], h: float) -> np.ndarray:
    """(f(x + h e_i) - f(x - h e_i)) / (2h) at each coordinate i of ``coords``."""
    out = []
    for i in coords:
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        out.append((f(xp) - f(xm)) / (2 * h))
    return np.array(out)


def random_coords(shape: tuple[int, ...], k: int) -> list[tuple[int, ...]]:
    return [tuple(int(RNG.integers(0, s)) for s in shape) for _ in range(k)]


# Central differences: step 1e-6, truncation O(h^2 f''') ~ 1e-12 on these smooth (or piecewise-linear,
# away from kinks) scalar losses, rounding ~ 1e-16 |f| / h ~ 1e-9: agreement to 1e-7 absolute.
H, FD_TOL = 1e-6, 1e-7


@pytest.mark.parametrize(("shape", "k", "c_out"), [((2, 7, 6, 3), 3, 4), ((1, 5, 5, 1), 5, 2), ((3, 6, 9, 2), 1, 3)])
def test_conv2d_numba_matches_im2col_reference(shape: tuple[int, ...], k: int, c_out: int) -> None:
    x = RNG.normal(size=shape)
    w = RNG.normal(size=(k, k, shape[3], c_out))
    b = RNG.normal(size=c_out)
    _assert_numba_layer_matches_reference(
        x, w, b, (conv2d_forward, conv2d_backward_params, conv2d_backward_input), (conv2d_forward_np, conv2d_backward_np))


def _assert_numba_layer_matches_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, numba: tuple, reference: tuple
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A layer's Numba forward, parameter and input gradients equal its NumPy reference's (``close``) at
    (x, w, b), for a random output cotangent g; returns g and the reference's (dw, dx) for further checks."""
    forward, backward_params, backward_input = numba
    forward_np, backward_np = reference
    y_ref = forward_np(x, w, b)
    y = np.empty_like(y_ref)
    forward(x, w, b, y)
    assert close(y, y_ref)
    g = RNG.normal(size=y.shape)
    dw_ref, db_ref, dx_ref = backward_np(x, w, g)
    dw, db, dx = np.full_like(w, np.nan), np.full_like(b, np.nan), np.full_like(x, np.nan)  # overwritten
    backward_params(x, g, dw, db)
    backward_input(w, g, dx)
    assert close(dw, dw_ref) and close(db, db_ref) and close(dx, dx_ref)
    return g, dw_ref, dx_ref


def test_conv2d_hand_case() -> None:
    """A 3x3 single-channel image with a 2x2 kernel of ones sums each 2x2 window: [[12, 16], [24, 28]]
    for the image 0..8 (window (0, 0): 0 + 1 + 3 + 4 = 8, plus the bias 4 = 12)."""
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    y = np.empty((1, 2, 2, 1))
    conv2d_forward(x, np.ones((2, 2, 1, 1)), np.array([4.0]), y)
    assert np.array_equal(y[0, :, :, 0], [[12.0, 16.0], [24.0, 28.0]])


def test_conv2d_backward_matches_central_differences() -> None:
    """L = <R, conv(x, w) + b> for a fixed R: dL/dw, dL/db, dL/dx against central differences."""
    x = RNG.normal(size=(2, 6, 5, 2))
    w = RNG.normal(size=(3, 3, 2, 3))
    b = RNG.normal(size=3)
    R = RNG.normal(size=(2, 4, 3, 3))
    dw, db, dx = conv2d_backward_np(x, w, R)
    coords_w, coords_x = random_coords(w.shape, 6), random_coords(x.shape, 6)
    fd_w = central_difference(lambda v: np.sum(R * conv2d_forward_np(x, v, b)), w, coords_w, H)
    fd_b = central_difference(lambda v: np.sum(R * conv2d_forward_np(x, w, v)), b, [(0,), (2,)], H)
    fd_x = central_difference(lambda v: np.sum(R * conv2d_forward_np(v, w, b)), x, coords_x, H)
    assert np.allclose(fd_w, [dw[i] for i in coords_w], rtol=0, atol=FD_TOL)
    assert np.allclose(fd_b, [db[0], db[2]], rtol=0, atol=FD_TOL)
    assert np.allclose(fd_x, [dx[i] for i in coords_x], rtol=0, atol=FD_TOL)


def test_dense_numba_matches_reference_and_central_differences() -> None:
    x, w, b = RNG.normal(size=(4, 7)), RNG.normal(size=(7, 5)), RNG.normal(size=5)
    g, dw_ref, dx_ref = _assert_numba_layer_matches_reference(
        x, w, b, (dense_forward, dense_backward_params, dense_backward_input), (dense_forward_np, dense_backward_np))
    coords_w, coords_x = random_coords(w.shape, 5), random_coords(x.shape, 5)
    fd_w = central_difference(lambda v: np.sum(g * dense_forward_np(x, v, b)), w, coords_w, H)
    fd_x = central_difference(lambda v: np.sum(g * dense_forward_np(v, w, b)), x, coords_x, H)
    assert np.allclose(fd_w, [dw_ref[i] for i in coords_w], rtol=0, atol=FD_TOL)
    assert np.allclose(fd_x, [dx_ref[i] for i in coords_x], rtol=0, atol=FD_TOL)


def test_relu_paths_agree_and_take_derivative_zero_at_zero() -> None:
    x = np.array([-1.5, 0.0, 2.0, -0.0, 3e-300])
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y, dx = np.empty_like(x), np.empty_like(x)
    relu_forward(x, y)
    relu_backward(x, g, dx)
    assert np.array_equal(y, [0.0, 0.0, 2.0, 0.0, 3e-300]) and np.array_equal(y, relu_forward_np(x))
    assert np.array_equal(dx, [0.0, 0.0, 3.0, 0.0, 5.0]) and np.array_equal(dx, relu_backward_np(x, g))


@pytest.mark.parametrize("shape", [(2, 6, 4, 3), (1, 5, 7, 2)], ids=["even", "odd"])
def test_max_pool_numba_matches_reference(shape: tuple[int, ...]) -> None:
    """Random inputs (no ties); an odd trailing row or column is dropped and gets zero gradient."""
    x = RNG.normal(size=shape)
    y_ref, arg_ref = max_pool_forward_np(x)
    y, arg = np.empty_like(y_ref), np.empty(y_ref.shape, dtype=np.int8)
    max_pool_forward(x, y, arg)
    assert np.array_equal(y, y_ref) and np.array_equal(arg, arg_ref)
    g = RNG.normal(size=y.shape)
    dx = np.full_like(x, np.nan)
    max_pool_backward(arg, g, dx)
    assert np.array_equal(dx, max_pool_backward_np(arg_ref, g, x.shape))
    assert y.shape == (shape[0], shape[1] // 2, shape[2] // 2, shape[3])
    if shape[1] % 2:
        assert not np.any(dx[:, -1])
    # each window's gradient lands on its maximum: the routed gradient reproduces sum(g * y) / y
    assert np.isclose(np.sum(dx * x), np.sum(g * y))


def test_max_pool_ties_route_to_the_first_maximum_on_both_paths() -> None:
    """Windows [[1, 1], [0, 1]] (winner (0, 0): index 0), [[0, 2], [2, 2]] (winner (0, 1): index 1),
    [[0, 0], [0, 0]] (winner (0, 0)) and [[-1, -2], [3, 3]] (winner (1, 0): index 2)."""
    image = np.array([
        [1, 1, 0, 2, 0, 0, -1, -2],
        [0, 1, 2, 2, 0, 0, 3, 3],
    ], dtype=float).reshape(1, 2, 8, 1)
    y_ref, arg_ref = max_pool_forward_np(image)
    y, arg = np.empty_like(y_ref), np.empty(y_ref.shape, dtype=np.int8)
    max_pool_forward(image, y, arg)
    assert arg.ravel().tolist() == [0, 1, 0, 2] and np.array_equal(arg, arg_ref)
    g = np.array([10.0, 20.0, 30.0, 40.0]).reshape(1, 1, 4, 1)
    dx = np.empty_like(image)
    max_pool_backward(arg, g, dx)
    expected = np.array([[10, 0, 0, 20, 30, 0, 0, 0], [0, 0, 0, 0, 0, 0, 40, 0]], dtype=float)
    assert np.array_equal(dx.reshape(2, 8), expected)
    assert np.array_equal(max_pool_backward_np(arg_ref, g, image.shape), dx)


def test_cross_entropy_hand_case_paths_and_differences() -> None:
    """Two equal logits: loss ln 2, gradient (1/2 - 1, 1/2) / B; logits (0, ln 3) with label 1: loss
    ln(4/3), gradient (1/4, 3/4 - 1) / B. The mean over B = 2 rows."""
    z = np.array([[0.0, 0.0], [0.0, np.log(3.0)]])
    labels = np.array([0, 1])
    dz = np.empty_like(z)
    loss = cross_entropy(z, labels, dz)
    assert np.isclose(loss, (np.log(2.0) + np.log(4.0 / 3.0)) / 2, rtol=1e-15)
    assert np.allclose(dz, [[-0.25, 0.25], [0.125, -0.125]], rtol=0, atol=1e-16)
    Z = RNG.normal(size=(5, 4)) * 3
    y = RNG.integers(0, 4, size=5)
    dZ = np.empty_like(Z)
    loss_nb = cross_entropy(Z, y, dZ)
    loss_np, dZ_np = cross_entropy_np(Z, y)
    assert abs(loss_nb - loss_np) <= REL * abs(loss_np) and close(dZ, dZ_np)
    coords = random_coords(Z.shape, 6)
    fd = central_difference(lambda v: cross_entropy_np(v, y)[0], Z, coords, H)
    assert np.allclose(fd, [dZ_np[i] for i in coords], rtol=0, atol=FD_TOL)


def test_cross_entropy_is_stable_for_huge_logits() -> None:
    """Logits 1e4 apart: exp would overflow without the shift; loss = 1e4 for the wrong label."""
    z = np.array([[1e4, 0.0]])
    dz = np.empty_like(z)
    assert cross_entropy(z, np.array([1]), dz) == 1e4 and np.array_equal(dz, [[1.0, -1.0]])
    loss, dz_np = cross_entropy_np(z, np.array([1]))
    assert loss == 1e4 and np.array_equal(dz_np, [[1.0, -1.0]])
