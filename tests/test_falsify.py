"""The falsifier finds and shrinks planted false claims, does not find violations of true ones
within a small budget, and its exact expectations agree with Monte-Carlo traced runs."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from convergence import FedAvgConfig, RunConfig, StepSize, run
from problems import exact_optimum, heterogeneity_gamma, random_quadratic
from proofs_check.falsifier.claims import FALSIFIABLE, FedAvgInstance
from proofs_check.falsifier.search import FalsifiableClaim, _RunningMedian, falsify, reproduce
from proofs_check.constants.minibatch_moments import gradient_variance
from proofs_check.constants.run_moments import exact_expectations

PLANTED = [claim_id for claim_id, claim in FALSIFIABLE.items() if claim.known_false]
TRUE = [claim_id for claim_id, claim in FALSIFIABLE.items() if not claim.known_false]


def test_registry() -> None:
    assert set(PLANTED) == {"li2020.lemma3[constant=0.01]", "planted.li2020.rate-T2"}
    assert {"li2020.lemma2", "li2020.lemma3", "yu2019.drift"} <= set(TRUE)


def test_exact_expectations_match_monte_carlo() -> None:
    # E over minibatches computed from the second-moment recursion against the mean of 1500
    # traced seeds (counter-based sampler) with its standard error: every point within 5 standard errors.
    problem = random_quadratic(3, 3, 0.3, 2.0, 1.5, 4, 1, "dirichlet")
    w_star = exact_optimum(problem, crosscheck=False).w_star
    config = FedAvgConfig(3, 3, StepSize.inverse_time(0.2, 0.1), 2, 1.0, (3,), (0,))
    exact = exact_expectations(problem, config, w_star)
    p = problem.weights
    samples: dict[str, list[np.ndarray]] = {"spread": [], "dist": [], "variance": [], "grad_sq": [], "gap": []}
    traced = run(RunConfig(problem.spec, config.with_seeds(tuple(range(1500)))), engine="numpy", trace=True)
    for trace in traced.extras.traces:
        local = trace.local_models[:-1]
        samples["spread"].append(np.einsum("k,tk->t", p, np.sum((local - trace.averages[:-1, None]) ** 2, axis=2)))
        samples["dist"].append(np.sum((trace.averages[:-1] - w_star) ** 2, axis=1))
        samples["variance"].append(gradient_variance(problem, local, 2))
        samples["grad_sq"].append(trace.full_gradient_sq)
        samples["gap"].append(np.array([problem.objective(w) for w in trace.global_models[1:]]) - problem.objective(w_star))
    for name, values in samples.items():
        values = np.asarray(values)
        mean, se = values.mean(axis=0), values.std(axis=0) / np.sqrt(values.shape[0])
        np.testing.assert_array_less(np.abs(mean - getattr(exact, name)), 5 * se + 1e-12, err_msg=name)
    # Gamma from the quadratic forms equals F* - sum_k p_k F_k* from the exact optima
    assert exact.Gamma == pytest.approx(heterogeneity_gamma(problem, exact_optimum(problem, crosscheck=False)), rel=1e-9)


@pytest.mark.parametrize("claim_id", PLANTED)
def test_planted_false_claims_are_found_and_shrunk(claim_id: str) -> None:
    claim = FALSIFIABLE[claim_id]
    result = falsify(claim, budget=30, seed=0)
    assert result.found and result.violation > 0, result.message
    stored = json.loads(json.dumps(result.counterexample))  # the counterexample is plain JSON
    assert reproduce(claim, stored) == pytest.approx(result.violation, rel=1e-12)
    instance = FedAvgInstance.from_json(stored["inputs"])
    params = instance.problem.spec.params
    assert params["n_clients"] == 2 and params["dim"] == 2  # shrunk to the smallest federated problem
    assert instance.config.batch_size <= 1 and instance.config.local_steps <= 2


@pytest.mark.parametrize("claim_id", TRUE)
def test_true_claims_are_not_found(claim_id: str) -> None:
    result = falsify(FALSIFIABLE[claim_id], budget=40, seed=1)
    assert not result.found and result.counterexample is None
    assert "no violation in 40 examples" in result.message


def test_user_claims() -> None:
    # the example of the module docstring: (a + b)^2 <= 2 a^2 + 2 b^2 holds
    def excess(pair: tuple[int, int]) -> float:
        a, b = pair
        return (a + b) ** 2 - 2 * a**2 - 2 * b**2

    pairs = st.tuples(st.integers(-9, 9), st.integers(-9, 9))
    assert not falsify(FalsifiableClaim("my.claim", "(a+b)^2 <= 2a^2 + 2b^2", pairs, excess), 100, 0).found
    # a false one, a^2 <= 10, shrinks to the smallest violating integer
    false = FalsifiableClaim("my.false", "a^2 <= 10", st.integers(-100, 100), lambda a: a * a - 10)
    result = falsify(false, budget=100, seed=3)
    assert result.found and result.counterexample["inputs"] in (4, -4) and result.violation == 6
    assert falsify(false, budget=100, seed=3).counterexample == result.counterexample  # deterministic


def test_bad_budget() -> None:
    with pytest.raises(ValueError, match="budget"):
        falsify(FALSIFIABLE["li2020.lemma3"], budget=0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        falsify(FALSIFIABLE["li2020.lemma3"], budget=1, seed=-1)


@given(st.lists(st.one_of(st.floats(max_value=0.0, allow_nan=False), st.sampled_from([0.0, -1.0])), min_size=1,
                max_size=80))
def test_the_searchs_running_median_is_statistics_median(scores: list[float]) -> None:
    """The targeted phase compares with the median of the scores seen after every example; kept in two
    heaps (O(log n) a score, so a search's cost is linear in its budget, as ``falsify_workload`` prices
    it), it is statistics.median's value at every prefix."""
    running = _RunningMedian()
    for i, score in enumerate(scores):
        running.add(score)
        assert running.median() == statistics.median(scores[: i + 1])
