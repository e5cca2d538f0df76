"""The public Hypothesis strategies draw valid, small, rebuildable problems and configurations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convergence import FedAvgConfig
from problems import FederatedProblem, LossKind, problem_constants
from proofs_check.falsifier.strategies import (
    block_cyclic_problems,
    build_drawn_problem,
    fedavg_configs,
    logistic_problems,
    quadratic_problems,
    softmax_problems,
)

ANY_PROBLEM = st.one_of(quadratic_problems(), quadratic_problems(identical_data=True), logistic_problems(),
                        softmax_problems())


@settings(max_examples=30, deadline=None)
@given(ANY_PROBLEM)
def test_problems_are_small_and_rebuild_from_their_spec(problem: FederatedProblem) -> None:
    assert problem.n_clients <= 4 and problem.dim <= 9 and problem.X.shape[0] <= 40
    assert problem.mu > 0
    rebuilt = build_drawn_problem(json.loads(json.dumps(problem.spec.to_json())))
    np.testing.assert_array_equal(rebuilt.X, problem.X)
    np.testing.assert_array_equal(rebuilt.y, problem.y)
    np.testing.assert_array_equal(rebuilt.weights, problem.weights)
    assert rebuilt.mu == problem.mu and rebuilt.loss is problem.loss


@settings(max_examples=30, deadline=None)
@given(quadratic_problems(mu_range=(0.2, 0.5), L_range=(1.0, 3.0)))
def test_quadratic_constants_lie_in_their_ranges(problem: FederatedProblem) -> None:
    consts = problem_constants(problem)
    assert problem.loss is LossKind.LEAST_SQUARES
    assert 0.2 <= consts.mu <= 0.5 + 1e-12 and 1.0 - 1e-12 <= consts.L <= 3.0 + 1e-12 and consts.L > consts.mu


@settings(max_examples=20, deadline=None)
@given(quadratic_problems(n_clients=(2, 4), identical_data=True))
def test_identical_data_clients(problem: FederatedProblem) -> None:
    first = problem.client_data(0)
    for k in range(1, problem.n_clients):
        np.testing.assert_array_equal(problem.client_data(k)[0], first[0])
    np.testing.assert_allclose(problem.weights, 1 / problem.n_clients)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from([0.25, 1.0]))
def test_configs_respect_the_step_size_range(data: st.DataObject, max_eta_L: float) -> None:
    problem = data.draw(ANY_PROBLEM)
    config = data.draw(fedavg_configs(problem, max_eta_L=max_eta_L))
    assert isinstance(config, FedAvgConfig)
    consts = problem_constants(problem)
    E = config.local_steps
    eta = config.step_size.at(np.arange(config.total_steps + E), E)
    assert eta[0] <= max_eta_L / consts.L * (1 + 1e-12)
    assert np.all(np.diff(eta) <= 0)  # non-increasing
    assert np.all(eta[:-E] <= 2 * eta[E:] * (1 + 1e-12))  # Li et al. Lemma 3: eta_t <= 2 eta_{t+E}
    assert 1 <= E <= 4 and 1 <= config.rounds <= 6 and 0 <= config.batch_size <= 4
    assert config.server_lr == 1.0 and 1 <= len(config.seeds) <= 3


def test_bad_ranges_name_the_argument() -> None:
    with pytest.raises(ValueError, match="L_range"):
        quadratic_problems(mu_range=(0.5, 2.0), L_range=(1.0, 1.5))
    problem = build_drawn_problem({"family": "random_quadratic", "params": {"n_clients": 2, "dim": 2,
                                                                              "samples_per_client": 2}})
    with pytest.raises(ValueError, match="schedules"):
        fedavg_configs(problem, schedules=("cosine",))
    with pytest.raises(ValueError, match="schedules"):
        fedavg_configs(problem, schedules=("li",), max_eta_L=0.1)
    with pytest.raises(ValueError, match="local_steps"):  # when the strategy is built, not at its first draw
        fedavg_configs(problem, local_steps=(0, 2))
    with pytest.raises(ValueError, match="batch_sizes"):
        fedavg_configs(problem, batch_sizes=(3, 1))


@settings(max_examples=15, deadline=None)
@given(block_cyclic_problems())
def test_block_cyclic_problems_have_exact_block_optima(problem) -> None:
    # x_m* minimises F_m: the gradient of the block objective vanishes there, and the global
    # optimum x* is no better than x_m* on block m (F_m(x*) >= F_m(x_m*)).
    from problems import exact_optimum

    x_star = exact_optimum(problem.combined, crosscheck=False).w_star
    for m in range(problem.n_blocks):
        block = problem.block(m)
        opt = exact_optimum(block, crosscheck=False)
        assert np.linalg.norm(block.gradient(opt.w_star)) <= 1e-8 * max(1.0, np.linalg.norm(opt.w_star))
        assert block.objective(x_star) >= opt.F_star - 1e-12 * max(1.0, abs(opt.F_star))
