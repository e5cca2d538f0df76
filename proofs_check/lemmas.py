"""Lemma checks on FedAvg trajectories: Li et al. (ICLR 2020) Lemmas 1-3 and Yu et al.'s drift.

Each lemma is an inequality LHS_t <= RHS_t between expectations, for every local step t. A
``LemmaData`` replays every seed of a FedAvg config step by step (``convergence.probe``), keeping
every local iterate w_t^k, and computes the constants of the assumptions on the region the run
visits (``proofs_check.assumptions``). Both sides are evaluated at every local step t = 0..T-1
(plotted at Li's 1-based index t + 1) for every seed; the expectation is the mean over seeds with
a Student-t interval, and ``convergence.check_upper_bound`` gives the verdict: PASS when the
interval stays below the bound at every step, FAIL when it is provably above somewhere.

Statements (``shared/THEOREMS.md`` l.49-55 and l.110, ``papers/li2020_fedavg_noniid.txt`` l.361-378,
``papers/liu_lecture_fl_fedavg.md`` l.363; notation of ``convergence.probe``: wbar_t = sum_k p_k w_t^k,
g_t = sum_k p_k g_{t,k}, gbar_t = sum_k p_k grad F_k(w_t^k)):

* li2020.lemma1 (one-step SGD, Assumptions 1-2, eta_t <= 1/(4L)):
  E||vbar_{t+1} - w*||^2 <= (1 - eta_t mu) E||wbar_t - w*||^2 + eta_t^2 E||g_t - gbar_t||^2
  + 6 L eta_t^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2, with vbar_{t+1} = wbar_t - eta_t g_t.
  The noise of step t is integrated exactly: given the past, E_t||vbar_{t+1} - w*||^2 =
  ||wbar_t - eta_t gbar_t - w*||^2 + eta_t^2 V_t and E_t||g_t - gbar_t||^2 = V_t, where
  V_t = sum_k p_k^2 sigma_k^2(w_t^k, b) is the exact minibatch variance (clients sample
  independently); the outer expectation is the mean over seeds. As both sides are random, the
  check is paired: per seed LHS - RHS + mean_s RHS against the bound mean_s RHS (the same
  expectation inequality; the interval is that of the paired difference).
* li2020.lemma2 (Assumption 3): E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2, with the realised
  minibatch gradients (its content is that the clients' noise terms are uncorrelated).
* li2020.lemma3 (Assumption 4, eta_t non-increasing, eta_t <= 2 eta_{t+E}):
  E sum_k p_k ||wbar_t - w_t^k||^2 <= 4 eta_t^2 (E-1)^2 G^2.
* yu2019.drift (Yu, Yang, Zhu, AAAI 2019, Lemma 1 of the lecture note; identical data, constant
  step s, uniform average xbar_t = (1/N) sum_i x_t^i, K = sync interval = E):
  E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 for every client i. Checked on FedAvg as fedbound runs it
  (the gradient at a synchronisation step is taken at the averaged model; Yu's PR-SGD takes it
  before averaging), which the proof does not use: it needs E||g||^2 <= G^2 and at most K steps
  since the last average.

Constants: L, mu (Li's max_k L_k, min_k mu_k), Gamma, sigma_k^2 and G^2 from
``proofs_check.assumptions``; sigma_k^2 and G^2 are suprema over the region the run visits, either
the ball around w* of radius R = max_{s,t,k} ||w_t^k - w*|| (``region="ball"``: certified, exact
for least squares) or the set of visited local iterates itself (``region="visited"``: exact
there). A planted false version of a lemma (another ``constant`` in lemma 3 or the drift) must FAIL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from convergence import FedAvgConfig, Hypothesis, Status, Verdict, check_upper_bound
from convergence.probe import Probe, probe_fedavg
from problems import FederatedProblem, Optimum, exact_optimum

from .assumptions import (
    Ball,
    ClientEstimate,
    Estimate,
    Points,
    gradient_variance,
    heterogeneity,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)

__all__ = [
    "LEMMA_IDS",
    "LemmaData",
    "LemmaRow",
    "collect",
    "li_lemma1",
    "li_lemma2",
    "li_lemma3",
    "yu_drift",
    "check_lemmas",
    "lemma_table",
]

LEMMA_IDS = ("li2020.lemma1", "li2020.lemma2", "li2020.lemma3", "yu2019.drift")
_ROUNDING = 1e-12  # relative size below which a side whose bound is exactly 0 counts as 0


@dataclass(frozen=True, eq=False)
class LemmaData:
    """Every local iterate of every seed of ``config`` on ``problem``, and the constants of the
    assumptions on the visited region (module docstring)."""

    problem: FederatedProblem
    config: FedAvgConfig
    optimum: Optimum
    probes: tuple[Probe, ...]
    L: Estimate
    mu: Estimate
    Gamma: Estimate
    sigma_sq: ClientEstimate
    G_sq: Estimate
    region: str

    @property
    def x(self) -> np.ndarray:
        """Li's 1-based step index t + 1 of the local steps t = 0..T-1, shape (T,)."""
        return np.arange(1, self.config.total_steps + 1, dtype=np.float64)

    @property
    def step_sizes(self) -> np.ndarray:
        """eta_t for t = 0..T-1, shape (T,)."""
        return self.probes[0].step_sizes

    @property
    def deterministic(self) -> bool:
        """True with exact local gradients (batch 0): FedAvg with full participation draws nothing."""
        return self.config.batch_size == 0

    def stack(self, name: str) -> np.ndarray:
        """One Probe array stacked over the seeds, shape (S, ...)."""
        return np.stack([getattr(probe, name) for probe in self.probes])

    def constants_note(self) -> str:
        return (f"constants over {self.region}: L = {self.L.value:.6g}, mu = {self.mu.value:.6g}, "
                f"Gamma = {self.Gamma.value:.6g}, max_k sigma_k^2 = {self.sigma_sq.max:.6g} ({self.sigma_sq.method}), "
                f"G^2 = {self.G_sq.value:.6g} ({self.G_sq.method})")


