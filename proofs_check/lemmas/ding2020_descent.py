"""The descent steps of Ding et al. (2020)'s Theorems 1-2 on MM-PSGD / MC-PSGD trajectories: Lemmas 1, 4, 5 and 7.

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454
(``shared/papers/ding2020_block_cyclic.md``: Assumptions 1-5 l.62-87, Lemma 1 eq. 13 and its proof
eq. 21-29, Lemma 4 eq. 15 and its proof eq. 32-34, Lemma 5 eq. 16 and its proof eq. 35-37). Data and
notation as ``proofs_check.lemmas.ding2020`` (``DingLemmaData``: S seeds, T steps, N the clients
averaged per step, xbar_t the every-step average of the block-mixed chain, g_t = (1/N) sum_i g_t^i,
gbar_t = (1/N) sum_i grad F_m^i(x_t^i) as in the proof eq. 23, m = m(t), x* = argmin F, L = max L_m^i,
mu = min mu_m^i over the (block, client) objectives, B^2, sigma^2, G^2 over the ball of Assumption 5);
gamma_t is the step of step t (the paper's step is constant). Each expectation is a mean over seeds;
Lemmas 4 and 5 are checked paired (per seed LHS - RHS + mean_s RHS against mean_s RHS, as Lemma 6) by
``convergence.check_upper_bound`` (Student-t intervals, Holm over the points, family-wise error rate 5%;
exact with exact gradients and full participation); Lemma 1 per realisation (below).

* ding2020.lemma1 (Assumptions 1-2, eq. 13, the "regret of one iteration"), at every step t, with the
  distances moved to the left so that the right side holds only the error terms (>= 0):
  E[F_m(xbar_t)] - F_m(x*) + E[||xbar_{t+1} - x*||^2 - A_2 - ||xbar_t - x*||^2] / (2 gamma)
  <= (gamma/2) E||g_t - gbar_t||^2 + (L^2/(2 mu) + gamma L^2) (1/N) sum_i E||xbar_t - x_t^i||^2
  + gamma E||grad F_m(xbar_t)||^2, with eq. 21's A_2 = 2 gamma <xbar_t - gamma gbar_t - x*, gbar_t - g_t>.
  The proof drops A_2 because E[A_2] = 0 (the g_t^i are unbiased given the past); everything else in it
  (eq. 22-28) holds in every realisation, so the row checks that form exactly at every (seed, step),
  (1, S T) against (S T,), as Lemma 8's row does; eq. 13 follows by taking expectations. With A_2 kept,
  its noise (of order ||xbar_t - x*|| sigma / sqrt(N), well above the error terms) leaves a check of the
  means unable to resolve any constant on the lemma table's instance. The proof needs xbar_{t+1} = xbar_t - gamma g_t (eq. 21), true
  inside a round and across a round boundary when the N averaged clients are every client and the
  next round starts from their average (full participation, ``lemma1_steps`` checks it); (T,) points.
* ding2020.lemma4 (Assumptions 2-5, eq. 32 before Lemma 9 is applied, i.e. Yu et al. 2019b's bound on
  the window of K = E I steps t_c^m..t_c^m + K - 1 that cycle c spends on block m):
  (1/K) sum_t E||grad F_m(xbar_t)||^2 <= 2 E[F_m(xbar_{t_c^m}) - F_m(xbar_{t_c^m + K})] / (gamma K)
  + 4 gamma^2 I^2 G^2 L^2 + L gamma sigma^2 / N, per window (C M points). The second line of eq. 32
  (Lemma 9 on the loss drop) and eq. 33-34 follow from it and cannot fail where Lemma 9 cannot
  (``ding2020.lemma9``). Yu et al. (2019b, Theorem 1) need gamma <= 1/L, a hypothesis here.
* ding2020.lemma5 (eq. 35: eq. 29 summed over t <= T and divided by T, with Lemmas 2-3 substituted), at
  every prefix T' = 1..T (eq. 29 summed over t <= T' is the same argument; T' = T is the paper's):
  (1/T') sum_{t<T'} E[F_m(xbar_t) - F_m(x*)] + E||xbar_{T'} - x*||^2 / (2 gamma T') <= ||xbar_0 - x*||^2
  / (2 gamma T') + gamma sigma^2/(2N) + 2 gamma^2 I^2 G^2 L^2 / mu + 4 gamma^3 I^2 G^2 L^2
  + (gamma/T') sum_{t<T'} E||grad F_m(xbar_t)||^2. Eq. 36-37 then bound the distance by 2 B^2/(gamma T)
  and the gradient average by Lemma 4; the measured gradient average is used here, so the row checks
  the step the lemma adds (eq. 35), not Lemma 4 again. The 4 gamma^3 I^2 G^2 L^2 is eq. 35's, where
  (gamma L^2 / N) sum_i 4 gamma^2 I^2 G^2 gives 4 gamma^3 I^2 G^2 L^2 (the paper's exponent of I).

* ding2020.lemma7 (MC-PSGD; eq. 54, the explicit step of Lemma 7's proof): Lemma 6 (eq. 17) applied to
  each block's block-separate chain ybar with its step eta, per (cycle, block) window, paired as Lemma 6
  (``ding_lemma7``). Eq. 46 is Theorem 1 (ding2020.thm1) and eq. 47, 53 are O(.) statements citing Yu et
  al. 2019b without a constant, so no explicit form of them is checked here.

Planted variants (power self-test, ``proofs_check.claims.checks.lemmas``): each function takes a
``scale`` on its right-hand side (1 in the paper); ``lemma_verdicts.planted_factor`` gives the scale the
data prove false, as for Li's Lemma 1. Every right-hand side above is a sum of non-negative terms, so a
scale below 1 is a uniformly smaller constant. Lemma 7's additive constant is planted below the attained one
(``lemma_verdicts.attained_offset``), as Lemma 6's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence import Hypothesis, Verdict, check_upper_bound

from ..constants.ding2020 import lemma6_constant
from .ding2020 import DingLemmaData, assumption_hypotheses

__all__ = ["DescentTerms", "descent_terms", "ding_lemma1", "ding_lemma4", "ding_lemma5", "ding_lemma7", "lemma1_steps"]


@dataclass(frozen=True, eq=False)
class DescentTerms:
    """Per seed and step of the block-mixed chain, shapes (S, T): F_m(xbar_t) ``loss`` and
    F_m(xbar_{t+1}) ``next_loss`` (the same block m = m(t)), F_m(xbar_t) - F_m(x*) ``gap``,
    ||xbar_t - x*||^2 ``distance`` and ||xbar_{t+1} - x*||^2 ``next_distance``, ||g_t - gbar_t||^2
    ``noise``, (1/N) sum_i ||xbar_t - x_t^i||^2 ``drift``, ||grad F_m(xbar_t)||^2 ``gradient`` and eq. 21's
    A_2 = 2 gamma <xbar_t - gamma gbar_t - x*, gbar_t - g_t> ``a2`` (zero in expectation)."""

    loss: np.ndarray
    next_loss: np.ndarray
    gap: np.ndarray
    distance: np.ndarray
    next_distance: np.ndarray
    noise: np.ndarray
    drift: np.ndarray
    gradient: np.ndarray
    a2: np.ndarray


def descent_terms(data: DingLemmaData) -> DescentTerms:
    """The per-step terms of Lemmas 1, 4 and 5 on collected data (``DescentTerms``); grad F_m is the
    mean of the block's N client gradients (F_m = (1/N) sum_i F_m^i, eq. 3)."""
    problem, combined = data.problem, data.problem.combined
    M, N, d = problem.n_blocks, problem.n_clients, problem.dim
    averages = data.stack("averages")  # (S, T+1, d)
    S, T = averages.shape[0], averages.shape[1] - 1
    blocks = data.traces[0].blocks  # (T,)
    values = np.array([[problem.block_objectives(w) for w in seed] for seed in averages])  # (S, T+1, M)
    steps = np.arange(T)
    loss, next_loss = values[:, steps, blocks], values[:, steps + 1, blocks]
    gradient = np.empty((S, T))
    for s in range(S):
        for t in range(T):
            grad = combined.local_gradients(averages[s, t]).reshape(M, N, d)[blocks[t]].mean(axis=0)
            gradient[s, t] = float(grad @ grad)
    distance = np.sum((averages - data.optimum) ** 2, axis=2)  # (S, T+1)
    local = data.stack("local_models")[:, :T]  # (S, T, K, d)
    g, gbar = data.stack("stochastic_gradients").mean(axis=2), data.stack("local_gradients").mean(axis=2)  # (S, T, d)
    gamma = data.traces[0].step_sizes[None, :, None]
    a2 = 2 * gamma[..., 0] * np.sum((averages[:, :T] - gamma * gbar - data.optimum) * (gbar - g), axis=2)
    return DescentTerms(loss=loss, next_loss=next_loss,
                        gap=loss - problem.block_objectives(data.optimum)[blocks][None, :],
                        distance=distance[:, :T], next_distance=distance[:, 1:], noise=np.sum((g - gbar) ** 2, axis=2),
                        drift=np.sum((averages[:, :T, None] - local) ** 2, axis=3).mean(axis=2), gradient=gradient,
                        a2=a2)


