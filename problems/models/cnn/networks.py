"""The shipped networks: three with conv and dense layers followed by ReLU (as in their sources) and one
smooth two-layer network with tanh.

* ``tutorial_cifar_net``: the PyTorch "Training a classifier" CIFAR-10 net that Ding et al. (2020,
  Sec. 5) train: 32x32x3 -> conv 3->6 5x5 -> ReLU -> max-pool 2 -> conv 6->16 5x5 -> ReLU ->
  max-pool 2 -> fc 400->120 -> ReLU -> fc 120->84 -> ReLU -> fc 84->10; 62,006 parameters.
* ``lenet5``: LeNet-5 for 28x28 grayscale (MNIST / Fashion-MNIST) in its common modern variant:
  conv 1->6 5x5 (no padding: 28 -> 24) -> ReLU -> max-pool 2 -> conv 6->16 5x5 -> ReLU -> max-pool 2
  -> fc 256->120 -> ReLU -> fc 120->84 -> ReLU -> fc 84->10; 44,426 parameters. It differs from
  LeCun et al. (1998) in ReLU for the scaled tanh, max-pooling for trainable subsampling, a fully
  connected C3 for the partial connection table, a linear output with softmax cross-entropy for
  the RBF units, and no padding of the 28x28 input to 32x32 (hence 256 = 16 * 4 * 4 features).
* ``digits_net``: a small net for scikit-learn's 8x8 digits: 8x8x1 -> conv 1->8 3x3 -> ReLU ->
  max-pool 2 -> fc 72->32 -> ReLU -> fc 32->10; 2,746 parameters.
* ``digits_tanh_mlp``: a smooth two-layer network for the 8x8 digits: 64 pixels -> fc 64->16 -> tanh ->
  fc 16->10; 1,210 parameters. Every layer and the softmax cross-entropy are smooth, so its loss is
  L-smooth on every bounded parameter region (``smooth_bounds`` certifies an L over a ball): the
  network for the theorems that assume L-smooth, non-convex f.
"""

from __future__ import annotations

from .layers import Conv2d, Dense, Layer, MaxPool2d, ReLU, Tanh
from .layout import NetworkLayout
from .network import ConvNet

__all__ = ["tutorial_cifar_net", "lenet5", "digits_net", "digits_tanh_mlp"]


def _lenet_stack(in_channels: int, flat_features: int) -> tuple[Layer, ...]:
    """The LeNet-5 stack both 5x5 nets share (module docstring): conv C_in->6 5x5 -> ReLU -> max-pool 2
    -> conv 6->16 5x5 -> ReLU -> max-pool 2 -> fc F->120 -> ReLU -> fc 120->84 -> ReLU -> fc 84->10,
    F = 16 h w the features of the last pooled (h, w, 16) activation."""
    return (
        Conv2d(in_channels, 6, 5), ReLU(), MaxPool2d(),
        Conv2d(6, 16, 5), ReLU(), MaxPool2d(),
        Dense(flat_features, 120), ReLU(), Dense(120, 84), ReLU(), Dense(84, 10),
    )


def tutorial_cifar_net() -> ConvNet:
    """The PyTorch-tutorial CIFAR-10 net (module docstring): the LeNet-5 stack on 32x32x3, F = 16 * 5 * 5."""
    return ConvNet("tutorial_cifar_net", NetworkLayout((32, 32, 3), _lenet_stack(3, 400)))


def lenet5() -> ConvNet:
    """LeNet-5 for 28x28 grayscale, the variant of the module docstring: F = 16 * 4 * 4."""
    return ConvNet("lenet5", NetworkLayout((28, 28, 1), _lenet_stack(1, 256)))


def digits_net() -> ConvNet:
    """The small net for 8x8 digits (module docstring)."""
    layers = (Conv2d(1, 8, 3), ReLU(), MaxPool2d(), Dense(72, 32), ReLU(), Dense(32, 10))
    return ConvNet("digits_net", NetworkLayout((8, 8, 1), layers))


def digits_tanh_mlp() -> ConvNet:
    """The smooth two-layer network for 8x8 digits (module docstring)."""
    return ConvNet("digits_tanh_mlp", NetworkLayout((8, 8, 1), (Dense(64, 16), Tanh(), Dense(16, 10))))
