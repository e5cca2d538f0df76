"""The faster paths of `fedbound verify` compute what the slower ones did, to rounding.

* ``PaddedClients.full_gradients`` (two BLAS products per client on its real rows) equals the
  batched product over the padded rows (``LinearModel.batched_gradients`` with the 1/n_k mask) and a
  per-sample sum written out here, for every model, every client and a subset of clients.
* ``minibatch_moments.client_terms`` (BLAS products) equals the per-sample definition
  (1/n_k) sum_i g_i and (1/n_k) sum_i ||g_i - gbar||^2, written out here row by row.
* The reference paths with exact gradients (now through ``full_gradients``) still follow the
  per-sample definition of a full-batch step: one FedAvg round written out here by hand.
* ``fedbound verify`` runs on every core by default (``--jobs`` defaults to the CPU count), and a
  process-pool sweep with a single task to compute runs it in this process.
* Claim evaluation runs with BLAS on one thread (``Claim.evaluate``), so ``verdicts.json`` holds the same
  numbers, bit for bit, whatever the job count and however many BLAS threads the caller allows; with
  jobs = 2 the claims run side by side (``reports.claim_pool``) and draw the same figure files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from convergence import FedAvgConfig, StepSize, SweepOptions, SweepTask, run_sweep
from convergence.algorithms import algorithm_for
from convergence.algorithms.padded_clients import PaddedClients
from convergence.run import run_seed
from problems import FederatedProblem
from proofs_check.constants.minibatch_moments import client_terms
from reports.cli import main

LOSSES = ["least_squares", "logistic", "softmax"]


def unequal_clients(loss: str, seed: int = 3) -> FederatedProblem:
    """Five clients of 3-40 rows (very unequal, so most padded rows are zeros) and 6 features."""
    rng = np.random.default_rng(seed)
    sizes, f = np.array([3, 40, 7, 22, 11]), 6
    C = 4 if loss == "softmax" else 1
    X = rng.normal(size=(sizes.sum(), f))
    if loss == "least_squares":
        y = rng.normal(size=sizes.sum())
    elif loss == "logistic":
        y = (rng.random(sizes.sum()) < 0.4).astype(float)
    else:
        y = rng.integers(0, C, sizes.sum()).astype(float)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return FederatedProblem("unequal", loss, X, y, offsets, sizes / sizes.sum(), 0.05, n_classes=C)


def per_sample_gradients(problem: FederatedProblem, k: int, W: np.ndarray) -> np.ndarray:
    """g_i = x_i r_i' for each of client k's rows at W (f, C), flattened: shape (n_k, f C)."""
    X, y = problem.client_data(k)
    rows = []
    for i in range(X.shape[0]):
        r = problem.model.margin_residuals((X[i] @ W)[None], y[i : i + 1])[0]
        rows.append(np.outer(X[i], r).reshape(-1))
    return np.array(rows)


@pytest.mark.parametrize("loss", LOSSES)
def test_full_gradients_equal_the_padded_product_and_the_per_sample_sum(loss: str) -> None:
    problem = unequal_clients(loss)
    data = PaddedClients(problem)
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    W = np.random.default_rng(7).normal(size=(N, f, C))
    fast = data.full_gradients(problem.model, W)
    padded = problem.model.batched_gradients(W, data.X, data.y, data.mask)
    np.testing.assert_allclose(fast, padded, rtol=1e-13, atol=1e-15 * np.abs(padded).max())
    for k in range(N):
        by_row = per_sample_gradients(problem, k, W[k]).mean(axis=0).reshape(f, C)
        np.testing.assert_allclose(fast[k], by_row, rtol=1e-12, atol=1e-14 * np.abs(by_row).max())
    assert np.abs(fast).max() > 0.1  # not a zero gradient agreeing with zeros
    part = np.array([3, 0])
    np.testing.assert_array_equal(data.full_gradients(problem.model, W[part], part), fast[part])


@pytest.mark.parametrize("loss", LOSSES)
def test_client_terms_equal_the_per_sample_definition(loss: str) -> None:
    problem = unequal_clients(loss)
    points = np.random.default_rng(8).normal(size=(6, problem.dim))
    for k in (0, 1, 4):
        grads, variances = client_terms(problem, k, points)
        for j, w in enumerate(points):
            g = per_sample_gradients(problem, k, w.reshape(problem.n_features, problem.n_classes))
            mean = g.mean(axis=0)
            np.testing.assert_allclose(grads[j], mean + problem.mu * w, rtol=1e-12, atol=1e-14)
            expected = np.mean(np.sum((g - mean) ** 2, axis=1))
            assert variances[j] == pytest.approx(expected, rel=1e-10)
            assert expected > 1e-3


@pytest.mark.parametrize("loss", LOSSES)
def test_exact_gradient_reference_step_is_the_full_batch_step(loss: str) -> None:
    """One round of E = 2 exact-gradient steps on the NumPy reference, against the same round written
    with per-sample gradients: w <- w - eta (mean_i g_i(w) + mu w) per client, then the p-weighted mean."""
    problem = unequal_clients(loss)
    eta, E = 0.1, 2
    alg = FedAvgConfig(E, 1, StepSize.constant(eta), 0, 1.0, (1,))
    fedavg = algorithm_for(alg)
    out = run_seed(fedavg, problem, fedavg.plan(problem, alg, False), 0, np.zeros(problem.dim), "numpy")
    f, C = problem.n_features, problem.n_classes
    w0 = np.zeros(problem.dim) + 0.3
    alg0 = FedAvgConfig(E, 1, StepSize.constant(eta), 0, 1.0, (1,), initial_model=tuple(w0))
    out0 = run_seed(fedavg, problem, fedavg.plan(problem, alg0, False), 0, np.zeros(problem.dim), "numpy")
    for start, result in ((np.zeros(problem.dim), out), (w0, out0)):
        models = []
        for k in range(problem.n_clients):
            w = start.copy()
            for _ in range(E):
                w = w - eta * (per_sample_gradients(problem, k, w.reshape(f, C)).mean(axis=0) + problem.mu * w)
            models.append(w)
        expected = problem.weights @ np.array(models)
        np.testing.assert_allclose(result.records[0], expected, rtol=1e-12, atol=1e-14)
        assert np.abs(expected - start).max() > 1e-3


class _Captured(Exception):
    """Raised by the stand-in for ``verify`` with the settings the CLI built."""


def test_verify_uses_every_core_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def capture(claims, settings, out, **kwargs):
        raise _Captured(settings.jobs)

    monkeypatch.setattr("reports.verify.verify", capture)
    for extra, jobs in (([], os.cpu_count() or 1), (["--jobs", "1"], 1)):
        with pytest.raises(_Captured) as captured:
            main(["--debug", "verify", "--quick", "--claim", "yu2019.cor2", "--out", str(tmp_path), *extra])
        assert captured.value.args == (jobs,)


def _pid() -> dict[str, np.ndarray]:
    return {"pid": np.array(os.getpid())}


def test_a_pool_sweep_with_one_task_to_compute_runs_in_this_process() -> None:
    one = run_sweep([SweepTask("one", _pid, (), {"task": "one"})], SweepOptions(executor="process", jobs=2, progress=False))
    assert int(one["one"]["pid"]) == os.getpid()
    two = run_sweep([SweepTask(k, _pid, (), {"task": k}) for k in ("a", "b")],
                    SweepOptions(executor="process", jobs=2, progress=False))
    assert all(int(two[k]["pid"]) != os.getpid() for k in ("a", "b"))


def _claim_numbers(out: Path) -> list[dict]:
    """The claim cards of a report's verdicts.json (every verdict number, sub-check and grid), without the
    metadata (times, paths, job count)."""
    return json.loads((out / "verdicts.json").read_text())["claims"]


def _verify_twice(tmp_path: Path, claims: list[str]) -> tuple[list[dict], list[dict]]:
    """``verify --quick`` of ``claims`` with jobs = 1 under a caller allowing BLAS 2 threads, and with jobs = 2
    under a caller allowing 1."""
    from threadpoolctl import threadpool_limits

    picked = [arg for claim in claims for arg in ("--claim", claim)]
    cards = []
    for jobs, threads in ((1, 2), (2, 1)):
        out = tmp_path / f"jobs{jobs}"
        with threadpool_limits(limits=threads, user_api="blas"):
            assert main(["verify", "--quick", "--no-progress", "--jobs", str(jobs), "--force-jobs", "--out", str(out),
                         *picked]) == 0
        cards.append(_claim_numbers(out))
    for figure in (f["png"] for card in cards[0] for f in card["figures"]):  # claims side by side: the same figures
        assert (tmp_path / "jobs1" / figure).read_bytes() == (tmp_path / "jobs2" / figure).read_bytes(), figure
    return cards[0], cards[1]


def test_verdict_numbers_are_identical_for_one_and_two_jobs(tmp_path: Path) -> None:
    """The claims whose analysis leans on BLAS (eigenvalues and exact optima of the constants table, Li's
    eq. 13 replays and intervals, the lemma replays) give bit-identical verdicts.json numbers."""
    one, two = _verify_twice(tmp_path, ["assumptions.constants", "li2020.thm4", "yu2019.thm1"])
    assert [c["claim_id"] for c in one] == ["li2020.thm4", "yu2019.thm1", "assumptions.constants"]
    assert one == two


@pytest.mark.slow
def test_every_quick_verdict_number_is_identical_for_one_and_two_jobs(tmp_path: Path) -> None:
    """The whole ``verify --quick``: every claim's verdicts.json numbers, bit for bit (about two minutes)."""
    one, two = _verify_twice(tmp_path, [])
    assert len(one) == len(two) >= 17 and one == two