def lemma1_steps(data: DingLemmaData) -> float:
    """max over seeds and steps of ||xbar_{t+1} - (xbar_t - gamma_t g_t)|| / (1 + ||xbar_t||): eq. 21's
    update of the every-step average, which Lemma 1's proof needs (0 up to rounding when it holds)."""
    averages = data.stack("averages")
    g = data.stack("stochastic_gradients").mean(axis=2)  # (S, T, d)
    gamma = data.traces[0].step_sizes[None, :, None]
    step = averages[:, 1:] - (averages[:, :-1] - gamma * g)
    return float(np.max(np.linalg.norm(step, axis=2) / (1.0 + np.linalg.norm(averages[:, :-1], axis=2))))


_UPDATE_TOLERANCE = 1e-9


def _hypotheses(data: DingLemmaData, *, convex: bool, update: bool) -> tuple[Hypothesis, ...]:
    out = []
    if convex:
        out.append(Hypothesis("Assumption 1: every F_m^i mu-strongly convex, mu > 0", data.mu > 0,
                              f"mu = min_m,i mu_m^i = {data.mu:.6g}"))
    out.append(Hypothesis("Assumption 2: every F_m^i L-smooth", bool(np.isfinite(data.L)), f"L = {data.L:.6g}"))
    if update:
        gap = lemma1_steps(data)
        out.append(Hypothesis("xbar_{t+1} = xbar_t - gamma g_t at every step (eq. 21)", gap <= _UPDATE_TOLERANCE,
                              f"largest relative residual {gap:.3g}"))
    return tuple(out)


