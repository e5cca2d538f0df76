"""Sweeps: the same results on every executor, a store that round-trips, caching and resuming.

The executors are compared on a real fedbound workload (minibatch FedAvg, several seeds), Dask
on a real local cluster of two worker processes. Caching and resuming are checked with task
functions that leave a trace of every call (a marker file, a log line), so "not recomputed" is
observed, not assumed; the resume test SIGKILLs a real sweep process mid-way.
"""

from __future__ import annotations

from operator import attrgetter

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numba
import numpy as np
import pytest

from convergence import SweepOptions
from convergence import FedAvgConfig, RunConfig, RunRequest, StepSize, execute, export_table
from convergence.sweep_runs import seed_task
from convergence.store import RunStore, StoreError
from convergence.sweep import SweepError, SweepTask, run_sweep
from problems import build_problem, exact_optimum, problem_spec

TESTS = Path(__file__).resolve().parent
FIELDS = ("iterates", "gap", "dist_sq", "extras.max_radius_sq", "extras.max_grad_sq")
SLOW_TASKS = 20  # tasks of the interrupted sweep
SLOW_SECONDS = 0.2  # each one's duration, so that a kill lands mid-sweep
KILL_AFTER = 4  # stored runs seen before the sweep process is killed


def _requests() -> list[RunRequest]:
    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=0.05, seed=3)
    optimum = exact_optimum(build_problem(spec), crosscheck=False)
    minibatch = FedAvgConfig(3, 10, StepSize.per_round(0.05), 4, 1.0, (0, 2, 10), (0, 1, 2, 3))
    exact = FedAvgConfig(2, 8, StepSize.constant(0.02), 0, 0.5, (8,), (7,))
    return [RunRequest(RunConfig(spec, minibatch), optimum, track=True), RunRequest(RunConfig(spec, exact), optimum)]


def _assert_identical(first: list, second: list) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.run_id == b.run_id and a.seeds == b.seeds
        for field in FIELDS:
            x, y = attrgetter(field)(a), attrgetter(field)(b)
            assert x.dtype == y.dtype and x.shape == y.shape
            assert np.array_equal(x, y, equal_nan=True), field


def _marked(marker_dir: str, key: str, value: float) -> dict[str, np.ndarray]:
    """A task that leaves one marker file per call, so the calls can be counted."""
    (Path(marker_dir) / f"{key}.{uuid.uuid4().hex}").touch()
    return {"value": np.array([value, 2.0 * value]), "key_length": np.array(len(key))}


def _failing(key: str) -> dict[str, np.ndarray]:
    """A task that fails for the key "bad"."""
    if key == "bad":
        raise ValueError("this task always fails")
    return {"ok": np.array(1)}


def _slow(log_path: str, key: str) -> dict[str, np.ndarray]:
    """A slow task that appends its key to a log when it has done its work."""
    time.sleep(SLOW_SECONDS)
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"{key}\n")
    return {"index": np.array(int(key.removeprefix("slow-")))}


def slow_sweep(store_path: str, log_path: str) -> dict:
    """The sweep that the resume test interrupts and runs again (a process pool of 2)."""
    tasks = [SweepTask(f"slow-{i:02d}", _slow, (log_path, f"slow-{i:02d}"), {"i": i}) for i in range(SLOW_TASKS)]
    with RunStore(store_path) as store:
        return run_sweep(tasks, SweepOptions(executor="process", jobs=2, store=store, progress=False))


def _marker_tasks(marker_dir: Path, keys: list[str]) -> list[SweepTask]:
    return [SweepTask(key, _marked, (str(marker_dir), key, float(len(key))), {"key": key}) for key in keys]


def _calls(marker_dir: Path) -> list[str]:
    return sorted(path.name.split(".")[0] for path in marker_dir.iterdir())


def test_serial_pool_and_dask_cluster_are_bit_identical(on_the_pool: None) -> None:
    from dask.distributed import LocalCluster

    serial = execute(_requests(), SweepOptions(jobs=1, progress=False))
    pooled = execute(_requests(), SweepOptions(jobs=2, progress=False))
    _assert_identical(serial, pooled)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        on_dask = execute(_requests(), SweepOptions(scheduler=cluster.scheduler_address, progress=False))
    _assert_identical(serial, on_dask)


