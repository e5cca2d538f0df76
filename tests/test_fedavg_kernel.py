"""The Numba kernel and the NumPy reference compute the same FedAvg trajectory from one seed.

A table of loss kinds x data layouts x gradient kinds x server step sizes; each cell runs both
engines and requires relative agreement <= 1e-10 (DESIGN.md contract) on the recorded global
models and on the tracked statistics (max ||w - w*||^2 and max ||g||^2).
"""

from __future__ import annotations

import numpy as np
import pytest

from convergence import FedAvgConfig, StepSize
from convergence.algorithms import algorithm_for
from convergence.run import run_seed as run_planned_seed
from convergence._rng import sample_index, sample_indices_np, seed_key, stream_key
from problems import FederatedProblem

LOSSES = ["least_squares", "logistic", "softmax"]


def run_seed(problem, alg, seed, w_star, engine="numba", track=False):
    """(records (P, d), [max ||w - w*||^2, max ||g||^2], diverged round) of one seed through FedAvg's engine."""
    fedavg = algorithm_for(alg)
    out = run_planned_seed(fedavg, problem, fedavg.plan(problem, alg, track), seed, w_star, engine)
    return out.records, np.array([out.max_radius_sq, out.max_grad_sq]), int(out.diverged)
LAYOUTS = ["dense", "sparse", "mixed", "wide"]


def small_problem(loss: str, layout: str, seed: int = 0, mu: float = 0.1) -> FederatedProblem:
    """Four clients with 5-11 rows of 7 features; 'sparse' gives each client 2-3 features,
    'mixed' makes clients 0 and 2 dense and the others sparse; 'wide' has 64 features and
    45-60 rows so that exact gradients and batches of 40 take the kernel's BLAS path."""
    rng = np.random.default_rng(seed)
    N, f, C = 4, 7, 3
    sizes = rng.integers(5, 12, N)
    if layout == "wide":
        f, sizes = 64, rng.integers(45, 61, N)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.normal(size=(sizes.sum(), f))
    for k in range(N):
        if layout == "sparse" or (layout == "mixed" and k % 2 == 1):
            keep = (np.arange(f) % N == k) | (np.arange(f) == k + 1)
            X[offsets[k] : offsets[k + 1]] *= keep
    if loss == "least_squares":
        y, C = rng.normal(size=sizes.sum()), 1
    elif loss == "logistic":
        y, C = (rng.random(sizes.sum()) < 0.5).astype(float), 1
    else:
        y = rng.integers(0, C, sizes.sum()).astype(float)
    weights = rng.random(N)
    return FederatedProblem("small", loss, X, y, offsets, weights / weights.sum(), mu, n_classes=C)


CASES = [(layout, batch, lr) for layout in LAYOUTS for batch, lr in [(0, 1.0), (3, 1.0), (2, 0.7)]]
CASES.append(("wide", 40, 1.0))  # a minibatch large enough for the BLAS path


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("layout,batch,server_lr", CASES)
def test_kernel_matches_reference(loss: str, layout: str, batch: int, server_lr: float) -> None:
    problem = small_problem(loss, layout)
    alg = FedAvgConfig(4, 9, StepSize.inverse_time(0.2, 0.05), batch, server_lr, (0, 1, 5, 9))
    w_star = np.random.default_rng(1).normal(size=problem.dim)
    fast = run_seed(problem, alg, 11, w_star, engine="numba", track=True)
    slow = run_seed(problem, alg, 11, w_star, engine="numpy", track=True)
    assert fast[2] == slow[2] == -1
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10, atol=1e-12 * np.abs(slow[0]).max())
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-10)
    # the run moved: a kernel that returned w0 would not pass the agreement by accident
    assert np.abs(slow[0][-1] - slow[0][0]).max() > 1e-3


