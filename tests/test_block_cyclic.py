"""Block-cyclic track: the data model of Ding et al. (2020), MM-PSGD / MC-PSGD and their baselines,
and parallel restarted SGD's per-step metrics (Yu et al. 2019).

The kernel and the NumPy reference must agree to <= 1e-10 relative (DESIGN.md) over a table of
algorithms x losses x gradient kinds x participation; hand-derived cases pin the semantics.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convergence import (
    ConfigError,
    DivergenceError,
    FedAvgConfig,
    FedAvgCyclicConfig,
    MCPSGDConfig,
    MMPSGDConfig,
    PRSGDConfig,
    RunConfig,
    StepSize,
    block_cyclic_gaps,
    run,
)
from convergence._rng import PARTICIPATION_SALT, mix64, participants, participants_np, seed_key
from convergence.algorithms import algorithm_for
from convergence.algorithms.block_cyclic.kernel import kernel_seed
from convergence.algorithms.block_cyclic.linear_pieces import kernel_data
from convergence.algorithms.block_cyclic.reference import block_cyclic_reference
from convergence.algorithms.block_cyclic.reference_pieces import LinearReference
from problems import (
    BlockCyclicProblem,
    FederatedProblem,
    ProblemError,
    block_cyclic_quadratic,
    block_cyclic_softmax,
    build_block_cyclic,
    build_problem,
    exact_optimum,
    label_block_partition,
    problem_spec,
)

RTOL = 1e-10


def small(loss: str, seed: int = 0, **kw) -> BlockCyclicProblem:
    """4 clients x 3 blocks with 5-9 features: least squares, softmax (3 classes) or logistic."""
    if loss == "least_squares":
        return block_cyclic_quadratic(n_clients=4, n_blocks=3, dim=5, samples_per_client=7, seed=seed, **kw)
    classes = 3 if loss == "softmax" else 2
    return block_cyclic_softmax(n_clients=4, n_blocks=3, n_features=4, n_classes=classes, samples_per_client=6,
                                l2=0.01, seed=seed, **kw)


def assert_close(fast: np.ndarray | None, slow: np.ndarray | None) -> None:
    """Relative agreement <= RTOL, NaN where both are NaN."""
    assert (fast is None) == (slow is None)
    if fast is None:
        return
    scale = np.nanmax(np.abs(slow))
    np.testing.assert_allclose(fast, slow, rtol=RTOL, atol=RTOL * scale)


def run_block_cyclic(problem, config, **kw):
    """``convergence.run`` of ``config`` on a problem made directly (the run config carries its spec);
    PR-SGD takes a FederatedProblem and runs it as one block."""
    return run(RunConfig(problem.spec, config), problem=problem, **kw)


def both_engines(problem, config, **kw):
    """(numba result, numpy result) of ``config`` on ``problem``."""
    return run_block_cyclic(problem, config, **kw), run_block_cyclic(problem, config, engine="numpy", **kw)


def schedule(**kw) -> dict:
    """C = 2 cycles of M = 3 blocks, E = 2 rounds of I = 3 steps; records at 0, 1, 5 and 12."""
    return dict(cycles=2, rounds_per_block=2, local_steps=3, step_size=StepSize.inverse_time(0.08, 0.02),
                record_rounds=(0, 1, 5, 12), seeds=(3,), **kw)


# ---------------------------------------------------------------- kernel == reference
CONFIGS = {
    "mm_average": lambda b, K: MMPSGDConfig(**schedule(batch_size=b, participants=K)),
    "mm_exponential": lambda b, K: MMPSGDConfig(**schedule(batch_size=b, participants=K, predictor="exponential")),
    "mc_average": lambda b, K: MCPSGDConfig(**schedule(batch_size=b, participants=K),
                                            block_step_size=StepSize.constant(0.12)),
    "mc_exponential": lambda b, K: MCPSGDConfig(**schedule(batch_size=b, participants=K, predictor="exponential"),
                                                block_step_size=StepSize.constant(0.12)),
    "fedavg_cyclic": lambda b, K: FedAvgCyclicConfig(**schedule(batch_size=b)),
}


GRADIENTS = [(0, None), (3, None), (0, 2), (2, 3)]  # (batch, participants): exact / minibatch, full / partial
TABLE = [(a, b, K) for a in sorted(CONFIGS) for b, K in GRADIENTS if a != "fedavg_cyclic" or K is None]


@pytest.mark.parametrize("loss", ["least_squares", "softmax", "logistic"])
@pytest.mark.parametrize("algorithm,batch,K", TABLE)
def test_kernel_matches_reference(algorithm: str, loss: str, batch: int, K: int | None) -> None:
    problem = small(loss)
    fast, slow = both_engines(problem, CONFIGS[algorithm](batch, K), track=True)
    assert_close(fast.iterates, slow.iterates)
    for name in ("predictors", "separate_models", "grad_sq_mean", "max_mean_drift", "max_drift", "max_norm_sq"):
        assert_close(getattr(fast.extras, name), getattr(slow.extras, name))
    if fast.extras.selected_separate is not None:
        np.testing.assert_array_equal(fast.extras.selected_separate, slow.extras.selected_separate)
    # the run moved: a kernel returning w0 would not agree by accident
    assert np.abs(slow.iterates[0, -1]).max() > 1e-2


@pytest.mark.parametrize("loss", ["least_squares", "softmax"])
@pytest.mark.parametrize("batch,K", [(0, None), (4, None), (2, 3)])
def test_pr_sgd_metrics_kernel_matches_reference(loss: str, batch: int, K: int | None) -> None:
    problem = small(loss).block(1)
    config = PRSGDConfig(rounds=5, sync_interval=4, step_size=StepSize.constant(0.05), batch_size=batch,
                         participants=K, record_rounds=(0, 2, 5))
    fast, slow = both_engines(problem, config)
    assert_close(fast.iterates, slow.iterates)
    for name in ("grad_sq_mean", "max_mean_drift", "max_drift", "max_norm_sq"):
        assert_close(getattr(fast.extras, name), getattr(slow.extras, name))
    assert np.isnan(fast.extras.grad_sq_mean[0, 0]) and np.all(fast.extras.grad_sq_mean[0, 1:] > 0)
    assert np.all(np.diff(fast.extras.max_drift[0]) >= 0) and fast.extras.max_drift[0, -1] >= fast.extras.max_mean_drift[0, -1] > 0


@pytest.mark.parametrize("loss", ["least_squares", "logistic"])
def test_kernel_matches_reference_from_a_nonzero_start(loss: str) -> None:
    """The seam below ``run`` (which starts a linear run at w0 = 0): from w0 != 0, anchored at another
    point, tracked MC-PSGD with partial participation agrees kernel against reference, and the
    tracked numbers recorded at round 0 are those before any step, [0, 0, 0, ||w0||^2], in both
    (``round_steps.initial_tracked``; the kernel used to record 0 for the norm there)."""
    problem = small(loss)
    config = CONFIGS["mc_average"](2, 3)
    plan = algorithm_for(config).plan(problem, config, track=True)
    w0, w_ref = np.linspace(-0.3, 0.4, problem.dim), np.full(problem.dim, 0.1)
    fast = kernel_seed(problem.combined.model.kernel_loss(), kernel_data(problem, plan.batch, plan.track), plan, 3,
                       w0, w_ref)
    slow = block_cyclic_reference(LinearReference(problem, plan, 3), plan, 3, w0, w_ref)
    assert plan.record_rounds[0] == 0 and fast.diverged == slow.diverged == -1
    for seed_run in (fast, slow):
        np.testing.assert_array_equal(seed_run.track[0], [0.0, 0.0, 0.0, np.sum(w0**2)])
        np.testing.assert_array_equal(seed_run.records[0], w0)
    for name in ("records", "predictors", "separate", "track"):
        assert_close(getattr(fast, name), getattr(slow, name))
    np.testing.assert_array_equal(fast.selected, slow.selected)


# ---------------------------------------------------------------- hand-derived cases
@pytest.mark.parametrize("loss,batch", [("least_squares", 0), ("least_squares", 3), ("softmax", 0), ("softmax", 4)])
def test_one_block_mm_psgd_is_fedavg(loss: str, batch: int) -> None:
    # M = 1: Algorithm 1's global model is FedAvg with weights 1/N, the same minibatch streams.
    problem = (block_cyclic_quadratic(n_clients=5, n_blocks=1, dim=4, samples_per_client=6) if loss == "least_squares"
               else block_cyclic_softmax(n_clients=5, n_blocks=1, n_features=3, samples_per_client=8))
    gamma = StepSize.constant(0.07)
    result = run_block_cyclic(problem, MMPSGDConfig(cycles=1, rounds_per_block=6, local_steps=3, step_size=gamma,
                                                    batch_size=batch, record_rounds=(2, 6), seeds=(5,)))
    fedavg = run_block_cyclic(problem.combined, FedAvgConfig(3, 6, gamma, batch, 1.0, (2, 6), seeds=(5,))).iterates[0]
    if loss == "least_squares" and batch == 0:
        # both step through Q_k = X_k'X_k / n_k, formed by separate BLAS calls (last-bit differences)
        np.testing.assert_allclose(result.iterates[0], fedavg, rtol=1e-14, atol=1e-15)
    else:
        np.testing.assert_array_equal(result.iterates[0], fedavg)


def test_block_separate_chain_is_fedavg_on_its_block() -> None:
    # With exact gradients, block m's separate chain restarts each visit where the last one ended,
    # so w_bar_m after cycle c is FedAvg on block(m) with step eta after (c + 1) E rounds.
    problem = small("least_squares")
    eta = StepSize.constant(0.09)
    E, C, M = 2, 3, problem.n_blocks
    ends = tuple(range(E, C * M * E + 1, E))  # the end of every block visit
    config = MCPSGDConfig(cycles=C, rounds_per_block=E, local_steps=3, step_size=StepSize.constant(0.04),
                          block_step_size=eta, record_rounds=ends)
    separate = run_block_cyclic(problem, config).extras.separate_models[0]  # (P, M, d)
    for m in range(M):
        fedavg = run_block_cyclic(problem.block(m), FedAvgConfig(3, C * E, eta, 0, 1.0,
                                                                 tuple(E * (c + 1) for c in range(C)))).iterates[0]
        visits = [ends.index(E * (c * M + m + 1)) for c in range(C)]  # record index after cycle c's visit of m
        np.testing.assert_allclose(separate[visits, m], fedavg, rtol=1e-12)


def test_mc_selection_is_irrelevant_when_the_chains_coincide() -> None:
    # One block, gamma = eta, exact gradients: y_bar = x_bar bit for bit, every loss comparison is
    # a tie (which keeps x_bar), and MC-PSGD's predictors are MM-PSGD's.
    problem = block_cyclic_softmax(n_clients=3, n_blocks=1, n_features=3, samples_per_client=5)
    step = StepSize.constant(0.2)
    base = dict(cycles=2, rounds_per_block=4, local_steps=2, step_size=step, record_rounds=(1, 4, 8))
    mc = run_block_cyclic(problem, MCPSGDConfig(**base, block_step_size=step))
    mm = run_block_cyclic(problem, MMPSGDConfig(**base))
    assert not mc.extras.selected_separate.any()
    np.testing.assert_array_equal(mc.extras.predictors, mm.extras.predictors)
    np.testing.assert_array_equal(mc.extras.separate_models[:, :, 0], mc.iterates)


def test_mc_selection_is_irrelevant_on_identical_blocks() -> None:
    # M identical blocks of one client, gamma = eta, exact gradients: both chains apply the same
    # map (I gradient steps) and the separate chain of block m only moves in block m's rounds, so
    # y_bar is an earlier iterate of the x chain (w_bar_m = x_bar of an earlier round). Gradient
    # descent with step < 2/L decreases F_m, so y_bar never has the smaller loss: u~ = x~.
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(6, 3)), rng.normal(size=6)
    M = 3
    combined = FederatedProblem("identical", "least_squares", np.tile(X, (M, 1)), np.tile(y, M), np.arange(M + 1) * 6,
                                np.full(M, 1 / M), 0.1)
    problem = BlockCyclicProblem(combined, M, 1)
    step = StepSize.constant(0.5 / np.linalg.eigvalsh(X.T @ X / 6).max())
    base = dict(cycles=3, rounds_per_block=2, local_steps=2, step_size=step, record_rounds=tuple(range(19)))
    mc = run_block_cyclic(problem, MCPSGDConfig(**base, block_step_size=step))
    mm = run_block_cyclic(problem, MMPSGDConfig(**base))
    assert not mc.extras.selected_separate.any()
    np.testing.assert_array_equal(mc.extras.predictors, mm.extras.predictors)
    # block 1's separate model after its first visit (round 4) is the mixed chain after round 2
    np.testing.assert_allclose(mc.extras.separate_models[0, 4, 1], mc.iterates[0, 2], rtol=1e-13)


def hand_problem() -> BlockCyclicProblem:
    """One client, one block, one row x = (1, 2), y = 1, mu = 0: F(w) = (x'w - 1)^2 / 2."""
    combined = FederatedProblem("hand", "least_squares", np.array([[1.0, 2.0]]), np.array([1.0]), [0, 1], [1.0], 0.0)
    return BlockCyclicProblem(combined, 1, 1)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_one_client_one_row_by_hand(engine: str) -> None:
    # A step w <- w - 0.1 x (x'w - 1) multiplies the residual x'w - 1 by 1 - 0.1 ||x||^2 = 1/2, so
    # from w = 0 the model after t steps is (1 - 2^-t) x / 5: rounds of I = 2 steps end at
    # x_bar_1 = (0.15, 0.3), x_bar_2 = (0.1875, 0.375), x_bar_3 = (0.196875, 0.39375).
    problem = hand_problem()
    base = dict(cycles=1, rounds_per_block=3, local_steps=2, step_size=StepSize.constant(0.1), record_rounds=(3,))
    x = np.array([1.0, 2.0])
    bars = [(1 - 0.5**t) * x / 5 for t in (2, 4, 6)]
    average = run_block_cyclic(problem, MMPSGDConfig(**base), engine=engine)
    exponential = run_block_cyclic(problem, MMPSGDConfig(**base, predictor="exponential"), engine=engine)
    np.testing.assert_allclose(average.iterates[0, 0], bars[2], rtol=1e-14)
    np.testing.assert_allclose(average.extras.predictors[0, 0, 0], sum(bars) / 3, rtol=1e-14)  # eq. 7
    # base 0.5: weights 1/2, 1/4 to the two latest rounds, the first shares the last weight 1/4
    np.testing.assert_allclose(exponential.extras.predictors[0, 0, 0], bars[2] / 2 + bars[1] / 4 + bars[0] / 4, rtol=1e-14)
    # MC with eta = 0.2: the residual is multiplied by 1 - 0.2 * 5 = 0, so y_bar = x / 5 = argmin F
    # after one step; its loss 0 beats x_bar's every round, and u~ = (0.2, 0.4).
    mc = run_block_cyclic(problem, MCPSGDConfig(**base, block_step_size=StepSize.constant(0.2)), engine=engine)
    np.testing.assert_allclose(mc.extras.predictors[0, 0, 0], x / 5, rtol=1e-14)
    assert mc.extras.selected_separate[0, 0, 0] == 3


def test_average_predictor_is_the_mean_of_the_block_global_models() -> None:
    problem = small("softmax")
    C, M, E = 2, 3, 2
    R = C * M * E
    config = MMPSGDConfig(cycles=C, rounds_per_block=E, local_steps=2, step_size=StepSize.constant(0.1), batch_size=2,
                          participants=3, record_rounds=tuple(range(R + 1)))
    result = run_block_cyclic(problem, config)
    glob = result.iterates[0]
    for m in range(M):
        rounds = [r for r in range(1, R + 1) if ((r - 1) // E) % M == m]  # record index r = after round r - 1
        np.testing.assert_allclose(result.extras.predictors[0, -1, m], glob[rounds].mean(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(result.extras.block_rounds[-1], [C * E] * M)
    assert result.extras.blocks.tolist()[:4] == [-1, 0, 0, 1]


# ---------------------------------------------------------------- the data model
def test_optima_by_the_normal_equations() -> None:
    problem = small("least_squares", mu=0.05)
    M, N = problem.n_blocks, problem.n_clients

    def normal_equations(pairs):
        # argmin of the mean over (X, y) pairs of (1/(2n)) ||X w - y||^2 + mu/2 ||w||^2
        A = sum(X.T @ X / len(y) for X, y in pairs) / len(pairs) + 0.05 * np.eye(problem.dim)
        b = sum(X.T @ y / len(y) for X, y in pairs) / len(pairs)
        return np.linalg.solve(A, b)

    pairs = [problem.combined.client_data(k) for k in range(M * N)]
    np.testing.assert_allclose(exact_optimum(problem.combined, crosscheck=False).w_star, normal_equations(pairs),
                               rtol=1e-10)
    for m in range(M):
        block_opt = exact_optimum(problem.block(m), crosscheck=False)
        np.testing.assert_allclose(block_opt.w_star, normal_equations(pairs[m * N:(m + 1) * N]), rtol=1e-10)


def test_objective_is_the_mean_of_block_means_and_softmax_optimum_is_stationary() -> None:
    problem = small("softmax")
    c, M, N = problem.combined, problem.n_blocks, problem.n_clients
    w = np.random.default_rng(4).normal(size=problem.dim)

    def F(v):  # (1/M) sum_m (1/N) sum_i [mean CE over the rows of (m, i)] + mu/2 ||v||^2, by loops
        total = 0.0
        for k in range(M * N):
            X, y = c.client_data(k)
            Z = X @ v.reshape(c.n_features, c.n_classes)
            ce = np.log(np.exp(Z).sum(axis=1)) - Z[np.arange(len(y)), y.astype(int)]
            total += ce.mean() / (M * N)
        return total + 0.5 * c.mu * v @ v

    assert F(w) == pytest.approx(c.objective(w), rel=1e-12)
    assert F(w) == pytest.approx(problem.block_objectives(w).mean(), rel=1e-12)
    for m in range(M):
        assert problem.block(m).objective(w) == pytest.approx(problem.block_objectives(w)[m], rel=1e-12)
    x_star = exact_optimum(c, crosscheck=False).w_star
    h = 1e-5
    grad = np.array([(F(x_star + h * e) - F(x_star - h * e)) / (2 * h) for e in np.eye(problem.dim)])
    assert np.abs(grad).max() < 1e-8


def test_block_spread_zero_gives_identical_block_optima() -> None:
    # mu = noise = client_spread = 0: every F_m^i is minimised at theta_m = theta_0 + spread z_m.
    kw = dict(n_clients=3, n_blocks=4, dim=3, samples_per_client=5, client_spread=0.0, mu=0.0, noise=0.0, seed=2)
    same = block_cyclic_quadratic(block_spread=0.0, **kw)
    optima = np.array([exact_optimum(same.block(m), crosscheck=False).w_star for m in range(4)])
    np.testing.assert_allclose(optima, np.broadcast_to(optima[0], optima.shape), rtol=1e-10)
    np.testing.assert_allclose(exact_optimum(same.combined, crosscheck=False).w_star, optima[0], rtol=1e-10)
    apart = block_cyclic_quadratic(block_spread=1.0, **kw)
    spread = np.array([exact_optimum(apart.block(m), crosscheck=False).w_star for m in range(4)])
    assert np.linalg.norm(spread - spread.mean(axis=0), axis=1).min() > 0.05
    # client_spread = 0 also makes the clients of a block agree: Li's Gamma of every block is 0
    for m in range(4):
        block = same.block(m)
        opt = exact_optimum(block, crosscheck=False)
        assert opt.F_star - block.weights @ opt.local_F_star == pytest.approx(0.0, abs=1e-12)


def test_softmax_block_spread_moves_block_optima() -> None:
    def distance(spread: float) -> float:
        p = block_cyclic_softmax(n_clients=4, n_blocks=3, n_features=3, samples_per_client=40, block_spread=spread,
                                 client_spread=0.0, l2=0.01, seed=1)
        x_star = exact_optimum(p.combined, crosscheck=False).w_star
        return float(np.mean([np.linalg.norm(exact_optimum(p.block(m), crosscheck=False).w_star - x_star)
                              for m in range(3)]))

    assert distance(3.0) > 2 * distance(0.0)


def test_generators_are_deterministic_and_registered() -> None:
    a, b = small("softmax", seed=7), small("softmax", seed=7)
    assert np.array_equal(a.combined.X, b.combined.X) and np.array_equal(a.combined.y, b.combined.y)
    assert not np.array_equal(a.combined.X, small("softmax", seed=8).combined.X)
    spec = problem_spec("block_cyclic_quadratic", n_clients=3, n_blocks=2, mu=0)
    built = build_block_cyclic(spec)
    assert build_problem(spec) is built.combined and built.spec == spec and built.combined.spec == spec
    assert built.combined.n_clients == 6 and np.allclose(built.combined.weights, 1 / 6)
    assert np.array_equal(built.combined.X, block_cyclic_quadratic(n_clients=3, n_blocks=2, mu=0.0).combined.X)
    with pytest.raises(ProblemError, match="family"):
        build_block_cyclic(problem_spec("random_quadratic"))


def test_shuffled_pools_the_same_rows() -> None:
    problem = small("softmax")
    shuffled = problem.shuffled(3)
    c = problem.combined
    assert shuffled.n_clients == problem.n_clients and np.ptp(shuffled.client_sizes) <= 1
    order = np.lexsort(np.c_[c.X, c.y].T)
    order_s = np.lexsort(np.c_[shuffled.X, shuffled.y].T)
    np.testing.assert_array_equal(np.c_[c.X, c.y][order], np.c_[shuffled.X, shuffled.y][order_s])
    # balanced blocks: the shuffled objective is the block-cyclic F
    w = np.random.default_rng(0).normal(size=problem.dim)
    assert shuffled.objective(w) == pytest.approx(c.objective(w), rel=1e-12)
    assert not np.array_equal(shuffled.X, problem.shuffled(4).X)


def test_label_block_partition() -> None:
    rng = np.random.default_rng(0)
    C, n = 10, 5000
    y = rng.integers(0, C, n).astype(float)
    X = np.c_[rng.normal(size=(n, 3)), np.ones(n)]
    problem = label_block_partition(X, y, n_blocks=5, labels_per_block=3, n_clients=20, seed=1)
    sizes = problem.block_sizes()
    assert sizes.sum() == n and sizes.min() >= 1  # every row used once (3 * 5 >= 10 labels covered)
    # blocks m take labels {2m, 2m+1, 2m+2} mod 10: neighbours share one label
    for m in range(5):
        labels = np.unique(problem.block(m).y).astype(int)
        assert labels.tolist() == sorted({(2 * m + j) % C for j in range(3)})
    # client sizes about Normal(n_m/N, (n_m/(5N))^2): coefficient of variation near 1/5
    cv = sizes.std(axis=1) / sizes.mean(axis=1)
    assert np.all((cv > 0.1) & (cv < 0.3))
    # "by_label": a client fetched in sequence holds at most two labels; "random" mixes them
    first = problem.combined.client_data(0)[1]
    assert np.unique(first).size <= 2
    mixed = label_block_partition(X, y, 5, 3, 20, seed=1, client_order="random")
    assert np.unique(mixed.combined.client_data(0)[1]).size == 3
    assert problem.combined.loss.value == "softmax" and problem.combined.mu == pytest.approx(2e-4)


# ---------------------------------------------------------------- participation, communication
def test_participants_shared_and_uniform() -> None:
    N, K = 10, 3
    key = mix64(seed_key(5) ^ PARTICIPATION_SALT)
    hashes, out = np.empty(N, dtype=np.uint64), np.empty(N, dtype=np.int64)
    counts = np.zeros(N)
    for r in range(2000):
        chosen = participants_np(5, r, N, K)
        participants(key, r, N, K, hashes, out)
        np.testing.assert_array_equal(out[:K], chosen)
        counts[chosen] += 1
    # 6000 draws over 10 clients, each chosen with probability 3/10: chi-square with 9 dof, 99.9% < 27.9
    assert ((counts - 600) ** 2 / 600).sum() < 27.9


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), r=st.integers(0, 10**6), n=st.integers(1, 40), data=st.data())
def test_participants_are_a_sorted_subset(seed: int, r: int, n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, n))
    chosen = participants_np(seed, r, n, k)
    assert chosen.size == k and np.all(np.diff(chosen) > 0) and chosen.min() >= 0 and chosen.max() < n


def test_communication_counts() -> None:
    problem = small("least_squares")  # N = 4, M = 3, d = 5
    kw = dict(cycles=2, rounds_per_block=2, local_steps=1, step_size=StepSize.constant(0.05), participants=2)
    mm = run_block_cyclic(problem, MMPSGDConfig(**kw)).extras.communication
    mc = run_block_cyclic(problem, MCPSGDConfig(**kw, block_step_size=StepSize.constant(0.05))).extras.communication
    R, K, d = 12, 2, 5
    assert MMPSGDConfig(**kw).total_rounds(problem.n_blocks) == R and MMPSGDConfig(**kw).total_steps(3) == R
    assert (mm.rounds, mm.down_params, mm.up_params, mm.up_losses) == (R, R * K * d, R * K * d, 0)
    resets = 5  # block changes after rounds 2, 4, 6, 8, 10 (none after the last round)
    assert (mc.down_params, mc.up_params, mc.up_losses) == (2 * R * K * d + resets * K * d, 2 * R * K * d, 2 * R * K)
    assert mc.total_params == mc.down_params + mc.up_params


# ---------------------------------------------------------------- baselines, PR-SGD, gaps
def test_fedavg_cyclic_is_the_block_mixed_chain() -> None:
    problem = small("logistic")
    kw = dict(cycles=2, rounds_per_block=3, local_steps=2, step_size=StepSize.constant(0.1), batch_size=2)
    cyclic = run_block_cyclic(problem, FedAvgCyclicConfig(**kw))
    mm = run_block_cyclic(problem, MMPSGDConfig(**kw, record_rounds=tuple(range(3, 19, 3))))
    assert cyclic.extras.predictors is None and cyclic.rounds.tolist() == [3, 6, 9, 12, 15, 18]
    np.testing.assert_array_equal(cyclic.iterates, mm.iterates)
    gaps = block_cyclic_gaps(problem, cyclic)
    assert gaps.minimax_gap is None and gaps.global_gap.shape == (1, 6) and np.all(gaps.global_gap >= -1e-12)


def test_fedavg_runs_on_shuffled_block_cyclic_data() -> None:
    shuffled = small("softmax").shuffled(2)
    trajectory = run(RunConfig(shuffled.spec, FedAvgConfig(3, 30, StepSize.constant(0.3), 0, 1.0, (1, 30))),
                     problem=shuffled)
    assert trajectory.config.problem.view == "shuffled" and trajectory.gap[0, -1] < trajectory.gap[0, 0]


def test_pr_sgd_is_fedavg_and_yu_step() -> None:
    problem = small("least_squares").block(0)
    config = PRSGDConfig.yu(n_clients=4, L=20.0, rounds=8, sync_interval=5, batch_size=3, record_rounds=(4, 8))
    assert config.step_size.eta0 == pytest.approx(np.sqrt(4) / (20.0 * np.sqrt(40)))
    result = run_block_cyclic(problem, config)
    fedavg = run(RunConfig(problem.spec, FedAvgConfig(5, 8, config.step_size, 3, 1.0, (4, 8))), problem=problem).iterates[0]
    np.testing.assert_array_equal(result.iterates[0], fedavg)
    assert result.extras.predictors is None and result.extras.communication.up_params == 8 * 4 * problem.dim


def test_pr_sgd_one_client_has_no_drift_and_gd_gradient_by_hand() -> None:
    # One client, exact gradients: x_bar_t is the gradient-descent iterate; for the hand problem
    # ||grad f(x_t)||^2 = ||x||^2 r_t^2 = 5 * 4^-t (residual r_t = -2^-t), so the mean over 4 steps
    # is 5 (1 + 1/4 + 1/16 + 1/64) / 4.
    config = PRSGDConfig(rounds=2, sync_interval=2, step_size=StepSize.constant(0.1))
    result = run_block_cyclic(hand_problem().combined, config)
    assert result.extras.grad_sq_mean[0, -1] == pytest.approx(5 * (1 + 1 / 4 + 1 / 16 + 1 / 64) / 4, rel=1e-13)
    assert result.extras.max_drift[0, -1] == 0.0


def test_predictor_gaps_of_mm_psgd() -> None:
    problem = small("least_squares")
    config = MMPSGDConfig(cycles=3, rounds_per_block=3, local_steps=2, step_size=StepSize.constant(0.05),
                          record_rounds=(9, 27))
    result = run_block_cyclic(problem, config)
    gaps = block_cyclic_gaps(problem, result)
    preds = result.extras.predictors[0, -1]
    F_star = exact_optimum(problem.combined, crosscheck=False).F_star
    own = [problem.block(m).objective(preds[m]) for m in range(problem.n_blocks)]
    assert gaps.minimax_gap[0, -1] == pytest.approx(np.mean(own) - F_star, rel=1e-10)
    block_star = [exact_optimum(problem.block(m), crosscheck=False).F_star for m in range(problem.n_blocks)]
    np.testing.assert_allclose(gaps.block_gap[0, -1], np.subtract(own, block_star), rtol=1e-10)
    assert np.all(gaps.block_gap >= -1e-12)


# ---------------------------------------------------------------- determinism, errors
def test_same_seed_bit_identical_and_seeds_differ() -> None:
    problem = small("softmax")
    config = MCPSGDConfig(**{**schedule(batch_size=2, participants=3), "seeds": (1, 2)},
                          block_step_size=StepSize.constant(0.1))
    a, b = run_block_cyclic(problem, config), run_block_cyclic(problem, config)
    assert np.array_equal(a.extras.predictors, b.extras.predictors) and a.run_id == b.run_id
    assert not np.array_equal(a.extras.predictors[0], a.extras.predictors[1])


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_divergence_names_seed_and_round(engine: str) -> None:
    problem = small("least_squares")
    config = MMPSGDConfig(cycles=50, rounds_per_block=2, local_steps=2, step_size=StepSize.constant(3.0), seeds=(4,))
    with pytest.raises(DivergenceError, match=r"seed 4, round \d+") as info:
        run_block_cyclic(problem, config, engine=engine)
    assert info.value.seed == 4 and 0 <= info.value.round_index < 300


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"cycles": 0}, "cycles"),
        ({"rounds_per_block": 1.5}, "rounds_per_block"),
        ({"local_steps": -1}, "local_steps"),
        ({"batch_size": -2}, "batch_size"),
        ({"step_size": 0.1}, "step_size"),
        ({"predictor": "median"}, "predictor"),
        ({"participants": 0}, "participants"),
        ({"record_rounds": (2, 1)}, "record_rounds"),
        ({"seeds": (1, 1)}, "seeds"),
    ],
)
def test_bad_config_names_field(kwargs: dict, field: str) -> None:
    base = dict(cycles=1, rounds_per_block=2, local_steps=2, step_size=StepSize.constant(0.1))
    with pytest.raises(ConfigError, match=field):
        MMPSGDConfig(**{**base, **kwargs})


