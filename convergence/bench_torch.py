"""`fedbound bench`'s PyTorch CNN peer (optional; PyTorch is no dependency).

The SGD step as a PyTorch user writes it, on one thread (``torch.set_num_threads(1)``): the
network as an ``nn.Sequential`` of ``nn.Conv2d`` / ``nn.ReLU`` / ``nn.Tanh`` / ``nn.MaxPool2d(2)`` /
``nn.Flatten`` / ``nn.Linear`` on NCHW float32 tensors, ``nn.CrossEntropyLoss`` (the mean over the
batch, as fedbound's loss), ``torch.optim.SGD(lr)`` (no momentum: theta <- theta - lr grad), and per
minibatch ``zero_grad(); loss(net(x), y).backward(); step()`` in a Python loop over minibatches
already converted to tensors. fedbound's parameters are copied in: a conv weight (K, K, C_in,
C_out) (HWIO) becomes torch's (C_out, C_in, K, K); a dense weight (D_in, D_out) becomes (D_out,
D_in), the first dense layer's inputs reordered from fedbound's (h, w, c) flattening to torch's
(c, h, w) (``layers``: the same function, its rows permuted). When ``torch`` cannot be imported
``torch_cnn_peer`` returns None and bench prints a note instead of a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from problems.models import ConvNet
from problems.models.cnn import Conv2d, Dense, MaxPool2d, Tanh

__all__ = ["torch_cnn_peer", "torch_version"]


def torch_version() -> str | None:
    """The installed torch version, or None."""
    try:
        import torch
    except ImportError:
        return None
    return str(torch.__version__)


def torch_cnn_peer(network: ConvNet, params0: np.ndarray, images: np.ndarray, labels: np.ndarray, batch: int,
                   lr: float) -> Callable[[int], np.ndarray] | None:
    """A call ``peer(n)`` runs n SGD steps of ``network`` from ``params0`` in float32 on the
    minibatches rows [(s b) mod n_images, + b) (``kernel.sgd_steps``'s order; n_images a multiple
    of ``batch``; images (n, H, W, C)) and returns the parameters in fedbound's flat layout; None
    when torch is not importable."""
    try:
        import torch
        from torch import nn
    except ImportError:
        return None
    torch.set_num_threads(1)
    layout = network.layout
    shapes = layout.activation_shapes()
    blocks = {block.layer: block for block in layout.parameter_blocks}
    modules: list[Any] = []
    owners: list[tuple[Any, int]] = []  # (torch layer, fedbound layer index) of each layer with parameters
    for i, layer in enumerate(layout.layers):
        if isinstance(layer, Conv2d):
            modules.append(nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size))
            owners.append((modules[-1], i))
        elif isinstance(layer, MaxPool2d):
            modules.append(nn.MaxPool2d(2))
        elif isinstance(layer, Dense):
            if not any(isinstance(m, nn.Flatten) for m in modules):
                modules.append(nn.Flatten())
            modules.append(nn.Linear(layer.in_features, layer.out_features))
            owners.append((modules[-1], i))
        elif isinstance(layer, Tanh):
            modules.append(nn.Tanh())
        else:
            modules.append(nn.ReLU())
    net = nn.Sequential(*modules)

    def torch_weight(i: int, w: np.ndarray) -> np.ndarray:
        """fedbound's weight of layer i in torch's layout."""
        if w.ndim == 4:  # (K, K, C_in, C_out) -> (C_out, C_in, K, K)
            return w.transpose(3, 2, 0, 1)
        h, w_, c = shapes[i]  # the dense layer's input (h, w, c): rows (h, w, c) -> (c, h, w)
        return w.reshape(h, w_, c, -1).transpose(2, 0, 1, 3).reshape(h * w_ * c, -1).T

    def fedbound_weight(i: int, w: np.ndarray) -> np.ndarray:
        """torch's weight of layer i in fedbound's layout (the inverse of torch_weight)."""
        if w.ndim == 4:
            return w.transpose(2, 3, 1, 0)
        h, w_, c = shapes[i]
        return w.T.reshape(c, h, w_, -1).transpose(1, 2, 0, 3).reshape(h * w_ * c, -1)

    with torch.no_grad():
        for module, i in owners:
            block = blocks[i]
            flat = params0[block.offset : block.offset + block.size].astype(np.float32)
            module.weight.copy_(torch.from_numpy(np.ascontiguousarray(
                torch_weight(i, flat[: block.weight_size].reshape(block.weight_shape)))))
            module.bias.copy_(torch.from_numpy(flat[block.weight_size :].copy()))
    initial = {key: value.clone() for key, value in net.state_dict().items()}
    optimizer = torch.optim.SGD(net.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    nchw = np.ascontiguousarray(images.astype(np.float32).transpose(0, 3, 1, 2))
    minibatches = [(torch.from_numpy(nchw[i : i + batch]), torch.from_numpy(labels[i : i + batch].astype(np.int64)))
                   for i in range(0, images.shape[0], batch)]

    def run(n: int) -> np.ndarray:
        net.load_state_dict(initial)
        for s in range(n):
            x, y = minibatches[s % len(minibatches)]
            optimizer.zero_grad()
            loss_fn(net(x), y).backward()
            optimizer.step()
        flat = np.empty(layout.n_params, dtype=np.float32)
        for module, i in owners:
            block = blocks[i]
            weight = fedbound_weight(i, module.weight.detach().numpy())
            flat[block.offset : block.offset + block.weight_size] = weight.reshape(-1)
            flat[block.offset + block.weight_size : block.offset + block.size] = module.bias.detach().numpy()
        return flat

    return run
