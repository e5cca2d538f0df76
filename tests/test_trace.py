"""Tracing is an option of the NumPy reference path: a traced run keeps every local iterate, its
records are the untraced run's bit for bit, and its traces go through execute, the executors and
the run store like every other result (the store key holds the flag); a trace needs engine
"numpy", is read-only, and one that cannot fit in memory is refused before the run starts."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import convergence
from convergence import (
    SweepOptions,
    ConfigError,
    FedAvgConfig,
    RunConfig,
    RunRequest,
    RunStore,
    StepSize,
    execute,
    export_table,
    run,
)
from convergence.algorithms import algorithm_for
from convergence.algorithms.fedavg.trace import FedAvgTraceArrays
from convergence.sweep import OutdatedRunError, OutdatedRunWarning
from convergence.sweep_runs import seed_task
from problems import build_block_cyclic, build_problem, exact_optimum, problem_spec

FEDERATED = problem_spec("random_quadratic", n_clients=3, dim=3, mu=0.2, L=2.0, heterogeneity=1.0,
                         samples_per_client=5, seed=1, weighting="dirichlet")
UNIFORM = problem_spec("identical_quadratic", n_clients=3, dim=3, mu=0.5, L=2.0, samples_per_client=6, seed=0)
BLOCKS = problem_spec("block_cyclic_quadratic", n_clients=3, n_blocks=2, dim=4, samples_per_client=6, seed=0)
STEP = StepSize.constant(0.05)
SCHEDULE = dict(cycles=2, rounds_per_block=2, local_steps=3, step_size=STEP, batch_size=2, seeds=(1, 4))

RUNS = {
    "fedavg": RunConfig(FEDERATED, FedAvgConfig(3, 4, StepSize.inverse_time(0.1, 0.05), 2, 0.7, (0, 1, 4), (1, 4))),
    "mm_psgd": RunConfig(BLOCKS, convergence.MMPSGDConfig(**SCHEDULE, participants=2, record_rounds=(0, 3, 8))),
    "mc_psgd": RunConfig(BLOCKS, convergence.MCPSGDConfig(**SCHEDULE, block_step_size=StepSize.constant(0.04),
                                                          record_rounds=(2, 8))),
    "fedavg_cyclic": RunConfig(BLOCKS, convergence.FedAvgCyclicConfig(**SCHEDULE)),
    "pr_sgd": RunConfig(UNIFORM, convergence.PRSGDConfig(rounds=4, sync_interval=3, step_size=STEP, batch_size=1,
                                                         participants=2, seeds=(1, 4))),
}


def all_arrays(extras: object) -> dict[str, np.ndarray]:
    """The array fields of an extras dataclass (traces aside)."""
    return {name: value for name, value in vars(extras).items() if isinstance(value, np.ndarray)}


@pytest.mark.parametrize("name", list(RUNS))
def test_traced_records_are_the_untraced_records_bit_for_bit(name: str) -> None:
    config = RUNS[name]
    plain = run(config, engine="numpy")
    traced = run(config, engine="numpy", trace=True)
    assert plain.extras.traces is None
    np.testing.assert_array_equal(traced.iterates, plain.iterates)
    np.testing.assert_array_equal(traced.gap, plain.gap)
    for field, value in all_arrays(plain.extras).items():
        np.testing.assert_array_equal(getattr(traced.extras, field), value, err_msg=field)
    assert len(traced.extras.traces) == len(traced.seeds)
    for s, trace in enumerate(traced.extras.traces):
        assert trace.local_models.shape[0] == trace.step_sizes.size + 1 == traced.steps[-1] + 1
        for field, value in vars(trace).items():  # every step was reached: no NaN left from the allocation
            assert not (isinstance(value, np.ndarray) and np.isnan(value).any()), field
        # the global models the trace holds at the record rounds are the run's records, bit for bit
        np.testing.assert_array_equal(trace.global_models[traced.rounds], traced.iterates[s])


def test_a_trace_needs_the_numpy_engine() -> None:
    config = RUNS["fedavg"]
    with pytest.raises(ConfigError, match="trace: .*engine 'numpy'.*got engine 'numba'"):
        run(config, trace=True)
    with pytest.raises(ConfigError, match="trace: expected True or False"):
        run(config, engine="numpy", trace=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="trace: .*engine 'numpy'"):
        execute([RunRequest(config, trace=True)], SweepOptions(progress=False))


def test_traces_go_through_execute_the_store_and_a_process_pool(tmp_path: Path, on_the_pool: None) -> None:
    config = RUNS["mc_psgd"]
    direct = run(config, engine="numpy", trace=True)
    optimum = exact_optimum(build_block_cyclic(BLOCKS).combined, crosscheck=False)
    request = RunRequest(config, optimum, trace=True)
    with RunStore(tmp_path / "runs.sqlite") as store:
        (computed,) = execute([request], SweepOptions(store=store, progress=False), engine="numpy")
        (reread,) = execute([request], SweepOptions(store=store, progress=False), engine="numpy")
        stored = store.load(seed_task(request, config.algorithm.seeds[0], "numpy").key)
    assert stored is not None
    assert stored.result["trace_local_models"].shape == direct.extras.traces[0].local_models.shape
    (pooled,) = execute([request], SweepOptions(jobs=2, progress=False), engine="numpy")
    for result in (computed, reread, pooled):
        for mine, theirs in zip(result.extras.traces, direct.extras.traces):
            for field, value in vars(theirs).items():
                if isinstance(value, np.ndarray):
                    np.testing.assert_array_equal(getattr(mine, field), value, err_msg=field)
    # the flag is part of the store key: an untraced request of the same config is another stored run
    plain = RunRequest(config, optimum)
    assert seed_task(plain, 1, "numpy").key != seed_task(request, 1, "numpy").key
    assert seed_task(request, 1, "numpy").config_json["trace"] is True


def test_the_fedavg_trace_reductions_are_their_definitions_on_the_full_gradients() -> None:
    # S seeds of T steps, N clients, d parameters of random gradients: written step by step, the
    # reductions equal their definitions evaluated at once on the stacked (S, T, N, d) arrays, bit
    # for bit (what the lemma checks and eq. 13 computed when the trace kept the full gradients)
    S, T, N, d = 3, 5, 4, 7
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(N))
    local, stochastic, full = (rng.normal(size=(S, T, N, d)) for _ in range(3))
    traces = [FedAvgTraceArrays.allocate(T, N, d) for _ in range(S)]
    for s, trace in enumerate(traces):
        for t in range(T):
            trace.write_step(t, local[s, t], stochastic[s, t], full[s, t], p)
    stacked = {name: np.stack([getattr(trace, name) for trace in traces]) for name in FedAvgTraceArrays._fields}
    np.testing.assert_array_equal(stacked["local_models"][:, :T], local)
    assert np.isnan(stacked["local_models"][:, T]).all()  # row T is the final global model, written by the run
    gbar = np.zeros((S, T, d))
    noise = np.zeros((S, T, d))
    for k in range(N):  # sum_k p_k (...), k in order
        gbar += p[k] * full[:, :, k]
        noise += p[k] * (stochastic[:, :, k] - full[:, :, k])
    np.testing.assert_allclose(stacked["mean_full_gradients"], gbar, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(stacked["mean_noise"], noise, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(stacked["full_gradient_sq"], (full**2).sum(axis=3), rtol=1e-14)
    np.testing.assert_allclose(stacked["stochastic_gradient_sq"], (stochastic**2).sum(axis=3), rtol=1e-14)
    # bit for bit what the readers computed from the stacked full arrays before
    np.testing.assert_array_equal(stacked["mean_full_gradients"], np.einsum("k,stkd->std", p, full))
    np.testing.assert_array_equal(stacked["mean_noise"], np.einsum("k,stkd->std", p, stochastic - full))
    np.testing.assert_array_equal(stacked["full_gradient_sq"], np.sum(full**2, axis=3))
    np.testing.assert_array_equal(stacked["stochastic_gradient_sq"], np.sum(stochastic**2, axis=3))


def test_a_run_stored_in_an_older_format_is_recomputed(tmp_path: Path) -> None:
    # a FedAvg trace stored by an older fedbound kept the (T, N, d) gradients under other names: a
    # sweep recomputes it (one warning naming the arrays) and stores it in this format; a
    # read-only store refuses it by name
    request = RunRequest(RUNS["fedavg"], exact_optimum(build_problem(FEDERATED), crosscheck=False), trace=True)
    task = seed_task(request, RUNS["fedavg"].algorithm.seeds[0], "numpy")
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        (fresh,) = execute([request], SweepOptions(store=store, progress=False), engine="numpy")
        stored = store.load(task.key)
        assert stored is not None and set(stored.result) == task.result_names
        T, N, d = stored.result["trace_local_models"].shape
        old = {name: value for name, value in stored.result.items() if not name.startswith("trace_") or
               name == "trace_local_models"}
        old.update(trace_stochastic_gradients=np.zeros((T - 1, N, d)), trace_full_gradients=np.zeros((T - 1, N, d)))
        store.put(task.key, stored.config, old, stored.meta)
    with RunStore(path, readonly=True) as store:
        with pytest.raises(OutdatedRunError, match=rf"run {task.key} is stored in an older format \(arrays "
                                                   r"\['trace_full_gradients', 'trace_stochastic_gradients'\] are not"):
            execute([request], SweepOptions(store=store, progress=False), engine="numpy")
    with RunStore(path) as store:
        with pytest.warns(OutdatedRunWarning, match=r"1 run\(s\) are stored in an older format .*recomputing them"):
            (again,) = execute([request], SweepOptions(store=store, progress=False), engine="numpy")
        restored = store.load(task.key)
    assert restored is not None and set(restored.result) == task.result_names
    for mine, theirs in zip(again.extras.traces, fresh.extras.traces):
        for field, value in vars(theirs).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(mine, field), value, err_msg=field)


def test_the_exported_table_of_a_traced_run_holds_its_records_metrics(tmp_path: Path) -> None:
    request = RunRequest(RUNS["fedavg"], trace=True)
    with RunStore(tmp_path / "runs.sqlite") as store:
        (traced,) = execute([request], SweepOptions(store=store, progress=False), engine="numpy")
        rows = export_table(store, tmp_path / "table.csv").rows
    with open(tmp_path / "table.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert {row["metric"] for row in table} == {"gap", "dist_sq", "loss", "grad_norm_sq"}
    assert rows == len(table) == 4 * traced.gap.size  # one row per metric, seed and record point, no local step


def test_traces_are_read_only() -> None:
    traced = run(RUNS["mm_psgd"], engine="numpy", trace=True)
    trace = traced.extras.traces[0]
    for field in ("local_models", "averages", "stochastic_gradients", "local_gradients", "global_models",
                  "predictors", "participants", "selected_models"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(trace, field)[0] = 0


def test_a_trace_that_cannot_fit_is_refused_before_the_run() -> None:
    # d = 3, N = 3: each local step keeps N d + 2 d + 2 N = 21 floats per seed; 10^10 steps are 2 TB
    huge = FedAvgConfig(1, 10**10, STEP, 1, record_rounds=(1,))
    problem = build_problem(FEDERATED)
    fedavg = algorithm_for(huge)
    plain, traced = (fedavg.memory_bytes(problem, huge, "numpy", trace) for trace in (False, True))
    T, N, d = huge.total_steps, problem.n_clients, problem.dim
    assert traced - plain == 8 * ((T + 1) * N * d + 2 * T * d + 2 * T * N + (T + 1) * d + T)
    with pytest.raises(ConfigError, match="trace"):
        run(RunConfig(FEDERATED, huge), engine="numpy", trace=True)
    with pytest.raises(ConfigError, match="trace"):
        execute([RunRequest(RunConfig(FEDERATED, huge), trace=True)], SweepOptions(progress=False), engine="numpy")
    blocks = build_block_cyclic(BLOCKS)
    mc = convergence.MCPSGDConfig(cycles=10**9, rounds_per_block=1, local_steps=1, step_size=STEP,
                                  block_step_size=STEP, record_rounds=(1,))
    with pytest.raises(ConfigError, match="trace"):
        run(RunConfig(BLOCKS, mc), problem=blocks, engine="numpy", trace=True)


def test_a_run_restarted_from_a_record_continues_it() -> None:
    # exact gradients and a constant step: 3 rounds from the model recorded after round 2 are rounds 3-5
    # of the whole run, step for step (the initial model is the only state a round starts from)
    whole = run(RunConfig(FEDERATED, FedAvgConfig(2, 5, STEP, 0, record_rounds=(2, 5))), engine="numpy", trace=True)
    w2 = tuple(whole.iterates[0, 0])
    later = FedAvgConfig(2, 3, STEP, 0, record_rounds=(3,), initial_model=w2)
    restarted = run(RunConfig(FEDERATED, later), engine="numpy", trace=True)
    np.testing.assert_array_equal(restarted.extras.traces[0].local_models, whole.extras.traces[0].local_models[4:])
    np.testing.assert_array_equal(restarted.iterates[0, -1], whole.iterates[0, -1])
    assert later.to_json()["initial_model"] == list(w2) and later.with_seeds((7,)).initial_model == w2
    assert "initial_model" not in FedAvgConfig(2, 3, STEP).to_json()  # w_0 = 0: the run id of a config without it
    with pytest.raises(ConfigError, match="initial_model: has 2 entries"):
        run(RunConfig(FEDERATED, FedAvgConfig(2, 3, STEP, initial_model=(0.0, 1.0))))
    with pytest.raises(ConfigError, match=r"initial_model\[1\]: must be finite"):
        FedAvgConfig(2, 3, STEP, initial_model=(0.0, float("nan"), 1.0))
    with pytest.raises(ConfigError, match="initial_model: expected a sequence"):
        FedAvgConfig(2, 3, STEP, initial_model="abc")  # type: ignore[arg-type]
