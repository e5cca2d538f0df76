"""Threads in the linear local-SGD kernel (``convergence/algorithms/local_sgd.py``,
``kernel_threads.py``): the clients of a round run over Numba's threads, and every result (records,
tracked maxima, the divergence round) is bit-identical to the serial kernel, for every loss,
data layout, gradient kind, participation scheme and FedProx; a run asking for threads takes the
threaded kernel only when its round's work reaches the threshold (checked by the path taken, never
by timing); OpenMP's passive wait is set only where the user set no policy; the sweep's
``threads`` option is explicit, checked, and refused together with a process pool.

Numba's thread count is fixed when it starts (NUMBA_NUM_THREADS, the CPU count by default); on a
one-core machine the tests that run threads do so in a child process started with
NUMBA_NUM_THREADS=2, so they are never skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import config

from convergence import FedAvgConfig, StepSize, bench
from convergence.algorithms import (
    THREADED_MIN_WORK,
    FedProxConfig,
    KernelPaths,
    algorithm_for,
    check_threads,
    kernel_threads,
    using_kernel_threads,
)
from convergence.algorithms.kernel_threads import (
    passive_wait,
    round_work,
    threads_for_round,
)
from convergence.run import run_seed
from convergence.sweep import SweepOptions
from problems import build_problem

from test_fedavg_kernel import small_problem

# (loss, layout, batch, participation, K): exact and minibatch steps, dense/sparse/mixed supports,
# the BLAS path ("wide", batch 40), every sampling scheme
CASES = [
    ("softmax", "wide", 40, "full", None),
    ("softmax", "mixed", 3, "full", None),
    ("least_squares", "sparse", 0, "full", None),
    ("logistic", "dense", 2, "scheme_i", 3),
    ("softmax", "mixed", 0, "scheme_ii", 2),
    ("least_squares", "mixed", 3, "transformed_scheme_ii", 2),
    ("logistic", "sparse", 2, "original", 2),
]


def _seed(problem, config, seed: int):
    algorithm = algorithm_for(config)
    return run_seed(algorithm, problem, algorithm.plan(problem, config, True), seed,
                    np.random.default_rng(1).normal(size=problem.dim), "numba")


def thread_differences(threads: int) -> list[str]:
    """Every case run serially and on ``threads`` threads (the threaded kernel forced: min_work 0);
    returns the cases whose results differ in any bit, or that did not run the threaded kernel
    (empty: all identical)."""
    differ = []
    configs = [(f"{loss}/{layout}/b{batch}/{scheme}", small_problem(loss, layout),
                FedAvgConfig(4, 9, StepSize.inverse_time(0.2, 0.05), batch, 0.8, (0, 1, 5, 9), participation=scheme,
                             participants=K)) for loss, layout, batch, scheme, K in CASES]
    configs.append(("fedprox", small_problem("softmax", "mixed"),
                    FedProxConfig(4, 9, StepSize.constant(0.1), 0.5, 3, 1.0, (0, 9))))
    for name, problem, cfg in configs:
        serial = _seed(problem, cfg, 5)
        with using_kernel_threads(threads, min_work=0) as paths:
            threaded = _seed(problem, cfg, 5)
        if paths != KernelPaths(serial=0, threaded=1) or not all(np.array_equal(a, b) for a, b in zip(serial, threaded)):
            differ.append(name)
    return differ


def _in_threads(function: str) -> object:
    """``function`` of this module called with 2 threads: here, or in a child started with
    NUMBA_NUM_THREADS=2 on a one-core machine; its JSON result."""
    if config.NUMBA_NUM_THREADS >= 2:
        return json.loads(json.dumps(globals()[function]()))
    code = f"import json; from test_kernel_threads import {function} as f; print(json.dumps(f()))"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).parent, env={**os.environ, "NUMBA_NUM_THREADS": "2"})
    return json.loads(child.stdout.splitlines()[-1])


def paths_taken() -> dict[str, list[int]]:
    """[serial, threaded] kernel calls of a tiny run and of a big one, each asking for 2 threads
    with the default threshold. Tiny: 4 clients x E = 4 x about 8 rows x d = 7 (least squares,
    exact gradients), about 900 units a round. Big: 4 clients x E = 50 x batch 40 x d = 192
    (softmax, 64 features, 3 classes), 1,536,000 units a round, one round; and the big run with
    one client a round (Scheme II, K = 1), which has nothing to run in parallel."""
    cases = {"tiny": (small_problem("least_squares", "sparse"), FedAvgConfig(4, 3, StepSize.constant(0.1), 0, 1.0, (3,))),
             "big": (small_problem("softmax", "wide"), FedAvgConfig(50, 1, StepSize.constant(0.01), 40, 1.0, (1,))),
             "big, one client a round": (small_problem("softmax", "wide"),
                                         FedAvgConfig(50, 1, StepSize.constant(0.01), 40, 1.0, (1,),
                                                      participation="scheme_ii", participants=1))}
    taken = {}
    for name, (problem, cfg) in cases.items():
        with using_kernel_threads(2) as paths:
            _seed(problem, cfg, 5)
        taken[name] = [paths.serial, paths.threaded]
    w1, bench_paths = bench.WORKLOADS[0], KernelPaths()  # bench's W1 row: 5 x 20 x 5 x 21 = 10,500 units a round
    bench._fedavg_engine("2 threads", build_problem(w1.spec), w1, "numba", 3, 2, bench_paths).run()
    taken["bench's W1 on 2 threads"] = [bench_paths.serial, bench_paths.threaded]
    return taken


def test_threads_are_chosen_from_the_work_per_round() -> None:
    assert round_work(4, 50, 40, 192) == 1_536_000 >= THREADED_MIN_WORK > round_work(4, 4, 11, 7)
    assert _in_threads("paths_taken") == {"tiny": [1, 0], "big": [0, 1], "big, one client a round": [1, 0],
                                          "bench's W1 on 2 threads": [1, 0]}


def rule_outcomes() -> list[int]:
    """threads_for_round at and around a threshold of 100 units, and outside any setting."""
    outside = threads_for_round(8, 1e12)
    with using_kernel_threads(2, min_work=100) as paths:
        inside = [threads_for_round(2, 99.0), threads_for_round(2, 100.0), threads_for_round(1, 1e12)]
    return [outside, *inside, paths.serial, paths.threaded]


def test_the_choice_rule() -> None:
    # outside: 1; inside: below the threshold 1, at it 2, one participant 1; counted 2 serial, 1 threaded
    assert _in_threads("rule_outcomes") == [1, 1, 2, 1, 2, 1]
    with pytest.raises(ValueError, match="^min_work: "), using_kernel_threads(1, min_work=-1.0):
        pass


def test_the_passive_wait_is_set_only_where_the_user_set_no_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    passive_wait()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    passive_wait()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "300000")
    passive_wait()
    assert "OMP_WAIT_POLICY" not in os.environ and os.environ["GOMP_SPINCOUNT"] == "300000"


def test_threaded_kernel_is_bit_identical_to_the_serial_one() -> None:
    if config.NUMBA_NUM_THREADS >= 2:
        counts = sorted({2, config.NUMBA_NUM_THREADS})
        assert {n: thread_differences(n) for n in counts} == {n: [] for n in counts}
        return
    code = "import json; from test_kernel_threads import thread_differences as d; print(json.dumps(d(2)))"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).parent, env={**os.environ, "NUMBA_NUM_THREADS": "2"})
    assert json.loads(child.stdout.splitlines()[-1]) == []


def test_a_planted_difference_is_caught() -> None:
    """The comparison can fail: another seed is another trajectory."""
    problem = small_problem("softmax", "wide")
    cfg = FedAvgConfig(4, 9, StepSize.constant(0.1), 40, 1.0, (9,))
    assert not np.array_equal(_seed(problem, cfg, 5).records, _seed(problem, cfg, 6).records)


def test_thread_setting_is_scoped_and_checked() -> None:
    assert kernel_threads() == 1
    with using_kernel_threads(1):
        assert kernel_threads() == 1
    assert kernel_threads() == 1
    for bad in (0, -1, 1.5, True, config.NUMBA_NUM_THREADS + 1):
        with pytest.raises(ValueError, match="^threads: "):
            check_threads(bad)


def test_sweep_threads_need_the_serial_executor() -> None:
    assert SweepOptions(jobs=1, threads=1).threads == 1
    with pytest.raises(ValueError, match="^threads: "):
        SweepOptions(jobs=1, threads=0)
    if config.NUMBA_NUM_THREADS >= 2:
        assert SweepOptions(jobs=1, threads=2).executor == "serial"
        with pytest.raises(ValueError, match="^threads: 2 threads per run need the serial executor"):
            SweepOptions(jobs=2, threads=2)



def stored_kernel_paths() -> dict[str, list]:
    """The [kernel_path, kernel_threads] pairs in the stored metadata of a sweep's runs: asking for 2
    threads (serial executor), a tiny FedAvg round (6 clients x 1 step x batch 1 x d = 610, 3,660 units)
    and a big one (30 clients x 50 steps x batch 40 x 610, 36.6M units); the tiny run on the NumPy engine
    (no kernel); two seeds of the big run on a pool of 2 (kernels on one thread there)."""
    import tempfile

    from convergence import RunConfig, RunRequest, execute
    from convergence.store import RunStore
    from problems import problem_spec

    def spec(clients: int):
        return problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=clients, l2=0.05, seed=3)

    tiny = RunConfig(spec(6), FedAvgConfig(1, 1, StepSize.constant(0.05), 1, 1.0, (1,), (0,)))
    big = RunConfig(spec(30), FedAvgConfig(50, 1, StepSize.constant(0.01), 40, 1.0, (1,), (0,)))
    cases = [("tiny", tiny, 2, 1, "numba"), ("big", big, 2, 1, "numba"), ("tiny, numpy engine", tiny, 2, 1, "numpy"),
             ("big, pool of 2", big.with_seeds((0, 1)), 1, 2, "numba")]
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for n, (name, cfg, threads, jobs, engine) in enumerate(cases):
            with RunStore(Path(folder) / f"runs{n}.sqlite") as store:
                execute([RunRequest(cfg)], SweepOptions(jobs=jobs, threads=threads, store=store, progress=False),
                        engine=engine)
                out[name] = sorted({(store.meta(key)["kernel_path"], store.meta(key)["kernel_threads"])
                                    for key in store.keys()}, key=str)
    return out


def test_the_kernel_path_taken_is_in_the_stored_runs_metadata() -> None:
    assert _in_threads("stored_kernel_paths") == {"tiny": [["serial", 2]], "big": [["threaded", 2]],
                                                  "tiny, numpy engine": [[None, 2]],
                                                  "big, pool of 2": [["serial", 1]]}
