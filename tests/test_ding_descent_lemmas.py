"""Ding et al. (2020) Lemmas 1, 4, 5 and 7 (``proofs_check.lemmas.ding2020_descent``): the terms along a
traced run recomputed by hand, Lemma 1's closed form with exact gradients and I = 1, the true lemmas
PASS and their planted variants (right-hand side scaled below what the data attain) FAIL.

Lemma 1 (``papers/ding2020_block_cyclic.md`` eq. 13, proof eq. 21-29), Lemma 4 (eq. 32), Lemma 5 (eq. 35),
Lemma 7's explicit step (eq. 54: Lemma 6 on the block-separate chains, step eta).
"""

from __future__ import annotations

import numpy as np
import pytest

from convergence import MCPSGDConfig, MMPSGDConfig, Status, StepSize
from proofs_check.claims.ding2020.theorem_runs import instance
from proofs_check.lemmas.ding2020 import DingLemmaData, collect_ding
from proofs_check.lemmas.ding2020_descent import (
    descent_terms,
    ding_lemma1,
    ding_lemma4,
    ding_lemma5,
    ding_lemma7,
    lemma1_steps,
)
from proofs_check.constants.ding2020 import lemma6_constant
from proofs_check.lemmas.verdicts import PLANTED_MARGIN, attained_offset, planted_factor

SMALL = instance(n_clients=3, n_blocks=2)
GAMMA = 0.05


def config(mc: bool = True, batch: int = 1, local_steps: int = 4, gamma: float = GAMMA,
           seeds: tuple[int, ...] = tuple(range(6))) -> MMPSGDConfig | MCPSGDConfig:
    """C = 2 cycles of M = 2 blocks, E = 3 rounds of I steps, constant step gamma (MC: eta = 0.08)."""
    common = dict(cycles=2, rounds_per_block=3, local_steps=local_steps, step_size=StepSize.constant(gamma),
                  batch_size=batch, seeds=seeds)
    return MCPSGDConfig(**common, block_step_size=StepSize.constant(0.08)) if mc else MMPSGDConfig(**common)


@pytest.fixture(scope="module")
def data() -> DingLemmaData:
    return collect_ding(SMALL, config())


@pytest.fixture(scope="module")
def exact() -> DingLemmaData:
    """MM-PSGD with exact gradients and I = 1: deterministic, no drift, A_2 = 0."""
    return collect_ding(SMALL, config(mc=False, batch=0, local_steps=1, seeds=(0,)))


def hessian(m: int) -> np.ndarray:
    """The Hessian of F_m = (1/N) sum_i (1/(2n)) ||X_mi w - y_mi||^2 + (mu/2) ||w||^2 (``block_cyclic_quadratic``)."""
    block = SMALL.block(m)
    parts = [X.T @ X / X.shape[0] for X, _ in (block.client_data(i) for i in range(block.n_clients))]
    return np.mean(parts, axis=0) + block.mu * np.eye(SMALL.dim)


def test_terms_by_hand(data: DingLemmaData) -> None:
    terms = descent_terms(data)
    trace = data.traces[2]
    for t in (0, 5, 17, trace.blocks.size - 1):
        m, x = trace.blocks[t], trace.averages[t]
        block = SMALL.block(m)
        assert terms.loss[2, t] == pytest.approx(block.objective(x), rel=1e-12)
        assert terms.gap[2, t] == pytest.approx(block.objective(x) - block.objective(data.optimum), rel=1e-10, abs=1e-12)
        assert terms.gradient[2, t] == pytest.approx(float(np.sum(block.gradient(x) ** 2)), rel=1e-10)
        assert terms.next_loss[2, t] == pytest.approx(block.objective(trace.averages[t + 1]), rel=1e-12)
        g, gbar = trace.stochastic_gradients[t].mean(axis=0), trace.local_gradients[t].mean(axis=0)
        assert terms.a2[2, t] == pytest.approx(2 * GAMMA * (x - GAMMA * gbar - data.optimum) @ (gbar - g), rel=1e-10)
        assert terms.drift[2, t] == pytest.approx(np.mean(np.sum((trace.local_models[t] - x) ** 2, axis=1)), rel=1e-12)
    assert lemma1_steps(data) < 1e-12  # eq. 21: xbar_{t+1} = xbar_t - gamma g_t along the run


