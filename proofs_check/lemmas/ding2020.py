"""Lemma checks on MM-PSGD / MC-PSGD trajectories: Ding et al. (2020) Lemmas 2, 3, 6, 8 and 9 (Lemmas 1,
4, 5 and 7 are in ``ding2020_descent``; the traced data and constants here serve both).

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454
(``shared/papers/ding2020_block_cyclic.md``: Assumptions 3-5 l.77-87, Lemmas 2-3 with eq. 14 and their
proofs eq. 30-31, Lemma 6 with eq. 17 and its proof eq. 38-43, Lemma 8 with eq. 48-49 and its proof
eq. 56-59, Lemma 9 with eq. 60-65; ``shared/THEOREMS.md``, "Ding et al. 2020"). A ``DingLemmaData``
holds the traces of every seed (``convergence.execute`` with ``trace=True`` on the NumPy reference
path, ``convergence.BlockCyclicTrace``; notation in ``convergence.algorithms.block_cyclic.trace``:
K participants per round, K = N under the paper's full participation, x_t^i, xbar_t = (1/K)
sum_i x_t^i, g_t^i, grad F_m^i(x_t^i), block m(t)) and computes the constants of the assumptions. Expectations are
means over seeds with a Student-t interval and ``convergence.check_upper_bound`` gives the verdict
(PASS when the interval stays below the bound at every point, FAIL when it is provably above
somewhere: Holm over the points, family-wise error rate 5%); x is the 1-based step index t + 1
(Lemmas 2-3), the (cycle, block) window index (Lemma 6), round index r + 1 (Lemma 8) or block
index m + 1 (Lemma 9).

Statements, each a function below (shapes: S seeds, T steps, R rounds, M blocks, C cycles):

* ding2020.lemma2 (Assumption 3, eq. 14): E||g_t - gbar_t||^2 <= sigma^2 / N with
  g_t = (1/N) sum_i g_t^i and gbar_t = (1/N) sum_i grad F_m^i(x_t^i) (as in the proof, eq. 30, which
  needs each client's own mean; eq. 12 writes grad F_m), realised minibatch gradients, (S, T) against (T,).
* ding2020.lemma3 (Assumption 4): E||xbar_t - x_t^i||^2 <= 4 gamma^2 I^2 G^2 for every i, checked as
  E max_i (which implies every i) and as E mean_i (the form Lemma 1 uses); (S, T) against (T,);
  gamma = max_t gamma_t (the paper's step is constant).
* ding2020.lemma6 (Assumptions 2-4, gamma <= 1/L, eq. 17): the average loss of the global models at
  the communication iterations is at most that of the every-step averages plus
  2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L / (2N). Round r (block m = m(r)) takes the I steps
  t = rI..rI+I-1 from xbar_{rI} and communicates xbar_{(r+1)I}; the proof (eq. 42-43) bounds
  E[F_m(xbar_{(r+1)I}) - F_m(xbar_t)] by the constant for each of them (at most I steps apart),
  and averages over the E I steps of each (cycle, block) window (the display after eq. 43), which
  eq. 17 averages over the C M windows. Checked per window w, as eq. 17 reads: LHS_w = (1/E) sum_r
  F_m(xbar_{(r+1)I}), RHS_w = (1/(E I)) sum_{r,t} F_m(xbar_t) + constant; both sides are random,
  so the check is paired: per seed LHS - RHS + mean_s RHS against mean_s RHS; (S, C M) against (C M,).
* ding2020.lemma8 (MC-PSGD, eq. 56): at every communication round the average local loss
  (1/N) sum_i F_m^i of the selected u_bar is <= min of those of x_bar and y_bar. It holds for every
  realisation, hence in expectation (eq. 57) and averaged over rounds (eq. 48-49, 58-59). Evaluated
  per seed and round with the losses computed independently of the run (``FederatedProblem.
  local_objectives``), to 1e-12 (1 + |min|): (1, S R) against (S R,). Uninformative: Algorithm 2
  keeps the model with the smaller average loss, so the inequality holds by construction
  (``LEMMA8_BY_CONSTRUCTION``); the verdict is INCONCLUSIVE with ``Verdict.cannot_fail`` set, listed
  by a claim as uninformative, never counted as a PASS.
* ding2020.lemma9 (Assumptions 2 and 5, eq. 60): F_m(x) - F_m(y) <= 2 B^2 L^2 + 2 B^2 + 2 B^2 L for all
  x, y with ||x||^2, ||y||^2 <= B^2. Evaluated at the worst pair of V (every global model,
  block-separate model, predictor and local iterate of both chains over all seeds, x* and every
  x_m*): max_{x in V} F_m(x) - min_{y in V} F_m(y) per block, L = max_{m,i} L_m^i; (1, M) against (M,).
  Uninformative: with x_m* in the ball, L-smoothness alone bounds the left side by 2 B^2 L
  (``lemma9_ceiling``), at most the lemma's bound, so no data can violate it; INCONCLUSIVE with
  ``cannot_fail`` set and the tightness reported (about 3% on the lemma table's instance).

Constants, as Ding's assumptions define them (Assumptions 3-5 hold for all x, m, i; l.77-87):
* B^2 (Assumption 5) = the largest ||v||^2 over V: every model of the run, x* = argmin F and every
  x_m* = argmin F_m (the proofs apply Assumption 5 to x* in eq. 36 and to x_m* in eq. 63).
* sigma^2 and G^2 (Assumptions 3-4) = the supremum over the ball ||x|| <= B and over every
  (block, client) objective F_m^i of the variance / second moment of its minibatch gradient
  (``assumption_constants.variance_bound`` / ``second_moment_bound`` on ``problem.combined``): exact for least
  squares, a certified upper bound otherwise (the method is in the notes). With exact gradients
  (batch 0) sigma^2 = 0 and G^2 = sup ||grad F_m^i||^2 over the ball.

Planted variants (the power self-test of ``proofs_check.claims.checks.lemmas``): ``factor``
or ``constant`` arguments change the constant of Lemmas 2, 3 and 6; each is named in the claim id and
must FAIL where the data resolve it (``lemma_verdicts.attained_scale``). Lemmas 8 and 9 have none: their
rows cannot fail with the paper's statement, so no planted variant of them can show the power of a row
that is never counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from convergence import (
    BlockCyclicTrace,
    Ceiling,
    Hypothesis,
    MCPSGDConfig,
    MMPSGDConfig,
    RunConfig,
    RunRequest,
    Verdict,
    check_upper_bound,
    execute,
)
from problems import BlockCyclicProblem, exact_optimum, problem_constants

from ..constants.assumptions import ClientEstimate, Estimate, second_moment_bound, variance_bound
from ..framework.settings import VerifySettings
from ..constants.ding2020 import lemma6_constant, lemma9_ceiling, lemma9_constant
from .seed_traces import SeedTraces
from .verdicts import upper_bound_verdict
from ..constants.regions import Ball

__all__ = [
    "DING_LEMMA_IDS",
    "LEMMA8_BY_CONSTRUCTION",
    "LEMMA8_TOLERANCE",
    "DingLemmaData",
    "assumption_hypotheses",
    "collect_ding",
    "ding_lemma2",
    "ding_lemma3",
    "ding_lemma6",
    "ding_lemma6_constant",
    "ding_lemma8",
    "ding_lemma9",
]

DING_LEMMA_IDS = ("ding2020.lemma1", "ding2020.lemma2", "ding2020.lemma3", "ding2020.lemma4", "ding2020.lemma5",
                  "ding2020.lemma6", "ding2020.lemma7", "ding2020.lemma8", "ding2020.lemma9")
"""The lemmas of the table (``ding2020_table``); Lemmas 1, 4, 5 and 7 are in ``ding2020_descent``."""
LEMMA8_TOLERANCE = 1e-12
"""Relative slack of Lemma 8's exact inequality (two loss implementations differ by rounding)."""
LEMMA8_BY_CONSTRUCTION = (
    "Algorithm 2 (line 9) keeps, each round, the model with the smaller average local loss, so that loss is "
    "min(x_bar's, y_bar's) by construction; with the selection on every client's whole local objective and F_m the "
    "clients' average (eq. 3-6), eq. 56-59 hold in every realisation. A wrong selection by the engine is caught by "
    "the trace tests (tests/test_ding_lemmas.py), not by this row")