def _paired(claim_id: str, x: np.ndarray, lhs: np.ndarray, rhs: np.ndarray, hypotheses: tuple[Hypothesis, ...],
            notes: str, data: DingLemmaData) -> Verdict:
    """check_upper_bound of per-seed LHS - RHS + mean_s RHS against mean_s RHS (module docstring)."""
    bound = rhs.mean(axis=0)
    return check_upper_bound(claim_id, x, lhs - rhs + bound, bound, hypotheses=hypotheses, notes=notes,
                             deterministic=data.deterministic)


def _claim_id(base: str, scale: float) -> str:
    return base if scale == 1.0 else f"{base}[scale={scale:.6g}]"


def ding_lemma1(data: DingLemmaData, scale: float = 1.0, terms: DescentTerms | None = None) -> Verdict:
    """Ding et al. (2020) Lemma 1 (eq. 13) at every step (module docstring), right-hand side times
    ``scale`` (1 in the paper; another value is a planted variant)."""
    terms = descent_terms(data) if terms is None else terms
    gamma = data.traces[0].step_sizes[None, :]
    L, mu = data.L, data.mu
    lhs = terms.gap + (terms.next_distance - terms.a2 - terms.distance) / (2 * gamma)
    rhs = scale * (gamma / 2 * terms.noise + (L**2 / (2 * mu) + gamma * L**2) * terms.drift + gamma * terms.gradient)
    S, T = lhs.shape
    notes = (f"per seed and step (eq. 21 + 28, before expectations): F_m(xbar_t) - F_m(x*) + (||xbar_(t+1) - x*||^2 - A_2 "
             f"- ||xbar_t - x*||^2)/(2 gamma) against (gamma/2)||g_t - gbar_t||^2 + (L^2/(2 mu) + gamma L^2) drift_t + "
             f"gamma ||grad F_m(xbar_t)||^2, scale {scale:.6g}, over {S} seed(s) x {T} steps; mean F_m(xbar_t) - F_m(x*) "
             f"from {terms.gap.mean(axis=0).min():.4g} to {terms.gap.mean(axis=0).max():.4g}; {data.constants_note()}")
    x = np.tile(data.x, S)
    return check_upper_bound(_claim_id("ding2020.lemma1", scale), x, lhs.reshape(1, -1), rhs.reshape(-1),
                             hypotheses=_hypotheses(data, convex=True, update=True), notes=notes,
                             deterministic=True)  # a per-realisation inequality: every (seed, step) is checked exactly


