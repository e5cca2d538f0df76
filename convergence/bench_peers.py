"""`fedbound bench`'s honest peer: FedAvg written as fast as plain vectorised NumPy allows.

The peer runs the trajectory of ``local_sgd.local_sgd_kernel`` / ``local_sgd_reference`` (Li et al., ICLR 2020,
Sec. 2: every client takes E local steps w_k <- w_k - eta_t (g_k(w_k) + mu w_k) from the global
model, then W <- W + s (sum_k p_k w_k - W)) with the same minibatches, but is written for speed,
not clarity: all N local models are one array (N, f, C), every step is two batched products into
preallocated buffers, and the softmax residual is computed in place. Its inputs
(``PeerInputs``: the minibatch row indices of every step from the counter-based sampler
``_rng.sample_indices_np``, the step sizes, the Gram matrices of exact least-squares steps) are
precomputed outside the timed region; the timed region gathers rows, multiplies, and averages.

Gradients per step (b the batch, Xb (N, b, f) the gathered rows, r = dl/dz the model oracle's
residual at the margins Z = Xb W_k, weights 1/b):

    minibatch / exact non-quadratic:  g_k = Xb' r(Xb W_k, y) / b        (exact: all rows, weights 1/n_k)
    exact quadratic (Gram):           g_k = Q_k W_k - c_k,  Q_k = U_k'U_k / n_k,  c_k = U_k'v_k / n_k

(U, v the model's least-squares form). The peer keeps no divergence check and no tracked maxima:
bench's workloads do neither. It lives in the benchmark, never in the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem
from problems.models import SoftmaxModel

from ._rng import sample_indices_np
from .algorithms import FedAvgConfig

__all__ = ["PeerInputs", "peer_inputs", "numpy_peer_fedavg"]


@dataclass(frozen=True, eq=False)
class PeerInputs:
    """A FedAvg run's precomputed inputs for the peers. T = rounds * E steps, N clients.

    rows (T, N, b): global row indices (into problem.X) of every client's minibatch at every step,
    the kernel's counter-based draws, or None for exact gradients; eta (T,) the step sizes;
    gram (N, f, f) and gram_rhs (N, f, 1): Q_k and c_k for exact steps of a quadratic model, else
    None; padded_X (N, n_max, f), padded_y (N, n_max) and row_weights (N, n_max) (1/n_k on real
    rows, 0 on padding) for exact steps of other models, else None; w0 (f, C) the initial model.
    """

    config: FedAvgConfig
    rows: np.ndarray | None
    eta: np.ndarray
    gram: np.ndarray | None
    gram_rhs: np.ndarray | None
    padded_X: np.ndarray | None
    padded_y: np.ndarray | None
    row_weights: np.ndarray | None
    w0: np.ndarray


def peer_inputs(problem: FederatedProblem, config: FedAvgConfig, seed: int) -> PeerInputs:
    """The untimed inputs of one seed of ``config`` on ``problem`` (see PeerInputs)."""
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    E, T = config.local_steps, config.total_steps
    w0 = (np.array(config.initial_model, dtype=np.float64) if config.initial_model else np.zeros(f * C)).reshape(f, C)
    eta = config.step_size.at(np.arange(T), E)
    sizes = problem.client_sizes
    rows = gram = rhs = padded_X = padded_y = row_weights = None
    if config.batch_size > 0:
        starts = problem.offsets[:-1, None]
        rows = np.stack([sample_indices_np(seed, t, sizes, config.batch_size) + starts for t in range(T)])
    elif problem.model.quadratic:
        gram, rhs = np.zeros((N, f, f)), np.zeros((N, f, 1))
        for k in range(N):
            U, v = problem.model.least_squares_form(*problem.client_data(k))
            gram[k] = U.T @ U / sizes[k]
            rhs[k, :, 0] = U.T @ v / sizes[k]
    else:
        n_max = int(sizes.max())
        padded_X, padded_y, row_weights = np.zeros((N, n_max, f)), np.zeros((N, n_max)), np.zeros((N, n_max))
        for k in range(N):
            Xk, yk = problem.client_data(k)
            padded_X[k, : sizes[k]], padded_y[k, : sizes[k]], row_weights[k, : sizes[k]] = Xk, yk, 1.0 / sizes[k]
    return PeerInputs(config, rows, eta, gram, rhs, padded_X, padded_y, row_weights, w0)


def numpy_peer_fedavg(problem: FederatedProblem, inputs: PeerInputs) -> np.ndarray:
    """Run the peer; returns the global model after every round, shape (rounds, d)."""
    config = inputs.config
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    E, mu, s = config.local_steps, problem.mu, config.server_lr
    softmax = isinstance(problem.model, SoftmaxModel)
    W = inputs.w0.copy()
    local = np.empty((N, f, C))
    G = np.empty((N, f, C))
    history = np.empty((config.rounds, f * C))
    if inputs.rows is not None:
        b = inputs.rows.shape[2]
        Xb, Z = np.empty((N, b, f)), np.empty((N, b, C))
        label_slots = np.arange(N * b).reshape(N, b) * C
        labels = problem.y.astype(np.int64) if softmax else problem.y
    for r in range(config.rounds):
        local[:] = W
        for e in range(E):
            t = r * E + e
            if inputs.gram is not None:
                np.matmul(inputs.gram, local, out=G)
                G -= inputs.gram_rhs
            elif inputs.rows is not None:
                # mode="clip": the sampler's indices are in range, and out= is then written unbuffered
                np.take(problem.X, inputs.rows[t], axis=0, out=Xb, mode="clip")
                y = labels[inputs.rows[t]]
                np.matmul(Xb, local, out=Z)
                if softmax:  # r = (softmax(Z) - onehot(y)) / b, in place
                    Z -= Z.max(axis=2, keepdims=True)
                    np.exp(Z, out=Z)
                    Z *= (1.0 / b) / Z.sum(axis=2, keepdims=True)
                    Z.reshape(-1)[label_slots + y] -= 1.0 / b
                else:
                    Z[:] = problem.model.margin_residuals(Z, y) * (1.0 / b)
                np.matmul(Xb.transpose(0, 2, 1), Z, out=G)
            else:
                residual = problem.model.margin_residuals(inputs.padded_X @ local, inputs.padded_y)
                np.matmul(inputs.padded_X.transpose(0, 2, 1), residual * inputs.row_weights[:, :, None], out=G)
            if mu != 0.0:
                local *= 1.0 - inputs.eta[t] * mu
            G *= inputs.eta[t]
            local -= G
        average = problem.weights @ local.reshape(N, f * C)
        W = (average if s == 1.0 else W.reshape(-1) + s * (average - W.reshape(-1))).reshape(f, C)
        history[r] = W.reshape(-1)
    return history
