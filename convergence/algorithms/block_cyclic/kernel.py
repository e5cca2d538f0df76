"""Numba kernel: MM-PSGD and MC-PSGD over block-cyclic data (Ding et al. 2020, Algorithms 1-2), one
round loop for every model (linear models and CNNs), one seed per call.

Schedule: R = C M E rounds of I local steps; round r (0-based) uses block m = (r // E) % M and
global steps t = r I, ..., r I + I - 1 (T = C M E I). Data are the combined problem's rows
(``problems.block_cyclic``, ``problems.block_cyclic_images``): client i in block m uses
pseudo-client k = m N + i. Round r, with S_r the participating clients (all N, or K of them):

* block-mixed chain (both algorithms): every i in S_r starts from the global model x_bar and
  takes I steps x <- x - gamma_t (g_i(x) + mu x) (mu = 0 for a CNN), g_i the data gradient of
  F_m^i (exact, or a minibatch of ``batch`` rows drawn with replacement); then
  x_bar <- (1/|S_r|) sum_{i in S_r} x_i (Algorithm 1 lines 5, 9, 11-12; Algorithm 2 line 6).
  With M = 1 this is FedAvg / parallel restarted SGD, and its global model is FedAvg's on
  block-cyclic data.
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

Where the model-specific pieces live: a client's local steps, the tracked gradient norm, the
selection's loss and MC's y-chain minibatch stream are ``model_pieces``' stubs, resolved at
compile time by the type of ``data``: ``linear_pieces`` for a ``BlockCyclicData`` (``model`` the
loss's kernel tag), ``network_pieces`` for a ``NetworkCyclicData`` (``model`` the CNN's layout
table). Everything else is the loop below and ``round_steps``. The divergence anchor is the
caller's w_ref: w* when the problem has an exact optimum, else w0 (a CNN).

Precision: iterates x_i, y_i and the models x_bar, y_bar, w_bar_m are stored in the dtype of w0
(float64 for a linear model; a CNN's problem dtype, float32 by default); every step's update and
every average (1/K) sum_p x_p (accumulated in float64 in participant order) is computed in float64
and then stored; the predictors p_m are kept and recorded in float64. On float64 models each
step is the plain float64 arithmetic.

Sampling (``_rng``, shared with FedAvg): client i's minibatch at step t comes from the stream
stream_key(seed_key(seed), t, i, N) (the y chain's rows: ``model_pieces.client_steps``). Partial
participation: S_r = the K clients with the smallest stream_key(pkey, r, k, N), pkey =
mix64(seed_key(seed) ^ PARTICIPATION_SALT) (``_rng.participants``, shared with FedAvg's Scheme II);
mix64 is a bijection, so the N keys are distinct and S_r is a uniform K-subset, the same in the
reference. Order: a tracked round, and an untracked one of a model that is not
``model_pieces.client_major``, runs step by step (the participants take step t in turn, x then
y); an untracked round of a client-major model runs client by client (each participant takes its
I steps of one chain, then of the other). The clients and chains are independent, so both orders
give the same numbers; they differ in speed (``model_pieces.client_major``).

Tracking (``track``, the metric of Yu et al. 2019, Thm 1, and Ding et al. Lemmas 3-4): x_bar_t =
mean of the participants' local x at every step (float64, evaluated at its dtype rounding).
Before each step t the kernel adds ||grad F_m(x_bar_{t-1})||^2 (``model_pieces.block_grad_sq``),
and after each step it takes mean_i ||x_bar_t - x_i||^2 and max_i ||x_bar_t - x_i||^2 and the
largest ||x_t^i||^2 (and ||y_t^i||^2), keeping running maxima (``round_steps.initial_tracked``).
The record at round 0 holds the numbers before the first step: [0, 0, 0, ||w0||^2], as the NumPy
reference's (for a linear run w0 = 0, so that row is 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ..._rng import PARTICIPATION_SALT, mix64, seed_key
from ...schedules import StepSize
from .._base import NOT_TRACED
from ..local_steps import DIVERGENCE_FACTOR, sq_dist
from . import linear_pieces, network_pieces  # registers the model pieces' implementations
from .model_pieces import block_grad_sq, client_major, client_steps, participant_loss, workspace
from .round_steps import (
    MODE_MC, MODE_MM, PREDICTOR_AVERAGE, PREDICTOR_EXPONENTIAL, block_state, initial_tracked, record_round,
    select_chain, server_average, server_step, start_round, track_drift, update_predictor,
)

__all__ = [
    "Plan",
    "SeedRecords",
    "CyclicRecords",
    "CyclicRoundPlan",
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
def block_cyclic_kernel(model, data, gamma, eta, plan, w0, w_ref, out):
    """Run one seed (module docstring); returns -1, or the 0-based round after which it diverged.

    ``model`` and ``data`` the model's kernel argument and bundle (``model_pieces``); ``gamma`` and
    ``eta`` the ``StepSchedule`` of the x and the y chain; ``plan`` the ``CyclicRoundPlan``; w0 (d,)
    the start, in the run's dtype, and w_ref (d,) float64 the divergence anchor; ``out`` the
    ``CyclicRecords`` the kernel writes at ``plan.record_rounds`` (P,) (0 = before the first round),
    all float64 but ``selected``: global (P, d) x_bar, predictors (P, M, d), and for MC separate
    (P, M, d) the w_bar_m and selected (P, M) how often y_bar was selected; with ``track`` track
    (P, 4) the numbers of ``round_steps.initial_tracked``. Divergence: ||x_bar - w_ref||^2 (or
    y_bar's) not finite or above DIVERGENCE_FACTOR (1 + ||w0 - w_ref||^2).
    """
    M, N = data.n_blocks, data.n_clients
    mode, predictor, I, E, rounds = plan.mode, plan.predictor, plan.local_steps, plan.rounds_per_block, plan.rounds
    batch, K, seed, record_rounds, track = plan.batch, plan.participants, plan.seed, plan.record_rounds, plan.track
    rec_global, rec_pred, rec_sep, rec_sel, rec_track = out
    d = w0.size
    mc = mode == MODE_MC
    key = seed_key(seed)
    pkey = mix64(key ^ PARTICIPATION_SALT)
    work = workspace(model, data, batch, d)
    xs = np.empty((K, d), dtype=w0.dtype)
    ys = np.empty((K if mc else 0, d), dtype=w0.dtype)
    xbar = w0.copy()
    ybar = w0.copy()
    avg = w0.copy()
    acc = np.empty(d)
    pred, wbar, count, sel = block_state(M, w0)
    part = np.arange(N)
    hashes = np.empty(N, dtype=np.uint64)
    limit = DIVERGENCE_FACTOR * (1.0 + sq_dist(w0, w_ref))
    tracked = initial_tracked(w0)

    ri = record_round(0, 0, record_rounds, xbar, pred, wbar, sel, tracked, mc, track, rec_global, rec_pred,
                      rec_sep, rec_sel, rec_track)
    for r in range(rounds):
        m = start_round(r, E, M, pkey, N, K, hashes, part, xbar, wbar, xs, ys, mc)
        if track or not client_major(data):
            avg[:] = xbar
            for e in range(I):
                t = r * I + e
                if track:
                    tracked[0] += block_grad_sq(model, data, work, m, avg)
                for p in range(K):
                    client_steps(model, data, work, batch, key, 0, m, part[p], t, 1, gamma, I, xs[p])
                    if mc:
                        client_steps(model, data, work, batch, key, 1, m, part[p], t, 1, eta, I, ys[p])
                if track:
                    server_average(xs, K, acc, acc)
                    track_drift(acc, xs, ys, K, mc, tracked)
                    for q in range(d):
                        avg[q] = acc[q]
        else:
            for p in range(K):
                client_steps(model, data, work, batch, key, 0, m, part[p], r * I, I, gamma, I, xs[p])
                if mc:
                    client_steps(model, data, work, batch, key, 1, m, part[p], r * I, I, eta, I, ys[p])
        if not server_step(xs, ys, K, mc, acc, xbar, ybar, wbar[m], w_ref, limit):
            return r
        choose_y = mc and select_chain(participant_loss(model, data, work, m, part, K, xbar),
                                       participant_loss(model, data, work, m, part, K, ybar), sel, m)
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
    and selected (P, M) for MC (else empty), track (P, 4) when tracked (else empty), and the
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


def kernel_seed(model: NamedTuple | np.ndarray, data: linear_pieces.BlockCyclicData | network_pieces.NetworkCyclicData,
                plan: Plan, seed: int, w0: np.ndarray, w_ref: np.ndarray) -> SeedRecords:
    """Run ``block_cyclic_kernel`` for one seed of ``plan`` from w0 (d,) in the run's dtype; w_ref (d,)
    anchors the divergence test; ``model`` and ``data`` the model's kernel argument and bundle
    (``linear_pieces.kernel_data``, ``network_pieces.network_data``)."""
    out = CyclicRecords.allocate(plan, data.n_blocks, w0.size)
    diverged = block_cyclic_kernel(model, data, plan.gamma.schedule, plan.eta.schedule, plan.round_plan(seed),
                                   np.ascontiguousarray(w0), np.ascontiguousarray(w_ref, dtype=np.float64), out)
    return SeedRecords(*out, int(diverged))