def collect(
    problem: FederatedProblem,
    config: FedAvgConfig,
    *,
    optimum: Optimum | None = None,
    region: Literal["ball", "visited"] = "ball",
) -> LemmaData:
    """Probe every seed of ``config`` from w_0 = 0 and compute the constants on the visited region."""
    optimum = exact_optimum(problem, crosscheck=False) if optimum is None else optimum
    probes = tuple(probe_fedavg(problem, config, seed) for seed in config.seeds)
    iterates = np.concatenate([probe.local_models.reshape(-1, problem.dim) for probe in probes])
    if region == "ball":
        radius = float(np.max(np.linalg.norm(iterates - optimum.w_star, axis=1)))
        where = Ball(optimum.w_star, radius)
    elif region == "visited":
        where = Points(np.unique(iterates, axis=0))
    else:
        raise ValueError(f"region: expected 'ball' or 'visited', got {region!r}")
    b = config.batch_size
    return LemmaData(
        problem, config, optimum, probes, smoothness(problem), strong_convexity(problem),
        heterogeneity(problem, optimum), variance_bound(problem, where, b), second_moment_bound(problem, where, b),
        where.describe(),
    )


# ---------------------------------------------------------------------------------- helpers
def _server_hypothesis(config: FedAvgConfig) -> Hypothesis:
    return Hypothesis("full participation, server_lr = 1 (plain averaging)", config.server_lr == 1.0,
                      f"server_lr = {config.server_lr:g}")


