"""The layer types a CNN is declared with (frozen dataclasses; shapes per sample, channels last).

A network is an input shape (H, W, C) and a sequence of these layers; ``layout.NetworkLayout``
checks that they fit and places their parameters in the flat vector. A ``Dense`` layer after a
4-D activation flattens it in (h, w, c) order (row-major NHWC), which is where fedbound's layout
differs from torch's (c, h, w) ``view(-1, 16 * 5 * 5)``: the function class is the same, up to a
permutation of the first dense layer's rows.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ...validation import check_int

__all__ = ["Conv2d", "MaxPool2d", "ReLU", "Tanh", "Dense", "Layer"]


class _Sized:
    """Base of a layer whose fields are all sizes: each an integer >= 1 (ProblemError naming it)."""

    def __post_init__(self) -> None:
        for field in fields(self):
            check_int(field.name, getattr(self, field.name), minimum=1)


@dataclass(frozen=True)
class Conv2d(_Sized):
    """Convolution C_in -> C_out with a K x K kernel, stride 1, no padding (``conv2d``)."""

    in_channels: int
    out_channels: int
    kernel_size: int

    @property
    def fan_in(self) -> int:
        """Inputs per output unit, K K C_in (PyTorch's fan_in of a conv weight)."""
        return self.kernel_size * self.kernel_size * self.in_channels


@dataclass(frozen=True)
class MaxPool2d:
    """2x2 max-pooling with stride 2 (``max_pool``)."""


@dataclass(frozen=True)
class ReLU:
    """Elementwise max(x, 0) (``relu``)."""


@dataclass(frozen=True)
class Tanh:
    """Elementwise tanh(x) (``tanh``): the smooth activation."""


@dataclass(frozen=True)
class Dense(_Sized):
    """Fully connected layer D_in -> D_out (``dense``); flattens a 4-D input in (h, w, c) order."""

    in_features: int
    out_features: int

    @property
    def fan_in(self) -> int:
        """Inputs per output unit, D_in."""
        return self.in_features


Layer = Conv2d | MaxPool2d | ReLU | Tanh | Dense
