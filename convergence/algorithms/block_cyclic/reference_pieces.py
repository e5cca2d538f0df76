"""The model-specific pieces of the NumPy reference (``reference.ReferencePieces``): a linear model's
(``LinearReference``) and a CNN's (``NetworkReference``), each the NumPy twin of its kernel pieces
(``linear_pieces``, ``network_pieces``), with the same minibatch rows and the same arithmetic.
"""

from __future__ import annotations

import numpy as np

from problems import BlockCyclicImageProblem, BlockCyclicProblem
from problems.models import LinearModel
from problems.models.cnn.reference import loss_grad_np

from ..._rng import GOLDEN, mix64_np, sample_indices_np
from ..padded_clients import PaddedClients
from .kernel import MODE_MC, Plan
from .network_pieces import SEPARATE_CHAIN_SALT
from .reference import ReferencePieces

__all__ = ["LinearReference", "NetworkReference", "chain_keys_np", "chain_rows_np"]

_HIGH = np.uint64(32)


def _mean_losses(model: LinearModel, X: np.ndarray, y: np.ndarray, mask: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Each client's mean per-sample loss at W (f, C) over its padded rows X (K, n, f); shape (K,)."""
    return (model.margin_losses(X @ W, y) * mask).sum(axis=1)


class LinearReference(ReferencePieces):
    """A linear model (models (f, C) float64), vectorised over the participants: the K local models
    of a chain are one array (K, f, C); a step is the einsums of ``fedavg.reference`` on the block's
    padded client data (a full-batch gradient: ``PaddedClients.full_gradients``); minibatch rows
    ``_rng.sample_indices_np`` with 2b slots per stream in MC, the first b for the x chain; losses
    and the tracked gradient from the rows directly (no Gram matrices). A linear run can be traced."""

    def __init__(self, problem: BlockCyclicProblem, plan: Plan, seed: int) -> None:
        c = problem.combined
        self.n_blocks, self.n_clients, self.shape = problem.n_blocks, problem.n_clients, (c.n_features, c.n_classes)
        self.model, self.mu, self.seed, self.batch = c.model, c.mu, seed, plan.batch
        self.slots = 2 * plan.batch if plan.mode == MODE_MC else plan.batch
        self.blocks = [PaddedClients(problem.block(m)) for m in range(problem.n_blocks)]

    def rows(self, m: int, t: int, part: np.ndarray) -> np.ndarray | None:
        """The participants' minibatch slots (K, b or 2 b) at step t, None with exact gradients."""
        return None if self.batch == 0 else sample_indices_np(self.seed, t, self.blocks[m].sizes, self.slots)[part]

    def gradients(self, chain: int, m: int, part: np.ndarray, rows: np.ndarray | None,
                  models: np.ndarray) -> np.ndarray:
        data, b = self.blocks[m], self.batch
        if rows is None:
            grads = data.full_gradients(self.model, models, part)
        else:
            idx = rows[:, :b] if chain == 0 else rows[:, b:]
            X, y = data.X[part[:, None], idx], data.y[part[:, None], idx]
            grads = self.model.batched_gradients(models, X, y, np.full(idx.shape, 1.0 / idx.shape[1]))
        return grads + self.mu * models

    def step(self, models: np.ndarray, eta: float, grads: np.ndarray) -> None:
        models -= eta * grads

    def mean(self, local: np.ndarray) -> np.ndarray:
        return local.mean(axis=0)

    def block_grad_sq(self, m: int, W: np.ndarray) -> float:
        grads = self.blocks[m].full_gradients(self.model, np.repeat(W[None], self.n_clients, axis=0))
        return float(np.sum((grads.mean(axis=0) + self.mu * W) ** 2))

    def participant_loss(self, m: int, part: np.ndarray, W: np.ndarray) -> float:
        data = self.blocks[m]
        losses = _mean_losses(self.model, data.X[part], data.y[part], data.mask[part], W)
        return losses.mean() + 0.5 * self.mu * np.sum(W**2)


def chain_keys_np(seed: int) -> tuple[np.uint64, np.uint64]:
    """(key of the x chain's minibatches, key of the y chain's) of ``seed``: seed_key(seed) =
    mix64(seed + G) and mix64(seed_key ^ SEPARATE_CHAIN_SALT), as the CNN kernel's."""
    with np.errstate(over="ignore"):
        key = mix64_np(np.uint64(seed) + GOLDEN)
        return key, mix64_np(key ^ SEPARATE_CHAIN_SALT)


def chain_rows_np(key: np.uint64, t: int, sizes: np.ndarray, batch: int) -> np.ndarray:
    """The kernels' minibatch rows at step t under ``key``, shape (N, batch), local to each client:
    row j of client i is sample_index(stream_key(key, t, i, N), j, n_i) (``_rng``); under the seed
    key these are ``_rng.sample_indices_np``'s."""
    sizes = np.asarray(sizes, dtype=np.uint64)
    with np.errstate(over="ignore"):
        ids = np.arange(sizes.size, dtype=np.uint64)
        streams = mix64_np(key + GOLDEN * (np.uint64(t) * np.uint64(sizes.size) + ids + np.uint64(1)))
        h = mix64_np(streams[:, None] + GOLDEN * np.arange(1, batch + 1, dtype=np.uint64)[None, :])
    return (((h >> _HIGH) * sizes[:, None]) >> _HIGH).astype(np.int64)


class NetworkReference(ReferencePieces):
    """A CNN (models (d,) in the problem's dtype), one participant at a time: the network's loss and
    gradient from the NumPy twin of the model oracle (``problems.models.cnn.reference.loss_grad_np``,
    im2col) instead of the kernel's direct loops; each step computed in float64 and stored in the
    model's dtype, averages accumulated in float64 in participant order; minibatch rows
    ``chain_rows_np`` under the chains' keys (``chain_keys_np``). A CNN run keeps no per-step trace."""

    def __init__(self, problem: BlockCyclicImageProblem, plan: Plan, seed: int) -> None:
        c = self.combined = problem.combined
        self.n_blocks, self.n_clients, self.shape = problem.n_blocks, problem.n_clients, (c.dim,)
        self.layout, self.sizes, self.batch = c.network.layout, problem.block_sizes(), plan.batch
        self.mc, self.keys = plan.mode == MODE_MC, chain_keys_np(seed)

    def _data(self, m: int, i: int, chosen: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        images, labels = self.combined.client_data(m * self.n_clients + i)
        return (images, labels) if chosen is None else (images[chosen], labels[chosen])

    def rows(self, m: int, t: int, part: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | None:
        """Every client's rows (N, b) of the x chain and of MC's y chain at step t, None when exact."""
        if self.batch == 0:
            return None
        rows_y = chain_rows_np(self.keys[1], t, self.sizes[m], self.batch) if self.mc else None
        return chain_rows_np(self.keys[0], t, self.sizes[m], self.batch), rows_y

    def gradients(self, chain: int, m: int, part: np.ndarray, rows: tuple[np.ndarray, np.ndarray | None] | None,
                  models: np.ndarray) -> np.ndarray:
        grads = []
        with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
            for p, i in enumerate(part):
                chosen = None if rows is None else rows[chain][i]
                grads.append(loss_grad_np(self.layout, models[p], *self._data(m, i, chosen))[1])
        return np.stack(grads)

    def step(self, models: np.ndarray, eta: float, grads: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            models[:] = models.astype(np.float64) - eta * grads.astype(np.float64)

    def mean(self, local: np.ndarray) -> np.ndarray:
        acc = np.zeros(local.shape[1])
        for model in local:
            acc += (1.0 / local.shape[0]) * model.astype(np.float64)
        return acc

    def block_grad_sq(self, m: int, W: np.ndarray) -> float:
        block_grad = np.zeros(W.size)
        for i in range(self.n_clients):
            block_grad += loss_grad_np(self.layout, W, *self._data(m, i, None))[1].astype(np.float64) / self.n_clients
        return float(np.sum(block_grad**2))

    def participant_loss(self, m: int, part: np.ndarray, W: np.ndarray) -> float:
        return sum(loss_grad_np(self.layout, W, *self._data(m, i, None))[0] for i in part) / len(part)