"""Why Lemma 8's row cannot fail (module docstring)."""


@dataclass(frozen=True, eq=False)
class DingLemmaData(SeedTraces):
    """Every local iterate of every seed of ``config`` on ``problem`` (``traces``, in the order of the
    seeds) and the constants of Ding's assumptions (module docstring). ``visited`` (P, d) holds the
    distinct points of V (the run's models, x* and the x_m*), ``block_values`` (P, M) F_m at each
    of them, ``block_optima`` (M, d) the x_m*, ``optimum`` (d,) x*; ``sigma`` (per (block, client)
    objective, (M N,)) and ``G`` are the suprema over the ball ||x|| <= B; ``L`` and ``mu`` are the largest
    smoothness and the smallest strong-convexity modulus of the (block, client) objectives (Assumptions 1-2)."""

    problem: BlockCyclicProblem
    config: MMPSGDConfig | MCPSGDConfig
    traces: tuple[BlockCyclicTrace, ...]
    L: float
    mu: float
    sigma: ClientEstimate
    G: Estimate
    visited: np.ndarray
    block_values: np.ndarray
    block_optima: np.ndarray
    optimum: np.ndarray

    @property
    def mc(self) -> bool:
        """True for MC-PSGD (two chains and a selection per round)."""
        return isinstance(self.config, MCPSGDConfig)

    @property
    def participants(self) -> int:
        """K, the clients averaged per round (N under full participation)."""
        return self.traces[0].participants.shape[1]

    @property
    def deterministic(self) -> bool:
        """True with exact local gradients (batch 0) and every client in every round: nothing is drawn."""
        return self.config.batch_size == 0 and self.participants == self.problem.n_clients

    @property
    def x(self) -> np.ndarray:
        """The 1-based step index t + 1 of the local steps t = 0..T-1, shape (T,)."""
        return np.arange(1, self.traces[0].step_sizes.size + 1, dtype=np.float64)

    @property
    def B_sq(self) -> float:
        """B^2 = max ||v||^2 over V (Assumption 5: the run's models, x* and every x_m*)."""
        return float(np.max(np.sum(self.visited**2, axis=1)))

    @property
    def sigma_sq(self) -> float:
        """sigma^2 = max over the (block, client) objectives of the sup of the variance over the ball."""
        return self.sigma.max

    @property
    def G_sq(self) -> float:
        """G^2 = sup over the ball and the (block, client) objectives of E||g||^2."""
        return self.G.value

    def constants_note(self) -> str:
        return (f"L = {self.L:.6g}, B^2 = {self.B_sq:.6g} (max ||v||^2 over {self.visited.shape[0]} points: the run's "
                f"models, x*, x_m*), sigma^2 = {self.sigma_sq:.6g} ({self.sigma.method}), G^2 = {self.G_sq:.6g} "
                f"({self.G.method}); both over the {self.problem.n_blocks} x {self.problem.n_clients} (block, client) "
                f"objectives, batch {self.config.batch_size or 'exact'}")


