"""A step-by-step replay of FedAvg that keeps every local iterate (for lemma checks).

The kernels return the global model at a few record rounds only; the lemmas of Li et al.
(ICLR 2020, Lemmas 1-3) and the client-drift lemma of Yu et al. (AAAI 2019, as stated in
``shared/papers/liu_lecture_fl_fedavg.md``) are statements about every local step. ``probe_fedavg``
replays one seed of ``convergence.run`` with the very same arithmetic: it calls the helpers of the
NumPy reference path (``_fedavg_reference.PaddedClients``, the model's ``batched_gradients``)
and the counter-based sampler (``_rng.sample_indices_np``), so that its global models are
bit-identical to ``run(..., engine="numpy")`` and agree with the Numba kernel to rounding.

Notation (Li et al., Sec. 3; our global step counter t = 0..T-1 is 0-based, Li's t is t + 1):
w_t^k is client k's model before local step t; at a synchronisation step (t a multiple of E)
it is the global model the server just broadcast, so w_0^k = w_0 and w_{rE}^k is the global
model after round r. The step is w_{t+1}^k = w_t^k - eta_t g_{t,k} with g_{t,k} the minibatch
(or exact) gradient of F_k at w_t^k; wbar_t = sum_k p_k w_t^k is Li's virtual average sequence.
With server_lr = 1, wbar_t at a synchronisation step equals both the global model and Li's
vbar_t = sum_k p_k v_t^k (averaging does not move the average).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem

from ..._rng import sample_indices_np
from .._base import DivergenceError
from ..padded_clients import PaddedClients
from .config import FedAvgConfig

__all__ = ["Probe", "probe_fedavg"]


@dataclass(frozen=True, eq=False)
class Probe:
    """Every local iterate of one FedAvg run (one seed); T = rounds * E, N clients, d parameters.

    Shapes: ``local_models`` (T+1, N, d) the w_t^k of the module docstring; ``averages`` (T+1, d)
    wbar_t = sum_k p_k w_t^k; ``stochastic_gradients`` (T, N, d) the g_{t,k} used at step t
    (minibatch of ``batch_size`` rows drawn with replacement, or exact when batch_size = 0, with
    the mu w term); ``full_gradients`` (T, N, d) grad F_k(w_t^k); ``step_sizes`` (T,) eta_t.
    """

    seed: int
    local_steps: int
    batch_size: int
    local_models: np.ndarray
    averages: np.ndarray
    stochastic_gradients: np.ndarray
    full_gradients: np.ndarray
    step_sizes: np.ndarray

    @property
    def global_models(self) -> np.ndarray:
        """The global model after rounds 0..R (round 0: the initial point), shape (R+1, d)."""
        return self.local_models[:: self.local_steps, 0]


def probe_fedavg(
    problem: FederatedProblem,
    algorithm: FedAvgConfig,
    seed: int,
    w0: np.ndarray | None = None,
) -> Probe:
    """Replay ``algorithm`` on ``problem`` for ``seed`` from ``w0`` (zeros by default), keeping
    every local iterate and gradient; raises DivergenceError naming the round when a model stops
    being finite."""
    data = PaddedClients(problem)
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    d, E, T = problem.dim, algorithm.local_steps, algorithm.total_steps
    mu, p = problem.mu, problem.weights
    eta = algorithm.step_size.at(np.arange(T), E)
    W = (np.zeros(d) if w0 is None else np.asarray(w0, dtype=np.float64)).reshape(f, C).copy()
    local_models = np.empty((T + 1, N, d))
    stochastic = np.empty((T, N, d))
    full = np.empty((T, N, d))
    X_all, y_all, wt_all = data.batch(None)
    for r in range(algorithm.rounds):
        local = np.broadcast_to(W, (N, f, C)).copy()
        for e in range(E):
            t = r * E + e
            local_models[t] = local.reshape(N, d)
            full[t] = (problem.model.batched_gradients(local, X_all, y_all, wt_all) + mu * local).reshape(N, d)
            if algorithm.batch_size == 0:
                grad = full[t].reshape(N, f, C)
            else:
                idx = sample_indices_np(seed, t, data.sizes, algorithm.batch_size)
                X, y, wt = data.batch(idx)
                grad = problem.model.batched_gradients(local, X, y, wt) + mu * local
            stochastic[t] = grad.reshape(N, d)
            local -= eta[t] * grad
        average = np.tensordot(p, local, axes=1)
        W = average if algorithm.server_lr == 1.0 else W + algorithm.server_lr * (average - W)
        if not np.all(np.isfinite(W)):
            raise DivergenceError(f"probe(seed {seed})", seed, r, E)
    local_models[T] = W.reshape(-1)
    averages = np.tensordot(p, local_models, axes=([0], [1]))
    for array in (local_models, averages, stochastic, full, eta):
        array.setflags(write=False)
    return Probe(seed, E, algorithm.batch_size, local_models, averages, stochastic, full, eta)
