"""Same config and seed give bit-identical results run to run and with 1 or 2 worker processes."""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from convergence import SweepOptions
from convergence import FedAvgConfig, RunConfig, RunRequest, StepSize, execute, run
from problems import build_problem, exact_optimum, problem_spec


def _requests() -> list[RunRequest]:
    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=0.05, seed=3)
    optimum = exact_optimum(build_problem(spec), crosscheck=False)
    alg = FedAvgConfig(4, 12, StepSize.per_round(0.05), 8, 1.0, (0, 3, 12), (0, 1, 2))
    alg2 = FedAvgConfig(2, 10, StepSize.constant(0.02), 0, 0.5, (10,), (5,))
    return [RunRequest(RunConfig(spec, alg), optimum, track=True), RunRequest(RunConfig(spec, alg2), optimum)]


def test_jobs_one_and_two_are_bit_identical(on_the_pool: None) -> None:
    serial = execute(_requests(), SweepOptions(jobs=1, progress=False))
    again = execute(_requests(), SweepOptions(jobs=1, progress=False))
    pooled = execute(_requests(), SweepOptions(jobs=2, progress=False))
    for a, b, c in zip(serial, again, pooled):
        assert a.run_id == c.run_id
        for field in ("iterates", "gap", "dist_sq", "extras.max_radius_sq"):
            assert np.array_equal(attrgetter(field)(a), attrgetter(field)(b), equal_nan=True)
            assert np.array_equal(attrgetter(field)(a), attrgetter(field)(c), equal_nan=True)


def test_execute_matches_run_and_seeds_differ() -> None:
    req = _requests()[0]
    (traj,) = execute([req], SweepOptions(jobs=1, progress=False))
    direct = run(req.config, optimum=req.optimum, track=True)
    assert np.array_equal(traj.iterates, direct.iterates)
    assert not np.array_equal(traj.iterates[0, -1], traj.iterates[1, -1])
    # the gap is measured against the exact optimum: it is non-negative and decreased
    assert np.all(traj.gap >= 0) and np.all(traj.gap[:, -1] < traj.gap[:, 0])
