"""A CNN's pieces of the block-cyclic round loop (``model_pieces``' stubs, resolved for
``NetworkCyclicData``), and the bundle itself (``problems.BlockCyclicImageProblem``).

The model: the network's flat parameters (d,) in the problem's dtype (float32 by default, float64
for the agreement tests); ``model`` is the layout table (``NetworkLayout.table``). A local step at
global step t is W <- W - eta_t g, eta_t = step_size_at(schedule, t, I), with g the gradient of
``network_steps.network_gradient`` (the step of the CNN client-step primitive
``network_client_steps``, shared with FedAvg's CNN kernel, inlined): the update computed in float64
and stored in the model's dtype, as ``network_client_steps`` computes it.
Minibatches: client i of block m at step t draws its x-chain rows from the stream
stream_key(seed_key(seed), t, i, N), the linear model's rows; MC's y chain draws from the same
construction under its own key mix64(seed_key(seed) ^ SEPARATE_CHAIN_SALT), independent of the x
chain's rows (the network primitive takes a key, not the linear step's slot offset). The tracked
gradient of block m and the selection's losses are the network's mean cross-entropy
(``network_steps.rows_loss_grad``: the client's rows copied into the minibatch buffers, then
``problems.models.cnn.kernel.network_loss_grad``, called by address: ``cnn.kernel``, "Calls by
address") over whole clients, summed in float64. Each of these pieces is an overload compiled on
its own; called by address, none of them links and re-optimises the whole network.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload

from problems import BlockCyclicImageProblem
from problems.models.cnn.kernel import loss_grad_address

from ..._rng import mix64
from ...schedules import step_size_at
from ..local_steps import sq_norm
from ..network_steps import network_gradient, rows_loss_grad
from .model_pieces import (
    block_grad_sq,
    client_major,
    client_steps,
    is_bundle,
    participant_loss,
    workspace,
)

__all__ = ["SEPARATE_CHAIN_SALT", "NetworkCyclicData", "network_data"]

SEPARATE_CHAIN_SALT = np.uint64(0x8CB92BA72F3D8DD7)
"""XOR-ed into the seed key to make the key of MC-PSGD's block-separate chain's minibatches."""


class NetworkCyclicData(NamedTuple):
    """A CNN problem's data and the network's workspace in the kernel's layout (``network_data``,
    once per seed): M = ``n_blocks`` blocks of N = ``n_clients`` clients; images (n, H, W, C) in the
    problem's dtype, labels (n,) int64, offsets (M N + 1,); the minibatch buffers batch_images
    (b, or max n_k with exact gradients, H, W, C) and batch_labels (as many); the network's workspace acts, dacts,
    pool_index, grad (``ConvNet.workspace``) for max(b, largest n_k) images (exact steps, MC's
    losses and tracking read whole clients); loss_grad the address of the network's loss and
    gradient for the dtype in this process (``cnn.kernel.loss_grad_address``: the bundle is built
    where its kernel runs, once per seed)."""

    n_blocks: int
    n_clients: int
    images: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    batch_images: np.ndarray
    batch_labels: np.ndarray
    acts: np.ndarray
    dacts: np.ndarray
    pool_index: np.ndarray
    grad: np.ndarray
    loss_grad: int


def network_data(problem: BlockCyclicImageProblem, batch: int) -> NetworkCyclicData:
    """The bundle of ``problem`` for minibatches of ``batch`` rows (0: exact gradients)."""
    c = problem.combined
    rows = max(batch, int(c.client_sizes.max()))
    return NetworkCyclicData(
        problem.n_blocks, problem.n_clients, c.images, c.labels, c.offsets,
        np.empty((rows, *c.network.input_shape), dtype=c.float_type), np.empty(rows, dtype=np.int64),
        *c.network.workspace(rows, c.float_type), loss_grad_address(c.float_type),
    )


@overload(workspace)
def _workspace(model, data, batch, d):
    """(acc (d,) float64, the tracked block gradient,); the network's own buffers are in ``data``."""
    if not is_bundle(data, NetworkCyclicData):
        return None

    def impl(model, data, batch, d):
        return (np.empty(d),)

    return impl


@overload(client_major)
def _client_major(data):
    """Step by step: client by client measured ~4% slower on a CNN MC-PSGD seed."""
    if not is_bundle(data, NetworkCyclicData):
        return None

    def impl(data):
        return False

    return impl


@overload(client_steps)
def _client_steps(model, data, work, batch, key, chain, m, i, t0, steps, schedule, period, W):
    """The module docstring's steps; the y chain (chain 1) draws under the salted key."""
    if not is_bundle(data, NetworkCyclicData):
        return None

    def impl(model, data, work, batch, key, chain, m, i, t0, steps, schedule, period, W):
        k = m * data.n_clients + i
        lo, n_k = data.offsets[k], data.offsets[k + 1] - data.offsets[k]
        chain_key = key if chain == 0 else mix64(key ^ SEPARATE_CHAIN_SALT)
        grad = data.grad
        for e in range(steps):
            t = t0 + e
            eta = step_size_at(schedule.code, schedule.a, schedule.b, t, period)
            network_gradient(model, data.loss_grad, data.images, data.labels, lo, n_k, batch, chain_key, i,
                             data.n_clients, t, W, data.batch_images, data.batch_labels, data.acts, data.dacts,
                             data.pool_index, grad)
            for q in range(W.size):
                W[q] = np.float64(W[q]) - eta * np.float64(grad[q])

    return impl


@overload(block_grad_sq)
def _block_grad_sq(model, data, work, m, W):
    """||(1/N) sum_i grad F_m^i(W)||^2 over all N clients' block-m images, summed in float64."""
    if not is_bundle(data, NetworkCyclicData):
        return None

    def impl(model, data, work, m, W):
        acc, N, offsets = work[0], data.n_clients, data.offsets
        for q in range(acc.size):
            acc[q] = 0.0
        for i in range(N):
            k = m * N + i
            lo, hi = offsets[k], offsets[k + 1]
            rows_loss_grad(model, data.loss_grad, W, data.images, data.labels, lo, hi, data.batch_images,
                           data.batch_labels, data.acts, data.dacts, data.pool_index, data.grad)
            for q in range(acc.size):
                acc[q] += np.float64(data.grad[q]) / N
        return sq_norm(acc)

    return impl


@overload(participant_loss)
def _participant_loss(model, data, work, m, part, K, W):
    """Each participant's mean cross-entropy over its block-m images, averaged."""
    if not is_bundle(data, NetworkCyclicData):
        return None

    def impl(model, data, work, m, part, K, W):
        N, offsets = data.n_clients, data.offsets
        total = 0.0
        for p in range(K):
            k = m * N + part[p]
            lo, hi = offsets[k], offsets[k + 1]
            total += rows_loss_grad(model, data.loss_grad, W, data.images, data.labels, lo, hi, data.batch_images,
                                    data.batch_labels, data.acts, data.dacts, data.pool_index, data.grad)
        return total / K

    return impl
