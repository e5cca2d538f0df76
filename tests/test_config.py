"""Bad input gets one clear error naming the field (DESIGN.md contract)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convergence import ConfigError, DivergenceError, FedAvgConfig, RunConfig, ScheduleError, StepSize, run
from problems import FederatedProblem, ProblemError, ProblemSpec, li_counterexample, problem_spec


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
    b = RunConfig(ProblemSpec.from_json(spec.to_json()), FedAvgConfig(5, 10, StepSize.constant(0.1)))
    c = RunConfig(spec, FedAvgConfig(5, 10, StepSize.constant(0.1), seeds=(1,)))
    assert a.run_id == b.run_id != c.run_id


def test_divergence_names_round_and_seed() -> None:
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    # ||A_k|| is near 4, so eta = 0.9 > 2/L makes every client step expand: it must blow up.
    cfg = RunConfig(spec, FedAvgConfig(5, 2000, StepSize.constant(0.9), seeds=(3,)))
    with pytest.raises(DivergenceError, match=r"seed 3, round \d+ \(local steps \d+-\d+\)"):
        run(cfg, problem=li_counterexample(5, 4, 2e-4))


@pytest.mark.parametrize("value", [1.5, 2.0, "2", True, None])
@pytest.mark.parametrize("field", ["local_steps", "rounds", "batch_size"])
def test_fedavg_integer_fields_take_integers_only(field: str, value: object) -> None:
    base = {"local_steps": 2, "rounds": 10, "step_size": StepSize.constant(0.1)}
    with pytest.raises(ConfigError, match=f"^{field}"):
        FedAvgConfig(**{**base, field: value})


@pytest.mark.parametrize("seeds", [(1.5,), ("2",), (True,), (2**63,), (-1,), 3, "12"])
def test_seeds_are_integers_in_the_sampler_range(seeds: object) -> None:
    with pytest.raises(ConfigError, match="^seeds"):
        FedAvgConfig(2, 10, StepSize.constant(0.1), seeds=seeds)


def test_accepted_integers_round_trip() -> None:
    cfg = FedAvgConfig(np.int64(2), 10, StepSize.constant(0.1), 3, record_rounds=[0, 5], seeds=[np.uint8(7), 2**63 - 1])
    assert (cfg.local_steps, cfg.batch_size, cfg.record_rounds, cfg.seeds) == (2, 3, (0, 5), (7, 2**63 - 1))
    assert type(cfg.local_steps) is int and all(type(s) is int for s in cfg.seeds)


@pytest.mark.parametrize(
    "make,field",
    [
        (lambda: StepSize.li(mu=0, L=1.0, local_steps=2), "step_size.mu"),
        (lambda: StepSize.li(mu=0.1, L=math.nan, local_steps=2), "step_size.L"),
        (lambda: StepSize.li(mu=0.1, L=1.0, local_steps=1.5), "step_size.local_steps"),
        (lambda: StepSize.constant("0.1"), "step_size.eta0"),
        (lambda: StepSize.constant(True), "step_size.eta0"),
        (lambda: StepSize.inverse_time(0.1, None), "step_size.decay"),
        (lambda: StepSize.per_round([0.1]), "step_size.eta0"),
    ],
)
def test_step_size_constructors_name_the_field(make, field: str) -> None:
    with pytest.raises(ScheduleError, match=f"^{field}"):
        make()


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"mu": "0.1"}, "mu"),
        ({"weights": ["a", "b"]}, "weights"),
        ({"weights": [0.5, [0.5]]}, "weights"),
        ({"X": np.zeros((2, 0))}, "X"),
        ({"offsets": [0.0, 1.0, 2.0]}, "offsets"),
        ({"n_classes": 2.5}, "n_classes"),
        ({"loss": "hinge"}, "loss"),
    ],
)
def test_problem_fields_are_named(overrides: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=f"^{field}"):
        FederatedProblem(**_tiny(**overrides))


def test_run_refuses_a_problem_or_optimum_of_another_spec() -> None:
    from problems import exact_optimum

    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    cfg = RunConfig(spec, FedAvgConfig(5, 2, StepSize.constant(0.01)))
    other = li_counterexample(6, 4, 2e-4)
    with pytest.raises(ProblemError, match="^problem:"):
        run(cfg, problem=other)
    forged = FederatedProblem(**{**_tiny(), "spec": spec})
    with pytest.raises(ProblemError, match="^problem:"):
        run(cfg, problem=forged)
    with pytest.raises(ProblemError, match="^optimum:"):
        run(cfg, optimum=exact_optimum(other, crosscheck=False))
    same = li_counterexample(5, 4, 2e-4)
    assert run(cfg, problem=same, optimum=exact_optimum(same, crosscheck=False)).gap.shape == (1, 1)


def test_divergence_message_states_the_rule() -> None:
    error = DivergenceError("abc", 3, 4, 5)
    assert "||w - w*||^2 exceeded 1e+30 (1 + ||w0 - w*||^2)" in str(error)