def test_store_round_trips_arrays_config_and_meta(tmp_path: Path) -> None:
    result = {
        "gap": np.array([1.0, np.nan, np.inf, 5e-324]),
        "block": np.arange(6, dtype=np.float32).reshape(2, 3),
        "diverged": np.array(-1, dtype=np.int64),
        "flags": np.array([True, False]),
        "empty": np.zeros((0, 2)),
    }
    config = {"problem": {"family": "f", "params": {"a": 1.5}}, "seed": 2}
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert len(store) == 0 and store.get("k") is None and not store.has("k")
        store.put("k", config, result, {"seconds": 0.25})
        store.put("other", {}, {}, {})
    with RunStore(tmp_path / "runs.sqlite") as store:  # reopened: the runs are on disk
        assert store.keys() == ["k", "other"] and len(store) == 2 and store.has("k")
        back = store.get("k")
        assert back is not None and set(back) == set(result)
        for name, array in result.items():
            assert back[name].dtype == array.dtype and back[name].shape == array.shape
            assert back[name].tobytes() == array.tobytes()
        assert store.config("k") == config and store.meta("k") == {"seconds": 0.25}
        assert store.get("other") == {}
        store.put("k", config, {"gap": np.array([0.0])}, {})  # replaced whole, not merged
        assert set(store.get("k")) == {"gap"}
        assert store.delete("k") and not store.delete("k") and store.keys() == ["other"]


