"""Numba kernel: MM-PSGD and MC-PSGD over block-cyclic data (Ding et al. 2020, Algorithms 1-2).

One call runs one seed. Schedule: R = C M E rounds of I local steps; round r (0-based) uses
block m = (r // E) % M and global steps t = r I, ..., r I + I - 1 (T = C M E I). Data are the
combined problem's rows (``problems.block_cyclic``): client i in block m uses pseudo-client
k = m N + i. Parameters are row-major (f, C) as in the local-SGD kernel (``local_sgd``).

Round r, with S_r the participating clients (all N, or K of them, see below):

* block-mixed chain (both algorithms): every i in S_r starts from the global model x_bar and
  takes I steps x <- x - gamma_t (g_i(x) + mu x), g_i the data gradient of F_m^i (exact, or a
  minibatch of ``batch`` rows drawn with replacement); then x_bar <- (1/|S_r|) sum_{i in S_r} x_i
  (Algorithm 1 lines 5, 9, 11-12; Algorithm 2 line 6). With M = 1 this is FedAvg / parallel
  restarted SGD, and its global model is FedAvg's on block-cyclic data.
* block-separate chain (MC-PSGD only): every i in S_r starts from w_bar_m, the latest block-m
  separate model (initially w0), takes I steps with eta_t, and y_bar <- mean of the y_i;
  w_bar_m <- y_bar (line 7). Restarting from w_bar_m each round is line 8's broadcast within a
  block and line 15's reset when the round starts a new block.
* selection (MC-PSGD, lines 9-10): the average local loss (1/|S_r|) sum_{i in S_r} F_m^i at x_bar
  and at y_bar, exactly over each client's block-m rows; u_bar = y_bar if its loss is strictly
  smaller, else x_bar (a tie keeps x_bar). MM-PSGD uses u_bar = x_bar.
* predictor of block m (eq. 7, 8), with c the rounds of block m so far:
  ``average``:     p_m <- c/(c+1) p_m + 1/(c+1) u_bar (the mean of the block's u_bar);
  ``exponential``: p_m <- u_bar if c = 0, else (p_m + u_bar)/2, so the j-th latest round of the
  block weighs 2^-j (the first round shares the last weight), Sec. 5's "base 0.5, round number
  as the exponent".

Sampling (``_rng``, shared with FedAvg): client i's minibatch at step t is stream
stream_key(seed_key(seed), t, i, N), slots 0..b-1 for the x chain (so M = 1 reproduces FedAvg's
minibatches exactly) and slots b..2b-1 for the y chain (stream + G b, as sample_index(s, j)
hashes s + G (j + 1)). Partial participation: S_r = the K clients with the smallest
stream_key(pkey, r, k, N), pkey = mix64(seed_key(seed) ^ PARTICIPATION_SALT) (``_rng.participants``,
shared with FedAvg's Schemes II); mix64 is a bijection, so the N keys are distinct and S_r is a
uniform K-subset, the same in the reference.

Tracking (``track``, the metric of Yu et al. 2019, Thm 1, and Ding et al. Lemmas 3-4): x_bar_t =
mean of the participants' local x at every step. Before each step t the kernel adds
||grad F_m(x_bar_{t-1})||^2 (least squares: through the block Gram A_m = (1/N) sum_i X'X/n, d^2 per
step; otherwise over all of block m's rows), and after each step it takes
mean_i ||x_bar_t - x_i||^2 and max_i ||x_bar_t - x_i||^2, keeping running maxima.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from problems import BlockCyclicProblem
from problems.models.kernels import margin_loss_sum

from ..._rng import GOLDEN, PARTICIPATION_SALT, mix64, seed_key, stream_key
from ...schedules import StepSize, step_size_at
from .._base import NOT_TRACED
from ..local_steps import DIVERGENCE_FACTOR, data_gradient, gram_gradient, sq_dist
from .round_steps import (
    MODE_MC, MODE_MM, PREDICTOR_AVERAGE, PREDICTOR_EXPONENTIAL, block_state, initial_tracked, record_round,
    select_chain, server_average, server_step, start_round, track_drift, update_predictor,
)

__all__ = [
    "Plan",
    "SeedRecords",
    "BlockCyclicData",
    "CyclicRecords",
    "CyclicRoundPlan",
    "kernel_data",
    "kernel_seed",
    "block_cyclic_kernel",
    "MODE_MM",
    "MODE_MC",
    "PREDICTOR_AVERAGE",
    "PREDICTOR_EXPONENTIAL",
    "NOT_SCORED",
]

NOT_SCORED = np.zeros((0, 0))
"""``SeedRecords.block_accuracy`` of a seed without per-block accuracies (a linear problem, a diverged
CNN run): empty, read-only."""
NOT_SCORED.setflags(write=False)


@njit(cache=True)
def _sgd_step(loss, C, f, mu, rows, targets, offsets, k, i, N, t, batch, key, shift, eta,
              use_gram, gram, gram_rhs, W, G, Xb, Z, idx):
    """One local step W <- W - eta (g + mu W) of client i (pseudo-client k) at global step t."""
    if batch == 0 and use_gram[k]:
        gram_gradient(gram, k * f * f, gram_rhs, k * f, f, W, G)
    else:
        stream = np.uint64(0)
        if batch > 0:
            stream = stream_key(key, t, i, N) + GOLDEN * np.uint64(shift)
        data_gradient(loss, C, rows, offsets[k] * f, f, targets, offsets[k], offsets[k + 1] - offsets[k],
                       batch, stream, W, G, Xb, Z, idx)
    for q in range(W.size):
        W[q] -= eta * (G[q] + mu * W[q])


@njit(cache=True)
def _mean_loss(loss, C, f, rows, targets, lo, n_k, W, Z):
    """(1/n_k) sum of the per-sample losses (model oracle) over rows lo..lo+n_k-1 at W (f*C,)."""
    Xk = rows[lo * f:(lo + n_k) * f].reshape(n_k, f)
    Zk = Z[:n_k]
    np.dot(Xk, W.reshape(f, C), Zk)
    return margin_loss_sum(loss, Zk, targets, lo, n_k) / n_k


@njit(cache=True)
def _participant_loss(loss, C, f, mu, rows, targets, offsets, m, N, part, K, W, Z):
    """(1/K) sum_{p < K} F_m^{part[p]}(W): mean data loss over each client's block-m rows + mu/2 ||W||^2."""
    total = 0.0
    for p in range(K):
        k = m * N + part[p]
        total += _mean_loss(loss, C, f, rows, targets, offsets[k], offsets[k + 1] - offsets[k], W, Z)
    sq = 0.0
    for q in range(W.size):
        sq += W[q] * W[q]
    return total / K + 0.5 * mu * sq


