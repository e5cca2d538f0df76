"""Where a network's parameters and activations live: the flat parameter vector's layout, the
per-sample activation shapes, and the integer table the Numba kernel walks.

Parameter layout (one flat vector theta, float64 or float32): the layers' parameters in layer
order; within a layer the weight first, row-major, then the bias:

* ``Conv2d``: w (K, K, C_in, C_out), then b (C_out,)   (K K C_in C_out + C_out entries)
* ``Dense``:  w (D_in, D_out), then b (D_out,)          (D_in D_out + D_out entries)
* ``MaxPool2d``, ``ReLU``, ``Tanh``: no parameters.

From a PyTorch state_dict: a conv weight (C_out, C_in, K, K) is ``w.permute(2, 3, 1, 0)``, a linear
weight (D_out, D_in) is ``w.T``, and the first linear layer after a 4-D activation also has its
rows reordered from torch's (c, h, w) flattening to fedbound's (h, w, c); biases are the same.

Activations: act_0 = the input image (H, W, C), act_{l+1} = layer l's output; a batch of B stores
each act_l as a (B, ...) block of one flat buffer, at B times the per-sample offset. The kernel
table has one row per layer: (op, input h, w, c, output h, w, c, kernel size, parameter offset,
input activation offset, output activation offset, max-pool index offset), all per sample; a dense
layer's input and output are (1, 1, D).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...validation import ProblemError, check_int
from .layers import Conv2d, Dense, Layer, MaxPool2d, ReLU, Tanh

__all__ = [
    "EVALUATION_CHUNK",
    "NetworkLayout",
    "ParameterBlock",
    "OP_CONV",
    "OP_RELU",
    "OP_POOL",
    "OP_DENSE",
    "OP_TANH",
    "COL_OP",
    "COL_IN_H",
    "COL_IN_W",
    "COL_IN_C",
    "COL_OUT_C",
    "COL_KERNEL",
    "COL_OUT_ACT",
]

EVALUATION_CHUNK = 256
"""Images per network call when F, the local objectives or accuracies are evaluated (bounds the
activation buffers: 256 images of the tutorial net are ~32 MB in float64)."""

OP_CONV, OP_RELU, OP_POOL, OP_DENSE, OP_TANH = 0, 1, 2, 3, 4
"""Layer codes of the table's first column."""
(COL_OP, COL_IN_H, COL_IN_W, COL_IN_C, COL_OUT_H, COL_OUT_W, COL_OUT_C, COL_KERNEL, COL_PARAM, COL_IN_ACT,
 COL_OUT_ACT, COL_POOL_INDEX) = range(12)
"""The table's columns, in the order of the module docstring."""


class ParameterBlock(NamedTuple):
    """One layer's parameters in the flat vector: the weight at [offset, offset + prod(shape)),
    the bias right after it (``bias_size`` entries); ``fan_in`` as PyTorch computes it."""

    layer: int
    offset: int
    weight_shape: tuple[int, ...]
    bias_size: int
    fan_in: int

    @property
    def weight_size(self) -> int:
        return int(np.prod(self.weight_shape))

    @property
    def size(self) -> int:
        return self.weight_size + self.bias_size