def test_store_refuses_what_it_cannot_store_and_writes_nothing(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(StoreError, match="'names'.*numeric numpy array"):
            store.put("k", {}, {"ok": np.zeros(2), "names": np.array(["a"], dtype=object)}, {})
        with pytest.raises(StoreError, match="run k: config is not JSON"):
            store.put("k", {"eta": float("nan")}, {"ok": np.zeros(2)}, {})
        with pytest.raises(StoreError, match="list"):
            store.put("k", {}, {"ok": [1.0]}, {})  # type: ignore[dict-item]
        assert len(store) == 0
        with pytest.raises(StoreError, match="format"):
            export_table(store, tmp_path / "table.xlsx")


def test_cache_skips_finished_runs_and_duplicates_run_once(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    first = ["a", "bb", "ccc"]
    with RunStore(tmp_path / "runs.sqlite") as store:
        results = run_sweep(_marker_tasks(markers, first + ["a"]), SweepOptions(executor="serial", store=store, progress=False))
        assert _calls(markers) == first and list(results) == first and not results.cached
        more = run_sweep(_marker_tasks(markers, first + ["dddd", "eeeee"]), SweepOptions(jobs=2, store=store, progress=False))
        assert _calls(markers) == sorted(first + ["dddd", "eeeee"])  # only the two new ones ran
        assert more.cached == frozenset(first) and list(more) == first + ["dddd", "eeeee"]
        for key in first:
            assert all(np.array_equal(more[key][name], results[key][name]) for name in results[key])
        assert more["eeeee"]["value"].tolist() == [5.0, 10.0] and int(more["eeeee"]["key_length"]) == 5
        run_sweep(_marker_tasks(markers, ["a"]), SweepOptions(executor="serial", store=store, use_cache=False, progress=False))
        assert _calls(markers).count("a") == 2  # recomputed when the cache is off
        assert sorted(store.keys()) == sorted(first + ["dddd", "eeeee"])


def test_execute_with_a_store_reads_finished_seeds_back(tmp_path: Path) -> None:
    requests = _requests()
    with RunStore(tmp_path / "runs.sqlite") as store:
        computed = execute(requests, SweepOptions(jobs=1, progress=False, store=store))
        keys = {seed_task(req, seed, "numba").key for req in requests for seed in req.config.algorithm.seeds}
        assert set(store.keys()) == keys and len(keys) == 5
        store.delete(seed_task(requests[0], 2, "numba").key)  # one seed lost: only it is recomputed
        again = execute(requests, SweepOptions(jobs=2, progress=False, store=store))
        assert set(store.keys()) == keys
    _assert_identical(computed, again)


def test_a_failing_task_names_its_key_after_storing_the_finished_ones(tmp_path: Path) -> None:
    tasks = [SweepTask(key, _failing, (key,), {"key": key}) for key in ("first", "bad", "last")]
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(SweepError, match="sweep task bad failed: ValueError: this task always fails"):
            run_sweep(tasks, SweepOptions(executor="serial", store=store, progress=False))
        assert store.keys() == ["first"]
        with pytest.raises(SweepError, match="task bad") as raised:
            run_sweep(tasks, SweepOptions(executor="process", jobs=2, store=store, progress=False))
        assert isinstance(raised.value.__cause__, ValueError) and raised.value.key == "bad"
        assert "bad" not in store.keys()


def test_executor_arguments_are_checked() -> None:
    task = SweepTask("a", _failing, ("a",), {})
    with pytest.raises(ValueError, match="executor"):
        run_sweep([task], SweepOptions(executor="threads", progress=False))
    with pytest.raises(ValueError, match="needs a scheduler address"):
        run_sweep([task], SweepOptions(executor="dask", progress=False))
    with pytest.raises(ValueError, match="needs the 'dask' executor"):
        run_sweep([task], SweepOptions(executor="serial", scheduler="tcp://127.0.0.1:8786", progress=False))
    with pytest.raises(ValueError, match="two different configs"):
        run_sweep([task, SweepTask("a", _failing, ("a",), {"other": 1})], SweepOptions(executor="serial", progress=False))
    with pytest.raises(ValueError, match="jobs"):
        run_sweep([task], SweepOptions(jobs=0, progress=False))


def test_an_interrupted_sweep_resumes_with_no_run_lost_or_repeated(tmp_path: Path) -> None:
    store_path, log_path = tmp_path / "runs.sqlite", tmp_path / "calls.log"
    log_path.touch()
    script = f"import sys; sys.path.insert(0, {str(TESTS)!r}); import test_sweep; test_sweep.slow_sweep(*sys.argv[1:])"
    # A session of its own, so that one killpg takes the driver and its pool workers down together.
    sweep = subprocess.Popen([sys.executable, "-c", script, str(store_path), str(log_path)], start_new_session=True)
    try:
        deadline = time.monotonic() + 120.0  # generous: the sweep process imports numba first
        while time.monotonic() < deadline and sweep.poll() is None:
            if store_path.exists():
                with RunStore(store_path) as reader:
                    if len(reader) >= KILL_AFTER:
                        break
            time.sleep(0.02)
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone already if it ended on its own
            os.killpg(sweep.pid, signal.SIGKILL)
        sweep.wait()
    assert sweep.returncode == -signal.SIGKILL, "the sweep finished or failed before it could be killed"
    with RunStore(store_path) as store:
        stored_before = set(store.keys())
    calls_before = len(log_path.read_text().splitlines())
    all_keys = {f"slow-{i:02d}" for i in range(SLOW_TASKS)}
    assert KILL_AFTER <= len(stored_before) < SLOW_TASKS and stored_before <= all_keys

    results = slow_sweep(str(store_path), str(log_path))

    calls_after = log_path.read_text().splitlines()[calls_before:]
    assert not stored_before & set(calls_after), "a run stored before the kill was computed again"
    assert sorted(calls_after) == sorted(all_keys - stored_before), "each missing run computed exactly once"
    assert results.cached == frozenset(stored_before)
    assert {key: int(result["index"]) for key, result in results.items()} == {
        f"slow-{i:02d}": i for i in range(SLOW_TASKS)
    }
    with RunStore(store_path) as store:
        assert sorted(store.keys()) == sorted(all_keys) and len(store) == SLOW_TASKS


def test_export_parquet_without_pyarrow_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = problem_spec("random_quadratic", n_clients=2, dim=3, samples_per_client=4, seed=0)
    config = FedAvgConfig(2, 3, StepSize.constant(0.1), 0, 1.0, (0, 3), (0,))
    with RunStore(tmp_path / "runs.sqlite") as store:
        execute([RunRequest(RunConfig(spec, config))], SweepOptions(store=store, progress=False))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` fail
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(StoreError, match=r"Parquet export needs pyarrow.*\.csv"):
            export_table(store, tmp_path / "runs.parquet")
    assert not (tmp_path / "runs.parquet").exists()


@numba.njit(cache=False)
def _twice(x: float) -> float:
    return 2.0 * x


def _where_compiled(value: float) -> dict[str, np.ndarray]:
    """A task that says which process ran it and whether ``_twice`` was compiled there before it ran."""
    compiled = len(_twice.signatures) > 0
    return {"pid": np.array(os.getpid()), "compiled": np.array(compiled), "value": np.array(_twice(value))}


def test_a_pool_forks_after_the_driver_ran_one_task_of_each_new_warm_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling once (``convergence.sweep``): the first task of each warm key the driver has not run yet
    runs in the driver, before the pool forks; every other task runs in a worker that inherited the
    dispatcher the driver compiled (so it compiles nothing); a key run once is not run in the driver again;
    tasks without a key all go to the pool. The results are those of a serial sweep, in task order."""
    from convergence import sweep_executors

    monkeypatch.setattr(sweep_executors, "_WARM_KEYS", set())
    assert not _twice.signatures  # nothing compiled in this process yet: each worker would compile its own
    tasks = [SweepTask(f"k{i}", _where_compiled, (float(i),), {"i": i}, "twice") for i in range(6)]
    options = SweepOptions(jobs=2, progress=False)
    first = run_sweep(tasks, options)
    driver = [key for key, result in first.items() if int(result["pid"]) == os.getpid()]
    assert driver == ["k0"] and not first["k0"]["compiled"]  # the driver compiled it, on the first task
    assert all(bool(first[f"k{i}"]["compiled"]) for i in range(1, 6))  # the workers inherited it
    assert [float(r["value"]) for r in first.values()] == [2.0 * i for i in range(6)]
    again = run_sweep([SweepTask(f"j{i}", _where_compiled, (float(i),), {"j": i}, "twice") for i in range(3)], options)
    assert all(int(r["pid"]) != os.getpid() and bool(r["compiled"]) for r in again.values())
    unkeyed = run_sweep([SweepTask(f"u{i}", _where_compiled, (float(i),), {"u": i}) for i in range(3)], options)
    assert all(int(r["pid"]) != os.getpid() for r in unkeyed.values())


def test_seed_tasks_of_one_algorithm_and_problem_kind_share_a_warm_key() -> None:
    """The warm key of a run's tasks names its compiled code: one key for every seed of two FedAvg configs
    on one problem (one tracked, one not: tracking is a kernel argument), another for the reference engine,
    another for a CNN problem in float32; none without the problem."""
    (minibatch, exact) = _requests()
    problem = build_problem(minibatch.config.problem)
    keys = {seed_task(request, seed, "numba", problem=problem).warm_key
            for request in (minibatch, exact) for seed in request.config.algorithm.seeds}
    assert keys == {("fedavg", "numba", "FederatedProblem", "float64")}
    assert seed_task(exact, 7, "numpy", problem=problem).warm_key == ("fedavg", "numpy", "FederatedProblem", "float64")
    cnn_spec = problem_spec("image_classification", dataset="digits", network="digits_net", n_clients=2, n_train=40,
                            n_test=20, seed=0)
    cnn = RunRequest(RunConfig(cnn_spec, FedAvgConfig(2, 1, StepSize.constant(0.05), 2, seeds=(0,))))
    assert seed_task(cnn, 0, "numba", problem=build_problem(cnn_spec)).warm_key == (
        "fedavg", "numba", "ImageClassificationProblem", "float32")
    assert seed_task(exact, 7, "numba").warm_key is None  # no problem given: no hint
