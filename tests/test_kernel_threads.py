"""Threads in the linear local-SGD kernel (``convergence/algorithms/local_sgd.py``,
``kernel_threads.py``): the clients of a round run over Numba's threads, and every result (records,
tracked maxima, the divergence round) is bit-identical to the serial kernel, for every loss,
data layout, gradient kind, participation scheme and FedProx; the sweep's ``threads`` option is
explicit, checked, and refused together with a process pool.

Numba's thread count is fixed when it starts (NUMBA_NUM_THREADS, the CPU count by default); on a
one-core machine the comparison runs in a child process started with NUMBA_NUM_THREADS=2, so it
is never skipped.
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

from convergence import FedAvgConfig, StepSize
from convergence.algorithms import FedProxConfig, algorithm_for, check_threads, kernel_threads, using_kernel_threads
from convergence.run import run_seed
from convergence.sweep import SweepOptions

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
    """Every case run serially and on ``threads`` threads; returns the cases whose results differ
    in any bit (empty: all identical)."""
    differ = []
    configs = [(f"{loss}/{layout}/b{batch}/{scheme}", small_problem(loss, layout),
                FedAvgConfig(4, 9, StepSize.inverse_time(0.2, 0.05), batch, 0.8, (0, 1, 5, 9), participation=scheme,
                             participants=K)) for loss, layout, batch, scheme, K in CASES]
    configs.append(("fedprox", small_problem("softmax", "mixed"),
                    FedProxConfig(4, 9, StepSize.constant(0.1), 0.5, 3, 1.0, (0, 9))))
    for name, problem, cfg in configs:
        serial = _seed(problem, cfg, 5)
        with using_kernel_threads(threads):
            threaded = _seed(problem, cfg, 5)
        if not all(np.array_equal(a, b) for a, b in zip(serial, threaded)):
            differ.append(name)
    return differ


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
