"""Li et al. (ICLR 2020) Lemmas 4-5 (``proofs_check.lemmas.sampling``) and the proof steps that carry E in
li2020.thm2 / thm3 (``claims.li2020.sampling_steps``): closed forms of the sampling schemes by enumeration,
the lemma rows PASS on the traced runs and their planted variants FAIL. The claims' E > 1 sub-checks and
their planted variants run in ``test_li2020_partial`` (one store with the claims' other runs)."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

import problems
from convergence import FedAvgConfig, Status, StepSize
from convergence.algorithms.participation import RoundSample, aggregation_np
from proofs_check.claims.li2020.sampling_steps import STEP_INSTANCE, STEP_LOCAL_STEPS, STEP_PARTICIPANTS, step_config
from proofs_check.lemmas import (
    BIAS_TOLERANCE, collect_sampling, li_lemma3, li_lemma4, li_lemma5, sample_deviations,
)

N, K, D = 5, 2, 3


def _models() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal((N, D)), rng.standard_normal(D)


def _subsets(scheme: str, weights: np.ndarray) -> tuple[list[RoundSample], np.ndarray]:
    """Every sample of a round with its probability: the C(N, K) subsets (uniform, without replacement) or,
    for Scheme I, the multisets of K draws by p_k (multinomial probabilities)."""
    if scheme == "scheme_i":
        counts = [np.bincount(c, minlength=N) for c in itertools.combinations_with_replacement(range(N), K)]
        prob = [factorial(K) / np.prod([factorial(int(c)) for c in cnt]) * np.prod(weights**cnt) for cnt in counts]
    else:
        counts = [np.bincount(c, minlength=N) for c in itertools.combinations(range(N), K)]
        prob = [1.0 / comb(N, K)] * len(counts)
    samples = [RoundSample(c.astype(np.int64), *aggregation_np(scheme, c, weights, K)) for c in counts]
    return samples, np.asarray(prob)


@pytest.mark.parametrize("scheme", ["scheme_i", "scheme_ii"])
def test_lemmas_4_5_closed_forms_by_enumeration(scheme: str) -> None:
    """Exact expectations over every sample of a round (N = 5, K = 2, balanced p): E_S wbar = vbar (Lemma 4), and
    E_S ||wbar - vbar||^2 = (1/K) sum_k p_k ||v^k - vbar||^2 for Scheme I (eq. 26) and (N-K)/(N-1) (1/K) (1/N)
    sum_k ||v^k - vbar||^2 for Scheme II (proof of Lemma 5 (2), App. B.4): the factor (N-K)/(N-1) = 3/4 of C."""
    v, W = _models()
    p = np.full(N, 1.0 / N)
    samples, prob = _subsets(scheme, p)
    assert prob.sum() == pytest.approx(1.0, abs=1e-14)
    deviations = sample_deviations(v, W, p, samples)
    np.testing.assert_allclose(prob @ deviations, 0.0, atol=1e-14)
    spread = p @ np.sum((v - p @ v) ** 2, axis=1)
    factor = 1.0 if scheme == "scheme_i" else (N - K) / (N - 1)
    assert prob @ np.sum(deviations**2, axis=1) == pytest.approx(factor * spread / K, rel=1e-12)


def test_original_scheme_bias_by_enumeration() -> None:
    """McMahan's original scheme keeps (1 - K/N) of the broadcast model: E_S wbar - vbar = (1 - K/N)(W - vbar)
    on balanced data (``participation``'s docstring), so Lemma 4 fails for it."""
    v, W = _models()
    p = np.full(N, 1.0 / N)
    samples, prob = _subsets("original", p)
    np.testing.assert_allclose(prob @ sample_deviations(v, W, p, samples), (1 - K / N) * (W - p @ v), atol=1e-14)


@pytest.fixture(scope="module")
def traced():
    """The lemma table's traced runs (N = 20, K = 10, E = 10, 16 seeds) of Schemes I, II and the original."""
    problem = problems.build_problem(STEP_INSTANCE)
    return {scheme: collect_sampling(problem, step_config(scheme, STEP_LOCAL_STEPS)) for scheme in
            ("scheme_i", "scheme_ii", "original")}


@pytest.mark.parametrize("scheme", ["scheme_i", "scheme_ii"])
def test_lemma_rows_pass_and_planted_variants_fail(traced, scheme: str) -> None:
    data = traced[scheme]
    unbiased = li_lemma4(data)
    assert unbiased.status is Status.PASS, unbiased.notes
    assert abs(unbiased.evidence["relative_bias"]["mean U"]) < BIAS_TOLERANCE**2
    variance = li_lemma5(data)
    assert variance.status is Status.PASS and variance.hypotheses_met, variance.notes
    assert 0.1 < variance.measured < 0.25  # the instance makes Lemma 5 bite: 1/K^2 and E for E^2 must fail
    for factor in (1.0 / STEP_PARTICIPANTS, 1.0 / STEP_LOCAL_STEPS):  # 1/K -> 1/K^2; C's E^2 -> E (K = E = 10)
        planted = li_lemma5(data, factor=factor)
        assert planted.status is Status.FAIL and planted.claim_id == "li2020.lemma5[factor=0.1]", planted.notes
    assert li_lemma3(data.lemma).status is Status.PASS  # B's drift term holds under sampling (App. B)
    assert li_lemma3(data.lemma, constant=0.0).status is Status.FAIL  # and is needed: the drift is positive


def test_original_scheme_fails_lemma_4_at_its_bias(traced) -> None:
    """The U-statistic estimates the squared bias share exactly (1 - K/N)^2 = 1/4 for the original scheme."""
    data = traced["original"]
    U = data.bias_sq.sum(axis=1) / data.update_sq.sum(axis=1)
    assert abs(U.mean() - 0.25) < 4 * U.std(ddof=1) / np.sqrt(U.size)
    verdict = li_lemma4(data)
    assert verdict.status is Status.FAIL and verdict.p_fail < 1e-6
    with pytest.raises(ValueError, match="^scheme: expected one of scheme_i, scheme_ii"):
        li_lemma5(data)


@pytest.mark.parametrize("change, field", [({"batch_size": 1}, "batch_size"), ({"participation": "full"},
                                                                                 "participation")])
def test_collect_sampling_names_bad_input(change: dict, field: str) -> None:
    problem = problems.build_problem(STEP_INSTANCE)
    base = dict(local_steps=2, rounds=2, step_size=StepSize.constant(0.01), batch_size=0, seeds=(0, 1),
                participation="scheme_i", participants=2)
    base.update(change)
    if base["participation"] == "full":
        base["participants"] = None
    with pytest.raises(ValueError, match=f"^{field}: "):
        collect_sampling(problem, FedAvgConfig(**base))
