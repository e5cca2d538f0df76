"""FedAvg's sampling and aggregation schemes (Li et al., ICLR 2020, Sec. 3.3 and App. B;
``convergence/algorithms/fedavg/participation.py``): Scheme I, Scheme II, transformed Scheme II and
McMahan et al.'s original scheme, next to full participation.

* the Numba kernel and the NumPy reference agree (<= 1e-10 relative) for every scheme, loss and
  gradient kind, on the records and the tracked maxima;
* full participation is main's FedAvg bit for bit (digests of main's trajectories, main's run ids);
  Scheme II and the original scheme with K = N are full participation bit for bit;
* the samplers: the kernel's draws are the NumPy twin's; Scheme I's frequencies match p_k and
  Scheme II's K-subsets are uniform (chi-square tests at the 0.1% level); on balanced data Scheme II
  is parallel restarted SGD with K participants, run by the block-cyclic engine;
* Lemma 4 (unbiasedness): E[W'] = sum_k p_k w_k for Schemes I and II, by exact enumeration of
  every sample of a tiny N and by Monte Carlo over the real sampler; transformed Scheme II is
  unbiased for the scaled objectives, the original scheme is not;
* only sampled clients compute in the kernel; bad K and bad scheme names name their field.

Step sizes: the agreement tests run exact gradients with eta_t decayed per local iteration
(``StepSize.inverse_time``, the theory's decay) and minibatches with eta_t decayed per round
(``StepSize.per_round``, eta_0 / (1 + round), the paper's experiments, App. D); the other tests
say which they use.
"""

from __future__ import annotations

import hashlib
import itertools
from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare
from test_fedavg_kernel import LOSSES, run_seed, small_problem

from convergence import ConfigError, FedAvgConfig, PRSGDConfig, RunConfig, StepSize, run
from convergence._rng import participation_key, weighted_draws_np, weights_cdf
from convergence.algorithms import algorithm_for
from convergence.algorithms.participation import (
    PARTICIPATION_SCHEMES, aggregation_np, draw_clients, draw_clients_np, round_sample,
)
from problems import FederatedProblem, build_problem, exact_optimum, problem_spec

SCHEMES = ["scheme_i", "scheme_ii", "transformed_scheme_ii", "original"]
LEVEL = 1e-3
"""Significance level of the sampling tests: the samplers are deterministic, so each test is one
fixed draw; a correct sampler fails it with probability 0.1% over the choice of seed."""


def _config(scheme: str, K: int | None, batch: int, **kw) -> FedAvgConfig:
    step = StepSize.per_round(0.2) if batch else StepSize.inverse_time(0.2, 0.05)
    return FedAvgConfig(4, 9, step, batch, kw.pop("server_lr", 1.0), (0, 1, 5, 9), participation=scheme,
                        participants=K, **kw)


def _both_engines(problem: FederatedProblem, alg: FedAvgConfig, seed: int, w_star: np.ndarray) -> tuple:
    """(records, tracked maxima, diverged) of the kernel and of the reference; asserts that they
    agree to 1e-10 relative and that neither diverged."""
    fast = run_seed(problem, alg, seed, w_star, engine="numba", track=True)
    slow = run_seed(problem, alg, seed, w_star, engine="numpy", track=True)
    assert fast[2] == slow[2] == -1
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10, atol=1e-12 * np.abs(slow[0]).max())
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-10)
    return fast, slow


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("batch", [0, 3])
def test_kernel_matches_reference(scheme: str, loss: str, batch: int) -> None:
    """Kernel vs reference <= 1e-10 relative, records and tracked maxima, on the 'mixed' layout
    (two dense clients, two with sparse supports: the kernel's off-support scalar) with unbalanced
    weights p, K = 2 of N = 4 (Scheme I: K = 3 draws), and the run differs from full participation."""
    problem = small_problem(loss, "mixed")
    alg = _config(scheme, 3 if scheme == "scheme_i" else 2, batch)
    w_star = np.random.default_rng(1).normal(size=problem.dim)
    fast, slow = _both_engines(problem, alg, 11, w_star)
    assert np.abs(slow[0][-1] - slow[0][0]).max() > 1e-3  # the run moved
    full = run_seed(problem, _config("full", None, batch), 11, w_star, engine="numba", track=True)
    assert np.abs(full[0][-1] - fast[0][-1]).max() > 1e-6  # the scheme acted


