"""CNN networks (problems.models.cnn): the Numba kernel against the NumPy reference (<= 1e-10
relative in float64) for loss, gradient and SGD steps of every shipped network; the gradient
against central finite differences on a few coordinates of every parameter block; the float32
fast path against float64; PyTorch's default initialisation; hand-counted sizes; bad input."""

from __future__ import annotations

import numpy as np
import pytest

from problems.models import ConvNet, digits_net, lenet5, tutorial_cifar_net
from problems.models.cnn import Conv2d, Dense, MaxPool2d, NetworkLayout, ReLU, digits_tanh_mlp
from problems.models.cnn.kernel import sgd_steps
from problems.models.cnn.layout import EVALUATION_CHUNK
from problems.models.cnn.reference import forward_np, sgd_steps_np
from problems.validation import ProblemError

NETWORKS = [tutorial_cifar_net(), lenet5(), digits_net(), digits_tanh_mlp()]
IDS = [net.name for net in NETWORKS]
REL = 1e-10


def batch(net: ConvNet, b: int, seed: int, dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(b, *net.input_shape)).astype(dtype)
    return images, rng.integers(0, net.n_classes, size=b)


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("net", NETWORKS, ids=IDS)
def test_numba_network_matches_numpy_reference(net: ConvNet) -> None:
    params = net.init_params(1, np.float64)
    images, labels = batch(net, 3, 2)
    loss, grad = net.loss_and_gradient(params, images, labels, "numba")
    loss_np, grad_np = net.loss_and_gradient(params, images, labels, "numpy")
    assert abs(loss - loss_np) <= REL * abs(loss_np)
    assert np.max(np.abs(grad - grad_np)) <= REL * np.max(np.abs(grad_np))
    assert np.linalg.norm(grad) > 0 and np.all(grad[: net.layout.parameter_blocks[0].size] != 0)
    assert np.array_equal(net.predict(params, images), net.predict(params, images, "numpy"))
    again = net.loss_and_gradient(params, images, labels, "numba")  # deterministic: bit-identical
    assert again[0] == loss and np.array_equal(again[1], grad)


@pytest.mark.parametrize("net", NETWORKS, ids=IDS)
def test_gradient_matches_central_differences(net: ConvNet) -> None:
    """Three random coordinates of every weight and bias block. Step 1e-6 in float64: truncation
    O(h^2) ~ 1e-12 and rounding ~ 1e-16 * loss / h ~ 1e-9 (a kink of ReLU or a max-pool switch
    within h of these random points has probability ~ 1e-5); tolerance 1e-7 absolute + 1e-5 relative."""
    params = net.init_params(4, np.float64)
    images, labels = batch(net, 2, 5)
    _, grad = net.loss_and_gradient(params, images, labels)
    rng = np.random.default_rng(6)
    h = 1e-6
    for block in net.layout.parameter_blocks:
        weights = block.offset + rng.integers(0, block.weight_size, size=3)
        biases = block.offset + block.weight_size + rng.integers(0, block.bias_size, size=3)
        for i in np.concatenate([weights, biases]):
            plus, minus = params.copy(), params.copy()
            plus[i] += h
            minus[i] -= h
            fd = (net.loss(plus, images, labels) - net.loss(minus, images, labels)) / (2 * h)
            assert abs(fd - grad[i]) <= 1e-7 + 1e-5 * abs(grad[i]), (block.layer, int(i), fd, grad[i])


@pytest.mark.parametrize("net", NETWORKS, ids=IDS)
def test_float32_fast_path_agrees_with_float64(net: ConvNet) -> None:
    """float32 (the CNN fast path) from the float64 point rounded: gradient within 1e-4 relative
    (Euclidean norm), loss within 1e-5 relative; the float32 result keeps its dtype."""
    params = net.init_params(7, np.float64)
    images, labels = batch(net, 2, 8)
    loss64, grad64 = net.loss_and_gradient(params, images, labels)
    loss32, grad32 = net.loss_and_gradient(params.astype(np.float32), images.astype(np.float32), labels)
    assert grad32.dtype == np.float32
    assert rel_err(grad32.astype(np.float64), grad64) <= 1e-4
    assert abs(loss32 - loss64) <= 1e-5 * loss64
    default = net.init_params(7)  # float32 is the default, the float64 draw rounded
    assert default.dtype == np.float32 and np.array_equal(default, params.astype(np.float32))