def _visited_points(trace: BlockCyclicTrace) -> np.ndarray:
    """Every model of one trace (global, block-separate, predictors, both chains' local iterates; u_bar is
    one of the first two), (P, d)."""
    d = trace.global_models.shape[1]
    parts = [trace.global_models, trace.predictors.reshape(-1, d), trace.local_models.reshape(-1, d)]
    if trace.separate_models is not None:
        parts += [trace.separate_models, trace.separate_local_models.reshape(-1, d)]
    return np.concatenate(parts)


def collect_ding(
    problem: BlockCyclicProblem, config: MMPSGDConfig | MCPSGDConfig, seeds: Sequence[int] | None = None, *,
    settings: VerifySettings | None = None,
) -> DingLemmaData:
    """Trace every seed (``config.seeds`` when None) of an MM-PSGD or MC-PSGD config on ``problem``
    (which must carry its spec) from w0 = 0 and compute the constants: one traced request through
    ``convergence.execute`` on the NumPy reference path, with ``settings``' jobs, scheduler and run
    store (None: in this process, without a store or progress)."""
    if not isinstance(config, (MMPSGDConfig, MCPSGDConfig)):
        raise TypeError(f"config: expected an MMPSGDConfig or MCPSGDConfig, got {type(config).__name__}")
    seeds = tuple(config.seeds if seeds is None else seeds)
    if not seeds:
        raise ValueError("seeds: need at least one seed")
    combined = problem.combined
    optimum_of_F = exact_optimum(combined, crosscheck=False)
    settings = VerifySettings(progress=False) if settings is None else settings
    (result,) = execute([RunRequest(RunConfig(problem.spec, config.with_seeds(seeds)), optimum_of_F, trace=True)], settings.sweep_options(), engine="numpy", description="lemma traces")
    traces = result.extras.traces
    optima = np.array([exact_optimum(problem.block(m), crosscheck=False).w_star for m in range(problem.n_blocks)])
    optimum = optimum_of_F.w_star
    visited = np.unique(np.concatenate([_visited_points(trace) for trace in traces] + [optimum[None], optima]), axis=0)
    block_values = np.array([problem.block_objectives(v) for v in visited])
    ball = Ball(np.zeros(problem.dim), float(np.sqrt(np.max(np.sum(visited**2, axis=1)))))
    sigma = variance_bound(combined, ball, config.batch_size)
    G = second_moment_bound(combined, ball, config.batch_size)
    constants = problem_constants(combined)
    return DingLemmaData(problem, config, traces, float(constants.L), float(constants.mu), sigma, G, visited,
                         block_values, optima, optimum)


