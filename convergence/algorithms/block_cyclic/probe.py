"""A step-by-step replay of MM-PSGD / MC-PSGD that keeps every local iterate (for Ding et al.'s lemmas).

The block-cyclic kernel returns the global models at a few record rounds only; Lemmas 2, 3, 8
and 9 of Ding et al., "Distributed Optimization over Block-Cyclic Data" (arXiv 2002.07454,
``shared/papers/ding2020_block_cyclic.md``, eq. 14, Lemma 3, eq. 48-49 / 56-59, eq. 60) are
statements about every local step and every communication round. ``probe_block_cyclic`` replays
one seed of an MM-PSGD or MC-PSGD run (``convergence.run``) with the very same arithmetic: it calls
the helpers of the NumPy reference path (``_block_cyclic_reference.participants_np``,
``chain_batch``, ``mean_losses``, ``_fedavg_reference.PaddedClients``, the model's ``batched_gradients``) and
the counter-based sampler (``_rng.sample_indices_np``, 2b slots per stream in MC, the first b for
the x chain), so its global models, predictors and block-separate models are bit-identical to
``run_block_cyclic(..., engine="numpy")`` and agree with the Numba kernel to rounding.

Notation (Ding et al. Sec. 3-4, Algorithms 1-2; our counters are 0-based): round r = 0..R-1 uses
block m = (r // E) % M and local steps t = r I, ..., r I + I - 1 (T = R I). x_t^i is the x chain
(block-mixed, step gamma_t) model of the i-th participant of the round before local step t; at a
communication step t = r I it is the global model x_bar the server just broadcast, and x_T^i is
the final global model (the paper's x_{t_r}^i = x_bar_{t_r}, proof of Lemma 3). The step is
x_{t+1}^i = x_t^i - gamma_t g_t^i, g_t^i the minibatch (or exact, batch 0) gradient of F_m^i at
x_t^i, including the mu x term. xbar_t = (1/K) sum_i x_t^i is the paper's every-step average
(eq. 10); at t = r I it is the global model up to the rounding of a mean of K equal vectors.
MC-PSGD's y chain (block-separate, step eta_t) is kept the same way: y_t^i restarts at each round
from w_bar_m, block m's latest separate model, and y_T^i is the last round's y_bar. With partial
participation the client axis holds the round's K participants in ascending order; with full
participation (the paper's setting) K = N and it holds clients 0..N-1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from problems import BlockCyclicProblem

from ..._rng import sample_indices_np
from .._base import DivergenceError
from ..mc_psgd import MCPSGDConfig
from ..mm_psgd import MMPSGDConfig
from ..padded_clients import PaddedClients
from .reference import chain_batch, mean_losses, participants_np

__all__ = ["BlockCyclicProbe", "probe_block_cyclic"]


@dataclass(frozen=True, eq=False)
class BlockCyclicProbe:
    """Every local iterate and every round of one MM-/MC-PSGD run (one seed).

    T = R I local steps, R = C M E rounds, K participants per round, M blocks, d parameters.
    Per step: ``blocks`` (T,) m(t); ``local_models`` (T+1, K, d) x_t^i; ``averages`` (T+1, d)
    xbar_t = (1/K) sum_i x_t^i; ``stochastic_gradients`` (T, K, d) g_t^i; ``local_gradients``
    (T, K, d) grad F_m^i(x_t^i) (exact, with the mu x term); ``step_sizes`` (T,) gamma_t;
    ``separate_local_models`` (T+1, K, d) y_t^i and ``block_step_sizes`` (T,) eta_t (MC only,
    else None). Per round: ``participants`` (R, K) the clients of round r; ``global_models``
    (R+1, d) x_bar after rounds 0..R (row 0: w0 = 0); ``separate_models`` (R, d) y_bar of round r
    (MC, else None); ``selected_models`` (R, d) u_bar of round r (x_bar for MM-PSGD);
    ``chose_separate`` (R,) whether u_bar = y_bar; ``loss_x``, ``loss_y`` (R,) the average local
    losses (1/K) sum_i F_m^i of x_bar and y_bar that the server compares (MC, else None);
    ``predictors`` (R+1, M, d) the predictors after rounds 0..R (eq. 7, 8 or Sec. 5's exponential
    average; row 0: w0).
    """

    seed: int
    local_steps: int
    rounds_per_block: int
    batch_size: int
    blocks: np.ndarray
    participants: np.ndarray
    local_models: np.ndarray
    averages: np.ndarray
    stochastic_gradients: np.ndarray
    local_gradients: np.ndarray
    step_sizes: np.ndarray
    separate_local_models: np.ndarray | None
    block_step_sizes: np.ndarray | None
    global_models: np.ndarray
    separate_models: np.ndarray | None
    selected_models: np.ndarray
    chose_separate: np.ndarray
    loss_x: np.ndarray | None
    loss_y: np.ndarray | None
    predictors: np.ndarray

    @property
    def round_blocks(self) -> np.ndarray:
        """The block m of every round r = 0..R-1, shape (R,)."""
        return self.blocks[:: self.local_steps]


def probe_block_cyclic(problem: BlockCyclicProblem, config: MMPSGDConfig | MCPSGDConfig, seed: int) -> BlockCyclicProbe:
    """Replay ``config`` on ``problem`` for ``seed`` from w0 = 0 (as ``run_block_cyclic``), keeping
    every local iterate and gradient; raises DivergenceError naming the round when a global model
    stops being finite (the run's own test, ||x - x*||^2 > 1e30 (1 + ||x_0 - x*||^2), is not
    repeated: the probe needs no optimum)."""
    if not isinstance(config, MMPSGDConfig):
        raise TypeError(f"config: expected an MMPSGDConfig or MCPSGDConfig, got {type(config).__name__}")
    c = problem.combined
    M, N, f, C, mu, model = problem.n_blocks, problem.n_clients, c.n_features, c.n_classes, c.mu, c.model
    I, E, b = config.local_steps, config.rounds_per_block, config.batch_size
    K = N if config.participants is None else config.participants
    if K > N:
        raise ValueError(f"participants: K = {K} exceeds the number of clients N = {N}")
    mc = isinstance(config, MCPSGDConfig)
    exponential = config.predictor == "exponential"
    R = config.total_rounds(M)
    T, d = R * I, problem.dim
    steps = np.arange(T)
    eta_x = config.step_size.at(steps, I)
    eta_y = config.block_step_size.at(steps, I) if mc else None
    data_of = [PaddedClients(problem.block(m)) for m in range(M)]

    local, separate_local = np.empty((T + 1, K, d)), np.empty((T + 1, K, d)) if mc else None
    stochastic, exact = np.empty((T, K, d)), np.empty((T, K, d))
    chosen = np.empty((R, K), dtype=np.int64)
    global_models, predictors = np.empty((R + 1, d)), np.empty((R + 1, M, d))
    ybars = np.empty((R, d)) if mc else None
    selected, chose_y = np.empty((R, d)), np.zeros(R, dtype=bool)
    loss_x, loss_y = (np.empty(R), np.empty(R)) if mc else (None, None)

    xbar = np.zeros((f, C))
    pred = np.repeat(xbar[None], M, axis=0)
    wbar = pred.copy()
    count = np.zeros(M, dtype=np.int64)
    global_models[0], predictors[0] = xbar.reshape(-1), pred.reshape(M, d)
    with threadpool_limits(limits=1, user_api="blas"):  # as run_block_cyclic's reference engine
        for r in range(R):
            m = (r // E) % M
            data = data_of[m]
            part = np.arange(N) if K == N else participants_np(seed, r, N, K)
            chosen[r] = part
            X_all, y_all, wt_all = chain_batch(data, part, None)
            xs = np.repeat(xbar[None], K, axis=0)
            ys = np.repeat(wbar[m][None], K, axis=0) if mc else None
            for e in range(I):
                t = r * I + e
                local[t] = xs.reshape(K, d)
                exact[t] = (model.batched_gradients(xs, X_all, y_all, wt_all) + mu * xs).reshape(K, d)
                idx = None if b == 0 else sample_indices_np(seed, t, data.sizes, 2 * b if mc else b)[part]
                X, y, wt = chain_batch(data, part, None if idx is None else idx[:, :b])
                grad = model.batched_gradients(xs, X, y, wt) + mu * xs
                stochastic[t] = grad.reshape(K, d)
                xs -= eta_x[t] * grad
                if mc:
                    separate_local[t] = ys.reshape(K, d)
                    X, y, wt = chain_batch(data, part, None if idx is None else idx[:, b:])
                    ys -= eta_y[t] * (model.batched_gradients(ys, X, y, wt) + mu * ys)
            xbar = xs.mean(axis=0)
            if not np.all(np.isfinite(xbar)):
                raise DivergenceError(f"probe(seed {seed})", seed, r, I)
            u = xbar
            if mc:
                ybar = ys.mean(axis=0)
                if not np.all(np.isfinite(ybar)):
                    raise DivergenceError(f"probe(seed {seed})", seed, r, I)
                wbar[m] = ybar
                ybars[r] = ybar.reshape(-1)
                loss_x[r] = mean_losses(model, X_all, y_all, wt_all, xbar).mean() + 0.5 * mu * np.sum(xbar**2)
                loss_y[r] = mean_losses(model, X_all, y_all, wt_all, ybar).mean() + 0.5 * mu * np.sum(ybar**2)
                if loss_y[r] < loss_x[r]:
                    u, chose_y[r] = ybar, True
            n_m = count[m]
            if exponential and n_m > 0:
                pred[m] = 0.5 * (pred[m] + u)
            else:
                pred[m] = (n_m / (n_m + 1.0)) * pred[m] + (1.0 / (n_m + 1.0)) * u
            count[m] += 1
            global_models[r + 1], predictors[r + 1], selected[r] = xbar.reshape(-1), pred.reshape(M, d), u.reshape(-1)
    local[T] = xbar.reshape(-1)
    if mc:
        separate_local[T] = ybars[R - 1]
    arrays = dict(
        blocks=(steps // (I * E)) % M, participants=chosen, local_models=local, averages=local.mean(axis=1),
        stochastic_gradients=stochastic, local_gradients=exact, step_sizes=eta_x,
        separate_local_models=separate_local, block_step_sizes=eta_y, global_models=global_models,
        separate_models=ybars, selected_models=selected, chose_separate=chose_y, loss_x=loss_x, loss_y=loss_y,
        predictors=predictors,
    )
    for array in arrays.values():
        if array is not None:
            array.setflags(write=False)
    return BlockCyclicProbe(seed=seed, local_steps=I, rounds_per_block=E, batch_size=b, **arrays)
