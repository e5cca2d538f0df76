"""FedAvg's trace: every local iterate of one seed, kept by the NumPy reference path (``reference``)
when the run is planned with ``trace=True`` (``convergence.run(..., engine="numpy", trace=True)``
or ``RunRequest(..., trace=True)``).

The kernels return the global model at a few record rounds only; the lemmas of Li et al.
(ICLR 2020, Lemmas 1-3, eq. 13) and the client-drift lemma of Yu et al. (AAAI 2019, as stated in
``shared/papers/liu_lecture_fl_fedavg.md``) are statements about every local step. A traced
reference run writes the arrays below from the very arithmetic that produces its records, so its
global models are those of the untraced run bit for bit (and agree with the Numba kernel to
rounding).

Notation (Li et al., Sec. 3; our global step counter t = 0..T-1 is 0-based, Li's t is t + 1):
w_t^k is client k's model before local step t; at a synchronisation step (t a multiple of E)
it is the global model the server just broadcast, so w_0^k = w_0 and w_{rE}^k is the global
model after round r. The step is w_{t+1}^k = w_t^k - eta_t g_{t,k} with g_{t,k} the minibatch
(or exact) gradient of F_k at w_t^k; wbar_t = sum_k p_k w_t^k is Li's virtual average sequence.
With server_lr = 1, wbar_t at a synchronisation step equals both the global model and Li's
vbar_t = sum_k p_k v_t^k (averaging does not move the average).

Under a sampling scheme (``participation``) the trace follows Li's App. B.1: every client runs its
local steps in every round (the reference computes them all; only the sampled ones enter the
aggregate), so between synchronisation steps w_t^k is Li's v_t^k for every k and wbar_t is vbar_t,
and at a synchronisation step every row is the aggregated global model the server broadcast. The
round's sample is ``participation.round_sample(config.participation, config.participants, p, seed, r)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .config import FedAvgConfig

__all__ = ["FedAvgTrace", "FedAvgTraceArrays"]


class FedAvgTraceArrays(NamedTuple):
    """What a traced reference run writes (T = rounds E, N clients, d parameters), the seed's
    ``trace_*`` arrays: ``local_models`` (T+1, N, d) w_t^k (row T: the final global model) and four
    reductions of the step's gradients, written by ``write_step`` (which defines them): ``mean_full_gradients``
    (T, d) gbar_t, ``full_gradient_sq`` (T, N) ||grad F_k(w_t^k)||^2, ``stochastic_gradient_sq``
    (T, N) ||g_{t,k}||^2 and ``mean_noise`` (T, d) g_t - gbar_t. The (T, N, d) gradients themselves
    are not kept: no reader needs more of them than these reductions, and they would triple the
    trace. Allocated NaN-filled, so a run that diverges early leaves NaN, never stale memory, in
    the steps it did not reach."""

    local_models: np.ndarray
    mean_full_gradients: np.ndarray
    full_gradient_sq: np.ndarray
    stochastic_gradient_sq: np.ndarray
    mean_noise: np.ndarray

    @classmethod
    def allocate(cls, total_steps: int, n_clients: int, dim: int) -> FedAvgTraceArrays:
        """NaN-filled arrays of the shapes above."""
        T, N, d = total_steps, n_clients, dim
        return cls(np.full((T + 1, N, d), np.nan), np.full((T, d), np.nan), np.full((T, N), np.nan),
                   np.full((T, N), np.nan), np.full((T, d), np.nan))

    def write_step(self, t: int, local: np.ndarray, stochastic: np.ndarray, full: np.ndarray,
                   weights: np.ndarray) -> None:
        """Write local step t from the clients' models ``local`` w_t^k, their stochastic gradients
        ``stochastic`` g_{t,k} and full gradients ``full`` grad F_k(w_t^k) (each (N, d), float64) and
        the weights p (N,):

            mean_full_gradients[t]    = gbar_t = sum_k p_k grad F_k(w_t^k)             (d,)
            full_gradient_sq[t, k]    = ||grad F_k(w_t^k)||^2                          (N,)
            stochastic_gradient_sq[t, k] = ||g_{t,k}||^2                               (N,)
            mean_noise[t]             = g_t - gbar_t = sum_k p_k (g_{t,k} - grad F_k(w_t^k))  (d,)

        (the squared norms summed over the last axis, the p-weighted sums by ``np.einsum`` over k:
        the same bits as the same operations on the stacked (S, T, N, d) arrays)."""
        self.local_models[t] = local
        self.mean_full_gradients[t] = np.einsum("k,kd->d", weights, full)
        self.full_gradient_sq[t] = np.sum(full**2, axis=1)
        self.stochastic_gradient_sq[t] = np.sum(stochastic**2, axis=1)
        self.mean_noise[t] = np.einsum("k,kd->d", weights, stochastic - full)


@dataclass(frozen=True, eq=False)
class FedAvgTrace:
    """Every local iterate of one FedAvg seed (module docstring); T = rounds * E, N clients, d parameters.

    Shapes: ``local_models`` (T+1, N, d) the w_t^k of the module docstring; ``averages`` (T+1, d)
    wbar_t = sum_k p_k w_t^k; the reductions of each step's gradients (``FedAvgTraceArrays.write_step``
    defines them; g_{t,k} is the minibatch gradient of ``batch_size`` rows drawn with replacement,
    or the exact one when batch_size = 0, with the mu w term): ``mean_full_gradients`` (T, d) gbar_t
    = sum_k p_k grad F_k(w_t^k), ``full_gradient_sq`` (T, N) ||grad F_k(w_t^k)||^2,
    ``stochastic_gradient_sq`` (T, N) ||g_{t,k}||^2, ``mean_noise`` (T, d) g_t - gbar_t; and
    ``step_sizes`` (T,) eta_t. Every array is read-only.
    """

    local_steps: int
    batch_size: int
    local_models: np.ndarray
    averages: np.ndarray
    mean_full_gradients: np.ndarray
    full_gradient_sq: np.ndarray
    stochastic_gradient_sq: np.ndarray
    mean_noise: np.ndarray
    step_sizes: np.ndarray

    @classmethod
    def of(cls, arrays: FedAvgTraceArrays, weights: np.ndarray, config: FedAvgConfig) -> FedAvgTrace:
        """The trace of one seed's arrays, with wbar_t from the weights p (N,) and eta_t from the config."""
        E = config.local_steps
        averages = np.tensordot(weights, arrays.local_models, axes=([0], [1]))
        step_sizes = config.step_size.at(np.arange(config.total_steps), E)
        trace = cls(E, config.batch_size, arrays.local_models, averages, arrays.mean_full_gradients,
                    arrays.full_gradient_sq, arrays.stochastic_gradient_sq, arrays.mean_noise, step_sizes)
        for array in (*arrays, trace.averages, trace.step_sizes):
            array.setflags(write=False)
        return trace

    @property
    def global_models(self) -> np.ndarray:
        """The global model after rounds 0..R (round 0: the initial point), shape (R+1, d)."""
        return self.local_models[:: self.local_steps, 0]