def ding_lemma4(data: DingLemmaData, scale: float = 1.0, terms: DescentTerms | None = None) -> Verdict:
    """Ding et al. (2020) Lemma 4 as eq. 32's first line, per (cycle, block) window of K = E I steps
    (module docstring), right-hand side times ``scale`` (1 in the paper; another value is planted)."""
    terms = descent_terms(data) if terms is None else terms
    E, I = data.config.rounds_per_block, data.config.local_steps
    K = E * I
    S, T = terms.gradient.shape
    W = T // K
    gamma = float(data.traces[0].step_sizes.max())
    L, N = data.L, data.participants
    windows = terms.gradient.reshape(S, W, K)
    lhs = windows.mean(axis=2)
    drop = terms.loss.reshape(S, W, K)[:, :, 0] - terms.next_loss.reshape(S, W, K)[:, :, -1]  # F_m(start) - F_m(end)
    constant = 4 * gamma**2 * I**2 * data.G_sq * L**2 + L * gamma * data.sigma_sq / N
    rhs = scale * (2 * drop / (gamma * K) + constant)
    hypotheses = (Hypothesis("gamma <= 1/L (Yu et al. 2019b, Theorem 1, invoked by eq. 32)", gamma <= (1 + 1e-12) / L,
                             f"gamma = {gamma:.6g}, 1/L = {1 / L:.6g}"),
                  *_hypotheses(data, convex=False, update=True), *assumption_hypotheses(data, 3, 4))
    notes = (f"per (cycle, block) window of K = {K} steps: mean ||grad F_m(xbar_t)||^2 against 2 (loss drop)/(gamma K) + "
             f"4 gamma^2 I^2 G^2 L^2 + L gamma sigma^2/N (constant part {constant:.6g}), scale {scale:.6g}; mean loss drop "
             f"per window from {drop.mean(axis=0).min():.4g} to {drop.mean(axis=0).max():.4g}; paired over "
             f"{len(data.traces)} seed(s); {data.constants_note()}")
    return _paired(_claim_id("ding2020.lemma4", scale), np.arange(1, W + 1, dtype=np.float64), lhs, rhs, hypotheses,
                   notes, data)


def ding_lemma5(data: DingLemmaData, scale: float = 1.0, terms: DescentTerms | None = None) -> Verdict:
    """Ding et al. (2020) Lemma 5 as eq. 35 at every prefix T' (module docstring), right-hand side
    times ``scale`` (1 in the paper; another value is a planted variant)."""
    terms = descent_terms(data) if terms is None else terms
    T = terms.gap.shape[1]
    prefix = np.arange(1, T + 1, dtype=np.float64)
    gamma = float(data.traces[0].step_sizes.max())
    I, L, mu, N, G_sq = data.config.local_steps, data.L, data.mu, data.participants, data.G_sq
    lhs = np.cumsum(terms.gap, axis=1) / prefix + terms.next_distance / (2 * gamma * prefix)
    constant = gamma * data.sigma_sq / (2 * N) + 2 * gamma**2 * I**2 * G_sq * L**2 / mu + 4 * gamma**3 * I**2 * G_sq * L**2
    rhs = scale * (terms.distance[:, :1] / (2 * gamma * prefix) + constant + gamma * np.cumsum(terms.gradient, axis=1) / prefix)
    hypotheses = (*_hypotheses(data, convex=True, update=True), *assumption_hypotheses(data, 3, 4))
    notes = (f"every prefix T' = 1..{T}: average gap to F_m(x*) + ||xbar_T' - x*||^2/(2 gamma T') against eq. 35's right "
             f"side (constant part {constant:.6g}), scale {scale:.6g}; at T' = T the mean average gap is "
             f"{terms.gap.mean(axis=0).mean():.4g}; paired over {len(data.traces)} seed(s); {data.constants_note()}")
    return _paired(_claim_id("ding2020.lemma5", scale), prefix, lhs, rhs, hypotheses, notes, data)


