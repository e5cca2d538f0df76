"""The smooth two-layer network (problems.models.cnn: the tanh layer, ``digits_tanh_mlp``, ``smooth_bounds``):
the tanh layer's Numba and NumPy paths against each other and against central differences; the whole
network's Numba kernel against its NumPy reference (<= 1e-10 relative in float64) and its gradient
against central differences; the certified L and G^2 over a ball against the per-sample Hessian's
largest |eigenvalue| (power iteration on finite-difference Hessian-vector products) and the per-sample
gradients at random points of the ball, including points where ||W2||_2 reaches the ball's bound."""

from __future__ import annotations

import numpy as np
import pytest

from problems.models.cnn import Dense, NetworkLayout, ReLU, Tanh, digits_net, digits_tanh_mlp
from problems.models.cnn.network import ConvNet
from problems.models.cnn.smooth_bounds import TANH_SECOND_DERIVATIVE, tanh_mlp_bounds
from problems.models.cnn.tanh import tanh_backward, tanh_backward_np, tanh_forward, tanh_forward_np
from problems.validation import ProblemError
from proofs_check.constants import power_smoothness

RNG = np.random.default_rng(26)
NET = digits_tanh_mlp()


def _images(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n images in [0, 1] (the digits' scale, ``problems.image_data``) and labels."""
    return RNG.uniform(0.0, 1.0, size=(n, 8, 8, 1)), RNG.integers(0, 10, size=n)


def test_the_network_has_the_parameters_of_its_two_dense_layers() -> None:
    # 64 x 16 + 16 (first layer) + 16 x 10 + 10 (logits) = 1,210 (networks.py docstring)
    assert NET.n_params == 64 * 16 + 16 + 16 * 10 + 10 == 1210
    assert NET.n_classes == 10 and NET.input_shape == (8, 8, 1)


def test_tanh_paths_agree_and_match_central_differences() -> None:
    x, g = RNG.normal(size=50) * 3, RNG.normal(size=50)
    y, dx = np.empty_like(x), np.empty_like(x)
    tanh_forward(x, y)
    tanh_backward(y, g, dx)
    assert np.allclose(y, tanh_forward_np(x), rtol=1e-15, atol=0) and np.allclose(y, np.tanh(x), rtol=1e-15, atol=0)
    assert np.allclose(dx, tanh_backward_np(y, g), rtol=1e-14, atol=0)
    h = 1e-6
    assert np.allclose(dx, g * (np.tanh(x + h) - np.tanh(x - h)) / (2 * h), rtol=0, atol=1e-8)


def test_kernel_matches_the_numpy_reference() -> None:
    images, labels = _images(7)
    for seed in range(3):
        theta = NET.init_params(seed, np.float64) * (1 + seed)
        loss, grad = NET.loss_and_gradient(theta, images, labels, "numba")
        loss_np, grad_np = NET.loss_and_gradient(theta, images, labels, "numpy")
        assert abs(loss - loss_np) <= 1e-12 * abs(loss_np)
        assert np.max(np.abs(grad - grad_np)) <= 1e-10 * np.max(np.abs(grad_np))
        assert np.allclose(NET.logits(theta, images, "numba"), NET.logits(theta, images, "numpy"), rtol=1e-12, atol=0)


def test_gradient_matches_central_differences() -> None:
    images, labels = _images(5)
    theta = NET.init_params(1, np.float64) * 2
    _, grad = NET.loss_and_gradient(theta, images, labels)
    h = 1e-6  # truncation O(h^2 |l'''|) ~ 1e-12, rounding ~ 1e-16 |l| / h ~ 1e-10
    for i in RNG.choice(NET.n_params, size=40, replace=False):
        e = np.zeros_like(theta)
        e[i] = h
        fd = (NET.loss(theta + e, images, labels) - NET.loss(theta - e, images, labels)) / (2 * h)
        assert abs(fd - grad[i]) <= 1e-8, (i, fd, grad[i])


def test_the_tanh_second_derivative_constant() -> None:
    # max |tanh''| = max |2 tanh (1 - tanh^2)| at tanh = 1/sqrt(3): 2 (1/sqrt 3)(2/3) = 4 / (3 sqrt 3)
    t = np.tanh(np.linspace(-5, 5, 200_001))
    assert np.max(np.abs(2 * t * (1 - t * t))) == pytest.approx(TANH_SECOND_DERIVATIVE, rel=1e-9)


def _point_in_ball(centre: np.ndarray, radius: float, w2_push: bool) -> np.ndarray:
    """A random point of the ball ||theta - centre|| <= radius; with ``w2_push`` all of the move goes into
    W2's top singular direction, so ||W2||_2 reaches the bound ||W2(centre)||_2 + radius."""
    if not w2_push:
        v = RNG.normal(size=centre.size)
        return centre + radius * RNG.uniform(0.5, 1.0) * v / np.linalg.norm(v)
    block = NET.layout.parameter_blocks[1]
    W2 = centre[block.offset:block.offset + block.weight_size].reshape(block.weight_shape)
    U, _, Vt = np.linalg.svd(W2)
    theta = centre.copy()
    theta[block.offset:block.offset + block.weight_size] += radius * np.outer(U[:, 0], Vt[0]).ravel()
    return theta


@pytest.mark.parametrize("radius", [0.5, 3.0])
def test_certified_L_and_G_bound_the_measured_per_sample_curvature_and_gradients(radius: float) -> None:
    images, labels = _images(6)
    centre = NET.init_params(0, np.float64)
    bounds = tanh_mlp_bounds(NET, images, centre, radius)
    largest_H, largest_g = 0.0, 0.0
    for j in range(6):
        theta = _point_in_ball(centre, radius, w2_push=j % 2 == 1)
        assert np.linalg.norm(theta - centre) <= radius * (1 + 1e-12)
        for i in range(len(images)):
            one = (images[i:i + 1], labels[i:i + 1])
            L_i = power_smoothness(lambda x: NET.loss_and_gradient(x, *one)[1], theta, iterations=30, radius=1e-5,
                                   seed=j)
            largest_H = max(largest_H, L_i)
            largest_g = max(largest_g, float(np.sum(NET.loss_and_gradient(theta, *one)[1] ** 2)))
    assert 0 < largest_H <= bounds.L
    assert 0 < largest_g <= bounds.G_sq
    # minibatch variance bound: G^2 / b (with replacement), checked on the exact variance at the centre
    per_sample = np.array([NET.loss_and_gradient(centre, images[i:i + 1], labels[i:i + 1])[1] for i in range(6)])
    exact = np.mean(np.sum((per_sample - per_sample.mean(0)) ** 2, axis=1)) / 2
    assert exact <= bounds.minibatch_variance(2)


def test_bounds_refuse_another_architecture_and_bad_input() -> None:
    images, _ = _images(2)
    with pytest.raises(ProblemError, match="network"):
        tanh_mlp_bounds(digits_net(), images, np.zeros(digits_net().n_params), 1.0)
    relu_mlp = ConvNet("relu_mlp", NetworkLayout((8, 8, 1), (Dense(64, 16), ReLU(), Dense(16, 10))))
    with pytest.raises(ProblemError, match="network"):
        tanh_mlp_bounds(relu_mlp, images, np.zeros(relu_mlp.n_params), 1.0)
    with pytest.raises(ProblemError, match="centre"):
        tanh_mlp_bounds(NET, images, np.zeros(3), 1.0)
    with pytest.raises(ProblemError, match="radius"):
        tanh_mlp_bounds(NET, images, np.zeros(NET.n_params), -1.0)
    assert isinstance(NET.layout.layers[1], Tanh)
