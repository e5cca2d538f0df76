"""A CNN's pieces of the local-SGD round loop (``client_rounds``), for the bundle ``NetworkClients``
(``problems.ImageClassificationProblem``): FedAvg on a network (Li et al., ICLR 2020, Sec. 2 and
3.3; the loop in ``local_sgd``).

Every sampled client k starts from the global model W (d,) in the problem's dtype (float32 by
default: iterates, images and every network evaluation; float64 for the agreement tests) and
takes E local SGD steps on its mean cross-entropy F_k (``network_steps.network_client_steps``:
the minibatch rows of (seed, step, client) are the linear kernels', the step size is the config's
schedule times lambda_k, each update computed in float64 and stored in the dtype). Its model is
folded into the server's aggregate as soon as it is done,

    W' = b W + sum_k a_k W_k   (float64, b W first, then the clients in index order),

so one run holds one local model W_k and one workspace, whatever the number of clients. That fold
makes the clients of a round run one after another (``client_rounds.round_clients``; its
``client_round`` shares W_k and the aggregate, so the threaded kernel's parallel loop must not run
it): a CNN runs only through the serial kernel (``local_sgd.local_sgd_kernel``;
``local_models.NetworkLocal.serial``).

Compile cost: Numba links the library of every compiled callee into its caller's and runs LLVM's
optimiser over the whole linked module again, and an overload with ``inline="always"`` is also
compiled on its own before it is inlined. So the serial loop's ``round_clients`` is a plain (not
inlined) overload, the client's round and steps beneath it are inlined as Numba IR, and the
network is called by address (``cnn.kernel``, "Calls by address"): the loop and ``round_clients``
are the only compiled functions above the network, and neither links it
(``tests/test_cnn_call_by_address.py``).

The tracked radius and the divergence test are measured from ``w_star``, which for a CNN (no
exact optimum, ``convergence.run.objective_optimum``) is w0 in float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from .client_rounds import aggregate, begin_round, client_round, client_workspace, round_clients
from .network_steps import network_client_steps
from .round_state import end_client, is_state

__all__ = ["NetworkClients"]


class NetworkClients(NamedTuple):
    """The CNN's client data and buffers as the kernel takes them (flat: Numba's parallel loops
    cannot take a tuple nested in a tuple). N clients, n images of shape (H, W, C) in the problem's
    dtype: ``images`` (n, H, W, C) client after client, ``labels`` (n,) int64, ``offsets`` (N+1,)
    int64 (client k's rows offsets[k]:offsets[k+1]), ``weights`` (N,) p_k; the buffers, allocated
    once per run: ``batch_images`` (b, or max n_k with exact gradients, H, W, C) and ``batch_labels``
    (as many) the gathered minibatch, ``acts``, ``dacts``, ``pool_index`` and ``grad`` the network's workspace
    for the largest batch (``ConvNet.workspace``: b, or max n_k with exact gradients);
    ``loss_grad`` the address of the network's loss and gradient for the dtype in this process
    (``cnn.kernel.loss_grad_address``: the bundle is built where its kernel runs). The network's
    layout table travels beside it as the kernel's ``loss``."""

    images: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    weights: np.ndarray
    batch_images: np.ndarray
    batch_labels: np.ndarray
    acts: np.ndarray
    dacts: np.ndarray
    pool_index: np.ndarray
    grad: np.ndarray
    loss_grad: int


@overload(client_workspace, inline="always")
def _network_workspace(clients, plan, W, w_star, threads):
    if not is_state(clients, NetworkClients):
        return None
    return lambda clients, plan, W, w_star, threads: (np.empty_like(W),)


@overload(begin_round, inline="always")
def _network_begin_round(clients, work, W, w_star, track, broadcast, acc):
    if not is_state(clients, NetworkClients):
        return None

    def impl(clients, work, W, w_star, track, broadcast, acc):
        for q in range(W.size):
            acc[q] = broadcast * np.float64(W[q])

    return impl


@njit(cache=True, inline="always")
def _client_steps_and_fold(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients,
                           step_scales, W, w_star, track, Wk, client_stats, acc):
    """Client k's round: Wk <- W, its E steps (``network_client_steps``), the algorithm's end of the
    client, then acc += a_k Wk in float64 (the module docstring's fold)."""
    offsets, E, lam = clients.offsets, plan.local_steps, step_scales[k]
    for q in range(W.size):
        Wk[q] = W[q]
    maxima = client_stats[k]
    maxima[0] = 0.0
    maxima[1] = 0.0
    network_client_steps(
        loss, clients.loss_grad, clients.images, clients.labels, offsets[k], offsets[k + 1] - offsets[k], plan.batch,
        key, k, counts.size, r * E, E, schedule.code, schedule.a, schedule.b, lam, Wk, w_star, track,
        clients.batch_images, clients.batch_labels, clients.acts, clients.dacts, clients.pool_index, clients.grad,
        maxima, algorithm_state,
    )
    end_client(algorithm_state, k, r, lam, schedule, E, Wk, W)
    a = coefficients[k]
    for q in range(W.size):
        acc[q] += a * np.float64(Wk[q])


@overload(round_clients)
def _network_round_clients(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales,
                           W, w_star, track, work, client_stats, acc):
    """Not inlined into the loop (one call a round), and the client's round is inlined into it as
    plain Numba IR (``_client_steps_and_fold``), not through the ``client_round`` overload, which an
    inlined overload would compile on its own first (module docstring, "Compile cost")."""
    if not is_state(clients, NetworkClients):
        return None

    def impl(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W, w_star,
             track, work, client_stats, acc):
        Wk = work[0]
        for k in range(counts.size):
            if counts[k] > 0:
                _client_steps_and_fold(k, r, loss, clients, schedule, plan, algorithm_state, key, counts,
                                       coefficients, step_scales, W, w_star, track, Wk, client_stats, acc)

    return impl


@overload(client_round, inline="always")
def _network_client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients,
                          step_scales, W, w_star, track, work, client_stats, acc, thread):
    if not is_state(clients, NetworkClients):
        return None

    def impl(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W, w_star,
             track, work, client_stats, acc, thread):
        _client_steps_and_fold(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients,
                               step_scales, W, w_star, track, work[0], client_stats, acc)

    return impl


@overload(aggregate, inline="always")
def _network_aggregate(clients, work, counts, coefficients, broadcast, W, acc):
    if not is_state(clients, NetworkClients):
        return None
    return lambda clients, work, counts, coefficients, broadcast, W, acc: None