def test_server_lr_and_a_second_seed_agree() -> None:
    """Two-sided learning rates under the original scheme (b W enters W' before the server step) and
    Scheme I on a BLAS-sized minibatch ('wide' layout), each for another seed."""
    for scheme, layout, batch, lr in [("original", "sparse", 2, 0.7), ("scheme_i", "wide", 40, 1.0)]:
        problem = small_problem("softmax", layout)
        alg = _config(scheme, 2, batch, server_lr=lr)
        _both_engines(problem, alg, 5, np.zeros(problem.dim))


MAIN_DIGESTS = {
    # (layout, batch, server_lr): sha256 prefixes of the Numba kernel's records and tracked maxima on
    # main before schemes existed (least squares: no libm call, no BLAS, the same bits on any x86-64)
    ("dense", 0, 1.0): ("119d4eceeb6cb7fd", "f871b67eddfd75f8"),
    ("sparse", 3, 1.0): ("b6cc412d1071c8b3", "b504f84b408369dd"),
    ("mixed", 2, 0.7): ("79c93384acd22663", "db216bf6928ee243"),
}


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("layout,batch,server_lr", list(MAIN_DIGESTS))
def test_full_participation_is_mains_trajectory_bit_for_bit(layout: str, batch: int, server_lr: float) -> None:
    """The default config and an explicit participation = 'full' reproduce main's kernel output to
    the bit (a 1-ulp change in any record changes the digest)."""
    problem = small_problem("least_squares", layout)
    w_star = np.random.default_rng(1).normal(size=problem.dim)
    default = FedAvgConfig(4, 9, StepSize.inverse_time(0.2, 0.05), batch, server_lr, (0, 1, 5, 9))
    explicit = FedAvgConfig(4, 9, StepSize.inverse_time(0.2, 0.05), batch, server_lr, (0, 1, 5, 9),
                            participation="full")
    assert default == explicit
    records, stats, diverged = run_seed(problem, explicit, 11, w_star, engine="numba", track=True)
    assert diverged == -1
    assert (_digest(records), _digest(stats)) == MAIN_DIGESTS[(layout, batch, server_lr)]


def test_full_participation_keeps_mains_json_and_run_ids() -> None:
    li = problem_spec("li_counterexample", N=5, p=4, mu=0.01)
    minibatch = FedAvgConfig(3, 8, StepSize.constant(0.05), 2, 1.0, (0, 2, 8), (0, 4))
    from_w0 = FedAvgConfig(3, 8, StepSize.constant(0.05), 0, 0.7, (0, 2, 8), (0, 4), tuple(np.linspace(-1, 1, 21)))
    assert RunConfig(li, minibatch).run_id == "31c4cbfb4ce5bde6"  # main's run ids
    assert RunConfig(li, from_w0).run_id == "10f88fd81907f74a"
    assert "participation" not in minibatch.to_json() and "participants" not in minibatch.to_json()
    sampled = FedAvgConfig(3, 8, StepSize.constant(0.05), 2, 1.0, (0, 2, 8), (0, 4), participation="scheme_ii",
                           participants=3)
    assert sampled.to_json()["participation"] == "scheme_ii" and sampled.to_json()["participants"] == 3
    assert RunConfig(li, sampled).run_id != RunConfig(li, minibatch).run_id
    assert sampled.with_seeds((7,)) == FedAvgConfig(3, 8, StepSize.constant(0.05), 2, 1.0, (0, 2, 8), (7,),
                                                    participation="scheme_ii", participants=3)


@pytest.mark.parametrize("scheme", ["scheme_ii", "original"])
@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_sampling_every_client_without_replacement_is_full_participation_bit_for_bit(scheme: str, engine: str) -> None:
    """K = N: Scheme II's coefficient (N/K) p_k = 1.0 p_k = p_k and the original scheme's b = 0, so
    every number is full participation's (np.array_equal, not merely close), on both paths."""
    li = problem_spec("li_counterexample", N=5, p=4, mu=0.01)
    problem = build_problem(li)
    optimum = exact_optimum(problem, crosscheck=False)
    for batch in (0, 2):
        full = FedAvgConfig(3, 8, StepSize.per_round(0.05), batch, 1.0, (0, 2, 8), (0, 4))
        every = FedAvgConfig(3, 8, StepSize.per_round(0.05), batch, 1.0, (0, 2, 8), (0, 4), participation=scheme,
                             participants=problem.n_clients)
        a = run(RunConfig(li, full), problem=problem, optimum=optimum, engine=engine, track=True)
        b = run(RunConfig(li, every), problem=problem, optimum=optimum, engine=engine, track=True)
        assert np.array_equal(a.iterates, b.iterates) and np.array_equal(a.gap, b.gap)
        assert np.array_equal(a.extras.max_radius_sq, b.extras.max_radius_sq)
        assert np.array_equal(a.extras.max_grad_sq, b.extras.max_grad_sq)
        assert np.abs(a.iterates[:, -1] - a.iterates[:, 0]).max() > 1e-3


