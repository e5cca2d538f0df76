"""Bench's honest peers (vectorised NumPy, JAX), its report, and the packing fixes (issue 13)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from convergence import FedAvgConfig, StepSize
from convergence.algorithms import RunConfig
from convergence.algorithms.packing import PACK_CACHE_SIZE, pack_clients
from convergence.algorithms.local_sgd_reference import local_sgd_reference as fedavg_reference
from convergence import bench
from convergence.bench import Workload, run_bench
from convergence.bench_floor import MachineRates, floor_engine
from convergence.bench_jax import jax_peer
from convergence.bench_peers import numpy_peer_fedavg, peer_inputs
from convergence.bench_report import format_bench
from convergence.run import run
from problems import build_problem, from_arrays, problem_spec


def _logistic(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = (rng.random(40) < 0.5).astype(float)
    return from_arrays(X, y, np.repeat(np.arange(4), [7, 13, 9, 11]), loss="logistic", l2=0.01, data_dir=tmp_path)


def _mixed_least_squares(tmp_path):
    """Least squares where clients 1 and 3 (|S_k| < 2 n_k) take Gram steps and 0, 2, 4 do not."""
    rng = np.random.default_rng(3)
    sizes = [2, 50, 2, 60, 3]
    X = rng.normal(size=(sum(sizes), 10))
    X[:2, 5:] = 0.0
    X[52:54, :4] = 0.0
    y = rng.normal(size=sum(sizes))
    return from_arrays(X, y, np.repeat(np.arange(5), sizes), loss="least_squares", l2=0.01, data_dir=tmp_path)


def _problems(tmp_path):
    return [
        build_problem(problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=1e-3, seed=2)),
        build_problem(problem_spec("li_counterexample", N=5, p=4, mu=2e-4)),
        _logistic(tmp_path / "logistic"),
        _mixed_least_squares(tmp_path / "mixed"),
    ]


@pytest.mark.parametrize("batch, server_lr", [(0, 1.0), (5, 1.0), (3, 0.6)])
def test_numpy_peer_reproduces_the_reference_trajectory(tmp_path, batch, server_lr):
    for problem in _problems(tmp_path):
        w0 = tuple(np.linspace(-0.1, 0.1, problem.dim))
        config = FedAvgConfig(3, 8, StepSize.constant(0.05), batch, server_lr, tuple(range(1, 9)), (4,), w0)
        records, _, diverged = fedavg_reference(problem, config, 4, np.array(w0), np.zeros(problem.dim))
        history = numpy_peer_fedavg(problem, peer_inputs(problem, config, 4))
        assert diverged == -1
        assert history.shape == records.shape
        np.testing.assert_allclose(history, records, rtol=0, atol=1e-10, err_msg=problem.name)
        assert not np.allclose(history[-1], w0)  # the run moved


def jax_peer_deviations() -> list[float]:
    """Max |JAX peer - reference| over the two step kinds it writes (softmax minibatch, Gram)."""
    problems = [build_problem(problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=1e-3, seed=2)),
                build_problem(problem_spec("li_counterexample", N=5, p=4, mu=2e-4))]
    configs = [FedAvgConfig(3, 6, StepSize.constant(0.05), 4, 0.8, tuple(range(1, 7)), (1,)),
               FedAvgConfig(3, 6, StepSize.constant(0.05), 0, 1.0, tuple(range(1, 7)), (1,))]
    deviations = []
    for problem, config in zip(problems, configs):
        peer = jax_peer(problem, peer_inputs(problem, config, 1))
        if peer is None:
            return []
        records, _, _ = fedavg_reference(problem, config, 1, np.zeros(problem.dim), np.zeros(problem.dim))
        deviations.append(float(np.max(np.abs(peer() - records))))
    return deviations


def test_jax_peer_matches_the_reference_or_is_reported_missing():
    if importlib.util.find_spec("jax") is None:
        assert jax_peer_deviations() == []
        return
    # JAX starts threads; the suite's process pools fork later, so JAX runs in a child process
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    child = subprocess.run([sys.executable, "-c", "import json; from test_bench_peers import jax_peer_deviations as d; print(json.dumps(d()))"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr
    deviations = json.loads(child.stdout.strip().splitlines()[-1])
    assert len(deviations) == 2 and max(deviations) < 1e-10, deviations


def test_jax_peer_refuses_a_step_kind_it_does_not_write(tmp_path):
    problem = _logistic(tmp_path)
    with pytest.raises(ValueError, match="model"):
        jax_peer(problem, peer_inputs(problem, FedAvgConfig(2, 2, StepSize.constant(0.1), 3), 0))


TINY = Workload("T", "synthetic(1,1), 4 clients, batch 4, E = 2",
                problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=4, l2=1e-4, seed=0), 2, 4, 0.05, 20, 2, 5)


def test_bench_rows_alternate_the_kernel_with_each_peer_and_note_missing_jax(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError: JAX absent
    # one Numba thread: the threads row is skipped (its pairing is tested with fake engines in test_bench_pairs),
    # and the threaded kernel, which is not cached, is not compiled
    monkeypatch.setattr(bench.config, "NUMBA_NUM_THREADS", 1)
    report = run_bench(repeats=3, workloads=(TINY,), mc_psgd=False, scaling=False, cnn=False)
    json.dumps(report.to_json())
    (workload,) = report.workloads
    rows = {f"{c.a} / {c.b}": c for c in workload.comparisons}
    assert list(rows) == ["numpy reference / kernel", "numpy peer / kernel", "kernel / floor", "1 thread / 2 threads",
                          "jax peer / kernel"]
    for name in ("numpy reference / kernel", "numpy peer / kernel", "kernel / floor"):
        assert rows[name].measured and rows[name].cpu.pairs == 3 and rows[name].wall.pairs == 3, name
    assert not rows["jax peer / kernel"].measured and "jax is not installed" in rows["jax peer / kernel"].note
    assert not rows["1 thread / 2 threads"].measured
    assert workload.numpy_peer_max_abs_diff < 1e-10 and workload.jax_max_abs_diff is None
    assert report.jax_version is None
    floor, machine = workload.floor, report.machine
    assert "4 x (4x61)(61x10)" in floor.product_shapes
    assert floor.exp_calls == 4 * 10  # b = 4 samples x C = 10 classes
    assert floor.large_product_us == pytest.approx(floor.flops / (machine.matmul_gflops_1core * 1e3)
                                                   + floor.exp_calls * machine.exp_ns * 1e-3)
    assert machine.exp_ns == min(machine.exp_numpy_ns, machine.exp_kernel_ns)  # the cheaper exp
    assert floor.bytes_read == 8 * 4 * 61  # a minibatch of b = 4 rows of 60 features + bias, float64
    text = format_bench(report)
    assert "jax peer / kernel           not measured: jax is not installed" in text
    assert "T        numpy peer / kernel" in text and "load average (1 / 5 / 15 min)" in text


def test_the_floor_engine_runs_the_products_of_the_client_steps_asked(monkeypatch):
    problem = build_problem(TINY.spec)
    packed = pack_clients(problem)
    rates = MachineRates(50.0, 1.0, 2.0, 16)
    products = []
    monkeypatch.setattr(np, "matmul", lambda a, b, out: products.append((a.shape, b.shape)))
    engine = floor_engine(packed, 4, 40.0, rates, client_steps=10)  # 10 client-steps over 4 clients: 3 steps
    engine.run()
    assert engine.units == 12 and len(products) == 2 * 3
    assert products[:2] == [((4, 4, 61), (4, 61, 10)), ((4, 61, 4), (4, 4, 10))]
    two_chains = floor_engine(packed, 4, 40.0, rates, client_steps=8, steps_per_unit=2)
    products.clear()
    two_chains.run()
    assert two_chains.units == 8 and len(products) == 2 * 4


def test_packing_allocates_no_gram_for_softmax_and_only_for_gram_clients(tmp_path):
    softmax = pack_clients(build_problem(problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=5, seed=4)))
    assert not softmax.uses_gram.any() and softmax.gram.size == 0
    mixed = pack_clients(_mixed_least_squares(tmp_path))
    support = np.diff(mixed.support_offsets)
    assert mixed.uses_gram.tolist() == [False, True, False, True, False]
    assert mixed.gram.size == int(np.sum(support[mixed.uses_gram] ** 2))


def test_bytes_per_step_counts_rows_or_gram_blocks(tmp_path):
    mixed = pack_clients(_mixed_least_squares(tmp_path))
    support, sizes = np.diff(mixed.support_offsets), np.diff(mixed.sample_offsets)
    assert mixed.bytes_per_step(3).tolist() == (8 * 3 * support).tolist()  # 3 rows of |S_k| doubles
    exact = np.where(mixed.uses_gram, 8 * support**2, 8 * sizes * support)  # Q_k, or all n_k rows
    assert mixed.bytes_per_step(0).tolist() == exact.tolist()


def test_kernel_with_compact_gram_matches_the_reference(tmp_path):
    """The kernel finds each Gram client's block in the compact layout (exact steps, mixed clients)."""
    problem = _mixed_least_squares(tmp_path)
    config = RunConfig(problem.spec, FedAvgConfig(3, 10, StepSize.constant(0.02), 0, 1.0, (5, 10), (0,)))
    kernel = run(config, problem=problem, engine="numba")
    reference = run(config, problem=problem, engine="numpy")
    np.testing.assert_allclose(kernel.iterates, reference.iterates, rtol=0, atol=1e-10)


def test_pack_cache_returns_the_same_object_per_problem_data(tmp_path):
    problem = _logistic(tmp_path / "a")
    same_data = _logistic(tmp_path / "b")
    assert same_data is not problem and same_data.fingerprint == problem.fingerprint
    packed = pack_clients(problem)
    assert pack_clients(problem) is packed
    assert pack_clients(same_data) is packed
    for seed in range(PACK_CACHE_SIZE):  # other problems push it out of the LRU
        pack_clients(build_problem(problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=3, seed=10 + seed)))
    repacked = pack_clients(problem)
    assert repacked is not packed
    np.testing.assert_array_equal(repacked.rows, packed.rows)