@pytest.mark.parametrize("net", NETWORKS, ids=IDS)
def test_sgd_steps_kernel_matches_reference(net: ConvNet) -> None:
    """Five SGD steps at batch 2 over 6 images (the minibatches wrap around): same iterate."""
    params = net.init_params(9, np.float64)
    images, labels = batch(net, 6, 10)
    work = net.workspace(2, np.float64)
    p_nb, p_np = params.copy(), params.copy()
    loss_nb = sgd_steps(net.layout.table, p_nb, images, labels, 2, 0.1, 5, *work)
    loss_np = sgd_steps_np(net.layout, p_np, images, labels, 2, 0.1, 5)
    assert abs(loss_nb - loss_np) <= REL * abs(loss_np)
    assert rel_err(p_nb, p_np) <= REL and not np.array_equal(p_nb, params)


def test_tutorial_net_sizes_are_the_hand_counts() -> None:
    """Parameters: conv1 5*5*3*6 + 6 = 456, conv2 5*5*6*16 + 16 = 2416, fc 400*120 + 120 = 48120,
    120*84 + 84 = 10164, 84*10 + 10 = 850: 62,006 (the PyTorch tutorial's count). Multiply-adds per
    image: conv1 28*28*6*75 = 352,800, conv2 10*10*16*150 = 240,000, dense 48,000 + 10,080 + 840;
    forward 651,720, weight gradients 651,720, input gradients (all but conv1) 298,920: x 2 flops."""
    net = tutorial_cifar_net()
    assert net.n_params == 62006 and net.n_classes == 10
    assert [b.size for b in net.layout.parameter_blocks] == [456, 2416, 48120, 10164, 850]
    assert net.layout.flops_per_image() == 2 * (651720 + 651720 + 298920)
    assert net.layout.activation_shapes()[-1] == (1, 1, 10)
    assert lenet5().n_params == 156 + 2416 + 30840 + 10164 + 850
    assert digits_net().n_params == 80 + 2336 + 330


def test_initialisation_is_pytorch_default_and_reproducible() -> None:
    """Every entry of a block with fan_in inputs lies in [-1/sqrt(fan_in), 1/sqrt(fan_in)]; the
    variance of blocks with >= 2,000 entries is 1/(3 fan_in) within 10% (the sample variance of n
    uniforms has relative standard deviation sqrt(0.8 / n) <= 2% there); the mean is within 5 standard
    errors of 0; the same seed gives the same vector, another seed another one."""
    net = tutorial_cifar_net()
    params = net.init_params(11, np.float64)
    assert np.array_equal(params, net.init_params(11, np.float64))
    assert not np.array_equal(params, net.init_params(12, np.float64))
    for block in net.layout.parameter_blocks:
        values = params[block.offset : block.offset + block.size]
        bound = 1 / np.sqrt(block.fan_in)
        assert np.all(np.abs(values) <= bound) and np.max(np.abs(values)) > 0.9 * bound
        if block.size >= 2000:
            assert abs(values.var() / (bound**2 / 3) - 1) <= 0.1
            assert abs(values.mean()) <= 5 * bound / np.sqrt(3 * block.size)
    fans = [b.fan_in for b in net.layout.parameter_blocks]
    assert fans == [75, 150, 400, 120, 84]


def test_accuracy_and_predictions() -> None:
    net = digits_net()
    params = net.init_params(13, np.float64)
    images, _ = batch(net, 20, 14)
    predicted = net.predict(params, images)
    assert predicted.dtype == np.int64 and predicted.shape == (20,)
    assert net.accuracy(params, images, predicted) == 1.0
    assert net.accuracy(params, images, (predicted + 1) % 10) == 0.0


@pytest.mark.parametrize("net", NETWORKS, ids=IDS)
def test_predictions_cross_chunks_and_match_the_reference(net: ConvNet) -> None:
    """``predict`` runs the Numba kernel in chunks of EVALUATION_CHUNK (one workspace for all); on
    EVALUATION_CHUNK + 7 images its classes equal the reference's argmax of the logits, image by
    image, in float64, and one image alone gets the class it gets in the batch (chunking does not
    change a prediction)."""
    params = net.init_params(5, np.float64)
    last = net.layout.parameter_blocks[-1]  # the logits' layer, centred (each class's weights sum to 0, no
    weights = params[last.offset : last.offset + last.weight_size].reshape(last.weight_shape)  # bias) so that
    weights -= weights.mean(axis=0)  # the relu features' common positive mean does not hand one class every image
    params[last.offset + last.weight_size : last.offset + last.size] = 0.0
    images, _ = batch(net, EVALUATION_CHUNK + 7, 6)
    predicted = net.predict(params, images)
    expected = np.argmax(forward_np(net.layout, params, images)[0][-1], axis=1)
    assert np.array_equal(predicted, expected) and np.array_equal(net.predict(params, images, "numpy"), expected)
    assert net.predict(params, images[-1:])[0] == predicted[-1]
    assert len(set(predicted.tolist())) > 1  # the test images are not all given one class