def assumption_hypotheses(data: DingLemmaData, *which: Literal[3, 4]) -> tuple[Hypothesis, ...]:
    """Assumptions 3 and / or 4 over the ball of Assumption 5 (finite constants)."""
    radius = np.sqrt(data.B_sq)
    out = []
    if 3 in which:
        out.append(Hypothesis("Assumption 3 on ||x|| <= B: sigma^2 finite", bool(np.isfinite(data.sigma_sq)),
                              f"sigma^2 = {data.sigma_sq:.6g} over the ball ||x|| <= {radius:.6g}"))
    if 4 in which:
        out.append(Hypothesis("Assumption 4 on ||x|| <= B: G^2 finite", bool(np.isfinite(data.G_sq)),
                              f"G^2 = {data.G_sq:.6g} over the ball ||x|| <= {radius:.6g}"))
    return tuple(out)


# ----------------------------------------------------------------------------------- lemmas
def ding_lemma2(data: DingLemmaData, factor: float = 1.0) -> Verdict:
    """Ding et al. (2020) Lemma 2 (eq. 14), E||g_t - gbar_t||^2 <= factor sigma^2 / N with N the
    clients averaged per round (factor = 1 in the paper; another value is a planted variant)."""
    K = data.participants
    noise = (data.stack("stochastic_gradients") - data.stack("local_gradients")).mean(axis=2)  # (S, T, d)
    lhs = np.sum(noise**2, axis=2)
    rhs = factor * data.sigma_sq / K
    claim_id = "ding2020.lemma2" if factor == 1.0 else f"ding2020.lemma2[factor={factor:.6g}]"
    notes = (f"realised ||g_t - gbar_t||^2, N = {K} clients per round, batch {data.config.batch_size or 'exact'}, "
             f"factor {factor:.6g}, mean over {len(data.traces)} seed(s); {data.constants_note()}")
    return upper_bound_verdict(claim_id, data.x, lhs, np.full(data.x.size, rhs), assumption_hypotheses(data, 3),
                               notes, deterministic=data.deterministic)


def ding_lemma3(data: DingLemmaData, constant: float = 4.0, over: Literal["max", "mean"] = "max") -> Verdict:
    """Ding et al. (2020) Lemma 3, E||xbar_t - x_t^i||^2 <= constant gamma^2 I^2 G^2, with the max
    or the mean over clients i on the left (constant = 4 in the paper; another value is planted)."""
    T = data.x.size
    local = data.stack("local_models")[:, :T]  # (S, T, K, d)
    deviation = np.sum((data.stack("averages")[:, :T, None] - local) ** 2, axis=3)  # (S, T, K)
    if over == "max":
        lhs = deviation.max(axis=2)
    elif over == "mean":
        lhs = deviation.mean(axis=2)
    else:
        raise ValueError(f"over: expected 'max' or 'mean', got {over!r}")
    gamma, I = float(data.traces[0].step_sizes.max()), data.config.local_steps
    bound = np.full(T, constant * gamma**2 * I**2 * data.G_sq)
    base = "ding2020.lemma3" if over == "max" else "ding2020.lemma3/mean"
    claim_id = base if constant == 4.0 else f"{base}[constant={constant:.6g}]"
    notes = (f"{over}_i ||xbar_t - x_t^i||^2, I = {I}, gamma = max_t gamma_t = {gamma:.6g}, constant {constant:.6g}, "
             f"mean over {len(data.traces)} seed(s); {data.constants_note()}")
    return check_upper_bound(claim_id, data.x, lhs, bound, hypotheses=assumption_hypotheses(data, 4), notes=notes,
                             deterministic=data.deterministic)


