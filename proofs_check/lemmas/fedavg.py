"""Lemma checks on FedAvg trajectories: Li et al. (ICLR 2020) Lemmas 1-3 and Yu et al.'s drift.

Each lemma is an inequality LHS_t <= RHS_t between expectations, for every local step t. A
``LemmaData`` holds the traces of every seed of a FedAvg config (``convergence.execute`` with
``trace=True`` on the NumPy reference path: every local iterate w_t^k, ``convergence.FedAvgTrace``)
and the constants of the assumptions along the run (``proofs_check.constants.run_moments``). Both sides are
evaluated at every local step t = 0..T-1 (plotted at Li's 1-based index t + 1) for every seed; the
expectation is the mean over seeds with a Student-t interval, and ``convergence.check_upper_bound``
gives the verdict: PASS when the interval stays below the bound at every step, FAIL when it is
provably above somewhere (Holm over the steps, family-wise error rate 5%), INCONCLUSIVE otherwise.

Statements (right-hand sides in ``proofs_check.lemmas.fedavg_bounds``; ``shared/THEOREMS.md`` l.49-55
and l.110, ``papers/li2020_fedavg_noniid.txt`` l.361-378, ``papers/liu_lecture_fl_fedavg.md`` l.363;
notation of ``convergence.algorithms.fedavg.trace``: wbar_t = sum_k p_k w_t^k,
g_t = sum_k p_k g_{t,k}, gbar_t = sum_k p_k grad F_k(w_t^k)):

* li2020.lemma1 (one-step SGD, Assumptions 1-2, eta_t <= 1/(4L)):
  E||vbar_{t+1} - w*||^2 <= (1 - eta_t mu) E||wbar_t - w*||^2 + eta_t^2 E||g_t - gbar_t||^2
  + 6 L eta_t^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2, with vbar_{t+1} = wbar_t - eta_t g_t.
  The noise of step t is integrated exactly: given the past, E_t||vbar_{t+1} - w*||^2 =
  ||wbar_t - eta_t gbar_t - w*||^2 + eta_t^2 V_t and E_t||g_t - gbar_t||^2 = V_t, where
  V_t = sum_k p_k^2 var_k(w_t^k, b) is the exact minibatch variance (clients sample
  independently); the outer expectation is the mean over seeds. As both sides are random, the
  check is paired: per seed LHS - RHS + mean_s RHS against the bound mean_s RHS (the same
  expectation inequality; the interval is that of the paired difference).
* li2020.lemma2 (Assumption 3): E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2, with the realised
  minibatch gradients (its content is that the clients' noise terms are uncorrelated). With
  sigma_k^2 as Assumption 3 defines it (below), the lemma holds with equality at a step where
  every client's variance peaks (t = 0 when all start at w_0 and the variance is largest there):
  a sampled check cannot confirm an equality, so there it is INCONCLUSIVE (the notes give the
  ratio E V_t / bound the definition attains).
* li2020.lemma3 (Assumption 4, eta_t non-increasing, eta_t <= 2 eta_{t+E}):
  E sum_k p_k ||wbar_t - w_t^k||^2 <= 4 eta_t^2 (E-1)^2 G^2.
* yu2019.drift (Yu, Yang, Zhu, AAAI 2019, Lemma 1 of the lecture note; constant step s, uniform
  average xbar_t = (1/N) sum_i x_t^i, K = sync interval = E): E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2
  for every client i. The proof (note l.366-391) needs E||g||^2 <= G^2 at the clients' iterates and
  at most K steps since every client last held the same model, not identical data: whether the
  clients' data are identical (the note's setting) is reported in the notes, not required.
  Checked on FedAvg as fedbound runs it (the gradient at a synchronisation step is taken at the
  averaged model; Yu's PR-SGD takes it before averaging), which the proof does not use.

Constants: L, mu (Li's max_k L_k, min_k mu_k) and Gamma from ``proofs_check.constants.assumptions``;
sigma_k^2 and G^2 by the one definition of Li's Assumptions 3-4 (``run_moments.iterate_moments``):
sigma_k^2 = max_t E var_k(w_t^k, b), G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch
gradient at client k's own iterate, E the mean over the seeds of the moments given each seed's
iterates (exact for a deterministic run). These are the constants the falsifier computes exactly
(``proofs_check.falsifier.claims``), so a planted constant a little below what the run needs must FAIL.

Planted variants (the power self-test of ``proofs_check.claims.checks.lemmas``): each lemma
takes a factor on its constant (``scale``, ``factor``, ``constant``), planted where the data prove
it too small (``proofs_check.lemmas.verdicts.planted_factor``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence import FedAvgConfig, FedAvgTrace, Hypothesis, RunConfig, RunRequest, Verdict, execute
from problems import FederatedProblem, Optimum, exact_optimum

from ..constants.assumptions import Estimate, heterogeneity, smoothness, strong_convexity
from ..framework.settings import VerifySettings
from .fedavg_bounds import li_lemma1_bound, li_lemma2_bound, li_lemma3_bound, yu_drift_bound
from .seed_traces import SeedTraces
from .verdicts import LemmaRow, upper_bound_verdict
from ..constants.run_moments import IterateMoments, iterate_moments

__all__ = [
    "LEMMA_IDS",
    "LemmaData",
    "collect",
    "li_lemma1",
    "li_lemma2",
    "li_lemma3",
    "yu_drift",
    "check_lemmas",
    "lemma_table",
]

LEMMA_IDS = ("li2020.lemma1", "li2020.lemma2", "li2020.lemma3", "yu2019.drift")


@dataclass(frozen=True, eq=False)
class LemmaData(SeedTraces):
    """Every local iterate of every seed of ``config`` on ``problem`` (``traces``, in the order of
    ``config.seeds``), and the constants of the assumptions along the run (module docstring)."""

    problem: FederatedProblem
    config: FedAvgConfig
    optimum: Optimum
    traces: tuple[FedAvgTrace, ...]
    L: Estimate
    mu: Estimate
    Gamma: Estimate
    moments: IterateMoments

    @property
    def x(self) -> np.ndarray:
        """Li's 1-based step index t + 1 of the local steps t = 0..T-1, shape (T,)."""
        return np.arange(1, self.config.total_steps + 1, dtype=np.float64)

    @property
    def step_sizes(self) -> np.ndarray:
        """eta_t for t = 0..T-1, shape (T,)."""
        return self.traces[0].step_sizes

    @property
    def deterministic(self) -> bool:
        """True with exact local gradients (batch 0) and full participation: such a run draws nothing."""
        return self.config.batch_size == 0 and self.config.participation == "full"

    @property
    def sigma_sq(self) -> np.ndarray:
        """sigma_k^2 of Li's Assumption 3 along the run, shape (N,) (``IterateMoments.sigma_sq``)."""
        return self.moments.sigma_sq

    @property
    def G_sq(self) -> float:
        """G^2 of Li's Assumption 4 along the run (``IterateMoments.G_sq``)."""
        return self.moments.G_sq

    def constants_note(self) -> str:
        return (f"L = {self.L.value:.6g}, mu = {self.mu.value:.6g}, Gamma = {self.Gamma.value:.6g}, "
                f"{self.moments.describe()}")


