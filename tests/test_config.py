"""Bad input gets one clear error naming the field (DESIGN.md contract)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convergence import ConfigError, DivergenceError, FedAvgConfig, RunConfig, ScheduleError, StepSize, run
from problems import FederatedProblem, ProblemError, li_counterexample, problem_spec


@pytest.mark.parametrize("eta", [0.0, -0.1, math.nan, math.inf])
def test_bad_step_size_names_eta0(eta: float) -> None:
    with pytest.raises(ScheduleError, match="eta0"):
        StepSize.constant(eta)


def test_unknown_schedule_names_kind() -> None:
    with pytest.raises(ScheduleError, match="kind"):
        StepSize("cosine", eta0=0.1)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"local_steps": 0}, "local_steps"),
        ({"rounds": 0}, "rounds"),
        ({"batch_size": -1}, "batch_size"),
        ({"server_lr": 0.0}, "server_lr"),
        ({"record_rounds": (3, 2)}, "record_rounds"),
        ({"record_rounds": (11,)}, "record_rounds"),
        ({"seeds": ()}, "seeds"),
        ({"seeds": (1, 1)}, "seeds"),
    ],
)
def test_bad_fedavg_config_names_field(kwargs: dict, field: str) -> None:
    base = {"local_steps": 2, "rounds": 10, "step_size": StepSize.constant(0.1)}
    with pytest.raises(ConfigError, match=field):
        FedAvgConfig(**{**base, **kwargs})


def _tiny(**overrides) -> dict:
    args = dict(name="t", loss="least_squares", X=np.eye(2), y=np.ones(2), offsets=[0, 1, 2], weights=[0.5, 0.5], mu=0.1)
    args.update(overrides)
    return args


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"weights": [0.5, 0.6]}, "weights"),
        ({"X": np.array([[1.0, np.nan], [0.0, 1.0]])}, "X"),
        ({"y": np.array([1.0, np.inf])}, "y"),
        ({"offsets": [0, 2, 2]}, "offsets"),
        ({"mu": -1.0}, "mu"),
        ({"loss": "logistic", "y": np.array([0.0, 2.0])}, "y"),
    ],
)
def test_bad_problem_names_field(overrides: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=field):
        FederatedProblem(**_tiny(**overrides))


def test_run_id_is_stable_and_sensitive() -> None:
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    a = RunConfig(spec, FedAvgConfig(5, 10, StepSize.constant(0.1)))
    b = RunConfig(dict(spec), FedAvgConfig(5, 10, StepSize.constant(0.1)))
    c = RunConfig(spec, FedAvgConfig(5, 10, StepSize.constant(0.1), seeds=(1,)))
    assert a.run_id == b.run_id != c.run_id


def test_divergence_names_round_and_seed() -> None:
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    # ||A_k|| is near 4, so eta = 0.9 > 2/L makes every client step expand: it must blow up.
    cfg = RunConfig(spec, FedAvgConfig(5, 2000, StepSize.constant(0.9), seeds=(3,)))
    with pytest.raises(DivergenceError, match=r"seed 3, round \d+ \(local steps \d+-\d+\)"):
        run(cfg, problem=li_counterexample(5, 4, 2e-4))
