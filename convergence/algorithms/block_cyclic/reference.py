"""Plain-NumPy reference path of MM-PSGD / MC-PSGD, vectorised over the participating clients.

Computes the trajectory of ``kernel.block_cyclic_kernel`` (whose docstring states
the algorithms) from the same seed, with the same counter-based minibatches
(``_rng.sample_indices_np``: 2b slots per stream in MC, the first b for the x chain) and the same
participants (``_rng.participants_np``, the NumPy twin of the kernel's ``_rng.participants``). The K local
models of a chain are one array (K, f, C); a local step is the einsums of ``local_sgd_reference``
on the block's padded client data (a full-batch gradient: ``PaddedClients.full_gradients``); losses and the tracked gradient are computed from the rows
directly (no Gram matrices). Contract: agreement with the kernel to <= 1e-10 relative. A plan
with ``trace`` also writes every local step and round into the seed's trace arrays
(``trace.BlockCyclicTraceArrays``): the same loop, so a traced run's records are the untraced
run's bit for bit.
"""

from __future__ import annotations

import numpy as np

from problems import BlockCyclicProblem

from problems.models import LinearModel

from ..._rng import participants_np, sample_indices_np
from ..local_steps import DIVERGENCE_FACTOR
from ..padded_clients import PaddedClients
from .kernel import MODE_MC, PREDICTOR_EXPONENTIAL, Plan, SeedRecords
from .trace import BlockCyclicTraceArrays

__all__ = ["block_cyclic_reference", "chain_batch", "mean_losses"]