@njit(cache=True)
def _block_grad_sq(loss, C, f, mu, rows, targets, offsets, m, N, block_gram, block_rhs, W, G, acc, Xb, Z, idx):
    """||grad F_m(W)||^2, F_m = (1/N) sum_i F_m^i, by the block Gram (least squares) or all block rows."""
    if block_gram.size > 0:
        gram_gradient(block_gram, m * f * f, block_rhs, m * f, f, W, acc)
    else:
        for q in range(acc.size):
            acc[q] = 0.0
        for i in range(N):
            k = m * N + i
            data_gradient(loss, C, rows, offsets[k] * f, f, targets, offsets[k], offsets[k + 1] - offsets[k],
                           0, np.uint64(0), W, G, Xb, Z, idx)
            for q in range(acc.size):
                acc[q] += G[q] / N
    sq = 0.0
    for q in range(acc.size):
        g = acc[q] + mu * W[q]
        sq += g * g
    return sq


@njit(cache=True)
def block_cyclic_kernel(loss, data, gamma, eta, plan, w0, w_ref, out):
    """Run one seed (module docstring); returns -1, or the 0-based round after which it diverged.

    ``loss`` the model's kernel tag; ``data`` the ``BlockCyclicData``; ``gamma`` and ``eta`` the
    ``StepSchedule`` of the x and the y chain; ``plan`` the ``CyclicRoundPlan``; w0 (d,) the start
    and w_ref (d,) the divergence anchor; ``out`` the ``CyclicRecords`` the kernel writes at
    ``plan.record_rounds`` (P,) (0 = before the first round): global (P, d) x_bar, predictors
    (P, M, d), and for MC separate (P, M, d) the w_bar_m and selected (P, M) how often y_bar was
    selected; with ``track`` track (P, 4) the numbers of ``round_steps.TRACKED`` (nothing is
    tracked before the first round: its row stays 0). Divergence: ||x_bar - w_ref||^2 (or y_bar's)
    not finite or above DIVERGENCE_FACTOR (1 + ||w0 - w_ref||^2).
    """
    C, f, mu, M, N = data.n_classes, data.n_features, data.mu, data.n_blocks, data.n_clients
    rows, targets, offsets = data.rows, data.targets, data.offsets
    use_gram, gram, gram_rhs, block_gram, block_rhs = (data.use_gram, data.gram, data.gram_rhs, data.block_gram,
                                                       data.block_rhs)
    mode, predictor, I, E, rounds = plan.mode, plan.predictor, plan.local_steps, plan.rounds_per_block, plan.rounds
    batch, K, seed, record_rounds, track = plan.batch, plan.participants, plan.seed, plan.record_rounds, plan.track
    rec_global, rec_pred, rec_sep, rec_sel, rec_track = out
    d = f * C
    mc = mode == MODE_MC
    key = seed_key(seed)
    pkey = mix64(key ^ PARTICIPATION_SALT)
    n_max = batch
    for k in range(M * N):
        n_max = max(n_max, offsets[k + 1] - offsets[k])
    G = np.empty(d)
    acc = np.empty(d)
    Xb = np.empty(max(batch, 1) * f)
    Z = np.empty((n_max, C))
    idx = np.empty(n_max, dtype=np.int64)
    xs = np.empty((K, d))
    ys = np.empty((K if mc else 0, d))
    xbar = w0.copy()
    ybar = np.empty(d)
    avg = np.empty(d)
    pred, wbar, count, sel = block_state(M, w0)
    part = np.arange(N)
    hashes = np.empty(N, dtype=np.uint64)
    limit = DIVERGENCE_FACTOR * (1.0 + sq_dist(w0, w_ref))
    tracked = initial_tracked(w0)

    ri = record_round(0, 0, record_rounds, xbar, pred, wbar, sel, tracked, mc, False, rec_global, rec_pred,
                      rec_sep, rec_sel, rec_track)
    for r in range(rounds):
        m = start_round(r, E, M, pkey, N, K, hashes, part, xbar, wbar, xs, ys, mc)
        if track:
            avg[:] = xbar
            for e in range(I):
                t = r * I + e
                tracked[0] += _block_grad_sq(loss, C, f, mu, rows, targets, offsets, m, N, block_gram, block_rhs,
                                             avg, G, acc, Xb, Z, idx)
                eta_x = step_size_at(gamma.code, gamma.a, gamma.b, t, I)
                eta_y = step_size_at(eta.code, eta.a, eta.b, t, I)
                for p in range(K):
                    i = part[p]
                    _sgd_step(loss, C, f, mu, rows, targets, offsets, m * N + i, i, N, t, batch, key, 0, eta_x,
                              use_gram, gram, gram_rhs, xs[p], G, Xb, Z, idx)
                    if mc:
                        _sgd_step(loss, C, f, mu, rows, targets, offsets, m * N + i, i, N, t, batch, key, batch,
                                  eta_y, use_gram, gram, gram_rhs, ys[p], G, Xb, Z, idx)
                server_average(xs, K, avg, avg)
                track_drift(avg, xs, ys, K, mc, tracked)
        else:
            for p in range(K):
                i = part[p]
                for e in range(I):
                    t = r * I + e
                    eta_x = step_size_at(gamma.code, gamma.a, gamma.b, t, I)
                    _sgd_step(loss, C, f, mu, rows, targets, offsets, m * N + i, i, N, t, batch, key, 0, eta_x,
                              use_gram, gram, gram_rhs, xs[p], G, Xb, Z, idx)
                if mc:
                    for e in range(I):
                        t = r * I + e
                        eta_y = step_size_at(eta.code, eta.a, eta.b, t, I)
                        _sgd_step(loss, C, f, mu, rows, targets, offsets, m * N + i, i, N, t, batch, key, batch,
                                  eta_y, use_gram, gram, gram_rhs, ys[p], G, Xb, Z, idx)
        if not server_step(xs, ys, K, mc, avg, xbar, ybar, wbar[m], w_ref, limit):
            return r
        choose_y = mc and select_chain(
            _participant_loss(loss, C, f, mu, rows, targets, offsets, m, N, part, K, xbar, Z),
            _participant_loss(loss, C, f, mu, rows, targets, offsets, m, N, part, K, ybar, Z), sel, m)
        update_predictor(pred, count, m, ybar if choose_y else xbar, predictor)
        ri = record_round(ri, r + 1, record_rounds, xbar, pred, wbar, sel, tracked, mc, track, rec_global, rec_pred,
                          rec_sep, rec_sel, rec_track)
    return -1