def test_ties_go_to_the_first_largest_logit_as_argmax() -> None:
    """With every weight zero the logits are the last layer's bias b (hand derivation), so equal
    largest entries are a tie: the first wins (np.argmax's rule), on both engines. A logit made NaN
    (inf - inf in the last layer: its inputs are relu(b1) = 2, weights +-1e308) wins as in np.argmax."""
    net = digits_net()
    last = net.layout.parameter_blocks[-1]
    hidden = net.layout.parameter_blocks[-2]
    images, _ = batch(net, 4, 8)
    params = np.zeros(net.n_params)
    bias = params[last.offset + last.weight_size : last.offset + last.size]
    bias[[2, 6]] = 1.0
    for engine in ("numba", "numpy"):
        assert net.predict(params, images, engine).tolist() == [2, 2, 2, 2]
    params[hidden.offset + hidden.weight_size : hidden.offset + hidden.size] = 2.0
    weights = params[last.offset : last.offset + last.weight_size].reshape(last.weight_shape)
    weights[0, 4], weights[1, 4] = 1e308, -1e308
    for engine in ("numba", "numpy"):
        with np.errstate(over="ignore", invalid="ignore"):  # the reference warns of the planted overflow
            assert net.predict(params, images, engine).tolist() == [4, 4, 4, 4]


def test_bad_input_names_the_field() -> None:
    net = digits_net()
    params = net.init_params(0, np.float64)
    images, labels = batch(net, 2, 0)
    bad = [
        (lambda: net.loss(params[:-1], images, labels), "params: expected shape"),
        (lambda: net.loss(params.astype(np.float16), images, labels), "params: expected a float64"),
        (lambda: net.loss(np.where(np.arange(params.size) == 3, np.nan, params), images, labels), "params: contains"),
        (lambda: net.loss(params, images[:, :7], labels), "images: expected shape (b, 8, 8, 1)"),
        (lambda: net.loss(params, images[:0], labels[:0]), "images: the batch is empty"),
        (lambda: net.loss(params, images.astype(np.float32), labels), "images: dtype float32 differs"),
        (lambda: net.loss(params, np.full_like(images, np.inf), labels), "images: contains"),
        (lambda: net.loss(params, images, labels.astype(float)), "labels: expected an integer array"),
        (lambda: net.loss(params, images, labels[:1]), "labels: expected shape (2,)"),
        (lambda: net.loss(params, images, np.array([0, 10])), "labels: expected integers in [0, 10)"),
        (lambda: net.loss(params, images, labels, "torch"), "engine: expected one of"),
        (lambda: net.init_params(-1), "seed: must be >= 0"),
        (lambda: net.init_params(0, np.int32), "dtype: expected float64 or float32"),
        (lambda: NetworkLayout((8, 8, 1), (Conv2d(2, 4, 3), Dense(144, 10))), "layers[0].in_channels"),
        (lambda: NetworkLayout((8, 8, 1), (Conv2d(1, 4, 9), Dense(4, 10))), "layers[0].kernel_size"),
        (lambda: NetworkLayout((8, 8, 1), (MaxPool2d(), Dense(15, 10))), "layers[1].in_features"),
        (lambda: NetworkLayout((8, 8, 1), (Dense(64, 10), ReLU())), "layers: the last layer must be Dense"),
        (lambda: NetworkLayout((8, 0, 1), (Dense(64, 10),)), "input_shape.W"),
        (lambda: Conv2d(1, 4, 0), "kernel_size: must be >= 1"),
        (lambda: Dense(2.0, 4), "in_features: expected an integer"),
    ]
    for call, message in bad:
        with pytest.raises(ProblemError) as info:
            call()
        assert str(info.value).startswith(message), (message, str(info.value))
