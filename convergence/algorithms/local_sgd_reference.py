"""The plain-NumPy reference path of the local-SGD round loop (FedAvg, FedProx, SCAFFOLD), vectorised
over clients.

Computes the same trajectory as ``local_sgd.local_sgd_kernel`` from the same seed (the same
counter-based minibatches and the same client samples, ``participation.round_sample``), with
dense arithmetic on all d coordinates and no support tricks: all N local models are one array
(N, f, C) and each local step is a handful of einsums (a minibatch step) or two matrix products per
client on its real rows (a full-batch gradient, ``PaddedClients.full_gradients``). It is the
correctness reference for the kernel and the "NumPy vectorised over clients" baseline of
``fedbound bench``.

Under a sampling scheme the reference runs the local steps of every client, as Li et al.'s
analysis does (App. B.1: all devices compute, the server uses the sampled ones), and aggregates
only the sampled clients: a client's local steps do not depend on the other clients, so the
sampled clients' models, and so the global models, are the kernel's, which computes only the
sampled clients. The tracked maxima are taken over the sampled clients, as in the kernel.

Given ``trace`` arrays (``trace.FedAvgTraceArrays``) it also writes every local model before each
step and the reductions of that step's stochastic and full gradients into them: the same loop, so a traced run's
records are the untraced run's bit for bit. Under a sampling scheme the trace holds every
client's local steps, sampled or not (Li's v_t^k of App. B.1), and at a synchronisation step the
broadcast global model.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from problems import FederatedProblem

from .._rng import sample_indices_np
from .local_sgd import LocalSchedule
from .local_steps import DIVERGENCE_FACTOR
from .padded_clients import PaddedClients
from .participation import local_step_scales, round_sample
from .round_state import STATELESS_NP, RoundStateNP

__all__ = ["StepTrace", "local_sgd_reference"]


class StepTrace(Protocol):
    """Where a traced run writes each local step (``fedavg.trace.FedAvgTraceArrays``)."""

    local_models: np.ndarray

    def write_step(self, t: int, local: np.ndarray, grad: np.ndarray, full: np.ndarray, p: np.ndarray) -> None: ...


def local_sgd_reference(
    problem: FederatedProblem,
    algorithm: LocalSchedule,
    seed: int,
    w0: np.ndarray,
    w_star: np.ndarray,
    track: bool = False,
    trace: StepTrace | None = None,
    mu_prox: float = 0.0,
    state: RoundStateNP = STATELESS_NP,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed; returns (records (n_rec, d), stats [max ||w-w*||^2, max ||g||^2], diverged round or -1),
    writing every local step into ``trace`` when given (module docstring). ``mu_prox`` > 0 adds
    FedProx's proximal term mu_prox (w_k - W) to every local gradient (W the round's global model;
    FedProx keeps no trace); 0 is FedAvg. The config's ``participation`` picks the round's clients
    and aggregation (``participation``). ``state`` is the algorithm's own state (``round_state``:
    its correction is added to every data gradient, its ``end_round`` runs after each aggregation;
    ``STATELESS_NP`` for FedAvg and FedProx)."""
    data = PaddedClients(problem)
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    E, mu, p = algorithm.local_steps, problem.mu, problem.weights
    eta_all = algorithm.step_size.at(np.arange(algorithm.rounds * E), E)
    record = list(algorithm.record_rounds)
    records = np.zeros((len(record), f * C))
    W = w0.reshape(f, C).copy()
    star = w_star.reshape(f, C)
    dist0 = float(np.sum((W - star) ** 2))
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0
    scheme, K = algorithm.participation, algorithm.participants
    scales = local_step_scales(scheme, p)[:, None, None]
    if record and record[0] == 0:
        records[0] = W.reshape(-1)
    for r in range(algorithm.rounds):
        sample = round_sample(scheme, K, p, seed, r)
        sampled = sample.counts > 0
        local = np.broadcast_to(W, (N, f, C)).copy()
        for e in range(E):
            t = r * E + e
            idx = None if algorithm.batch_size == 0 else sample_indices_np(seed, t, data.sizes, algorithm.batch_size)
            if idx is None:
                grad = data.full_gradients(problem.model, local) + mu * local
            else:
                grad = problem.model.batched_gradients(local, *data.batch(idx)) + mu * local
            correction = state.correction(scales)
            if correction is not None:
                grad += correction
            if mu_prox != 0.0:
                grad += mu_prox * (local - W)
            if scheme == "transformed_scheme_ii":
                grad *= scales
            if trace is not None:
                full = grad if idx is None else scales * (data.full_gradients(problem.model, local) + mu * local)
                trace.write_step(t, local.reshape(N, -1), grad.reshape(N, -1), full.reshape(N, -1), p)
            if track:
                max_grad = max(max_grad, float(np.max(np.sum(grad**2, axis=(1, 2))[sampled])))
            local -= eta_all[t] * grad
            if track:
                max_rad = max(max_rad, float(np.max(np.sum((local - star) ** 2, axis=(1, 2))[sampled])))
        if sampled.all():
            average = np.tensordot(sample.coefficients, local, axes=1)
        else:  # only the sampled clients' models enter (an unsampled one may even be non-finite)
            average = np.tensordot(sample.coefficients[sampled], local[sampled], axes=1)
        if sample.broadcast != 0.0:
            average += sample.broadcast * W
        state.end_round(r, local, W, sample, scales, eta_all[r * E:(r + 1) * E])
        W = average if algorithm.server_lr == 1.0 else W + algorithm.server_lr * (average - W)
        dist = float(np.sum((W - star) ** 2))
        if not dist <= limit:
            return records, np.array([max_rad, max_grad]), r
        max_rad = max(max_rad, dist)
        if r + 1 in record:
            records[record.index(r + 1)] = W.reshape(-1)
    if trace is not None:
        trace.local_models[-1] = W.reshape(-1)
    return records, np.array([max_rad, max_grad]), -1
