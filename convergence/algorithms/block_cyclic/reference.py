"""Plain-NumPy reference path of MM-PSGD / MC-PSGD (hence FedAvg on cyclic data and PR-SGD), one
round loop for every model, vectorised over the participating clients where the model allows.

Computes the trajectory of ``kernel.block_cyclic_kernel`` (whose docstring states the algorithms,
the precision and the order of the steps) from the same seed, with the same participants
(``_rng.participants_np``, the NumPy twin of the kernel's ``_rng.participants``) and the model's
minibatch rows, step, average, tracked gradient and selection loss from a ``ReferencePieces``
(``reference_pieces``: ``LinearReference``, ``NetworkReference``, the twins of the kernel's
``linear_pieces`` and ``network_pieces``). Contract: agreement with the kernel to <= 1e-10 relative
(in float64). A plan with ``trace`` (a linear run) also writes every local step and round into the
seed's trace arrays (``trace.BlockCyclicTraceArrays``): the same loop, so a traced run's records are
the untraced run's bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..._rng import participants_np
from ..local_steps import DIVERGENCE_FACTOR
from .kernel import MODE_MC, PREDICTOR_EXPONENTIAL, Plan, SeedRecords
from .trace import BlockCyclicTraceArrays

__all__ = ["ReferencePieces", "block_cyclic_reference"]


class ReferencePieces(ABC):
    """A model's pieces of the reference loop, built for one seed of a plan. ``n_blocks`` M,
    ``n_clients`` N, ``shape`` the shape of one model (a linear model's (f, C), a CNN's (d,)); the
    chains' K local models are one array (K, *shape) in the run's dtype."""

    n_blocks: int
    n_clients: int
    shape: tuple[int, ...]

    @abstractmethod
    def rows(self, m: int, t: int, part: np.ndarray) -> Any:
        """The minibatch rows of both chains at step t for the participants ``part`` (K,) of block
        m, as ``gradients`` takes them; None with exact gradients."""

    @abstractmethod
    def gradients(self, chain: int, m: int, part: np.ndarray, rows: Any, models: np.ndarray) -> np.ndarray:
        """g_i(x_i) + mu x_i of every participant (K, *shape) at its model, on the ``rows`` of
        ``chain`` (0: x, 1: MC's y), or exactly over its block-m rows when ``rows`` is None."""

    @abstractmethod
    def step(self, models: np.ndarray, eta: float, grads: np.ndarray) -> None:
        """models <- models - eta grads in place, in the models' dtype."""

    @abstractmethod
    def mean(self, local: np.ndarray) -> np.ndarray:
        """(1/K) sum_p local[p] in float64, the kernel's server average."""

    @abstractmethod
    def block_grad_sq(self, m: int, W: np.ndarray) -> float:
        """||grad F_m(W)||^2, F_m = (1/N) sum_i F_m^i (the tracked gradient norm)."""

    @abstractmethod
    def participant_loss(self, m: int, part: np.ndarray, W: np.ndarray) -> float:
        """(1/K) sum_{i in part} F_m^i(W) over each participant's block-m rows (MC's selection)."""


def _sq_dist(w: np.ndarray, ref: np.ndarray) -> float:
    """||w - ref||^2 in float64 (w in any float dtype)."""
    with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
        return float(np.sum((w.astype(np.float64) - ref) ** 2))


def _sq_norms(local: np.ndarray, center: np.ndarray | float = 0.0) -> np.ndarray:
    """||local[p] - center||^2 of every model (K,), in float64."""
    return np.sum((local.astype(np.float64) - center) ** 2, axis=tuple(range(1, local.ndim)))


def block_cyclic_reference(
    pieces: ReferencePieces, plan: Plan, seed: int, w0: np.ndarray, w_ref: np.ndarray
) -> SeedRecords:
    """Run one seed in NumPy from w0 (d,) in the run's dtype, anchored at w_ref (d,) float64; same
    inputs and outputs as ``kernel.kernel_seed``, plus the trace arrays when ``plan.trace``."""
    M, N, K, d = pieces.n_blocks, pieces.n_clients, plan.participants, w0.size
    I, E = plan.local_steps, plan.rounds_per_block
    mc = plan.mode == MODE_MC
    steps = np.arange(plan.rounds * I)
    eta_x, eta_y = plan.gamma.at(steps, I), plan.eta.at(steps, I)
    record = list(plan.record_rounds)
    P = len(record)
    rec_global, rec_pred = np.zeros((P, d)), np.zeros((P, M, d))
    rec_sep, rec_sel = np.zeros((P if mc else 0, M, d)), np.zeros((P if mc else 0, M), dtype=np.int64)
    rec_track = np.zeros((P if plan.track else 0, 4))
    xbar = w0.reshape(pieces.shape).copy()
    ref = np.asarray(w_ref, dtype=np.float64).reshape(pieces.shape)
    pred = np.repeat(xbar.astype(np.float64)[None], M, axis=0)
    wbar = np.repeat(xbar[None], M, axis=0)
    count, sel = np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)
    limit = DIVERGENCE_FACTOR * (1.0 + _sq_dist(xbar, ref))
    grad_sum, max_mean_drift, max_drift, max_norm = 0.0, 0.0, 0.0, float(np.sum(w0.astype(np.float64) ** 2))
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
        part = np.arange(N) if K == N else participants_np(seed, r, N, K)
        xs = np.repeat(xbar[None], K, axis=0)
        ys = np.repeat(wbar[m][None], K, axis=0) if mc else None
        avg = xbar
        if trace is not None:
            trace.participants[r] = part
        for e in range(I):
            t = r * I + e
            rows = pieces.rows(m, t, part)
            if plan.track:
                grad_sum += pieces.block_grad_sq(m, avg)
            grad = pieces.gradients(0, m, part, rows, xs)
            if trace is not None:
                trace.local_models[t] = xs.reshape(K, d)
                trace.stochastic_gradients[t] = grad.reshape(K, d)
                exact = grad if rows is None else pieces.gradients(0, m, part, None, xs)
                trace.local_gradients[t] = exact.reshape(K, d)
                if mc:
                    trace.separate_local_models[t] = ys.reshape(K, d)
            pieces.step(xs, eta_x[t], grad)
            if mc:
                pieces.step(ys, eta_y[t], pieces.gradients(1, m, part, rows, ys))
            if plan.track:
                average = pieces.mean(xs)
                drift = _sq_norms(xs, average)
                max_mean_drift = max(max_mean_drift, float(drift.mean()))
                max_drift = max(max_drift, float(drift.max()))
                max_norm = max(max_norm, float(np.max(_sq_norms(xs))))
                if mc:
                    max_norm = max(max_norm, float(np.max(_sq_norms(ys))))
                avg = average.astype(xs.dtype)
        xbar = pieces.mean(xs).astype(xs.dtype)
        if not _sq_dist(xbar, ref) <= limit:
            return result(r)
        u = xbar
        if mc:
            ybar = pieces.mean(ys).astype(ys.dtype)
            if not _sq_dist(ybar, ref) <= limit:
                return result(r)
            wbar[m] = ybar
            loss_x, loss_y = pieces.participant_loss(m, part, xbar), pieces.participant_loss(m, part, ybar)
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
            pred[m] = 0.5 * (pred[m] + u.astype(np.float64))
        else:
            pred[m] = (n_m / (n_m + 1.0)) * pred[m] + (1.0 / (n_m + 1.0)) * u.astype(np.float64)
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