@pytest.mark.parametrize("scheme", ["full", *SCHEMES])
def test_kernel_draws_are_the_numpy_twins(scheme: str) -> None:
    weights = np.array([0.05, 0.4, 0.0, 0.25, 0.3])
    code, K = PARTICIPATION_SCHEMES[scheme], 3
    counts = np.empty(5, dtype=np.int64)
    for seed, r in itertools.product((0, 9, 2**40 + 3), range(50)):
        pkey = np.uint64(participation_key(seed))  # a Python int from a jitted helper: keep it uint64
        draw_clients(code, pkey, r, K, weights_cdf(weights), np.empty(5, dtype=np.uint64),
                     np.empty(K, dtype=np.int64), counts)
        expected = draw_clients_np(scheme, seed, r, None if scheme == "full" else K, weights)
        np.testing.assert_array_equal(counts, expected)
        assert counts.sum() == (5 if scheme == "full" else K)
        if scheme == "scheme_i":
            assert counts[2] == 0  # p_k = 0 is never drawn
        elif scheme != "full":
            assert counts.max() == 1


def test_scheme_i_draw_frequencies_match_p() -> None:
    """40000 draws (K = 8 per round, 5000 rounds of seed 3) against p_k: Pearson's chi-square
    with N - 1 = 5 degrees of freedom must not reject at the 0.1% level; a sampler drawing
    uniformly instead is rejected by the same test."""
    p = np.array([0.02, 0.08, 0.1, 0.2, 0.25, 0.35])
    draws = np.concatenate([weighted_draws_np(3, r, 8, weights_cdf(p)) for r in range(5000)])
    observed = np.bincount(draws, minlength=p.size)
    assert chisquare(observed, p * draws.size).pvalue > LEVEL
    assert chisquare(np.full(p.size, draws.size / p.size), p * draws.size).pvalue < LEVEL


def test_scheme_ii_subsets_are_uniform() -> None:
    """Scheme II's samples over 6000 rounds (N = 5, K = 2: 10 subsets of 600 expected each), chi-square
    with 9 degrees of freedom at the 0.1% level, and every client's inclusion frequency is K/N."""
    N, K, R = 5, 2, 6000
    subsets = [tuple(round_sample("scheme_ii", K, np.full(N, 1 / N), 1, r).counts.nonzero()[0]) for r in range(R)]
    index = {s: i for i, s in enumerate(itertools.combinations(range(N), K))}
    observed = np.bincount([index[s] for s in subsets], minlength=comb(N, K))
    assert chisquare(observed).pvalue > LEVEL
    inclusion = np.bincount(np.concatenate(subsets), minlength=N) / R
    np.testing.assert_allclose(inclusion, K / N, atol=5 * np.sqrt(0.4 * 0.6 / R))