def _bound_verdict(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    hypotheses: Sequence[Hypothesis],
    notes: str,
    *,
    deterministic: bool,
) -> Verdict:
    """check_upper_bound on the points where the bound is positive (``deterministic`` as there);
    where it is exactly 0 (E = 1, exact gradients, a zero step) the measured side must vanish up
    to rounding."""
    positive = bound > 0
    scale = 1.0 + float(np.max(np.abs(values)))
    zero_ok = bool(np.all(np.abs(values.mean(axis=0)[~positive]) <= _ROUNDING * scale))
    zero_note = f"{int((~positive).sum())} step(s) with bound 0, where the measured side is 0 up to rounding"
    if not np.any(positive):
        status = Status.PASS if zero_ok else Status.FAIL
        verdict = Verdict(claim_id, status, 0.0, 1.0, (0.0, 0.0), tuple(hypotheses),
                          "; ".join(part for part in (notes, zero_note if zero_ok else "bound 0 but measured side > 0") if part),
                          {"x": x.tolist(), "mean": values.mean(axis=0).tolist(), "bound": bound.tolist()})
        return _downgrade(verdict)
    verdict = check_upper_bound(claim_id, x[positive], values[:, positive], bound[positive],
                                hypotheses=hypotheses, notes=notes, deterministic=deterministic)
    if not zero_ok:
        return dataclasses.replace(verdict, status=Status.FAIL, notes=verdict.notes + "; bound 0 but measured side > 0")
    if np.any(~positive):
        return dataclasses.replace(verdict, notes=f"{verdict.notes}; {zero_note}")
    return verdict


def _downgrade(verdict: Verdict) -> Verdict:
    """INCONCLUSIVE when a hypothesis is unmet (as the checkers of convergence do)."""
    if verdict.hypotheses_met:
        return verdict
    unmet = "; ".join(h.name for h in verdict.hypotheses if not h.met)
    return dataclasses.replace(verdict, status=Status.INCONCLUSIVE,
                               notes=f"hypotheses unmet: {unmet}. The data alone give {verdict.status.value}; {verdict.notes}")


