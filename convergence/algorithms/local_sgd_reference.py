"""The plain-NumPy reference path of the local-SGD round loop (FedAvg, FedProx, SCAFFOLD; linear
models and CNNs), vectorised over clients where the model allows it.

Computes the same trajectory as ``local_sgd.local_sgd_kernel`` from the same seed (the same
counter-based minibatches and the same client samples, ``participation.round_sample``; Li et al.,
ICLR 2020, Sec. 2): every round, each client's model starts at the global model W, takes E local
steps W_k <- W_k - eta_t lambda_k (g_k(W_k) + ...), and the server sets W <- W + s (W' - W),
W' = b W + sum_k a_k W_k over the sampled clients. All N local models are one array (N, *shape)
(shape (f, C) for a linear model, (d,) for a CNN). The model's piece, chosen once from the problem
(``local_models.local_model(problem).reference_steps``, ``client_steps_np``), computes a step of
the clients (a handful of einsums over every client for a linear model, or two matrix products per
client on its real rows for a full-batch gradient, ``PaddedClients.full_gradients``; the network's
gradient of each sampled client for a CNN) and the aggregate; the loop around it, the
algorithm's state (its correction added to every data gradient, its ``end_round`` after each
aggregation), the server step, the divergence test and the records are the same for both. It is
the correctness reference for the kernel and the "NumPy vectorised over clients" baseline of
``fedbound bench``.

Under a sampling scheme a linear model runs the local steps of every client, as Li et al.'s
analysis does (App. B.1: all devices compute, the server uses the sampled ones), and aggregates
only the sampled clients: a client's local steps do not depend on the other clients, so the
sampled clients' models, and so the global models, are the kernel's, which computes only the
sampled clients. A CNN computes only the sampled clients. The tracked maxima are taken over the
sampled clients, as in the kernel.

Given ``trace`` arrays (``trace.FedAvgTraceArrays``; linear models) it also writes every local
model before each step and the reductions of that step's stochastic and full gradients into them:
the same loop, so a traced run's records are the untraced run's bit for bit. Under a sampling
scheme the trace holds every client's local steps, sampled or not (Li's v_t^k of App. B.1), and at
a synchronisation step the broadcast global model.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from problems import FederatedProblem, ImageClassificationProblem

from .local_models import local_model
from .local_sgd import LocalSchedule
from .local_steps import DIVERGENCE_FACTOR
from .participation import round_sample
from .round_state import STATELESS_NP, RoundStateNP

__all__ = ["StepTrace", "local_sgd_reference"]


class StepTrace(Protocol):
    """Where a traced run writes each local step (``fedavg.trace.FedAvgTraceArrays``)."""

    local_models: np.ndarray

    def write_step(self, t: int, local: np.ndarray, grad: np.ndarray, full: np.ndarray, p: np.ndarray) -> None: ...


def local_sgd_reference(
    problem: FederatedProblem | ImageClassificationProblem,
    algorithm: LocalSchedule,
    seed: int,
    w0: np.ndarray,
    w_star: np.ndarray,
    track: bool = False,
    trace: StepTrace | None = None,
    mu_prox: float = 0.0,
    state: RoundStateNP = STATELESS_NP,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed from w0 (d,) in the problem's dtype; returns (records (n_rec, d) float64, stats
    [max ||w-w*||^2, max ||g||^2], diverged round or -1), writing every local step into ``trace``
    when given (module docstring). w_star (d,) float64 anchors the divergence test and the radius
    (w0 for a CNN). ``mu_prox`` > 0 adds FedProx's proximal term mu_prox (w_k - W) to every local
    gradient (W the round's global model; linear models; FedProx keeps no trace); 0 is FedAvg. The
    config's ``participation`` picks the round's clients and aggregation (``participation``).
    ``state`` is the algorithm's own state (``round_state``: its correction is added to every
    data gradient, its ``end_round`` runs after each aggregation; ``STATELESS_NP`` for FedAvg and
    FedProx)."""
    scheme, K, E, p = algorithm.participation, algorithm.participants, algorithm.local_steps, problem.weights
    steps = local_model(problem).reference_steps(algorithm.batch_size, seed, scheme, w_star, mu_prox, trace)
    eta_all = algorithm.step_size.at(np.arange(algorithm.rounds * E), E)
    record = list(algorithm.record_rounds)
    records = np.zeros((len(record), problem.dim))
    W = w0.reshape(steps.shape).copy()
    star = w_star.reshape(steps.shape)
    dist0 = float(np.sum((W - star) ** 2))
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0
    if record and record[0] == 0:
        records[0] = W.reshape(-1)
    for r in range(algorithm.rounds):
        sample = round_sample(scheme, K, p, seed, r)
        local = np.broadcast_to(W, (p.size, *W.shape)).copy()
        for e in range(E):
            t = r * E + e
            max_grad, max_rad = steps.step(local, W, t, eta_all[t], sample, state.correction(steps.scales), track,
                                           max_grad, max_rad)
        average = steps.aggregate(local, W, sample)
        state.end_round(r, local, W, sample, steps.scales, eta_all[r * E:(r + 1) * E])
        with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
            W = (average if algorithm.server_lr == 1.0 else W + algorithm.server_lr * (average - W)).astype(
                W.dtype, copy=False)
            dist = float(np.sum((W - star) ** 2))
        if not dist <= limit:
            return records, np.array([max_rad, max_grad]), r
        max_rad = max(max_rad, dist)
        if r + 1 in record:
            records[record.index(r + 1)] = W.reshape(-1)
    if trace is not None:
        trace.local_models[-1] = W.reshape(-1)
    return records, np.array([max_rad, max_grad]), -1