def collect(
    problem: FederatedProblem, config: FedAvgConfig, *, optimum: Optimum | None = None,
    settings: VerifySettings | None = None,
) -> LemmaData:
    """Trace every seed of ``config`` on ``problem`` (which must carry its spec) and compute the
    constants along the run: one traced request through ``convergence.execute`` on the NumPy
    reference path, with ``settings``' jobs, scheduler and run store (None: in this process,
    without a store or progress)."""
    optimum = exact_optimum(problem, crosscheck=False) if optimum is None else optimum
    settings = VerifySettings(progress=False) if settings is None else settings
    (result,) = execute([RunRequest(RunConfig(problem.spec, config), optimum, trace=True)], settings.sweep_options(), engine="numpy", description="lemma traces")
    traces = result.extras.traces
    T = config.total_steps
    local = np.stack([trace.local_models[:T] for trace in traces])
    grad_sq = np.stack([trace.full_gradient_sq for trace in traces])
    moments = iterate_moments(problem, local, config.batch_size, full_gradient_sq=grad_sq,
                              exact=config.batch_size == 0 and config.participation == "full")
    return LemmaData(problem, config, optimum, traces, smoothness(problem), strong_convexity(problem),
                     heterogeneity(problem, optimum), moments)


# ---------------------------------------------------------------------------------- helpers
def _server_hypothesis(config: FedAvgConfig) -> Hypothesis:
    return Hypothesis("server_lr = 1 (plain averaging)", config.server_lr == 1.0,
                      f"server_lr = {config.server_lr:g}, participation {config.participation}")