def _local_models(N: int, d: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unbalanced weights p (N,), local models w_k (N, d) and a broadcast model W (d,)."""
    rng = np.random.default_rng(0)
    p = rng.random(N) + 0.1
    return p / p.sum(), rng.normal(size=(N, d)), rng.normal(size=d)


def _aggregate(scheme: str, counts: np.ndarray, p: np.ndarray, K: int, local: np.ndarray, W: np.ndarray) -> np.ndarray:
    coefficients, broadcast = aggregation_np(scheme, counts, p, K)
    return coefficients @ local + broadcast * W


def test_lemma4_unbiased_by_exact_enumeration() -> None:
    """Li et al., Lemma 4: E_S[W'] = sum_k p_k w_k for Scheme I (all N^K draw sequences, probability
    prod_l p_{i_l}) and Scheme II (all C(N, K) subsets, equally likely), with unbalanced p.
    Transformed Scheme II averages the scaled clients simply: E_S[W'] = (1/N) sum_k w_k, the mean
    of the F~_k's local models. The original scheme is biased towards the broadcast model:
    E_S[W'] = (1 - K/N) W + (K/N) sum_k p_k w_k."""
    N, K = 4, 2
    p, local, W = _local_models(N)
    full = p @ local
    scheme_i = sum(np.prod(p[list(draws)]) * _aggregate("scheme_i", np.bincount(draws, minlength=N), p, K, local, W)
                   for draws in itertools.product(range(N), repeat=K))
    np.testing.assert_allclose(scheme_i, full, rtol=1e-13)
    subsets = [np.bincount(s, minlength=N) for s in itertools.combinations(range(N), K)]
    mean = {scheme: sum(_aggregate(scheme, c, p, K, local, W) for c in subsets) / len(subsets)
            for scheme in ("scheme_ii", "transformed_scheme_ii", "original")}
    np.testing.assert_allclose(mean["scheme_ii"], full, rtol=1e-13)
    np.testing.assert_allclose(mean["transformed_scheme_ii"], local.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(mean["original"], (1 - K / N) * W + (K / N) * full, rtol=1e-13)
    assert np.abs(mean["original"] - full).max() > 0.1


def test_lemma4_unbiased_by_monte_carlo_over_the_sampler() -> None:
    """The same expectations over 6000 rounds of the real sampler (seed 5): each coordinate's mean
    within 5 standard errors (estimated from the rounds) of E[W']; the original scheme's mean is
    more than 10 standard errors away from sum_k p_k w_k."""
    N, K, R = 6, 3, 6000
    p, local, W = _local_models(N)
    full = p @ local
    expected = {"scheme_i": full, "scheme_ii": full, "transformed_scheme_ii": local.mean(axis=0),
                "original": (1 - K / N) * W + (K / N) * full}
    for scheme, target in expected.items():
        samples = np.array([_aggregate(scheme, round_sample(scheme, K, p, 5, r).counts, p, K, local, W)
                            for r in range(R)])
        error = np.abs(samples.mean(axis=0) - target)
        assert np.all(error < 5 * samples.std(axis=0) / np.sqrt(R)), scheme
    biased = np.array([_aggregate("original", round_sample("original", K, p, 5, r).counts, p, K, local, W)
                       for r in range(R)])
    assert np.abs(biased.mean(axis=0) - full).max() > 10 * biased.std(axis=0).max() / np.sqrt(R)


def test_only_sampled_clients_compute() -> None:
    """Client 2 has p_2 = 0 and rows of size 1e100: one local step of it overflows (its model and
    gradient become inf). Scheme I never draws it, and the kernel, which runs only the sampled
    clients, tracks finite maxima equal to the reference's (which computes every client and tracks
    the sampled ones); under full participation the same client makes the run diverge (0 * inf)."""
    rng = np.random.default_rng(2)
    sizes = np.array([6, 5, 4, 7])
    X = rng.normal(size=(sizes.sum(), 3))
    X[11:15] *= 1e100
    problem = FederatedProblem("poisoned", "least_squares", X, rng.normal(size=sizes.sum()),
                               np.concatenate([[0], np.cumsum(sizes)]), [0.3, 0.3, 0.0, 0.4], 0.1)
    alg = FedAvgConfig(3, 6, StepSize.constant(0.05), 2, 1.0, (6,), participation="scheme_i", participants=2)
    fast = run_seed(problem, alg, 0, np.zeros(3), engine="numba", track=True)
    with np.errstate(over="ignore", invalid="ignore"):  # the reference runs client 2 into inf
        slow = run_seed(problem, alg, 0, np.zeros(3), engine="numpy", track=True)
    assert fast[2] == slow[2] == -1 and np.all(np.isfinite(fast[1]))
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-10)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-10)
    with np.errstate(all="ignore"):
        assert run_seed(problem, FedAvgConfig(3, 6, StepSize.constant(0.05), 2, 1.0, (6,)), 0, np.zeros(3))[2] == 0


def test_traced_reference_under_a_scheme() -> None:
    """A traced Scheme II run: its records are the untraced run's bit for bit, its global models
    (the trace at synchronisation steps) are the records, and it holds every client's local steps."""
    problem = small_problem("logistic", "dense")
    alg = FedAvgConfig(3, 5, StepSize.per_round(0.3), 2, 1.0, tuple(range(6)), participation="scheme_ii",
                       participants=2)
    optimum = exact_optimum(problem, crosscheck=False)
    traced = run(RunConfig(None, alg), problem=problem, optimum=optimum, engine="numpy", trace=True)
    plain = run(RunConfig(None, alg), problem=problem, optimum=optimum, engine="numpy")
    assert np.array_equal(traced.iterates, plain.iterates)
    trace = traced.extras.traces[0]
    np.testing.assert_array_equal(trace.global_models, traced.iterates[0])
    assert np.all(np.isfinite(trace.local_models))


def test_bad_participation_names_the_field() -> None:
    step = StepSize.constant(0.1)
    cases = [
        ({"participation": "scheme_iii", "participants": 2}, "participation"),
        ({"participation": "scheme_i", "participants": 0}, "participants"),
        ({"participation": "scheme_ii", "participants": 2.0}, "participants"),
        ({"participation": "scheme_ii", "participants": True}, "participants"),
        ({"participation": "original"}, "participants"),
        ({"participation": "full", "participants": 3}, "participants"),
        ({"participation": None}, "participation"),
    ]
    for fields, name in cases:
        with pytest.raises(ConfigError, match=rf"^{name}"):
            FedAvgConfig(2, 3, step, **fields)
    problem = small_problem("least_squares", "dense")  # N = 4
    engine = algorithm_for(FedAvgConfig(2, 3, step))
    for scheme in ("scheme_ii", "transformed_scheme_ii", "original"):
        with pytest.raises(ConfigError, match=r"^participants: K = 5 exceeds the number of clients N = 4"):
            engine.plan(problem, FedAvgConfig(2, 3, step, participation=scheme, participants=5))
    engine.plan(problem, FedAvgConfig(2, 3, step, participation="scheme_i", participants=5))  # with replacement


def test_transformed_scheme_ii_scales_each_clients_steps_by_n_p_k() -> None:
    """By hand: one client per round (K = 1), exact least squares on one row, mu = 0. Client k's
    step is eta N p_k x (x'w - y), and the simple average of one client is its model."""
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    problem = FederatedProblem("hand", "least_squares", X, np.array([1.0, 1.0]), [0, 1, 2], [0.25, 0.75], 0.0)
    alg = FedAvgConfig(1, 1, StepSize.constant(0.1), 0, 1.0, (1,), participation="transformed_scheme_ii",
                       participants=1)
    k = int(round_sample("transformed_scheme_ii", 1, problem.weights, 0, 0).counts.argmax())
    expected = [0.1 * 2 * 0.25 * 1.0, 0.0] if k == 0 else [0.0, 0.1 * 2 * 0.75 * 2.0]  # from w = 0: -eta N p_k x (0 - 1)
    for engine in ("numba", "numpy"):
        np.testing.assert_allclose(run_seed(problem, alg, 0, np.zeros(2), engine=engine)[0][0], expected, rtol=1e-14)


@pytest.mark.parametrize("scheme", ["scheme_ii", "transformed_scheme_ii"])
def test_uniform_subsets_are_the_block_cyclic_engines(scheme: str) -> None:
    """On balanced data (p_k = 1/N, N = 4: N p_k = 1 exactly), Scheme II and transformed Scheme II
    are parallel restarted SGD with K participants (Yu et al.; the block-cyclic engine, one block),
    which samples its K-subsets with the same ``_rng.participants`` and participation key: the
    trajectories agree to rounding (the coefficients (N/K) p_k and 1/K differ in the last bit)."""
    from test_block_cyclic import small

    problem = small("least_squares").block(0)
    assert np.all(problem.weights == 0.25)
    step = StepSize.constant(0.05)
    pr_sgd = PRSGDConfig(rounds=8, sync_interval=3, step_size=step, batch_size=2, participants=2, record_rounds=(4, 8))
    fedavg = FedAvgConfig(3, 8, step, 2, 1.0, (4, 8), participation=scheme, participants=2)
    a = run(RunConfig(problem.spec, pr_sgd), problem=problem).iterates
    b = run(RunConfig(problem.spec, fedavg), problem=problem).iterates
    np.testing.assert_allclose(a, b, rtol=1e-12)
    full = run(RunConfig(problem.spec, FedAvgConfig(3, 8, step, 2, 1.0, (4, 8))), problem=problem).iterates
    assert np.abs(full - b).max() > 1e-6