@dataclass(frozen=True)
class Plan:
    """What one run executes, shared by the kernel driver and the NumPy reference.

    mode: MODE_MM or MODE_MC; predictor: PREDICTOR_*; gamma / eta: step sizes of the x / y chain
    (eta unused by MM); I local steps per round, E rounds per block, ``rounds`` = C M E in all;
    batch (0 = exact gradients); K participants per round (= N for full participation);
    record_rounds (sorted, in [0, rounds]); track: the per-step metrics of the module docstring;
    trace: keep every local iterate (the reference path only, ``trace.BlockCyclicTraceArrays``).
    """

    mode: int
    predictor: int
    gamma: StepSize
    eta: StepSize
    local_steps: int
    rounds_per_block: int
    rounds: int
    batch: int
    participants: int
    record_rounds: tuple[int, ...]
    track: bool
    trace: bool = False

    def round_plan(self, seed: int) -> CyclicRoundPlan:
        """The kernels' bundle of this plan for ``seed`` (its step sizes apart: ``StepSize.schedule``)."""
        return CyclicRoundPlan(self.mode, self.predictor, self.local_steps, self.rounds_per_block, self.rounds,
                               self.batch, self.participants, int(seed),
                               np.asarray(self.record_rounds, dtype=np.int64), bool(self.track))


