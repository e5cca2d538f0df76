"""The exact optimum is optional: a problem without one runs with gap and distance "not available",
its divergence test and tracked radii anchored at w0; problems with one run exactly as before."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import (
    ConfigError, DivergenceError, FedAvgConfig, MetricUnavailable, RunConfig, RunRequest, StepSize, execute, run,
)
from convergence.algorithms.fedavg.engine import FEDAVG
from convergence.run import objective_optimum
from convergence.sweep import SweepOptions
from convergence.sweep_runs import seed_task
from problems import build_problem, exact_optimum, problem_spec

LINEAR = problem_spec("li_counterexample")
CNN = problem_spec("image_classification", n_clients=3, n_train=90, n_test=30, dtype="float64")


def _linear_plan(step: float, rounds: int = 4):
    problem = build_problem(LINEAR)
    config = FedAvgConfig(2, rounds, StepSize.constant(step), record_rounds=tuple(range(rounds + 1)))
    return problem, FEDAVG.plan(problem, config, track=True)


def test_store_keys_and_run_ids_of_problems_with_an_optimum_are_unchanged():
    # Pinned from main before the optimum became optional (li_counterexample, the config below).
    config = RunConfig(LINEAR, FedAvgConfig(2, 4, StepSize.constant(0.05), batch_size=0, seeds=(0, 3)))
    request = RunRequest(config, exact_optimum(build_problem(LINEAR), crosscheck=False))
    assert config.run_id == "2d1e98ff70f867db"
    assert [seed_task(request, seed, "numba").key for seed in (0, 3)] == ["6d570ad4e3fa8eca", "78fb10d372580e53"]


def test_a_task_without_an_optimum_records_none_for_w_star():
    config = RunConfig(CNN, FedAvgConfig(1, 1, StepSize.constant(0.1), batch_size=2))
    task = seed_task(RunRequest(config), 0, "numba")
    assert task.config_json["w_star_sha256"] is None and task.args[3] is None


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_without_w_star_records_are_the_same_and_radii_are_measured_from_w0(engine):
    problem, plan = _linear_plan(0.05)
    w_star = exact_optimum(problem, crosscheck=False).w_star
    anchored = FEDAVG.run_seed(problem, plan, 0, w_star, engine)
    free = FEDAVG.run_seed(problem, plan, 0, None, engine)
    np.testing.assert_array_equal(free.records, anchored.records)
    # w0 = 0: the radius is max ||w||^2 over every iterate, at least that of every global model
    assert float(free.max_radius_sq) >= np.max(np.sum(free.records**2, axis=1))
    assert float(free.max_radius_sq) != float(anchored.max_radius_sq)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_divergence_is_detected_without_w_star(engine):
    problem, plan = _linear_plan(1e6, rounds=30)
    seed_run = FEDAVG.run_seed(problem, plan, 0, None, engine)
    assert int(seed_run.diverged) >= 0
    # the same round as a reference scale of 1 from w0 = 0 predicts: the first ||w||^2 > 1e30 or non-finite
    finite = FEDAVG.run_seed(problem, FEDAVG.plan(problem, FedAvgConfig(2, int(seed_run.diverged), StepSize.constant(1e6),
                             record_rounds=(int(seed_run.diverged),)), False), 0, None, engine)
    assert np.sum(finite.records[-1] ** 2) <= 1e30


def test_objective_optimum_is_computed_for_a_federated_problem_and_none_for_a_cnn():
    linear, cnn = build_problem(LINEAR), build_problem(CNN)
    assert objective_optimum(linear).F_star == exact_optimum(linear, crosscheck=False).F_star
    assert objective_optimum(cnn) is None
    with pytest.raises(ConfigError, match="^optimum: .*no exact optimum"):
        objective_optimum(cnn, exact_optimum(linear, crosscheck=False))


def test_a_run_without_an_optimum_says_its_metrics_are_not_available():
    config = RunConfig(CNN, FedAvgConfig(1, 2, StepSize.constant(0.1), batch_size=2, seeds=(0, 1)))
    result = run(config)
    assert result.gap is None and result.dist_sq is None and not result.has_optimum
    assert result.iterates.shape == (2, 1, build_problem(CNN).dim)
    for name in ("gap", "dist_sq"):
        with pytest.raises(MetricUnavailable, match=f"^{name}: not available"):
            result.metric(name)
    with pytest.raises(ConfigError, match="^metric: "):
        result.metric("loss")
    assert "not available" in result._repr_html_()
    with pytest.raises(ConfigError, match="^optimum: "):
        run(config, optimum=exact_optimum(build_problem(LINEAR), crosscheck=False))


def test_a_linear_run_still_reports_gap_and_distance():
    config = RunConfig(LINEAR, FedAvgConfig(2, 3, StepSize.constant(0.05)))
    result = run(config)
    assert result.has_optimum
    np.testing.assert_array_equal(result.metric("gap"), result.gap)
    assert result.dist_sq.shape == (1, 1)


def test_execute_runs_a_problem_without_an_optimum():
    config = RunConfig(CNN, FedAvgConfig(1, 2, StepSize.constant(0.1), batch_size=2, seeds=(0, 1)))
    (swept,) = execute([RunRequest(config)], SweepOptions(jobs=1, progress=False))
    np.testing.assert_array_equal(swept.iterates, run(config).iterates)
    assert swept.gap is None


def test_divergence_error_without_an_optimum_says_what_was_measured():
    config = RunConfig(CNN, FedAvgConfig(1, 5, StepSize.constant(1e25), batch_size=2))
    with pytest.raises(DivergenceError, match=r"\|\|w - w0\|\|\^2 exceeded .*no exact optimum"):
        run(config)


def test_an_experiment_on_a_problem_without_an_optimum_is_refused_by_name(tmp_path):
    from proofs_check.experiments import Experiment, ExperimentError
    from reports.verify import run_experiment

    data = {
        "seeds": 1, "record_rounds": [2],
        "problem": {"family": "image_classification", "params": {"n_clients": 3, "n_train": 90, "n_test": 30}},
        "algorithm": {"name": "fedavg", "rounds": 2, "local_steps": 1, "batch_size": 2,
                      "step_size": {"kind": "constant", "eta0": 0.1}},
        "checks": [{"kind": "rate", "name": "rate", "x": "T", "exponent": -1.0, "tolerance": 0.2}],
    }
    experiment = Experiment.parse(data, base_dir=tmp_path, name="cnn")
    with pytest.raises(ExperimentError, match="^problem: .*no exact optimum"):
        run_experiment(experiment, tmp_path / "out", progress=False)