@pytest.mark.parametrize("kind", [StepSize.constant(0.05), StepSize.li(0.1, 2.0, 3), StepSize.per_round(0.1)])
def test_schedules_agree(kind: StepSize) -> None:
    problem = small_problem("logistic", "mixed")
    alg = FedAvgConfig(3, 6, kind, 2, 1.0, (6,))
    w_star = np.zeros(problem.dim)
    fast = run_seed(problem, alg, 3, w_star, engine="numba")
    slow = run_seed(problem, alg, 3, w_star, engine="numpy")
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10)


def test_schedule_formulas() -> None:
    # Li et al. Thm 1: eta_t = 2/(mu (gamma + t)) with t counted from 1 -> our t = 0 gives 2/(mu(gamma+1))
    li = StepSize.li(mu=0.5, L=2.0, local_steps=5)
    assert li.gamma == 32.0  # max(8 * 2 / 0.5, 5)
    assert li.at(0, 5) == pytest.approx(2 / (0.5 * 33))
    assert StepSize.per_round(1.0).at(np.array([0, 4, 5, 12]), 5).tolist() == [1.0, 1.0, 0.5, 1 / 3]
    assert StepSize.inverse_time(1 / 25, 0.01 / 5).at(10, 1) == pytest.approx((1 / 5) / (5 + 10 * 0.01))


def test_minibatch_sampler_is_shared_and_uniform() -> None:
    sizes = np.array([7, 13, 1, 50])
    expected = sample_indices_np(9, 123, sizes, 6)
    # called from Python, the jitted helpers return Python ints: keep them uint64 (numba would type
    # a Python int above 2^63 as int64 and overflow)
    key = np.uint64(seed_key(9))
    got = np.array([[sample_index(np.uint64(stream_key(key, 123, k, 4)), j, sizes[k]) for j in range(6)]
                    for k in range(4)])
    np.testing.assert_array_equal(got, expected)
    draws = np.concatenate([sample_indices_np(1, t, np.array([10]), 50)[0] for t in range(400)])
    counts = np.bincount(draws, minlength=10)
    assert draws.min() >= 0 and draws.max() < 10
    # 20000 uniform draws over 10 cells: chi-square with 9 dof, 99.9% quantile 27.9
    chi2 = ((counts - 2000) ** 2 / 2000).sum()
    assert chi2 < 27.9


def test_exact_gradient_least_squares_step_by_hand() -> None:
    # One client, one row x = (1, 2), y = 1, mu = 0: F(w) = 1/2 (x'w - y)^2, grad = x (x'w - y).
    # From w = 0 with eta = 0.1: w1 = 0.1 * x = (0.1, 0.2); x'w1 = 0.5; w2 = w1 + 0.1 * 0.5 x = (0.15, 0.3).
    problem = FederatedProblem("hand", "least_squares", np.array([[1.0, 2.0]]), np.array([1.0]), [0, 1], [1.0], 0.0)
    alg = FedAvgConfig(2, 1, StepSize.constant(0.1), 0, 1.0, (1,))
    for engine in ("numba", "numpy"):
        records, _, _ = run_seed(problem, alg, 0, np.zeros(2), engine=engine)
        np.testing.assert_allclose(records[0], [0.15, 0.3], rtol=1e-14)


def test_divergence_is_detected_with_its_round() -> None:
    problem = small_problem("least_squares", "dense")
    alg = FedAvgConfig(2, 400, StepSize.constant(5.0), 0, 1.0, (400,))
    fast = run_seed(problem, alg, 0, np.zeros(problem.dim), engine="numba")
    slow = run_seed(problem, alg, 0, np.zeros(problem.dim), engine="numpy")
    assert 0 <= fast[2] < 400
    assert fast[2] == slow[2]


def test_same_seed_bit_identical_and_seeds_differ() -> None:
    problem = small_problem("softmax", "mixed")
    alg = FedAvgConfig(3, 5, StepSize.constant(0.1), 2, 1.0, (5,))
    a = run_seed(problem, alg, 4, np.zeros(problem.dim))[0]
    b = run_seed(problem, alg, 4, np.zeros(problem.dim))[0]
    c = run_seed(problem, alg, 5, np.zeros(problem.dim))[0]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
