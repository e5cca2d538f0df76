"""SCAFFOLD (Karimireddy et al., ICML 2020, Algorithm 1 with option II; ``convergence.algorithms.scaffold``).

What must hold, and where the expected values come from:

* the Numba kernel and the NumPy reference agree to 1e-12 (relative to the iterates' scale) on
  every problem family, every participation scheme, exact and minibatch gradients, server step
  1 and 0.7 (the kernel and the reference are two implementations of the same arithmetic);
* with the control variates held at 0 (``control_variates="zero"``) SCAFFOLD's code path is
  FedAvg's trajectory bit for bit, on both engines (the correction is the only change);
* the server control variate stays c = sum_k (p_k / lambda_k) c_k (the paper keeps c = (1/N) sum c_i;
  our weights are the objective's), to rounding;
* with exact gradients and a constant step, x = w*, c_k = grad F_k(w*) is a fixed point of a round
  for every E (substitute into the update: every direction grad F_k(w*) - c_k + c is 0), so on
  Li et al.'s Appendix C counterexample SCAFFOLD reaches w* to 1e-10 while FedAvg stops at its
  solved fixed point w~* (``convergence.fixed_point``, Li's eq. 32) at a distance > 1e-3 from w*,
  and the final c_k are the local gradients at w*.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from test_fedavg_kernel import small_problem

from convergence import ConfigError, RunConfig, StepSize, run
from convergence.algorithms import FedAvgConfig, algorithm_for
from convergence.algorithms.local_sgd import RoundPlan, local_sgd_seed
from convergence.algorithms.packing import pack_clients
from convergence.algorithms.participation import PARTICIPATION_SCHEMES, kernel_participation, local_step_scales
from convergence.algorithms.scaffold import ScaffoldConfig
from convergence.algorithms.scaffold.kernel import ScaffoldState
from convergence.fixed_point import fedavg_fixed_point
from convergence.run import run_seed as run_planned_seed
from problems import build_problem, exact_optimum, problem_spec
from reports.cli import main

FAMILIES = {
    "li_counterexample": lambda: build_problem(problem_spec("li_counterexample", N=4, p=3, mu=0.05)),
    "random_quadratic": lambda: build_problem(problem_spec("random_quadratic", n_clients=5, dim=6,
                                                           samples_per_client=9, seed=3)),
    "synthetic": lambda: build_problem(problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=5, n_features=5,
                                                    n_classes=3, seed=2)),
    "least_squares-mixed": lambda: small_problem("least_squares", "mixed", seed=1),
    "logistic-mixed": lambda: small_problem("logistic", "mixed", seed=1),
    "softmax-sparse": lambda: small_problem("softmax", "sparse", seed=1),
}
"""Every shipped linear family, and users' arrays with sparse clients (the kernel's dense packing)."""

SCHEMES = [(scheme, None if scheme == "full" else 2) for scheme in PARTICIPATION_SCHEMES]


@pytest.fixture(scope="module")
def problems():
    return {name: make() for name, make in FAMILIES.items()}


def seed_run(problem, config, engine):
    """One seed (the config's first) through SCAFFOLD's or FedAvg's engine: (records (P, d), diverged)."""
    engine_of = algorithm_for(config)
    w_star = np.full(problem.dim, 0.25)  # anchors the divergence test and the tracked radius only
    out = run_planned_seed(engine_of, problem, engine_of.plan(problem, config, True), config.seeds[0], w_star, engine)
    return out.records, np.array([out.max_radius_sq, out.max_grad_sq]), int(out.diverged)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("scheme,K", SCHEMES)
def test_kernel_agrees_with_reference(problems, family, scheme, K) -> None:
    problem = problems[family]
    for batch, server_lr in ((0, 1.0), (2, 0.7)):
        config = ScaffoldConfig(3, 6, StepSize.constant(0.05), batch, server_lr, (0, 2, 6), (5,),
                                participation=scheme, participants=K)
        kernel, kernel_stats, kernel_div = seed_run(problem, config, "numba")
        reference, reference_stats, reference_div = seed_run(problem, config, "numpy")
        assert kernel_div == reference_div == -1
        assert np.max(np.abs(kernel[-1] - kernel[0])) > 1e-3  # the run moved
        scale = max(1.0, float(np.max(np.abs(reference))))
        np.testing.assert_allclose(kernel, reference, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(kernel_stats, reference_stats, rtol=1e-12)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_zero_control_variates_are_fedavg_bit_for_bit(problems, family, engine) -> None:
    problem = problems[family]
    for scheme, K in SCHEMES:
        fedavg = FedAvgConfig(3, 5, StepSize.constant(0.05), 2, 0.8, (0, 1, 5), (3,), participation=scheme,
                              participants=K)
        scaffold = ScaffoldConfig(3, 5, StepSize.constant(0.05), 2, 0.8, (0, 1, 5), (3,), participation=scheme,
                                  participants=K, control_variates="zero")
        for a, b in zip(seed_run(problem, fedavg, engine), seed_run(problem, scaffold, engine)):
            np.testing.assert_array_equal(a, b)
        corrected = seed_run(problem, ScaffoldConfig(3, 5, StepSize.constant(0.05), 2, 0.8, (0, 1, 5), (3,),
                                                     participation=scheme, participants=K), engine)[0]
        if family != "synthetic" or scheme != "full":  # the correction changes the trajectory
            assert not np.array_equal(corrected[-1], seed_run(problem, fedavg, engine)[0][-1])


def test_cnn_scaffold_kernel_agrees_with_reference_and_zero_is_fedavg() -> None:
    """On a CNN (the digits net, float64 for the agreement): the kernel and the reference agree to
    1e-10 relative, and with the control variates at 0 each engine gives FedAvg's records bit for bit."""
    problem = build_problem(problem_spec("image_classification", n_clients=3, n_train=45, n_test=15, dtype="float64",
                                         recipe="dirichlet", alpha=0.5, min_size=5))
    for scheme, K in (("full", None), ("scheme_ii", 2)):
        config = ScaffoldConfig(2, 3, StepSize.constant(0.1), 3, 0.8, (0, 1, 3), (1,), participation=scheme,
                                participants=K)
        kernel = seed_run(problem, config, "numba")[0]
        reference = seed_run(problem, config, "numpy")[0]
        assert np.max(np.abs(kernel[-1] - kernel[0])) > 1e-3
        np.testing.assert_allclose(kernel, reference, rtol=0, atol=1e-10 * float(np.max(np.abs(reference))))
        fedavg = config.fedavg_config
        zero = dataclasses.replace(config, control_variates="zero")
        for engine in ("numba", "numpy"):
            np.testing.assert_array_equal(seed_run(problem, zero, engine)[0], seed_run(problem, fedavg, engine)[0])
            assert not np.array_equal(seed_run(problem, config, engine)[0][-1], seed_run(problem, fedavg, engine)[0][-1])


def kernel_state(problem, config, seed=0):
    """The control variates after a kernel run of ``config``: (records, ScaffoldState)."""
    state = ScaffoldState.zeros(problem.n_clients, problem.dim, config.control_variates)
    scheme = kernel_participation(config.participation, config.participants, problem)
    records, _, diverged = local_sgd_seed(problem, pack_clients(problem, dense=True), scheme,
                                          config.step_size.schedule, RoundPlan.of(config, seed),
                                          np.zeros(problem.dim), np.zeros(problem.dim), False, state)
    assert diverged == -1
    return records, state


@pytest.mark.parametrize("scheme,K", SCHEMES)
def test_server_control_is_the_weighted_mean_of_the_clients(problems, scheme, K) -> None:
    problem = problems["synthetic"]
    config = ScaffoldConfig(4, 7, StepSize.constant(0.05), 2, participation=scheme, participants=K, record_rounds=(7,))
    _, state = kernel_state(problem, config)
    shares = problem.weights / local_step_scales(scheme, problem.weights)
    assert np.max(np.abs(state.controls)) > 1e-3  # the clients' variates moved
    np.testing.assert_allclose(state.server, shares @ state.controls, rtol=0, atol=1e-13)


def test_scaffold_removes_the_client_drift_of_li_counterexample() -> None:
    """Li et al., App. C: E = 5 exact local steps with a constant step. FedAvg's limit is the
    solved fixed point w~* (eq. 32), not w*; SCAFFOLD's is w* with c_k = grad F_k(w*)."""
    problem = build_problem(problem_spec("li_counterexample", N=5, p=4, mu=0.05))
    w_star = exact_optimum(problem).w_star  # least squares: solved, cross-checked with cvxpy
    eta, E, rounds = 0.1, 5, 3000
    limit = fedavg_fixed_point(problem, eta, E)
    assert limit.converges and np.linalg.norm(limit.w - w_star) > 1e-3
    fedavg = run(RunConfig(problem.spec, FedAvgConfig(E, rounds, StepSize.constant(eta), record_rounds=(rounds,))))
    np.testing.assert_allclose(fedavg.iterates[-1, -1], limit.w, atol=1e-10)
    config = ScaffoldConfig(E, rounds, StepSize.constant(eta), record_rounds=(rounds,))
    for engine in ("numba", "numpy"):
        scaffold = run(RunConfig(problem.spec, config), engine=engine)
        assert np.linalg.norm(scaffold.iterates[-1, -1] - w_star) < 1e-10
    records, state = kernel_state(problem, config)
    np.testing.assert_allclose(state.controls, problem.local_gradients(w_star), atol=1e-9)
    np.testing.assert_allclose(state.server, 0.0, atol=1e-10)


def test_config_is_checked_and_named() -> None:
    with pytest.raises(ConfigError, match="control_variates"):
        ScaffoldConfig(2, 3, StepSize.constant(0.1), control_variates="option_i")
    with pytest.raises(ConfigError, match="participation"):
        ScaffoldConfig(2, 3, StepSize.constant(0.1), participation="sometimes", participants=2)
    with pytest.raises(ConfigError, match="participants"):
        run(RunConfig(problem_spec("li_counterexample", N=3, p=2, mu=0.1),
                      ScaffoldConfig(2, 3, StepSize.constant(0.1), participation="scheme_ii", participants=4)))
    config = ScaffoldConfig(2, 3, StepSize.constant(0.1), record_rounds=(3,))
    assert config.to_json()["algorithm"] == "scaffold"
    spec = problem_spec("li_counterexample", N=3, p=2, mu=0.1)
    assert RunConfig(spec, config).run_id != RunConfig(spec, config.fedavg_config).run_id


SCAFFOLD_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "scaffold_drift.toml"


def test_experiment_file_runs_scaffold_on_a_family_and_on_arrays(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``[algorithm] name = "scaffold"`` with ``server_lr`` and ``participation``: the shipped example
    PASSes (its control variates reach w*, FedAvg stops at w~*), and the same file on a user's
    arrays runs through the same path."""
    status = main(["run", str(SCAFFOLD_EXAMPLE), "--out", str(tmp_path / "family"), "--no-progress"])
    assert status == 0
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "data"))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * np.repeat(rng.uniform(0.2, 2.0, (4, 3)), 10, axis=0)  # heterogeneous clients
    np.savez(tmp_path / "data.npz", X=X, y=rng.normal(size=40), client_of_row=np.repeat(np.arange(4), 10))
    text = SCAFFOLD_EXAMPLE.read_text(encoding="utf-8").replace(
        'family = "li_counterexample"\nparams = {N = 5, p = 4, mu = 0.05}',
        'from_arrays = "data.npz"\nloss = "least_squares"\nl2 = 0.1')
    (tmp_path / "arrays.toml").write_text(text.replace("rounds = 600", "rounds = 200"), encoding="utf-8")
    status = main(["run", str(tmp_path / "arrays.toml"), "--out", str(tmp_path / "arrays"), "--no-progress"])
    verdicts = json.loads((tmp_path / "arrays" / "verdicts.json").read_text())
    assert [claim["status"] for claim in verdicts["claims"]] == ["PASS"] and status == 0
