"""FedAvg on a CNN problem: kernel against reference, float32 against float64, determinism across
executors, a hand-checkable step, divergence without w*, bad fields, an algorithm state's hooks."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from convergence import (
    ConfigError, FedAvgConfig, FedProxConfig, MMPSGDConfig, RunConfig, RunRequest, StepSize, execute, run,
)
from convergence._rng import sample_indices_np
from convergence.algorithms.fedavg.engine import FEDAVG
from convergence.store import RunStore
from convergence.sweep import SweepOptions
from convergence.sweep_runs import seed_task
from problems import ProblemError, build_problem, problem_spec
from problems.models import digits_net


def _spec(dtype: str = "float64", **params):
    return problem_spec("image_classification", n_clients=4, n_train=200, n_test=40, dtype=dtype, **params)


UNBALANCED = dict(recipe="dirichlet", alpha=0.5, min_size=10)  # p_k unequal: the schemes differ


def _config(**fields):
    return FedAvgConfig(**{"local_steps": 3, "rounds": 4, "step_size": StepSize.constant(0.1), "batch_size": 4,
                           "record_rounds": (0, 1, 2, 3, 4), "seeds": (0, 1), **fields})


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("fields", [
    {},
    {"batch_size": 0},
    {"server_lr": 0.5},
    {"participation": "scheme_i", "participants": 3},
    {"participation": "scheme_ii", "participants": 2},
    {"participation": "transformed_scheme_ii", "participants": 2},
    {"participation": "original", "participants": 2},
], ids=["full", "exact", "server_lr", "scheme_i", "scheme_ii", "transformed_ii", "original"])
def test_kernel_and_reference_agree_in_float64(fields):
    config = RunConfig(_spec(**UNBALANCED), _config(**fields))
    kernel, reference = run(config, track=True), run(config, engine="numpy", track=True)
    assert _relative(kernel.iterates, reference.iterates) <= 1e-10
    np.testing.assert_allclose(kernel.extras.max_radius_sq, reference.extras.max_radius_sq, rtol=1e-10)
    np.testing.assert_allclose(kernel.extras.max_grad_sq, reference.extras.max_grad_sq, rtol=1e-10)
    assert np.all(kernel.extras.max_radius_sq > 0) and np.all(kernel.extras.max_grad_sq > 0)


def test_the_schemes_give_different_trajectories():
    finals = [run(RunConfig(_spec(**UNBALANCED), _config(participation=scheme, participants=2))).iterates[:, -1]
              for scheme in ("scheme_ii", "transformed_scheme_ii", "original")]
    assert not np.array_equal(finals[0], finals[1]) and not np.array_equal(finals[0], finals[2])


def test_float32_agrees_with_float64_and_its_reference():
    """The float32 path (the default) stays within 1e-5 relative (max norm) of float64 over 4 rounds
    of 3 steps (measured: ~2e-7; the initialisation alone differs by float32 rounding, ~4e-8), and
    its kernel within 1e-5 of its NumPy reference (measured ~1e-7: direct loops against im2col)."""
    single = RunConfig(_spec("float32"), _config())
    double = RunConfig(_spec("float64"), _config())
    kernel32, reference32, kernel64 = run(single), run(single, engine="numpy"), run(double)
    assert kernel32.iterates.dtype == np.float64  # float32 values, recorded exactly
    assert np.array_equal(kernel32.iterates, kernel32.iterates.astype(np.float32).astype(np.float64))
    assert _relative(kernel32.iterates, kernel64.iterates) <= 1e-5
    assert _relative(kernel32.iterates, reference32.iterates) <= 1e-5
    assert not np.array_equal(kernel32.iterates, kernel64.iterates)


def test_runs_are_bit_identical_across_repeats_and_executors(on_the_pool: None) -> None:
    config = RunConfig(_spec("float32"), _config(participation="scheme_i", participants=2, seeds=(0, 1, 2)))
    once = run(config)
    np.testing.assert_array_equal(run(config).iterates, once.iterates)
    (serial,) = execute([RunRequest(config)], SweepOptions(jobs=1, progress=False))
    (pooled,) = execute([RunRequest(config)], SweepOptions(jobs=2, progress=False))
    np.testing.assert_array_equal(serial.iterates, once.iterates)
    np.testing.assert_array_equal(pooled.iterates, once.iterates)


def test_a_cnn_run_goes_through_the_run_store(tmp_path):
    config = RunConfig(_spec("float32"), _config(seeds=(0, 1)))
    with RunStore(tmp_path / "runs.sqlite") as store:
        (computed,) = execute([RunRequest(config)], SweepOptions(store=store, progress=False))
        stored = store.load(seed_task(RunRequest(config), 1, "numba").key)
        (reused,) = execute([RunRequest(config)], SweepOptions(store=store, progress=False))
    assert stored is not None and stored.config["w_star_sha256"] is None
    np.testing.assert_array_equal(reused.iterates, computed.iterates)
    np.testing.assert_array_equal(stored.result["records"], computed.iterates[1])


def test_the_start_is_the_networks_initialisation_at_the_run_seed():
    problem = build_problem(_spec("float32"))
    result = run(RunConfig(_spec("float32"), _config(seeds=(3, 4))))
    for s, seed in enumerate((3, 4)):
        np.testing.assert_array_equal(result.iterates[s, 0], problem.initial_model(seed))
    w0 = tuple(float(v) for v in np.linspace(-0.1, 0.1, problem.dim))
    given = run(RunConfig(_spec("float32"), _config(initial_model=w0, seeds=(3,))))
    np.testing.assert_array_equal(given.iterates[0, 0], np.float32(w0))


@pytest.mark.parametrize("batch", [0, 3])
def test_one_client_one_step_is_one_sgd_step_of_the_networks_gradient(batch):
    """N = 1, E = 1, one round: W_1 = w0 - eta grad F_1(w0) on the client's rows (batch 0) or on the
    minibatch rows of the counter-based sampler at (seed 5, step 0, client 0); the server average of
    one client with p_1 = 1 is that model."""
    spec = problem_spec("image_classification", n_clients=1, n_train=30, n_test=10, dtype="float64")
    problem = build_problem(spec)
    images, labels = problem.client_data(0)
    rows = np.arange(30) if batch == 0 else sample_indices_np(5, 0, problem.client_sizes, batch)[0]
    w0 = problem.initial_model(5)
    _, grad = digits_net().loss_and_gradient(w0, images[rows], labels[rows])
    expected = w0 - 0.3 * grad
    config = RunConfig(spec, FedAvgConfig(1, 1, StepSize.constant(0.3), batch_size=batch, seeds=(5,)))
    np.testing.assert_array_equal(run(config).iterates[0, -1], expected)
    np.testing.assert_allclose(run(config, engine="numpy").iterates[0, -1], expected, rtol=1e-12, atol=1e-15)


def test_fedavg_trains_the_cnn():
    """The test accuracy of the digits net rises from chance (~0.1 at the initialisation) above 0.75
    after 25 rounds of FedAvg on 5 iid clients (measured 0.86-0.93 over seeds 0-2); a wrong
    gradient sign or step would not."""
    spec = problem_spec("image_classification", n_clients=5, n_train=500, n_test=150)
    result = run(RunConfig(spec, FedAvgConfig(5, 25, StepSize.constant(0.3), batch_size=8, record_rounds=(0, 25))))
    problem = build_problem(spec)
    start, end = (problem.test_accuracy(w) for w in result.iterates[0])
    assert start < 0.3 < 0.75 < end
    assert problem.objective(result.iterates[0, 1]) < problem.objective(result.iterates[0, 0])


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_divergence_is_detected_without_w_star_on_both_paths(engine):
    problem = build_problem(_spec())
    plan = FEDAVG.plan(problem, _config(step_size=StepSize.constant(1e25), rounds=6, record_rounds=(6,)), False)
    rounds = {int(FEDAVG.run_seed(problem, plan, seed, None, engine).diverged) for seed in (0, 1)}
    assert all(0 <= r < 6 for r in rounds)


def test_bad_fields_are_named():
    spec, problem = _spec(), build_problem(_spec())
    with pytest.raises(ConfigError, match="^trace: "):
        run(RunConfig(spec, _config()), engine="numpy", trace=True)
    with pytest.raises(ConfigError, match="^problem: FedProx"):
        run(RunConfig(spec, FedProxConfig(3, 2, StepSize.constant(0.1), mu_prox=0.1)))
    with pytest.raises(ProblemError, match="^family: 'image_classification' is not a block-cyclic"):
        run(RunConfig(spec, MMPSGDConfig(cycles=1, rounds_per_block=1, local_steps=1, step_size=StepSize.constant(0.1))))
    with pytest.raises(ConfigError, match="^initial_model: "):
        FEDAVG.plan(problem, _config(initial_model=(0.0, 1.0)))
    with pytest.raises(ConfigError, match="^participants: "):
        FEDAVG.plan(problem, _config(participation="scheme_ii", participants=5))



def test_an_algorithm_state_plugs_into_the_cnn_round_on_both_paths(tmp_path: Path) -> None:
    """The round_state hooks reach a CNN run at the linear loop's points (tests/shifted_cnn_state.py:
    a state adding c to every step's gradient and counting the ends of round): with one client, one
    step and exact gradients, W_1 = w0 - eta (grad F_1(w0) + c) exactly; over 4 rounds of Scheme II
    the kernel and the reference agree (<= 1e-10 relative, float64), each sampled client ends a
    round once per round it was sampled and the server every round, and c moves the trajectory. It runs in
    a subprocess that saves no signature holding ``Shift`` to the package's Numba cache (whose index every
    process loads), so it compiles only the loop specialised to ``Shift`` and loads the rest; no index it writes
    holds ``Shift``."""
    started = time.time()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), str(Path(__file__).parents[1])])}
    out = subprocess.run([sys.executable, "-m", "shifted_cnn_state"], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["one_step_exact"] and result["one_step_ends"] == [1, [1]]
    assert result["kernel_vs_reference"] <= 1e-10 and result["stats_vs_reference"] <= 1e-10
    assert result["server_ends"] == [4, 4]
    assert result["client_ends"] == result["sampled_rounds"] and sum(result["sampled_rounds"]) > 0
    assert result["shift_differs"]
    root = Path(__file__).parents[1]
    for index in root.glob("*/**/__pycache__/*.nbi"):
        if index.stat().st_mtime >= started:
            assert "Shift(" not in "".join(map(str, _signatures(index))), index


def _signatures(index: Path) -> list:
    """The signatures a Numba cache index holds: its format version, then one pickle of (stamp, {key: file})
    whose keys start with the signature."""
    with open(index, "rb") as f:
        pickle.load(f)
        return [key[0] for key in pickle.loads(f.read())[1]]