class SeedRecords(NamedTuple):
    """One seed's records (P record points): global (P, d), predictors (P, M, d), separate (P, M, d)
    and selected (P, M) for MC (else empty), track (P, 3) when tracked (else empty), and the
    0-based round after which the run diverged (-1 if it did not); the ``trace_*`` arrays are the
    fields of ``trace.BlockCyclicTraceArrays`` for a traced reference run, ``NOT_TRACED`` otherwise;
    ``block_accuracy`` (P, M) the per-block test accuracies of a CNN run that did not diverge, scored
    in the run (``engine.BlockCyclicEngine.run_seed``), ``NOT_SCORED`` otherwise."""

    records: np.ndarray
    predictors: np.ndarray
    separate: np.ndarray
    selected: np.ndarray
    track: np.ndarray
    diverged: int
    trace_participants: np.ndarray = NOT_TRACED
    trace_local_models: np.ndarray = NOT_TRACED
    trace_stochastic_gradients: np.ndarray = NOT_TRACED
    trace_local_gradients: np.ndarray = NOT_TRACED
    trace_separate_local_models: np.ndarray = NOT_TRACED
    trace_separate_models: np.ndarray = NOT_TRACED
    trace_chose_separate: np.ndarray = NOT_TRACED
    trace_losses: np.ndarray = NOT_TRACED
    trace_predictors: np.ndarray = NOT_TRACED
    block_accuracy: np.ndarray = NOT_SCORED


class BlockCyclicData(NamedTuple):
    """The combined problem's data in the kernel's layout (built once per run by ``kernel_data``):
    M = ``n_blocks`` blocks of N = ``n_clients`` clients, f = ``n_features``, C = ``n_classes``, ``mu``
    the l2 coefficient (the loss is the model's ``kernel_loss()``, passed beside it).

    rows (n f,) row-major X; targets (n,); offsets (M N + 1,); use_gram (M N,) marks least-squares
    pseudo-clients stepped through Q_k = X_k'X_k / n_k and c_k = X_k'y_k / n_k (exact gradients,
    f < 2 n_k, as in ``_packing``): gram (M N f^2,), gram_rhs (M N f,); block_gram (M f^2,) and
    block_rhs (M f,) hold A_m = (1/N) sum_i Q_mi and b_m for tracking least squares (else empty).
    """

    n_classes: int
    n_features: int
    mu: float
    n_blocks: int
    n_clients: int
    rows: np.ndarray
    targets: np.ndarray
    offsets: np.ndarray
    use_gram: np.ndarray
    gram: np.ndarray
    gram_rhs: np.ndarray
    block_gram: np.ndarray
    block_rhs: np.ndarray


