"""Ding et al. (2020) Lemma 6 (eq. 17) and the constants of Ding's Assumptions 3-5 in the lemma checks.

Lemma 6 (``papers/ding2020_block_cyclic.md`` l.245-249, proof eq. 38-43): the average of F_m over the
global models at the communication iterations is at most the average over the every-step averages
xbar_t plus 2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L / (2N); checked per (cycle, block) window.
"""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status, StepSize
from convergence import MCPSGDConfig, MMPSGDConfig
from proofs_check.claims.ding2020.theorem_runs import instance
from proofs_check.lemmas.ding2020 import DingLemmaData, collect_ding, ding_lemma6, ding_lemma6_constant
from proofs_check.lemmas.verdicts import PLANTED_MARGIN, attained_offset
from proofs_check.constants.minibatch_moments import gradient_variance

SMALL = instance(n_clients=3, n_blocks=2)


def config(mc: bool = True, gamma: float = 0.05, participants: int | None = None, batch: int = 1,
           seeds: tuple[int, ...] = tuple(range(8))) -> MMPSGDConfig | MCPSGDConfig:
    """C = 2 cycles of M = 2 blocks, E = 3 rounds of I = 4 steps, constant step gamma (MC: eta = 0.08)."""
    common = dict(cycles=2, rounds_per_block=3, local_steps=4, step_size=StepSize.constant(gamma), batch_size=batch,
                  participants=participants, seeds=seeds)
    return MCPSGDConfig(**common, block_step_size=StepSize.constant(0.08)) if mc else MMPSGDConfig(**common)


@pytest.fixture(scope="module")
def data() -> DingLemmaData:
    return collect_ding(SMALL, config())


def test_constant_is_eq17(data: DingLemmaData) -> None:
    gamma, I, L, N = 0.05, 4, data.L, SMALL.n_clients
    expected = 2 * gamma**3 * I**3 * data.G_sq * L**2 + gamma**2 * data.sigma_sq * I * L / (2 * N)
    assert ding_lemma6_constant(data) == pytest.approx(expected, rel=1e-12)


def test_windows_by_hand(data: DingLemmaData) -> None:
    """Window w = (cycle, block m) holds rounds r = 3w..3w+2; its communication models are xbar after
    each of them (global_models[r + 1]) and its every-step averages xbar_t for t = 4r..4r+3."""
    verdict = ding_lemma6(data)
    c = ding_lemma6_constant(data)
    comm, steps = np.zeros((8, 4)), np.zeros((8, 4))
    for s, trace in enumerate(data.traces):
        for w in range(4):
            m = w % 2
            rounds = range(3 * w, 3 * w + 3)
            comm[s, w] = np.mean([SMALL.block_objectives(trace.global_models[r + 1])[m] for r in rounds])
            steps[s, w] = np.mean([SMALL.block_objectives(trace.averages[t])[m] for r in rounds for t in range(4 * r, 4 * r + 4)])
    np.testing.assert_allclose(verdict.evidence["mean"], comm.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(verdict.evidence["bound"], steps.mean(axis=0) + c, rtol=1e-12)
    assert verdict.evidence["constant"] == c


def test_true_lemma_passes_and_planted_constant_fails(data: DingLemmaData) -> None:
    verdict = ding_lemma6(data)
    assert verdict.status is Status.PASS and verdict.hypotheses_met, verdict.notes
    assert verdict.claim_id == "ding2020.lemma6" and 0 < verdict.measured < 1
    planted_constant = attained_offset(verdict, PLANTED_MARGIN)
    assert planted_constant < ding_lemma6_constant(data)
    planted = ding_lemma6(data, constant=planted_constant)
    assert planted.status is Status.FAIL and planted.claim_id == f"ding2020.lemma6[constant={planted_constant:.6g}]"
    # a constant above what the data prove too small is not refuted
    assert ding_lemma6(data, constant=planted_constant + 2 * abs(planted_constant) + 1e-3).status is not Status.FAIL


def test_unmet_hypotheses_give_inconclusive() -> None:
    too_large = collect_ding(SMALL, config(gamma=1.2 / 3.0, seeds=(0, 1)))  # L is about 3: gamma > 1/L
    assert too_large.L * 0.4 > 1
    verdict = ding_lemma6(too_large)
    assert not verdict.hypotheses_met and verdict.status is Status.INCONCLUSIVE
    partial = ding_lemma6(collect_ding(SMALL, config(mc=False, participants=2, seeds=(0, 1))))
    assert not partial.hypotheses_met and partial.status is Status.INCONCLUSIVE


def test_assumption_constants_are_sups_over_the_ball_of_assumption5(data: DingLemmaData) -> None:
    """sigma^2 and G^2 are sups over ||x|| <= B of every (block, client) objective's minibatch moments
    (Assumptions 3-4 hold for all x): exact for least squares, so no point of the ball exceeds them and the
    maximiser attains them; B^2 covers every model of the run, x* and each x_m* (Assumption 5)."""
    B = np.sqrt(data.B_sq)
    norms = [np.max(np.sum(trace.local_models**2, axis=2)) for trace in data.traces]
    assert data.B_sq >= max(max(norms), float(data.optimum @ data.optimum), float(np.max(np.sum(data.block_optima**2, axis=1))))
    assert data.sigma.exact and data.G.exact
    assert data.G.attained == pytest.approx(data.G_sq, rel=1e-9)
    rng = np.random.default_rng(0)
    combined = SMALL.combined
    for _ in range(64):
        z = rng.normal(size=SMALL.dim)
        x = z / np.linalg.norm(z) * B * rng.random() ** (1 / SMALL.dim)
        variance = gradient_variance(combined, x, 1)
        assert np.all(variance <= data.sigma_sq * (1 + 1e-9))
        assert np.max(np.sum(combined.local_gradients(x) ** 2, axis=1) + variance) <= data.G_sq * (1 + 1e-9)