def _client_spread(local: np.ndarray, centre: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_k q_k ||centre - w^k||^2 for local (..., N, d), centre (..., d), weights q (N,)."""
    return np.einsum("k,...k->...", weights, np.sum((local - centre[..., None, :]) ** 2, axis=-1))


# ----------------------------------------------------------------------------------- lemmas
def li_lemma1(data: LemmaData) -> Verdict:
    """Li et al. (2020) Lemma 1, one SGD step of the virtual sequence (module docstring)."""
    problem, p = data.problem, data.problem.weights
    eta = data.step_sizes
    T = eta.size
    local = data.stack("local_models")[:, :T]
    average = data.stack("averages")[:, :T]
    gbar = np.einsum("k,stkd->std", p, data.stack("full_gradients"))
    V = np.einsum("k,stk->st", p**2, gradient_variance(problem, local, data.config.batch_size))
    dist = np.sum((average - data.optimum.w_star) ** 2, axis=2)
    lhs = np.sum((average - eta[None, :, None] * gbar - data.optimum.w_star) ** 2, axis=2) + eta**2 * V
    rhs = ((1 - eta * data.mu.value) * dist + eta**2 * V + 6 * data.L.value * eta**2 * data.Gamma.value
           + 2 * _client_spread(local, average, p))
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
             "+ 2 E sum p_k ||wbar_t - w_t^k||^2; step noise integrated exactly, paired over "
             f"{len(data.probes)} seed(s); {data.constants_note()}")
    return _bound_verdict("li2020.lemma1", data.x, lhs - rhs + bound, bound, hypotheses, notes,
                          deterministic=data.deterministic)


def li_lemma2(data: LemmaData) -> Verdict:
    """Li et al. (2020) Lemma 2, E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2 (realised gradients)."""
    p = data.problem.weights
    noise = data.stack("stochastic_gradients") - data.stack("full_gradients")
    lhs = np.sum(np.einsum("k,stkd->std", p, noise) ** 2, axis=2)
    rhs = data.sigma_sq.weighted_sum(p**2)
    hypotheses = (Hypothesis("Assumption 3 on the visited region", bool(np.isfinite(rhs)),
                             f"sum_k p_k^2 sigma_k^2 = {rhs:.6g}; {data.sigma_sq.method}"),)
    notes = (f"realised ||g_t - gbar_t||^2, batch {data.config.batch_size or 'exact'}, mean over "
             f"{len(data.probes)} seed(s); {data.constants_note()}")
    return _bound_verdict("li2020.lemma2", data.x, lhs, np.full(data.x.size, rhs), hypotheses, notes,
                          deterministic=data.deterministic)


def li_lemma3(data: LemmaData, constant: float = 4.0) -> Verdict:
    """Li et al. (2020) Lemma 3, E sum_k p_k ||wbar_t - w_t^k||^2 <= constant eta_t^2 (E-1)^2 G^2
    (constant = 4 in the paper; any other value is a planted variant, named in the claim id)."""
    eta, E = data.step_sizes, data.config.local_steps
    T = eta.size
    lhs = _client_spread(data.stack("local_models")[:, :T], data.stack("averages")[:, :T], data.problem.weights)
    bound = constant * eta**2 * (E - 1) ** 2 * data.G_sq.value
    later = data.config.step_size.at(np.arange(T) + E, E)
    hypotheses = (
        Hypothesis("eta_t non-increasing", bool(np.all(np.diff(eta) <= 0)), f"eta_0 = {eta[0]:.6g}, eta_T-1 = {eta[-1]:.6g}"),
        Hypothesis("eta_t <= 2 eta_{t+E}", bool(np.all(eta <= 2 * later)), f"max eta_t / eta_(t+E) = {np.max(eta / later):.6g}"),
        Hypothesis("Assumption 4 on the visited region", bool(np.isfinite(data.G_sq.value)),
                   f"G^2 = {data.G_sq.value:.6g}; {data.G_sq.method}"),
        _server_hypothesis(data.config),
    )
    claim_id = "li2020.lemma3" if constant == 4.0 else f"li2020.lemma3[constant={constant:g}]"
    notes = f"E = {E}, constant {constant:g}, mean over {len(data.probes)} seed(s); {data.constants_note()}"
    return _bound_verdict(claim_id, data.x, lhs, bound, hypotheses, notes, deterministic=data.deterministic)


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
    lhs = np.sum((local - xbar[:, :, None]) ** 2, axis=3).reshape(len(data.probes), T * N)
    s = float(eta.max())
    bound = np.full(T * N, constant * s**2 * K**2 * data.G_sq.value)
    hypotheses = (
        Hypothesis("identical data on every client (Yu et al. AAAI 2019: i.i.d. setting)", _identical_data(problem),
                   f"N = {N} clients"),
        Hypothesis("uniform weights p_k = 1/N (xbar is the plain average)",
                   bool(np.allclose(problem.weights, 1.0 / N, rtol=0, atol=1e-15)), f"max p_k = {problem.weights.max():.6g}"),
        Hypothesis("constant step s", config.step_size.kind == "constant", config.step_size.describe()),
        _server_hypothesis(config),
    )
    claim_id = "yu2019.drift" if constant == 4.0 else f"yu2019.drift[constant={constant:g}]"
    notes = (f"K = E = {K}, s = {s:.6g}, constant {constant:g}, every client and step, mean over {len(data.probes)} "
             f"seed(s); {data.constants_note()}")
    return _bound_verdict(claim_id, np.repeat(data.x, N), lhs, bound, hypotheses, notes,
                          deterministic=data.deterministic)


def check_lemmas(data: LemmaData) -> tuple[Verdict, ...]:
    """The four lemmas of LEMMA_IDS on one LemmaData, in that order."""
    return li_lemma1(data), li_lemma2(data), li_lemma3(data), yu_drift(data)


# ------------------------------------------------------------------------------------ table
@dataclass(frozen=True)
class LemmaRow:
    """One row of the lemma table: id, status, worst ratio LHS/RHS over the steps and its interval."""

    lemma_id: str
    status: Status
    worst_ratio: float
    interval: tuple[float, float] | None
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        return {"lemma": self.lemma_id, "status": self.status.value, "worst_ratio": self.worst_ratio,
                "interval": None if self.interval is None else list(self.interval), "notes": self.verdict.notes}


def lemma_table(
    problem: FederatedProblem,
    config: FedAvgConfig,
    *,
    optimum: Optimum | None = None,
    region: Literal["ball", "visited"] = "ball",
) -> tuple[LemmaRow, ...]:
    """Rows (lemma id, status, worst ratio LHS/RHS, interval) of the four lemmas on one config."""
    verdicts = check_lemmas(collect(problem, config, optimum=optimum, region=region))
    return tuple(LemmaRow(v.claim_id, v.status, v.measured, v.interval, v) for v in verdicts)
