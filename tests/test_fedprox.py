"""FedProx as a plug-in algorithm (convergence/algorithms/fedprox): its Numba kernel and NumPy
reference agree, mu_prox = 0 is FedAvg bit for bit, a step worked out by hand, the prox term's
pull towards the global model, its config's validation, and a run through the sweep path and its
store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_fedavg_kernel import CASES, LOSSES, run_seed, small_problem

from convergence import (
    ALGORITHM_NAMES, ConfigError, FedProxConfig, RunConfig, RunRequest, RunStore, StepSize, SweepOptions, execute, run,
)
from convergence.algorithms import config_type
from problems import FederatedProblem, build_problem, exact_optimum, problem_spec


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("layout,batch,server_lr", CASES)
def test_kernel_matches_reference(loss: str, layout: str, batch: int, server_lr: float) -> None:
    """Kernel vs reference <= 1e-10 relative on the records and the tracked maxima, for every loss,
    dense / sparse / mixed / wide (BLAS) layouts, exact and minibatch gradients. The sparse layouts
    check the off-support scalar s <- s - eta (mu s + mu_prox (s - 1)) against the dense reference
    from round 2 on (in round 1 the global model is 0 off every support)."""
    problem = small_problem(loss, layout)
    prox = FedProxConfig(4, 9, StepSize.inverse_time(0.2, 0.05), 0.5, batch, server_lr, (0, 1, 5, 9))
    w_star = np.random.default_rng(1).normal(size=problem.dim)
    fast, slow = (run_seed(problem, prox, 11, w_star, engine=engine, track=True) for engine in ("numba", "numpy"))
    assert fast[2] == slow[2] == -1
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10, atol=1e-12 * np.abs(slow[0]).max())
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-10)
    # the prox term acted on both paths: FedAvg's trajectory from the same seed is another one
    fedavg = run_seed(problem, prox.fedavg_config, 11, w_star, engine="numba", track=True)
    assert np.abs(fedavg[0][-1] - slow[0][-1]).max() > 1e-4 * np.abs(slow[0][-1]).max()


def _bit_for_bit_cases() -> list[tuple[str, Any, FederatedProblem, int, float, bool]]:
    """(label, spec or None, problem, batch, server_lr, from a nonzero initial model): Li et al.'s
    counterexample (sparse supports, the Gram path), a small synthetic(1, 1) softmax problem, a
    mixed-support logistic problem made directly and a wide least-squares one (the BLAS path)."""
    li = problem_spec("li_counterexample", N=5, p=4, mu=0.01)
    synthetic = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=1e-3, seed=3)
    return [
        ("li exact", li, build_problem(li), 0, 1.0, False),
        ("li exact from w0", li, build_problem(li), 0, 1.0, True),
        ("li minibatch", li, build_problem(li), 2, 0.7, False),
        ("synthetic minibatch", synthetic, build_problem(synthetic), 5, 1.0, False),
        ("synthetic exact", synthetic, build_problem(synthetic), 0, 1.0, False),
        ("logistic mixed", None, small_problem("logistic", "mixed"), 3, 1.0, True),
        ("least squares wide", None, small_problem("least_squares", "wide"), 0, 0.7, False),
    ]


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_mu_prox_zero_is_fedavg_bit_for_bit(engine: str) -> None:
    """mu_prox = 0 evaluates no prox term on either path, so every number is FedAvg's: iterates,
    metrics and tracked maxima compare equal (np.array_equal), not merely close."""
    for label, spec, problem, batch, server_lr, from_w0 in _bit_for_bit_cases():
        optimum = exact_optimum(problem, crosscheck=False)
        w0 = tuple(np.linspace(-1.0, 1.0, problem.dim)) if from_w0 else ()
        prox = FedProxConfig(3, 8, StepSize.constant(0.05), 0.0, batch, server_lr, (0, 2, 8), (0, 4), w0)
        a = run(RunConfig(spec, prox), problem=problem, optimum=optimum, engine=engine, track=True)
        b = run(RunConfig(spec, prox.fedavg_config), problem=problem, optimum=optimum, engine=engine, track=True)
        assert np.array_equal(a.iterates, b.iterates), label
        assert np.array_equal(a.gap, b.gap) and np.array_equal(a.dist_sq, b.dist_sq), label
        assert np.array_equal(a.extras.max_radius_sq, b.extras.max_radius_sq), label
        assert np.array_equal(a.extras.max_grad_sq, b.extras.max_grad_sq), label
        assert np.abs(a.iterates[:, -1] - a.iterates[:, 0]).max() > 1e-3, label  # the run moved
        assert a.run_id != b.run_id  # two algorithms, two runs in a store


def test_two_least_squares_steps_by_hand() -> None:
    # One client, one row x = (1, 2), y = 1, mu = 0: F(w) = 1/2 (x'w - y)^2, grad F = x (x'w - y);
    # mu_prox = 2, eta = 0.1, one round of E = 2 steps from w_g = w0 = 0:
    #   step 1: w0 = w_g, so the prox term is 0: g = x (0 - 1) = (-1, -2), w1 = 0 - 0.1 g = (0.1, 0.2);
    #   step 2: x'w1 = 0.5, grad F = 0.5 - 1 times x = (-0.5, -1), prox 2 (w1 - 0) = (0.2, 0.4),
    #           g = (-0.3, -0.6), w2 = w1 - 0.1 g = (0.13, 0.26).
    # One client of weight 1: the server's average is w2. (FedAvg's w2 is (0.15, 0.3).)
    problem = FederatedProblem("hand", "least_squares", np.array([[1.0, 2.0]]), np.array([1.0]), [0, 1], [1.0], 0.0)
    config = FedProxConfig(2, 1, StepSize.constant(0.1), 2.0, record_rounds=(1,))
    for engine in ("numba", "numpy"):
        records, _, _ = run_seed(problem, config, 0, np.zeros(2), engine=engine)
        np.testing.assert_allclose(records[0], [0.13, 0.26], rtol=1e-14)


def test_prox_term_shrinks_client_drift_on_a_strongly_convex_quadratic() -> None:
    """Client drift ||w_k - w_g|| at the end of a round falls as mu_prox grows.

    Why: F_k(w) + mu/2 ||w||^2 is a quadratic with Hessian H > 0 (least squares, mu > 0). With
    exact gradients, delta_e = w_e - w_g obeys delta_{e+1} = (I - eta (H + mu_prox I)) delta_e - eta
    grad F_k(w_g), delta_0 = 0, so in H's eigenbasis (eigenvalue l) the drift after E steps is
    -eta grad_l sum_{i<E} (1 - eta (l + mu_prox))^i. When eta (l + mu_prox) <= 1 every term of the
    sum lies in [0, 1] and strictly falls as mu_prox grows (for i >= 1), so each component, and
    the norm, is smaller than FedAvg's (mu_prox = 0) for E >= 2. Each client runs alone (a
    one-client problem of its rows, weight 1), so the recorded model after round 1 is w_k, and
    w_g = w0 = 0; the closed form above is checked too.
    """
    source = build_problem(problem_spec("random_quadratic", n_clients=4, dim=6, seed=2))
    mus, E = (0.0, 0.5, 2.0), 5
    for k in range(source.n_clients):
        X, y = source.client_data(k)
        client = FederatedProblem(f"client {k}", "least_squares", X, y, [0, len(y)], [1.0], source.mu)
        H = X.T @ X / len(y) + source.mu * np.eye(X.shape[1])
        eta = 1.0 / (np.linalg.eigvalsh(H).max() + max(mus))
        grad_at_wg = -X.T @ y / len(y)  # grad F_k at w_g = 0
        drifts = []
        for mu_prox in mus:
            config = FedProxConfig(E, 1, StepSize.constant(eta), mu_prox, record_rounds=(1,))
            w_k = run_seed(client, config, 0, np.zeros(client.dim))[0][0]
            M = np.eye(len(H)) - eta * (H + mu_prox * np.eye(len(H)))
            closed = -eta * sum(np.linalg.matrix_power(M, i) for i in range(E)) @ grad_at_wg
            np.testing.assert_allclose(w_k, closed, rtol=1e-10)
            drifts.append(np.linalg.norm(w_k))
        assert drifts[0] > drifts[1] > drifts[2] > 0.0, (k, drifts)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", True, None])
def test_bad_mu_prox_names_the_field(bad: Any) -> None:
    with pytest.raises(ConfigError, match="mu_prox"):
        FedProxConfig(2, 3, StepSize.constant(0.1), bad)


def test_config_fields_json_and_registry() -> None:
    config = FedProxConfig(2, 6, StepSize.constant(0.1), 0.25, 3, 0.5, [0, 3, 6], [4, 1])
    assert config.record_rounds == (0, 3, 6) and config.seeds == (4, 1)  # normalised as FedAvg's
    assert config.to_json() == {**config.fedavg_config.to_json(), "algorithm": "fedprox", "mu_prox": 0.25}
    assert config.with_seeds((7,)) == FedProxConfig(2, 6, StepSize.constant(0.1), 0.25, 3, 0.5, (0, 3, 6), (7,))
    assert "fedprox" in ALGORITHM_NAMES and config_type("fedprox") is FedProxConfig
    assert FedProxConfig(2, 6, StepSize.constant(0.1), 0.0).record_rounds == (6,)  # default: the last round
    with pytest.raises(ConfigError, match="local_steps"):  # a field shared with FedAvg names itself too
        FedProxConfig(0, 6, StepSize.constant(0.1), 0.25)
    with pytest.raises(ConfigError, match="record_rounds"):
        FedProxConfig(2, 6, StepSize.constant(0.1), 0.25, record_rounds=(7,))
    spec = problem_spec("li_counterexample", N=3, p=2, mu=0.05)  # d = 7
    with pytest.raises(ConfigError, match="initial_model"):  # checked against the problem as FedAvg's
        run(RunConfig(spec, FedProxConfig(2, 6, StepSize.constant(0.1), 0.25, initial_model=(1.0, 2.0))))
    with pytest.raises(ConfigError, match="trace"):  # no per-step trace: its readers are FedAvg's lemma checks
        run(RunConfig(spec, FedProxConfig(2, 6, StepSize.constant(0.1), 0.25)), engine="numpy", trace=True)


class CountingMonitor:
    """A sweep monitor that keeps how many runs each sweep read from the store."""

    def __init__(self) -> None:
        self.cached: list[int] = []

    def sweep_started(self, description: str, configs: Sequence[Mapping[str, Any]], cached: int) -> None:
        self.cached.append(cached)

    def run_finished(self) -> None:
        return None

    def sweep_finished(self, description: str, total: int, cached: int, seconds: float) -> None:
        return None


def test_execute_stores_and_reads_back_bit_identically(tmp_path: Path) -> None:
    spec = problem_spec("li_counterexample", N=3, p=2, mu=0.05)
    config = RunConfig(spec, FedProxConfig(3, 6, StepSize.constant(0.1), 0.3, 2, 1.0, (0, 3, 6), (0, 1)))
    request = RunRequest(config, track=True)
    monitor = CountingMonitor()
    with RunStore(tmp_path / "runs.sqlite") as store:
        (first,) = execute([request], SweepOptions(store=store, progress=monitor))
        (second,) = execute([request], SweepOptions(store=store, progress=monitor))
        assert len(store) == 2  # one stored run per seed
    assert monitor.cached == [0, 2]  # the second sweep computed nothing
    direct = run(config, track=True)
    for result in (second, direct):
        assert result.run_id == first.run_id
        assert np.array_equal(result.iterates, first.iterates) and np.array_equal(result.gap, first.gap)
        assert np.array_equal(result.extras.max_grad_sq, first.extras.max_grad_sq)
        assert np.array_equal(result.extras.max_radius_sq, first.extras.max_radius_sq)
    assert np.all(first.gap[:, -1] < first.gap[:, 0])