def _separate_window_losses(data: DingLemmaData) -> tuple[np.ndarray, np.ndarray]:
    """Per seed and (cycle, block) window of the block-separate chain of block m: the mean of F_m over the
    window's communication models ybar_{t_r} (``separate_models``) and over its every-step averages
    ybar_t = (1/N) sum_i y_t^i, t = rI..rI+I-1; shapes (S, C M) each (as Lemma 6's windows)."""
    problem, I, E = data.problem, data.config.local_steps, data.config.rounds_per_block
    comm, steps = [], []
    for trace in data.traces:
        R = trace.separate_models.shape[0]
        blocks = trace.round_blocks
        ends = np.array([problem.block_objectives(y)[m] for y, m in zip(trace.separate_models, blocks)])  # (R,)
        every = trace.separate_local_models[:-1].mean(axis=1)  # (T, d)
        values = np.array([problem.block_objectives(y)[trace.blocks[t]] for t, y in enumerate(every)])
        comm.append(ends.reshape(R // E, E).mean(axis=1))
        steps.append(values.reshape(R // E, E * I).mean(axis=1))
    return np.array(comm), np.array(steps)


def ding_lemma7(data: DingLemmaData, constant: float | None = None) -> Verdict:
    """Ding et al. (2020) Lemma 7's explicit step, eq. 54: Lemma 6 applied to the block-separate chain of
    each block m (step eta), per (cycle, block) window: the mean of F_m over the communication models
    ybar_{t_r} <= the mean over the every-step averages ybar_t + 2 eta^3 I^3 G^2 L^2 + eta^2 sigma^2 I L/(2N)
    (``constant=None``; another value is a planted variant). Eq. 46-47 and 53 are O(.) statements (eq. 46
    is Theorem 1, checked by ding2020.thm1; eq. 53 cites Yu et al. 2019b without a constant), so eq. 54
    is the part of the lemma with an explicit form. MC-PSGD only; paired over seeds as Lemma 6."""
    if not data.mc:
        raise ValueError("ding2020.lemma7 concerns MC-PSGD's block-separate chains; the config is MM-PSGD")
    eta = float(data.traces[0].block_step_sizes.max())
    paper = lemma6_constant(eta, data.config.local_steps, data.G_sq, data.L, data.sigma_sq, data.participants)
    c = paper if constant is None else float(constant)
    comm, steps = _separate_window_losses(data)
    rhs = steps + c
    L = data.L
    hypotheses = (
        Hypothesis("eta <= 1/L (Lemma 6's eq. 42, applied with the block-separate step)", eta <= (1 + 1e-12) / L,
                   f"eta = {eta:.6g}, 1/L = {1 / L:.6g}"),
        Hypothesis("full participation: the N clients of each round are averaged (eq. 39)",
                   data.participants == data.problem.n_clients, f"{data.participants} of {data.problem.n_clients} per round"),
        *assumption_hypotheses(data, 3, 4),
    )
    gap = (comm - steps).mean(axis=0)
    claim_id = "ding2020.lemma7" if constant is None else f"ding2020.lemma7[constant={c:.6g}]"
    notes = (f"eq. 54, block-separate chains, per (cycle, block) window: mean F_m over the {data.config.rounds_per_block} "
             f"communication models ybar against the mean over the window's every-step averages + {c:.6g} (eq. 17's "
             f"constant with eta: {paper:.6g}); largest mean gap {gap.max():.6g}; paired over {len(data.traces)} "
             f"seed(s); {data.constants_note()}")
    bound = rhs.mean(axis=0)
    verdict = check_upper_bound(claim_id, np.arange(1, bound.size + 1, dtype=np.float64), comm - rhs + bound, bound,
                                hypotheses=hypotheses, notes=notes, deterministic=data.deterministic)
    return verdict.with_evidence(constant=c)