def _client_spread(local: np.ndarray, centre: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_k q_k ||centre - w^k||^2 for local (..., N, d), centre (..., d), weights q (N,)."""
    return np.einsum("k,...k->...", weights, np.sum((local - centre[..., None, :]) ** 2, axis=-1))


def _variant_id(lemma_id: str, name: str, value: float, default: float) -> str:
    return lemma_id if value == default else f"{lemma_id}[{name}={value:.6g}]"


# ----------------------------------------------------------------------------------- lemmas
def li_lemma1(data: LemmaData, scale: float = 1.0) -> Verdict:
    """Li et al. (2020) Lemma 1, one SGD step of the virtual sequence (module docstring), with its
    right-hand side multiplied by ``scale`` (1 in the paper; another value is a planted variant)."""
    p = data.problem.weights
    eta = data.step_sizes
    T = eta.size
    local = data.stack("local_models")[:, :T]
    average = data.stack("averages")[:, :T]
    gbar = data.stack("mean_full_gradients")
    V = np.einsum("k,stk->st", p**2, data.moments.variance)
    dist = np.sum((average - data.optimum.w_star) ** 2, axis=2)
    lhs = np.sum((average - eta[None, :, None] * gbar - data.optimum.w_star) ** 2, axis=2) + eta**2 * V
    rhs = li_lemma1_bound(eta, data.mu.value, data.L.value, data.Gamma.value, dist, V, _client_spread(local, average, p))
    bound = rhs.mean(axis=0)
    limit = 1 / (4 * data.L.value)
    hypotheses = (
        Hypothesis("Assumptions 1-2: F_k L-smooth, mu-strongly convex, mu > 0", data.mu.value > 0,
                   f"L = {data.L.value:.6g}, mu = {data.mu.value:.6g}"),
        Hypothesis("eta_t <= 1/(4L)", bool(eta.max() <= limit * (1 + 1e-12)),
                   f"max eta_t = {eta.max():.6g}, 1/(4L) = {limit:.6g}"),
        _server_hypothesis(data.config),
    )
    notes = ("E||vbar_{t+1} - w*||^2 against (1 - eta mu) E||wbar_t - w*||^2 + eta^2 E||g - gbar||^2 + 6 L eta^2 Gamma "
             f"+ 2 E sum p_k ||wbar_t - w_t^k||^2, times {scale:.6g}; step noise integrated exactly, paired over "
             f"{len(data.traces)} seed(s); {data.constants_note()}")
    return upper_bound_verdict(_variant_id("li2020.lemma1", "scale", scale, 1.0), data.x, lhs - rhs + bound,
                               scale * bound, hypotheses, notes, deterministic=data.deterministic)


def li_lemma2(data: LemmaData, factor: float = 1.0) -> Verdict:
    """Li et al. (2020) Lemma 2, E||g_t - gbar_t||^2 <= factor sum_k p_k^2 sigma_k^2 (realised gradients;
    factor = 1 in the paper, another value is a planted variant)."""
    p = data.problem.weights
    lhs = np.sum(data.stack("mean_noise") ** 2, axis=2)
    rhs = factor * li_lemma2_bound(p, data.sigma_sq)
    expected = data.moments.expected_variance @ p**2  # (T,) E V_t, the LHS's expectation for independent clients
    sharp = int(np.argmax(expected))
    hypotheses = (Hypothesis("Assumption 3 along the run: sigma_k^2 finite", bool(np.isfinite(rhs)),
                             f"sum_k p_k^2 sigma_k^2 = {rhs / factor if factor else 0.0:.6g}"),)
    attained = (f"the definition of sigma_k^2 makes the bound attained up to E V_t / bound = "
                f"{expected[sharp] / rhs:.6g} at t = {sharp}, where a sampled check cannot confirm the inequality; "
                if rhs > 0 else "")
    notes = (f"realised ||g_t - gbar_t||^2, batch {data.config.batch_size or 'exact'}, factor {factor:.6g}, mean over "
             f"{len(data.traces)} seed(s); {attained}{data.constants_note()}")
    return upper_bound_verdict(_variant_id("li2020.lemma2", "factor", factor, 1.0), data.x, lhs,
                               np.full(data.x.size, rhs), hypotheses, notes, deterministic=data.deterministic)


def li_lemma3(data: LemmaData, constant: float = 4.0) -> Verdict:
    """Li et al. (2020) Lemma 3, E sum_k p_k ||wbar_t - w_t^k||^2 <= constant eta_t^2 (E-1)^2 G^2
    (constant = 4 in the paper; any other value is a planted variant, named in the claim id)."""
    eta, E = data.step_sizes, data.config.local_steps
    T = eta.size
    lhs = _client_spread(data.stack("local_models")[:, :T], data.stack("averages")[:, :T], data.problem.weights)
    bound = li_lemma3_bound(eta, E, data.G_sq, constant)
    later = data.config.step_size.at(np.arange(T) + E, E)
    hypotheses = (
        Hypothesis("eta_t non-increasing", bool(np.all(np.diff(eta) <= 0)), f"eta_0 = {eta[0]:.6g}, eta_T-1 = {eta[-1]:.6g}"),
        Hypothesis("eta_t <= 2 eta_{t+E}", bool(np.all(eta <= 2 * later)), f"max eta_t / eta_(t+E) = {np.max(eta / later):.6g}"),
        Hypothesis("Assumption 4 along the run: G^2 finite", bool(np.isfinite(data.G_sq)), f"G^2 = {data.G_sq:.6g}"),
        _server_hypothesis(data.config),
    )
    notes = f"E = {E}, constant {constant:.6g}, mean over {len(data.traces)} seed(s); {data.constants_note()}"
    return upper_bound_verdict(_variant_id("li2020.lemma3", "constant", constant, 4.0), data.x, lhs, bound,
                               hypotheses, notes, deterministic=data.deterministic)


def _identical_data(problem: FederatedProblem) -> bool:
    """True when every client holds the same multiset of rows (x_i, y_i)."""
    blocks = []
    for k in range(problem.n_clients):
        X, y = problem.client_data(k)
        rows = np.column_stack([X, y])
        blocks.append(rows[np.lexsort(rows.T[::-1])])
    return all(b.shape == blocks[0].shape and np.array_equal(b, blocks[0]) for b in blocks)


def yu_drift(data: LemmaData, constant: float = 4.0) -> Verdict:
    """Yu et al. (AAAI 2019) client drift, E||xbar_t - x_t^i||^2 <= constant s^2 K^2 G^2 for every i
    (constant = 4 in the lecture note's Lemma 1; another value is a planted variant)."""
    problem, config = data.problem, data.config
    eta, K, N = data.step_sizes, config.local_steps, problem.n_clients
    T = eta.size
    local = data.stack("local_models")[:, :T]
    xbar = local.mean(axis=2)
    lhs = np.sum((local - xbar[:, :, None]) ** 2, axis=3).reshape(len(data.traces), T * N)
    s = float(eta.max())
    bound = np.full(T * N, yu_drift_bound(s, K, data.G_sq, constant))
    hypotheses = (
        Hypothesis("uniform weights p_k = 1/N (xbar is the plain average)",
                   bool(np.allclose(problem.weights, 1.0 / N, rtol=0, atol=1e-15)), f"max p_k = {problem.weights.max():.6g}"),
        Hypothesis("constant step s", config.step_size.kind == "constant", config.step_size.describe()),
        _server_hypothesis(config),
    )
    identical = "identical" if _identical_data(problem) else "different (the proof does not need identical data)"
    notes = (f"K = E = {K}, s = {s:.6g}, constant {constant:.6g}, every client and step, mean over {len(data.traces)} "
             f"seed(s); the {N} clients' data are {identical}; {data.constants_note()}")
    return upper_bound_verdict(_variant_id("yu2019.drift", "constant", constant, 4.0), np.repeat(data.x, N), lhs,
                               bound, hypotheses, notes, deterministic=data.deterministic)


def check_lemmas(data: LemmaData) -> tuple[Verdict, ...]:
    """The four lemmas of LEMMA_IDS on one LemmaData, in that order."""
    return li_lemma1(data), li_lemma2(data), li_lemma3(data), yu_drift(data)


def lemma_table(
    problem: FederatedProblem, config: FedAvgConfig, *, optimum: Optimum | None = None,
    settings: VerifySettings | None = None,
) -> tuple[LemmaRow, ...]:
    """Rows (lemma id, status, worst ratio LHS/RHS, interval) of the four lemmas on one config
    (traced as ``collect`` does)."""
    verdicts = check_lemmas(collect(problem, config, optimum=optimum, settings=settings))
    return tuple(LemmaRow(v.claim_id, v.status, v.measured, v.interval, v) for v in verdicts)