class CyclicRoundPlan(NamedTuple):
    """A ``Plan`` for one seed as the kernel takes it: ``mode`` and ``predictor`` (their codes),
    ``local_steps`` I, ``rounds_per_block`` E, ``rounds``, ``batch`` (0: exact), ``participants`` K,
    ``seed``, ``record_rounds`` (P,) int64 and ``track`` (the step sizes are ``StepSchedule``s)."""

    mode: int
    predictor: int
    local_steps: int
    rounds_per_block: int
    rounds: int
    batch: int
    participants: int
    seed: int
    record_rounds: np.ndarray
    track: bool


class CyclicRecords(NamedTuple):
    """What a block-cyclic kernel writes at the P record rounds (M blocks, d parameters): global
    (P, d) x_bar, predictors (P, M, d), separate (P, M, d) and selected (P, M) int64 for MC (else
    0 rows), track (P, 4) when tracked (else 0 rows)."""

    global_models: np.ndarray
    predictors: np.ndarray
    separate: np.ndarray
    selected: np.ndarray
    track: np.ndarray

    @classmethod
    def allocate(cls, plan: Plan, M: int, d: int) -> CyclicRecords:
        """Zeroed records for ``plan`` on M blocks of d parameters."""
        P, mc = len(plan.record_rounds), plan.mode == MODE_MC
        return cls(np.zeros((P, d)), np.zeros((P, M, d)), np.zeros((P if mc else 0, M, d)),
                   np.zeros((P if mc else 0, M), dtype=np.int64), np.zeros((P if plan.track else 0, 4)))


def kernel_data(problem: BlockCyclicProblem, plan: Plan) -> BlockCyclicData:
    """Data for ``block_cyclic_kernel`` (see BlockCyclicData); Gram matrices only where they are used."""
    c = problem.combined
    f, MN, N = c.n_features, c.n_clients, problem.n_clients
    least_squares = c.model.quadratic
    use_gram = np.array([least_squares and plan.batch == 0 and f < 2 * n for n in c.client_sizes], dtype=np.bool_)
    need = use_gram.any() or (plan.track and least_squares)
    grams = np.zeros((MN, f, f)) if need else np.zeros((0, f, f))
    rhs = np.zeros((MN, f)) if need else np.zeros((0, f))
    if need:
        for k in range(MN):
            Xk, yk = c.client_data(k)
            grams[k] = Xk.T @ Xk / Xk.shape[0]
            rhs[k] = Xk.T @ yk / Xk.shape[0]
    track_gram = plan.track and least_squares
    block_gram = grams.reshape(problem.n_blocks, N, f, f).mean(axis=1) if track_gram else np.zeros((0, f, f))
    block_rhs = rhs.reshape(problem.n_blocks, N, f).mean(axis=1) if track_gram else np.zeros((0, f))
    return BlockCyclicData(
        n_classes=c.n_classes,
        n_features=f,
        mu=c.mu,
        n_blocks=problem.n_blocks,
        n_clients=N,
        rows=np.array(c.X).reshape(-1),
        targets=np.array(c.y),
        offsets=np.array(c.offsets),
        use_gram=use_gram,
        gram=(grams if use_gram.any() else np.zeros((0, f, f))).reshape(-1),
        gram_rhs=(rhs if use_gram.any() else np.zeros((0, f))).reshape(-1),
        block_gram=np.ascontiguousarray(block_gram).reshape(-1),
        block_rhs=np.ascontiguousarray(block_rhs).reshape(-1),
    )


def kernel_seed(
    problem: BlockCyclicProblem, data: BlockCyclicData, plan: Plan, seed: int, w0: np.ndarray, w_ref: np.ndarray
) -> SeedRecords:
    """Run ``block_cyclic_kernel`` for one seed from w0 (d,); w_ref (d,) anchors the divergence test."""
    c = problem.combined
    out = CyclicRecords.allocate(plan, problem.n_blocks, c.dim)
    diverged = block_cyclic_kernel(
        c.model.kernel_loss(), data, plan.gamma.schedule, plan.eta.schedule, plan.round_plan(seed),
        np.ascontiguousarray(w0, dtype=np.float64), np.ascontiguousarray(w_ref, dtype=np.float64), out,
    )
    return SeedRecords(*out, int(diverged))
