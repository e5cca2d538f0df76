"""A CNN behind the model oracle: number of parameters, minibatch loss and gradient at a flat
parameter vector (Numba kernel or NumPy reference), predictions and accuracy.

Inputs: images (B, H, W, C) of the parameters' dtype (float64, or float32: the fast path), labels
(B,) integers in [0, classes). The loss is the minibatch's mean softmax cross-entropy
(``cross_entropy``); the gradient is its gradient in the flat layout of ``layout``. Both engines
compute the same function: "numba" (``kernel``: planar convolutions for layers with few output
channels, im2col and one BLAS product per pass and batch for the others, BLAS for dense layers
above a size, vectorised loops elsewhere; bit-reproducible on one machine for any thread count,
Numba's or BLAS's) and "numpy" (``reference``, im2col). Bad
input raises ProblemError naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...validation import ProblemError
from .initialisation import default_init
from .kernel import network_forward, network_loss_grad, network_predict
from .layout import EVALUATION_CHUNK, NetworkLayout
from .reference import forward_np, loss_grad_np

__all__ = ["ConvNet", "CNNWorkspace", "ENGINES"]

ENGINES = ("numba", "numpy")
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


class CNNWorkspace(NamedTuple):
    """Preallocated buffers of ``kernel.network_loss_grad`` for one batch size and dtype."""

    acts: np.ndarray
    dacts: np.ndarray
    pool_index: np.ndarray
    grad: np.ndarray


@dataclass(frozen=True)
class ConvNet:
    """A named network: its layout (layers on an input shape) and the oracle over it."""

    name: str
    layout: NetworkLayout

    @property
    def n_params(self) -> int:
        return self.layout.n_params

    @property
    def n_classes(self) -> int:
        return self.layout.n_classes

    @property
    def input_shape(self) -> tuple[int, int, int]:
        return self.layout.input_shape

    def init_params(self, seed: int, dtype: np.dtype | type = np.float32) -> np.ndarray:
        """PyTorch's default initialisation from Philox keyed by ``seed`` (``initialisation``), float32
        by default (the fast path; the parameters' dtype selects the precision of every computation)."""
        return default_init(self.layout, seed, dtype)

    def workspace(self, batch: int, dtype: np.dtype | type) -> CNNWorkspace:
        """Buffers for ``kernel.network_loss_grad`` / ``sgd_steps`` at batch size ``batch``."""
        dtype = np.dtype(dtype)
        return CNNWorkspace(
            np.zeros(batch * self.layout.activation_size, dtype=dtype),
            np.zeros(batch * self.layout.activation_size, dtype=dtype),
            np.zeros(batch * self.layout.pool_index_size, dtype=np.int8),
            np.zeros(self.n_params, dtype=dtype),
        )

    def loss_and_gradient(
        self, params: np.ndarray, images: np.ndarray, labels: np.ndarray, engine: str = "numba"
    ) -> tuple[float, np.ndarray]:
        """(mean cross-entropy of the minibatch, its gradient (n_params,) in params' dtype)."""
        params, images = self._check(params, images, engine)
        labels = self._check_labels(labels, images.shape[0])
        if engine == "numpy":
            return loss_grad_np(self.layout, params, images, labels)
        work = self.workspace(images.shape[0], params.dtype)
        loss = network_loss_grad(self.layout.table, params, images, labels, *work)
        return float(loss), work.grad

    def sample_gradients(self, params: np.ndarray, images: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The per-sample gradients grad CE(net(params; x_i), y_i), shape (B, n_params) in params'
        dtype: one Numba call per image on one batch-1 workspace (their mean is
        ``loss_and_gradient``'s gradient)."""
        params, images = self._check(params, images, "numba")
        labels = self._check_labels(labels, images.shape[0])
        work = self.workspace(1, params.dtype)
        out = np.empty((images.shape[0], self.n_params), dtype=params.dtype)
        for i in range(images.shape[0]):
            network_loss_grad(self.layout.table, params, images[i:i + 1], labels[i:i + 1], *work)
            out[i] = work.grad
        return out

    def loss(self, params: np.ndarray, images: np.ndarray, labels: np.ndarray, engine: str = "numba") -> float:
        """The minibatch's mean cross-entropy."""
        return self.loss_and_gradient(params, images, labels, engine)[0]

    def logits(self, params: np.ndarray, images: np.ndarray, engine: str = "numba") -> np.ndarray:
        """The network's outputs (B, classes) before the softmax."""
        params, images = self._check(params, images, engine)
        if engine == "numpy":
            return forward_np(self.layout, params, images)[0][-1]
        work = self.workspace(images.shape[0], params.dtype)
        return network_forward(self.layout.table, params, images, work.acts, work.pool_index).copy()

    def predict(self, params: np.ndarray, images: np.ndarray, engine: str = "numba") -> np.ndarray:
        """Predicted classes (B,) int64: the first largest logit (``np.argmax``'s rule: ties go to
        the smaller class), in chunks of ``EVALUATION_CHUNK`` images: one Numba call
        (``kernel.network_predict``) or ``np.argmax`` of the reference's logits per chunk."""
        params, images = self._check(params, images, engine)
        if engine == "numpy":
            return np.concatenate([np.argmax(forward_np(self.layout, params, images[lo:lo + EVALUATION_CHUNK])[0][-1],
                                             axis=1) for lo in range(0, images.shape[0], EVALUATION_CHUNK)]
                                  ).astype(np.int64)
        chunk = min(images.shape[0], EVALUATION_CHUNK)  # the kernel writes every buffer before reading it
        acts = np.empty(chunk * self.layout.activation_size, dtype=params.dtype)
        pool_index = np.empty(chunk * self.layout.pool_index_size, dtype=np.int8)
        return network_predict(self.layout.table, params, images, acts, pool_index,
                               np.empty(images.shape[0], dtype=np.int64))

    def accuracy(self, params: np.ndarray, images: np.ndarray, labels: np.ndarray, engine: str = "numba") -> float:
        """Share of the images whose predicted class is their label."""
        predicted = self.predict(params, images, engine)
        return float(np.mean(predicted == self._check_labels(labels, predicted.size)))

    def _check(self, params: np.ndarray, images: np.ndarray, engine: str) -> tuple[np.ndarray, np.ndarray]:
        if engine not in ENGINES:
            raise ProblemError(f"engine: expected one of {list(ENGINES)}, got {engine!r}")
        if not isinstance(params, np.ndarray) or params.dtype not in _FLOATS:
            raise ProblemError(f"params: expected a float64 or float32 array, got {_describe(params)}")
        if params.shape != (self.n_params,):
            raise ProblemError(f"params: expected shape ({self.n_params},) for {self.name}, got {params.shape}")
        if not np.all(np.isfinite(params)):
            raise ProblemError("params: contains non-finite values")
        if not isinstance(images, np.ndarray) or images.ndim != 4 or images.shape[1:] != self.input_shape:
            raise ProblemError(
                f"images: expected shape (b, {', '.join(map(str, self.input_shape))}), got {_describe(images)}"
            )
        if images.shape[0] < 1:
            raise ProblemError("images: the batch is empty")
        if images.dtype != params.dtype:
            raise ProblemError(f"images: dtype {images.dtype} differs from the parameters' {params.dtype}")
        if not np.all(np.isfinite(images)):
            raise ProblemError("images: contains non-finite values")
        return _writable(params), _writable(images)

    def _check_labels(self, labels: np.ndarray, batch: int) -> np.ndarray:
        if not isinstance(labels, np.ndarray) or not np.issubdtype(labels.dtype, np.integer):
            raise ProblemError(f"labels: expected an integer array, got {_describe(labels)}")
        if labels.shape != (batch,):
            raise ProblemError(f"labels: expected shape ({batch},), got {labels.shape}")
        if labels.min() < 0 or labels.max() >= self.n_classes:
            raise ProblemError(
                f"labels: expected integers in [0, {self.n_classes}), got [{labels.min()}, {labels.max()}]"
            )
        return labels.astype(np.int64)


def _writable(array: np.ndarray) -> np.ndarray:
    """``array`` if it is C-contiguous and writable, else a copy that is: the kernels are compiled
    per argument type, and Numba types a read-only array apart (a stored iterate, a problem's frozen
    images), so that one read-only argument would compile the whole network again (4-11 s of a cold
    start, ``docs/architecture.md``); the kernels never write to params or images."""
    if array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.array(array, order="C")


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    return type(value).__name__
