"""The local-step primitive of a CNN client in the Numba kernels: E SGD steps of one client on
its network loss, the network's gradient taken from the model oracle
(``problems.models.cnn.kernel.network_loss_grad``, called by address). The one local-SGD round loop runs it for a CNN
(``network_rounds``: FedAvg's client round), and so does the block-cyclic CNN kernel (one step at
a time).

Why the CNN has its own step primitive rather than a branch of ``local_steps.data_gradient``:
that one is specialised to linear models on support-restricted rows (margins, Gram steps, the
off-support scalar, float64), and a network needs other arguments (its layout table, images,
float32 buffers); a branch there would add arguments and dispatch to the linear step loop, which
bench's W1/W2 time at tens of nanoseconds per step (``docs/architecture.md``, the note on
reference counting in the step loop). What the two share is everything around the step: the
minibatch streams and indices (``_rng.stream_key`` / ``sample_index``: the same rows for the same
(seed, step, client) as the linear kernels), the step-size schedule (``schedules.step_size_at``),
the algorithm's gradient correction (``round_state.correct_gradient``) and, in the round loops,
the sampling and aggregation of ``participation``.

``network_gradient`` is one step's gradient (the minibatch gather and the network's gradient),
inlined (``inline="always"``) into ``network_client_steps`` and into the block-cyclic kernel's CNN
step (``block_cyclic.network_pieces``); ``network_client_steps`` is inlined into FedAvg's client
round. The network's loss and gradient are called by address (``loss_grad``, the caller's
``cnn.kernel.loss_grad_address`` of the model's dtype; ``cnn.kernel.network_loss_grad_at``), so that
no compiled function above it links and re-optimises the whole network again (``cnn.kernel``'s
docstring, "Calls by address"). Every argument is a plain array or scalar (no tuple read in the
step loop) but the algorithm's state, which only selects the compiled correction. Buffers,
allocated once per run by the caller: ``batch_images`` (b rows, or max n_k with exact gradients,
H, W, C) and ``batch_labels`` (as many) for the gathered minibatch, and the network's workspace
(``ConvNet.workspace`` for the largest batch: b, or max n_k with exact gradients).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from problems.models.cnn.kernel import network_loss_grad_at

from .._rng import sample_index, stream_key
from ..schedules import step_size_at
from .round_state import correct_gradient

__all__ = ["network_client_steps", "network_gradient", "rows_loss_grad"]


@njit(cache=True, inline="always")
def network_gradient(table, loss_grad, images, labels, row_base, n_k, batch, key, k, N, t, Wk, batch_images,
                     batch_labels, acts, dacts, pool_index, grad):
    """grad <- the gradient of client k's mean cross-entropy at Wk at global step t: over its rows
    images[row_base : row_base + n_k] (batch = 0) or over ``batch`` rows drawn uniformly with
    replacement from the stream ``stream_key(key, t, k, N)``, either copied into the buffers
    (``rows_loss_grad`` with exact gradients). Inlined into its callers (one step of
    ``network_client_steps``, the block-cyclic CNN step)."""
    if batch == 0:
        rows_loss_grad(table, loss_grad, Wk, images, labels, row_base, row_base + n_k, batch_images, batch_labels,
                       acts, dacts, pool_index, grad)
        return
    stream = stream_key(key, t, k, N)
    for j in range(batch):
        row = row_base + sample_index(stream, j, n_k)
        batch_images[j] = images[row]
        batch_labels[j] = labels[row]
    network_loss_grad_at(loss_grad, table, Wk, batch_images[:batch], batch_labels[:batch], acts, dacts, pool_index,
                         grad)


@njit(cache=True, inline="always")
def rows_loss_grad(table, loss_grad, W, images, labels, lo, hi, batch_images, batch_labels, acts, dacts, pool_index,
                   grad):
    """The mean cross-entropy of images[lo:hi] at W (returned) and its gradient (into grad), the
    rows copied into batch_images and batch_labels (at least hi - lo rows) first: the clients'
    images are read-only, and ``network_loss_grad`` called on them would be compiled a second time,
    for read-only arrays (~9 s of a cold start), beside the minibatch's writable buffers."""
    for j in range(hi - lo):
        batch_images[j] = images[lo + j]
        batch_labels[j] = labels[lo + j]
    return network_loss_grad_at(loss_grad, table, W, batch_images[: hi - lo], batch_labels[: hi - lo], acts, dacts,
                                pool_index, grad)


@njit(cache=True, inline="always")
def network_client_steps(
    table, loss_grad, images, labels, row_base, n_k, batch, key, k, N, t0, E, sched_code, sched_a, sched_b,
    step_scale, Wk, anchor, track, batch_images, batch_labels, acts, dacts, pool_index, grad, maxima, algorithm_state,
):
    """E local SGD steps of client k in place on its model Wk (d,), from global step t0:

        Wk <- Wk - eta_t lambda_k g_k(Wk),   eta_t = step_size_at(sched_code, sched_a, sched_b, t, E), t = t0 + e,

    g_k the mean cross-entropy gradient over the client's rows images[row_base : row_base + n_k]
    (batch = 0) or over ``batch`` rows drawn uniformly with replacement from the stream
    ``stream_key(key, t, k, N)``; lambda_k = ``step_scale``; then the algorithm adds its correction
    to g (``round_state.correct_gradient(algorithm_state, k, lambda_k, g)``; none for
    ``round_state.STATELESS``). The update is computed in float64 and
    stored in Wk's dtype. With ``track``, maxima (2,) float64 <- [max(maxima[0], ||Wk - anchor||^2
    after each step), max(maxima[1], lambda_k^2 ||g||^2 of each step's gradient)].
    """
    for e in range(E):
        t = t0 + e
        eta = step_size_at(sched_code, sched_a, sched_b, t, E) * step_scale
        network_gradient(table, loss_grad, images, labels, row_base, n_k, batch, key, k, N, t, Wk, batch_images,
                         batch_labels, acts, dacts, pool_index, grad)
        correct_gradient(algorithm_state, k, step_scale, grad)
        if track:
            g_sq = 0.0
            for q in range(Wk.size):
                g_sq += np.float64(grad[q]) * np.float64(grad[q])
            maxima[1] = max(maxima[1], step_scale * step_scale * g_sq)
        for q in range(Wk.size):
            Wk[q] = np.float64(Wk[q]) - eta * np.float64(grad[q])
        if track:
            rad = 0.0
            for q in range(Wk.size):
                diff = np.float64(Wk[q]) - anchor[q]
                rad += diff * diff
            maxima[0] = max(maxima[0], rad)