def test_config_against_problem_names_field() -> None:
    problem = small("least_squares")  # N = 4, R = C M E = 6
    base = dict(cycles=1, rounds_per_block=2, local_steps=2, step_size=StepSize.constant(0.1))
    with pytest.raises(ConfigError, match="participants"):
        run_block_cyclic(problem, MMPSGDConfig(**base, participants=5))
    with pytest.raises(ConfigError, match="record_rounds"):
        run_block_cyclic(problem, MMPSGDConfig(**base, record_rounds=(7,)))
    with pytest.raises(ConfigError, match="block_step_size"):
        MCPSGDConfig(**base, block_step_size=0.1)
    with pytest.raises(ConfigError, match="record_rounds"):
        PRSGDConfig(rounds=3, sync_interval=2, step_size=StepSize.constant(0.1), record_rounds=(4,))
    assert MMPSGDConfig(**base).to_json()["algorithm"] == "mm_psgd"


def test_bad_problem_input_names_field() -> None:
    with pytest.raises(ProblemError, match="block_spread"):
        block_cyclic_quadratic(block_spread=-1.0)
    with pytest.raises(ProblemError, match="n_classes"):
        block_cyclic_softmax(n_classes=1)
    with pytest.raises(ProblemError, match="m"):
        small("least_squares").block(3)
    X, y = np.ones((30, 2)), np.arange(30) % 3
    with pytest.raises(ProblemError, match="labels_per_block"):
        label_block_partition(X, y, 2, 4, 2, 0)
    with pytest.raises(ProblemError, match="n_clients"):
        label_block_partition(X, y, 3, 1, 11, 0)
    with pytest.raises(ProblemError, match="client_order"):
        label_block_partition(X, y, 3, 1, 2, 0, client_order="sorted")
    combined = small("least_squares").combined
    with pytest.raises(ProblemError, match="combined"):
        BlockCyclicProblem(combined, 2, 4)
    with pytest.raises(ProblemError, match="weights"):
        run_block_cyclic(build_problem(problem_spec("random_quadratic", weighting="dirichlet")),
                   PRSGDConfig(rounds=1, sync_interval=1, step_size=StepSize.constant(0.01)))
