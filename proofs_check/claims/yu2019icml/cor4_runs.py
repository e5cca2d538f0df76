"""What yu2019icml.cor4 runs: Corollary 4's step and sync rules (as the note states them, and with L
restored in the step), their hypotheses on every (N, T), which configurations can be checked, and the
FedAvg runs of those.

Corollary 4 (``liu_lecture_fl_fedavg.md`` l. 459-467): s = sqrt(N)/sqrt(T) with K = 1 gives
O(1/sqrt(NT)) + O(N/T) "for T >= 36 L^2 N"; s = sqrt(N)/sqrt(T) with K = O(T^(1/4)/N^(3/4)) gives
O(1/sqrt(NT)) "for T >= L^2 N". Theorem 3 (``bound``) needs s <= 1/L and K <= 1/(6 L s). With s =
sqrt(N/T) (no L), s <= 1/L iff T >= L^2 N, and K = 1 <= 1/(6 L s) iff T >= 36 L^2 N, the first bullet's
condition; but K <= 1/(6 L s) = sqrt(T)/(6 L sqrt(N)) with K = c T^(1/4)/N^(3/4) holds iff N T >=
(6 c L)^4, which T >= L^2 N does not give (at L = 4, c = 1: N T >= 331,776). The corrected step s =
sqrt(N)/(L sqrt(T)) (AAAI Corollary 2's, ``yu2019.cor2``) meets s <= 1/L for T >= N and K <= 1/(6 L s)
for N T >= 1296 (c = 1) or T >= 36 N (K = 1).

Rules (``RULES``): K = 1 or K = floor(T^(1/4)/N^(3/4)) (at least 1, ``yu2019.sweep.yu_sync_interval``,
which also needs K <= T^(1/4)/N^(3/4), i.e. T >= N^3), each with s as stated and corrected. Every
(rule, N, T) carries its hypotheses: the note's condition (as stated), Theorem 3's s <= 1/L and
K <= 1/(6 L s), and the sync rule's. A configuration is applicable when all hold; only applicable ones
enter a check, and only configurations some counted check uses are run (``checked_settings``): a rate
in N T needs ``MIN_HORIZONS`` applicable horizons at its N, the linear speedup ``MIN_HORIZONS``
applicable N at the largest T.

Instance (``INSTANCE``): ``two_curvature_quadratic`` (L = 4, m = 0.4, beta = 1, w* = 1 so f(xbar^0) - f*
= 1.1, noise 1: minibatch variance 4 (stiff clients) and 0.4 (soft), one row a step), N clients: the
same f for every N (nested clients), so that only N changes between the runs of the speedup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis

from ...framework.evaluation import claim_optimum
from ..yu2019.sweep import yu_sync_interval
from .bound import theorem3_hypotheses

if TYPE_CHECKING:
    from ...framework.settings import VerifySettings

__all__ = ["INSTANCE", "INSTANCE_L", "MIN_HORIZONS", "RULES", "CheckedSettings", "Rule", "Setting", "checked_settings",
           "final_averages"]

INSTANCE_L = 4.0
"""L = max_k L_k of the instance (exact: the stiff clients' curvature; tests/test_yu2019icml.py checks it
against ``constants.smoothness``), known before any problem is built (the plan's workload)."""
INSTANCE = (("L", INSTANCE_L), ("soft_curvature", 0.4), ("dissimilarity", 1.0), ("optimum", 1.0), ("noise", 1.0),
            ("samples_per_client", 2))
"""``two_curvature_quadratic``'s parameters but n_clients (module docstring)."""
MIN_HORIZONS = 3
"""The fewest applicable points a rate fit takes (``convergence.rates.MIN_FIT_POINTS``)."""


@dataclass(frozen=True)
class Rule:
    """A step and sync rule of Corollary 4: ``stated_step`` s = sqrt(N/T) (the note) or s =
    sqrt(N)/(L sqrt(T)) (corrected); ``unit_sync`` K = 1 or K = floor(T^(1/4)/N^(3/4))."""

    stated_step: bool
    unit_sync: bool

    @property
    def label(self) -> str:
        """E.g. ``K = 1, s = sqrt(N/T) (as stated)``."""
        sync = "K = 1" if self.unit_sync else "K = floor(T^(1/4)/N^(3/4))"
        step = "s = sqrt(N/T) (as stated)" if self.stated_step else "s = sqrt(N)/(L sqrt(T)) (corrected)"
        return f"{sync}, {step}"

    def setting(self, N: int, horizon: int, L: float) -> Setting:
        """The configuration at N and the nominal horizon with its hypotheses (module docstring): K from
        the horizon, then T = floor(horizon / K) K steps, which s and the hypotheses use."""
        K = 1 if self.unit_sync else yu_sync_interval(horizon, N)
        T = horizon // K * K
        s = math.sqrt(N / T) if self.stated_step else math.sqrt(N) / (L * math.sqrt(T))
        tag = f"N={N}, T={T}"
        hypotheses = []
        if self.stated_step:
            factor = 36 if self.unit_sync else 1
            hypotheses.append(Hypothesis(f"[{tag}] the note's T >= {'36 ' if factor > 1 else ''}L^2 N",
                                         T >= factor * L**2 * N, f"T = {T}, {factor} L^2 N = {factor * L**2 * N:g}"))
        hypotheses += theorem3_hypotheses(s, K, L, tag)
        if not self.unit_sync:
            limit = T**0.25 / N**0.75
            hypotheses.append(Hypothesis(f"[{tag}] K <= T^(1/4)/N^(3/4)", K <= limit + 1e-12,
                                         f"K = {K}, T^(1/4)/N^(3/4) = {limit:.4g}"))
        return Setting(self, N, horizon, T, K, s, tuple(hypotheses))


RULES = (Rule(True, True), Rule(False, True), Rule(True, False), Rule(False, False))
"""K = 1 as stated and corrected, then K = floor(T^(1/4)/N^(3/4)) as stated and corrected."""


@dataclass(frozen=True)
class Setting:
    """One configuration (rule, N, nominal horizon) with its K, its T = floor(horizon / K) K steps, s and
    hypotheses."""

    rule: Rule
    N: int
    horizon: int
    T: int
    K: int
    s: float
    hypotheses: tuple[Hypothesis, ...]

    @property
    def applicable(self) -> bool:
        """Every hypothesis met."""
        return all(h.met for h in self.hypotheses)

    def unmet(self) -> str:
        """The unmet hypotheses with their values, or ""."""
        return "; ".join(f"{h.name}: {h.detail}" for h in self.hypotheses if not h.met)


@dataclass(frozen=True)
class CheckedSettings:
    """Every configuration of a plan grid, grouped: ``rates`` (rule, N) -> the settings over the
    horizons, ``speedups`` rule -> the settings over N at the largest horizon, and ``run`` the applicable
    settings of the groups with at least MIN_HORIZONS applicable ones (what is run)."""

    rates: dict[tuple[Rule, int], tuple[Setting, ...]]
    speedups: dict[Rule, tuple[Setting, ...]]
    run: tuple[Setting, ...]


def _checked(group: tuple[Setting, ...]) -> bool:
    return sum(s.applicable for s in group) >= MIN_HORIZONS


def checked_settings(clients: tuple[int, ...], horizons: tuple[int, ...], L: float) -> CheckedSettings:
    """The configurations of the grid for every rule, and those some counted check uses."""
    rates = {(rule, N): tuple(rule.setting(N, T, L) for T in horizons) for rule in RULES for N in clients}
    speedups = {rule: tuple(rule.setting(N, max(horizons), L) for N in clients) for rule in RULES}
    used = {(s.rule, s.N, s.horizon): s for group in (*rates.values(), *speedups.values()) if _checked(group)
            for s in group if s.applicable}
    return CheckedSettings(rates, speedups, tuple(used.values()))


def final_averages(settings: VerifySettings, run: tuple[Setting, ...], seeds: int) -> dict[tuple[Rule, int, int], np.ndarray]:
    """(rule, N, horizon) -> the final (1/T) sum_{t<T} ||grad f(xbar^t)||^2 of every seed (S,), from one
    PR-SGD run per setting on the instance with N clients."""
    instances = {}
    for N in sorted({s.N for s in run}):
        problem = problems.build_problem(problems.problem_spec("two_curvature_quadratic", n_clients=N, **dict(INSTANCE)))
        instances[N] = (problem.spec, claim_optimum(problem)[0])
    requests, ids = {}, []  # run id -> request: K = 1 under both sync rules is one run
    for s in run:
        config = convergence.RunConfig(instances[s.N][0], convergence.PRSGDConfig(
            rounds=s.T // s.K, sync_interval=s.K, step_size=convergence.StepSize.constant(s.s), batch_size=1,
            seeds=tuple(range(seeds)), record_rounds=(s.T // s.K,)))
        requests.setdefault(config.run_id, convergence.RunRequest(config, instances[s.N][1]))
        ids.append(config.run_id)
    results = convergence.execute(list(requests.values()), settings.sweep_options(), description="FedAvg (PR-SGD) runs")
    finals = {run_id: r.extras.grad_sq_mean[:, -1] for run_id, r in zip(requests, results)}
    return {(s.rule, s.N, s.horizon): finals[run_id] for s, run_id in zip(run, ids)}