@dataclass(frozen=True)
class NetworkLayout:
    """The checked layout of ``layers`` on inputs of shape ``input_shape`` = (H, W, C).

    Raises ProblemError naming ``input_shape`` or ``layers[i]`` (and the field) when a layer does not
    fit what reaches it, and ``layers`` when the last layer is not the ``Dense`` layer of the logits.
    """

    input_shape: tuple[int, int, int]
    layers: tuple[Layer, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.input_shape, tuple) or len(self.input_shape) != 3:
            raise ProblemError(f"input_shape: expected (H, W, C), got {self.input_shape!r}")
        for name, value in zip(("H", "W", "C"), self.input_shape):
            check_int(f"input_shape.{name}", value, minimum=1)
        if not isinstance(self.layers, tuple) or not self.layers:
            raise ProblemError(f"layers: expected a non-empty tuple of layers, got {self.layers!r}")
        if not isinstance(self.layers[-1], Dense):
            raise ProblemError("layers: the last layer must be Dense (it gives the logits)")
        object.__setattr__(self, "_rows", self._build_rows())

    def _build_rows(self) -> tuple[tuple[int, ...], ...]:
        shape = self.input_shape
        param = 0
        act = int(np.prod(shape))
        in_act = 0
        arg = 0
        rows = []
        for i, layer in enumerate(self.layers):
            h, w, c = shape
            if isinstance(layer, Conv2d):
                if layer.in_channels != c:
                    raise ProblemError(f"layers[{i}].in_channels: {c} channels reach it, got {layer.in_channels}")
                if layer.kernel_size > min(h, w):
                    raise ProblemError(
                        f"layers[{i}].kernel_size: {layer.kernel_size} exceeds the {h} x {w} input reaching it"
                    )
                out = (h - layer.kernel_size + 1, w - layer.kernel_size + 1, layer.out_channels)
                op, kernel = OP_CONV, layer.kernel_size
                n_params = layer.fan_in * layer.out_channels + layer.out_channels
            elif isinstance(layer, MaxPool2d):
                if h < 2 or w < 2:
                    raise ProblemError(f"layers[{i}]: max-pooling needs an input of at least 2 x 2, got {h} x {w}")
                out, op, kernel, n_params = (h // 2, w // 2, c), OP_POOL, 2, 0
            elif isinstance(layer, ReLU):
                out, op, kernel, n_params = shape, OP_RELU, 0, 0
            elif isinstance(layer, Tanh):
                out, op, kernel, n_params = shape, OP_TANH, 0, 0
            elif isinstance(layer, Dense):
                if layer.in_features != h * w * c:
                    raise ProblemError(
                        f"layers[{i}].in_features: {h * w * c} features reach it, got {layer.in_features}"
                    )
                shape = (1, 1, h * w * c)
                out, op, kernel = (1, 1, layer.out_features), OP_DENSE, 0
                n_params = layer.in_features * layer.out_features + layer.out_features
            else:
                raise ProblemError(f"layers[{i}]: expected Conv2d, MaxPool2d, ReLU, Tanh or Dense, got {layer!r}")
            rows.append((op, *shape, *out, kernel, param, in_act, act, arg))
            if op == OP_POOL:
                arg += int(np.prod(out))
            param += n_params
            in_act = act
            act += int(np.prod(out))
            shape = out
        return tuple(rows)

    @property
    def table(self) -> np.ndarray:
        """The kernel table (n_layers, len(TABLE_COLUMNS)), int64 (module docstring)."""
        return np.array(self._rows, dtype=np.int64)

    @property
    def n_params(self) -> int:
        """Length of the flat parameter vector."""
        return sum(block.size for block in self.parameter_blocks)

    @property
    def n_classes(self) -> int:
        """Number of logits (the last dense layer's D_out)."""
        return int(self._rows[-1][COL_OUT_C])

    @property
    def activation_size(self) -> int:
        """Floats of all activations of one sample, the input included."""
        last = self._rows[-1]
        return int(last[COL_OUT_ACT] + last[COL_OUT_H] * last[COL_OUT_W] * last[COL_OUT_C])

    @property
    def pool_index_size(self) -> int:
        """Max-pool winner indices of one sample (int8)."""
        return int(sum(r[COL_OUT_H] * r[COL_OUT_W] * r[COL_OUT_C] for r in self._rows if r[COL_OP] == OP_POOL))

    @property
    def parameter_blocks(self) -> tuple[ParameterBlock, ...]:
        """The layers with parameters, in the order of the flat vector."""
        blocks = []
        for i, (layer, row) in enumerate(zip(self.layers, self._rows)):
            if isinstance(layer, Conv2d):
                k = layer.kernel_size
                shape = (k, k, layer.in_channels, layer.out_channels)
                blocks.append(ParameterBlock(i, int(row[COL_PARAM]), shape, layer.out_channels, layer.fan_in))
            elif isinstance(layer, Dense):
                shape = (layer.in_features, layer.out_features)
                blocks.append(ParameterBlock(i, int(row[COL_PARAM]), shape, layer.out_features, layer.fan_in))
        return tuple(blocks)

    def activation_shapes(self) -> tuple[tuple[int, int, int], ...]:
        """Per-sample shapes of act_0 (the input), ..., act_L (the logits, (1, 1, classes))."""
        return (self.input_shape, *(tuple(int(v) for v in row[COL_OUT_H : COL_OUT_C + 1]) for row in self._rows))

    def flops_per_image(self) -> int:
        """Multiply-adds x 2 of one image's forward pass plus backward pass (parameter gradients of
        every layer, input gradients of every layer but the first): the floor's numerator."""
        total = 0
        for row in self._rows:
            op, _, _, c, oh, ow, oc, k = row[: COL_KERNEL + 1]
            if op == OP_CONV:
                macs = oh * ow * oc * k * k * c
            elif op == OP_DENSE:
                macs = c * oc
            else:
                continue
            passes = 3 if row[COL_IN_ACT] > 0 else 2  # forward, weight gradient, input gradient
            total += 2 * passes * macs
        return int(total)