def mean_losses(model: LinearModel, X: np.ndarray, y: np.ndarray, mask: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Each client's mean per-sample loss at W (f, C) over its padded rows X (K, n, f); shape (K,)."""
    return (model.margin_losses(X @ W, y) * mask).sum(axis=1)


def chain_batch(data: PaddedClients, part: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, ...]:
    """(X, y, row weights 1/b) of the participants' minibatch rows idx (K, b)."""
    rows = part[:, None]
    return data.X[rows, idx], data.y[rows, idx], np.full(idx.shape, 1.0 / idx.shape[1])


def _data_gradients(model: LinearModel, data: PaddedClients, part: np.ndarray, models: np.ndarray,
                    idx: np.ndarray | None) -> np.ndarray:
    """Data gradients of the participants ``part`` at their models (K, f, C): full-batch
    (``PaddedClients.full_gradients``) or on the minibatch rows idx (K, b)."""
    if idx is None:
        return data.full_gradients(model, models, part)
    return model.batched_gradients(models, *chain_batch(data, part, idx))


def block_cyclic_reference(
    problem: BlockCyclicProblem, plan: Plan, seed: int, w0: np.ndarray, w_ref: np.ndarray
) -> SeedRecords:
    """Run one seed in NumPy; same inputs and outputs as ``kernel.kernel_seed``, plus the trace
    arrays when ``plan.trace``."""
    c = problem.combined
    M, N, f, C, mu, model = problem.n_blocks, problem.n_clients, c.n_features, c.n_classes, c.mu, c.model
    I, E, K, b = plan.local_steps, plan.rounds_per_block, plan.participants, plan.batch
    mc = plan.mode == MODE_MC
    blocks = [PaddedClients(problem.block(m)) for m in range(M)]
    steps = np.arange(plan.rounds * I)
    eta_x, eta_y = plan.gamma.at(steps, I), plan.eta.at(steps, I)
    record = list(plan.record_rounds)
    P, d = len(record), f * C
    rec_global, rec_pred = np.zeros((P, d)), np.zeros((P, M, d))
    rec_sep, rec_sel = np.zeros((P if mc else 0, M, d)), np.zeros((P if mc else 0, M), dtype=np.int64)
    rec_track = np.zeros((P if plan.track else 0, 4))
    xbar = w0.reshape(f, C).copy()
    ref = w_ref.reshape(f, C)
    pred = np.repeat(xbar[None], M, axis=0)
    wbar = pred.copy()
    count, sel = np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)
    limit = DIVERGENCE_FACTOR * (1.0 + float(np.sum((xbar - ref) ** 2)))
    grad_sum, max_mean_drift, max_drift, max_norm = 0.0, 0.0, 0.0, float(np.sum(w0**2))
    trace = BlockCyclicTraceArrays.allocate(plan, M, d) if plan.trace else None
    if trace is not None:
        trace.predictors[0] = pred.reshape(M, d)

    def save(i: int) -> None:
        rec_global[i], rec_pred[i] = xbar.reshape(-1), pred.reshape(M, d)
        if mc:
            rec_sep[i], rec_sel[i] = wbar.reshape(M, d), sel
        if plan.track:
            rec_track[i] = grad_sum, max_mean_drift, max_drift, max_norm

    def result(diverged: int) -> SeedRecords:
        return SeedRecords(rec_global, rec_pred, rec_sep, rec_sel, rec_track, diverged,
                           *(() if trace is None else trace))

    if record and record[0] == 0:
        save(0)
    for r in range(plan.rounds):
        m = (r // E) % M
        data = blocks[m]
        part = np.arange(N) if K == N else participants_np(seed, r, N, K)
        xs = np.repeat(xbar[None], K, axis=0)
        ys = np.repeat(wbar[m][None], K, axis=0) if mc else None
        avg = xbar
        if trace is not None:
            trace.participants[r] = part
        for e in range(I):
            t = r * I + e
            idx = None if b == 0 else sample_indices_np(seed, t, data.sizes, 2 * b if mc else b)[part]
            if plan.track:
                grads = data.full_gradients(model, np.repeat(avg[None], N, axis=0))
                grad_sum += float(np.sum((grads.mean(axis=0) + mu * avg) ** 2))
            grad = _data_gradients(model, data, part, xs, None if idx is None else idx[:, :b]) + mu * xs
            if trace is not None:
                trace.local_models[t] = xs.reshape(K, d)
                trace.stochastic_gradients[t] = grad.reshape(K, d)
                trace.local_gradients[t] = grad.reshape(K, d) if idx is None else (
                    data.full_gradients(model, xs, part) + mu * xs).reshape(K, d)
                if mc:
                    trace.separate_local_models[t] = ys.reshape(K, d)
            xs -= eta_x[t] * grad
            if mc:
                ys -= eta_y[t] * (_data_gradients(model, data, part, ys, None if idx is None else idx[:, b:]) + mu * ys)
            if plan.track:
                avg = xs.mean(axis=0)
                drift = np.sum((xs - avg) ** 2, axis=(1, 2))
                max_mean_drift = max(max_mean_drift, float(drift.mean()))
                max_drift = max(max_drift, float(drift.max()))
                max_norm = max(max_norm, float(np.max(np.sum(xs**2, axis=(1, 2)))))
                if mc:
                    max_norm = max(max_norm, float(np.max(np.sum(ys**2, axis=(1, 2)))))
        xbar = xs.mean(axis=0)
        if not float(np.sum((xbar - ref) ** 2)) <= limit:
            return result(r)
        u = xbar
        if mc:
            ybar = ys.mean(axis=0)
            if not float(np.sum((ybar - ref) ** 2)) <= limit:
                return result(r)
            wbar[m] = ybar
            X, y, mask = data.X[part], data.y[part], data.mask[part]
            loss_x = mean_losses(model, X, y, mask, xbar).mean() + 0.5 * mu * np.sum(xbar**2)
            loss_y = mean_losses(model, X, y, mask, ybar).mean() + 0.5 * mu * np.sum(ybar**2)
            chose_separate = loss_y < loss_x
            if chose_separate:
                u = ybar
                sel[m] += 1
            if trace is not None:
                trace.separate_models[r] = ybar.reshape(-1)
                trace.losses[r] = loss_x, loss_y
                trace.chose_separate[r] = chose_separate
        n_m = count[m]
        if plan.predictor == PREDICTOR_EXPONENTIAL and n_m > 0:
            pred[m] = 0.5 * (pred[m] + u)
        else:
            pred[m] = (n_m / (n_m + 1.0)) * pred[m] + (1.0 / (n_m + 1.0)) * u
        count[m] += 1
        if trace is not None:
            trace.predictors[r + 1] = pred.reshape(M, d)
        if r + 1 in record:
            save(record.index(r + 1))
    if trace is not None:
        trace.local_models[-1] = xbar.reshape(-1)
        if mc:
            trace.separate_local_models[-1] = wbar[m].reshape(-1)
    return result(-1)