def test_lemma1_closed_form(exact: DingLemmaData) -> None:
    """With exact gradients and I = 1 (gbar_t = grad F_m(xbar_t), no drift, no noise), eq. 13's left side
    (distances moved left) is -(1/2) d' H_m d + (gamma/2) ||grad F_m||^2 with d = xbar_t - x*, and its
    right side gamma ||grad F_m||^2 (F_m quadratic with Hessian H_m)."""
    verdict = ding_lemma1(exact)
    trace = exact.traces[0]
    lhs, rhs = [], []
    for t, m in enumerate(trace.blocks):
        x = trace.averages[t]
        d, grad = x - exact.optimum, SMALL.block(m).gradient(x)
        lhs.append(-0.5 * d @ hessian(m) @ d + GAMMA / 2 * grad @ grad)
        rhs.append(GAMMA * grad @ grad)
    np.testing.assert_allclose(verdict.evidence["mean"], lhs, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(verdict.evidence["bound"], rhs, rtol=1e-10)
    assert verdict.status is Status.PASS and verdict.measured == pytest.approx(max(np.array(lhs) / np.array(rhs)))


def test_lemma5_by_hand(exact: DingLemmaData) -> None:
    """Eq. 35 at T' = T on the deterministic run, from its terms written out."""
    verdict = ding_lemma5(exact)
    trace = exact.traces[0]
    T, I, L, mu, G_sq = trace.blocks.size, 1, exact.L, exact.mu, exact.G_sq
    blocks = [SMALL.block(m) for m in trace.blocks]
    gap = np.mean([b.objective(trace.averages[t]) - b.objective(exact.optimum) for t, b in enumerate(blocks)])
    grads = np.mean([np.sum(b.gradient(trace.averages[t]) ** 2) for t, b in enumerate(blocks)])
    def dist(w: np.ndarray) -> float:
        return float(np.sum((w - exact.optimum) ** 2))

    assert exact.sigma_sq == 0.0
    lhs = gap + dist(trace.averages[T]) / (2 * GAMMA * T)
    rhs = dist(trace.averages[0]) / (2 * GAMMA * T) + 2 * GAMMA**2 * I**2 * G_sq * L**2 / mu \
        + 4 * GAMMA**3 * I**2 * G_sq * L**2 + GAMMA * grads
    assert verdict.evidence["mean"][-1] == pytest.approx(lhs, rel=1e-10)
    assert verdict.evidence["bound"][-1] == pytest.approx(rhs, rel=1e-10)


def test_lemma4_windows_by_hand(data: DingLemmaData) -> None:
    """Window w (cycle, block m) holds the K = 12 steps 12w..12w+11 of block m."""
    verdict = ding_lemma4(data)
    K, S = 12, len(data.traces)
    mean_lhs, mean_rhs = np.zeros(4), np.zeros(4)
    constant = 4 * GAMMA**2 * 16 * data.G_sq * data.L**2 + data.L * GAMMA * data.sigma_sq / 3
    for trace in data.traces:
        for w in range(4):
            block = SMALL.block(w % 2)
            steps = range(K * w, K * w + K)
            mean_lhs[w] += np.mean([np.sum(block.gradient(trace.averages[t]) ** 2) for t in steps]) / S
            drop = block.objective(trace.averages[K * w]) - block.objective(trace.averages[K * w + K])
            mean_rhs[w] += (2 * drop / (GAMMA * K) + constant) / S
    np.testing.assert_allclose(verdict.evidence["bound"], mean_rhs, rtol=1e-10)
    np.testing.assert_allclose(verdict.evidence["mean"], mean_lhs, rtol=1e-8)


@pytest.mark.parametrize("lemma", [ding_lemma1, ding_lemma4, ding_lemma5])
def test_true_lemma_passes_and_planted_fails(data: DingLemmaData, lemma) -> None:
    true = lemma(data)
    assert true.status is Status.PASS and true.hypotheses_met and 0 < true.measured < 1
    scale = planted_factor(true)
    planted = lemma(data, scale=scale)
    assert planted.status is Status.FAIL and planted.claim_id.endswith(f"[scale={scale:.6g}]")


def test_lemma4_step_above_one_over_L_is_inconclusive() -> None:
    large = collect_ding(SMALL, config(gamma=1.2 / 3.0, seeds=(0, 1)))  # L is about 3: gamma > 1/L
    verdict = ding_lemma4(large)
    assert not verdict.hypotheses_met and verdict.status is not Status.PASS


def test_lemma7_windows_by_hand(data: DingLemmaData) -> None:
    """Window w (cycle, block m) holds rounds 3w..3w+2: block m's separate chain's ybar after each of them and
    its every-step averages (1/N) sum_i y_t^i for t = 4r..4r+3; constant eq. 17's with eta = 0.08."""
    verdict = ding_lemma7(data)
    c = lemma6_constant(0.08, 4, data.G_sq, data.L, data.sigma_sq, 3)
    comm, steps = np.zeros(4), np.zeros(4)
    S = len(data.traces)
    for trace in data.traces:
        for w in range(4):
            block = SMALL.block(w % 2)
            rounds = range(3 * w, 3 * w + 3)
            comm[w] += np.mean([block.objective(trace.separate_models[r]) for r in rounds]) / S
            steps[w] += np.mean([block.objective(trace.separate_local_models[t].mean(axis=0))
                                 for r in rounds for t in range(4 * r, 4 * r + 4)]) / S
    np.testing.assert_allclose(verdict.evidence["mean"], comm, rtol=1e-10)
    np.testing.assert_allclose(verdict.evidence["bound"], steps + c, rtol=1e-10)
    assert verdict.status is Status.PASS and verdict.hypotheses_met and verdict.evidence["constant"] == c
    planted = ding_lemma7(data, constant=attained_offset(verdict, PLANTED_MARGIN))
    assert planted.status is Status.FAIL and planted.claim_id.startswith("ding2020.lemma7[constant=")


def test_lemma7_needs_mc_psgd() -> None:
    with pytest.raises(ValueError, match="MC-PSGD"):
        ding_lemma7(collect_ding(SMALL, config(mc=False, seeds=(0, 1))))
