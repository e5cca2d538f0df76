"""Model names (as problem specs write them) to model classes, and network names to the CNNs of
``problems.models.cnn``, imported on first use so that naming a model or a network costs no Numba
or SciPy import."""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

from ..validation import ProblemError
from .linear import LinearModel

if TYPE_CHECKING:
    from .cnn.network import ConvNet

__all__ = ["MODEL_NAMES", "NETWORK_NAMES", "model_for", "network_for"]

_MODELS = {
    "least_squares": ".least_squares:LeastSquaresModel",
    "logistic": ".logistic:LogisticModel",
    "softmax": ".softmax:SoftmaxModel",
}
MODEL_NAMES = tuple(_MODELS)

_NETWORKS = {
    "digits_net": ".cnn.networks:digits_net",
    "digits_tanh_mlp": ".cnn.networks:digits_tanh_mlp",
    "lenet5": ".cnn.networks:lenet5",
    "tutorial_cifar_net": ".cnn.networks:tutorial_cifar_net",
}
NETWORK_NAMES = tuple(_NETWORKS)
"""The networks a problem spec can name (``problems.image_classification``): the digits net (8x8x1),
LeNet-5 (28x28x1), the PyTorch-tutorial CIFAR-10 net (32x32x3) and the smooth two-layer tanh network
for the digits, as ``cnn.networks`` defines them."""


@functools.lru_cache(maxsize=None)
def model_for(name: str, n_classes: int = 1) -> LinearModel:
    """The model called ``name`` with ``n_classes`` margins per sample; KeyError for an unknown name."""
    module, cls = _MODELS[name].split(":")
    return getattr(importlib.import_module(module, __package__), cls)(n_classes)


@functools.lru_cache(maxsize=None)
def network_for(name: str) -> ConvNet:
    """The network called ``name`` (``NETWORK_NAMES``); ProblemError naming ``network`` otherwise."""
    if name not in _NETWORKS:
        raise ProblemError(f"network: unknown network {name!r}; choose one of {', '.join(NETWORK_NAMES)}")
    module, function = _NETWORKS[name].split(":")
    return getattr(importlib.import_module(module, __package__), function)()