def ding_lemma6_constant(data: DingLemmaData) -> float:
    """Lemma 6's additive constant 2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L / (2N) (eq. 17), gamma = max_t gamma_t."""
    gamma = float(data.traces[0].step_sizes.max())
    return lemma6_constant(gamma, data.config.local_steps, data.G_sq, data.L, data.sigma_sq, data.participants)


def _window_losses(data: DingLemmaData) -> tuple[np.ndarray, np.ndarray]:
    """Per seed and (cycle, block) window: the mean of F_m over the window's communication models
    xbar_{(r+1)I} and over its every-step averages xbar_t, t = rI..rI+I-1; shapes (S, C M) each."""
    problem, I, E = data.problem, data.config.local_steps, data.config.rounds_per_block
    comm, steps = [], []
    for trace in data.traces:
        R = trace.global_models.shape[0] - 1
        blocks = trace.round_blocks
        ends = np.array([problem.block_objectives(w)[m] for w, m in zip(trace.global_models[1:], blocks)])  # (R,)
        every = np.array([problem.block_objectives(w)[trace.blocks[t]] for t, w in enumerate(trace.averages[:-1])])
        comm.append(ends.reshape(R // E, E).mean(axis=1))
        steps.append(every.reshape(R // E, E * I).mean(axis=1))
    return np.array(comm), np.array(steps)


def ding_lemma6(data: DingLemmaData, constant: float | None = None) -> Verdict:
    """Ding et al. (2020) Lemma 6 (eq. 17) per (cycle, block) window (module docstring) with the
    additive constant of eq. 17 (``constant=None``) or another value (a planted variant)."""
    paper = ding_lemma6_constant(data)
    c = paper if constant is None else float(constant)
    comm, steps = _window_losses(data)
    rhs = steps + c
    bound = rhs.mean(axis=0)
    gamma, L = float(data.traces[0].step_sizes.max()), data.L
    gap = (comm - steps).mean(axis=0)
    hypotheses = (
        Hypothesis("gamma <= 1/L (used in eq. 42)", gamma <= 1 / L * (1 + 1e-12), f"gamma = {gamma:.6g}, 1/L = {1 / L:.6g}"),
        Hypothesis("full participation: the N clients of each round are averaged (eq. 39)",
                   data.participants == data.problem.n_clients, f"{data.participants} of {data.problem.n_clients} per round"),
        *assumption_hypotheses(data, 3, 4),
    )
    claim_id = "ding2020.lemma6" if constant is None else f"ding2020.lemma6[constant={c:.6g}]"
    notes = (f"per (cycle, block) window: mean F_m over the {data.config.rounds_per_block} communication models against "
             f"the mean over the window's every-step averages + {c:.6g} (eq. 17's constant: {paper:.6g}); largest mean "
             f"gap (comm - every-step) {gap.max():.6g}, over all windows (eq. 17) {gap.mean():.6g}; paired over "
             f"{len(data.traces)} seed(s); {data.constants_note()}")
    x = np.arange(1, bound.size + 1, dtype=np.float64)
    verdict = check_upper_bound(claim_id, x, comm - rhs + bound, bound, hypotheses=hypotheses, notes=notes,
                                deterministic=data.deterministic)
    return verdict.with_evidence(constant=c)


def _round_losses(problem: BlockCyclicProblem, trace: BlockCyclicTrace) -> np.ndarray:
    """(1/K) sum_{i in S_r} F_m^i at x_bar, y_bar and u_bar of every round, shape (R, 3)."""
    M, N = problem.n_blocks, problem.n_clients
    out = np.empty((trace.selected_models.shape[0], 3))
    for r, (m, part) in enumerate(zip(trace.round_blocks, trace.participants)):
        models = (trace.global_models[r + 1], trace.separate_models[r], trace.selected_models[r])
        out[r] = [problem.combined.local_objectives(w).reshape(M, N)[m, part].mean() for w in models]
    return out


def ding_lemma8(data: DingLemmaData) -> Verdict:
    """Ding et al. (2020) Lemma 8 (eq. 56): per seed and round, the average local loss of the
    selected u_bar is <= min(that of x_bar, that of y_bar). MC-PSGD only. It holds by construction
    of the selection rule (``LEMMA8_BY_CONSTRUCTION``): the verdict is INCONCLUSIVE with
    ``cannot_fail`` set (a ``Ceiling`` at min(x_bar's, y_bar's) loss), never a PASS; the losses are
    evaluated independently of the run and reported."""
    if not data.mc:
        raise ValueError("ding2020.lemma8 concerns MC-PSGD's selection; the config is MM-PSGD")
    losses = np.stack([_round_losses(data.problem, trace) for trace in data.traces])  # (S, R, 3)
    best = losses[:, :, :2].min(axis=2)
    lhs = losses[:, :, 2]
    S, R = best.shape
    slack = LEMMA8_TOLERANCE * (1.0 + np.abs(best))
    worst = float(np.max(lhs - best))
    run_losses = np.stack([np.stack([trace.loss_x, trace.loss_y], axis=1) for trace in data.traces])
    agreement = float(np.max(np.abs(run_losses - losses[:, :, :2])))
    notes = (f"selected model's average local loss - min(x_bar, y_bar): worst difference {worst:.3g} over {S} seed(s) "
             f"x {R} rounds (must be <= {LEMMA8_TOLERANCE:g} (1 + |min|)); the run's own losses agree with this "
             f"evaluation to {agreement:.3g}; y_bar selected in {int(data.stack('chose_separate').sum())} rounds")
    x = np.tile(np.arange(1, R + 1, dtype=np.float64), S)
    return check_upper_bound("ding2020.lemma8", x, lhs.reshape(1, -1), (best + slack).reshape(-1), notes=notes,
                             deterministic=True,  # a per-realisation inequality: every (seed, round) is checked exactly
                             ceiling=Ceiling(best.reshape(-1), LEMMA8_BY_CONSTRUCTION))


def ding_lemma9(data: DingLemmaData) -> Verdict:
    """Ding et al. (2020) Lemma 9 (eq. 60), max_V F_m - min_V F_m <= 2 B^2 L^2 + 2 B^2 + 2 B^2 L for
    every block m. It cannot fail once B^2 covers x_m* (as the proofs need, eq. 36, 63): L-smoothness
    alone bounds the left side by 2 B^2 L (``lemma9_ceiling``), below the lemma's bound, so the
    verdict is INCONCLUSIVE with ``cannot_fail`` set, never a PASS; the tightness is reported."""
    B_sq, L, M = data.B_sq, data.L, data.problem.n_blocks
    lhs = data.block_values.max(axis=0) - data.block_values.min(axis=0)  # (M,)
    rhs = lemma9_constant(B_sq, L)
    hypotheses = (Hypothesis("Assumption 2: every F_m^i L-smooth", bool(np.isfinite(L)), f"L = {L:.6g} (problem_constants)"),)
    ceiling = lemma9_ceiling(B_sq, L)
    notes = (f"worst pair of V per block (the run's models, x* and every x_m*, which B^2 covers as eq. 36 and 63 need): "
             f"max_m (max F_m - min F_m) = {lhs.max():.6g} against {rhs:.6g} (the smoothness ceiling 2 B^2 L = "
             f"{float(ceiling.value):.6g}); {data.constants_note()}")
    return check_upper_bound("ding2020.lemma9", np.arange(1, M + 1, dtype=np.float64), lhs[None, :], np.full(M, rhs),
                             hypotheses=hypotheses, notes=notes,
                             deterministic=True,  # the worst pair of V, computed exactly
                             ceiling=ceiling)
