"""Model names (as problem specs write them) to model classes, imported on first use so that
naming a model costs no Numba or SciPy import."""

from __future__ import annotations

import functools
import importlib

from .linear import LinearModel

__all__ = ["MODEL_NAMES", "model_for"]

_MODELS = {
    "least_squares": ".least_squares:LeastSquaresModel",
    "logistic": ".logistic:LogisticModel",
    "softmax": ".softmax:SoftmaxModel",
}
MODEL_NAMES = tuple(_MODELS)


@functools.lru_cache(maxsize=None)
def model_for(name: str, n_classes: int = 1) -> LinearModel:
    """The model called ``name`` with ``n_classes`` margins per sample; KeyError for an unknown name."""
    module, cls = _MODELS[name].split(":")
    return getattr(importlib.import_module(module, __package__), cls)(n_classes)
