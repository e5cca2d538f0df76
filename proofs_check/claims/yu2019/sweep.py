"""What yu2019.thm1 and yu2019.cor2 share: the PR-SGD sweep over (N, T), Theorem 1's right-hand side,
Corollary 2's sync interval and the hypotheses of each run (Yu, Yang, Zhu, AAAI 2019, as in the
lecture note ``liu_lecture_fl_fedavg.md``); yu2019.cnn reuses the sync interval, the bound, the rate
tolerance and the T >= N^3 rule.

Theorem 1 (identical data, L-smooth, s in (0, 1/L], sync every K steps):
    (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 <= 2/(s T) (f(xbar_0) - f*) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2,
with xbar_t the average of the local models at every step (not only at syncs).
Corollary 2: s = sqrt(N)/(L sqrt(T)) and K <= T^{1/4}/N^{3/4} give O(1/sqrt(NT)): linear speedup.

Instance: ``identical_quadratic`` (every client holds the same rows, so each worker's gradient is
unbiased for f, as the theorem assumes), single-row minibatches. The sweep is the plan's
(``YuSweepPlan``: clients N, horizons T, seeds; yu2019.cor2 at least ``seeds.SPEEDUP_SEEDS``): one run
per (N, T) with T >= N^3, s = sqrt(N)/(L sqrt(T)) and K from Corollary 2, with the hypotheses
K <= T^{1/4}/N^{3/4} and s <= 1/L evaluated on every configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis

from ...framework.evaluation import claim_optimum
from ...framework.parameters import ModePlans, PlanError, parameter

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["RATE_TOLERANCE", "YuSweepPlan", "check_cubed_horizons", "sweep_pairs", "sweep_plans", "yu_sync_interval",
           "yu_theorem1_bound", "sweep", "sweep_hypotheses"]

RATE_TOLERANCE = 0.05



def check_cubed_horizons(field: str, clients: tuple[int, ...], horizons: tuple[int, ...]) -> None:
    """PlanError naming ``field`` unless every N in ``clients`` has a horizon T >= N^3 in ``horizons``
    (Yu's Corollary 2: K = 1 <= T^(1/4)/N^(3/4) needs it)."""
    for N in clients:
        if N**3 > max(horizons):
            raise PlanError(field, f"N = {N} needs a horizon T >= N^3 = {N**3} (K = 1 <= T^(1/4)/N^(3/4)); "
                            f"the largest in horizons is {max(horizons)}")


def sweep_pairs(clients: Sequence[int], horizons: Sequence[int]) -> list[tuple[int, int]]:
    """The (N, T) runs of a Yu sweep: T >= N^3."""
    return [(N, T) for N in clients for T in horizons if T >= N**3]


@dataclass(frozen=True)
class YuSweepPlan:
    """The PR-SGD sweep of yu2019.thm1 and yu2019.cor2: one run per N in ``clients`` and T in
    ``horizons`` with T >= N^3 (Corollary 2's K = 1 <= T^(1/4)/N^(3/4) needs it)."""

    clients: tuple[int, ...] = parameter(doc="workers N of the sweep", minimum=1)
    horizons: tuple[int, ...] = parameter(doc="total steps T of the sweep (a run for each T >= N^3)", minimum=1)
    seeds: int = parameter(4, "seeds of every run", minimum=1, from_settings="seeds")

    def __post_init__(self) -> None:
        check_cubed_horizons("clients", self.clients, self.horizons)

    def workload(self) -> Workload:
        """PR-SGD: T steps per client on N clients, per (N, T) with T >= N^3."""
        from convergence.budget import Workload

        from ...framework.plan_workloads import runs_workload

        return sum((runs_workload(seeds=self.seeds, rounds=T, clients=N, records=12)
                    for N, T in sweep_pairs(self.clients, self.horizons)), Workload())


SweepPlanT = TypeVar("SweepPlanT", bound=YuSweepPlan)


def sweep_plans(plan_type: type[SweepPlanT]) -> ModePlans:
    """``plan_type``'s plans in ``--quick``, default and ``--full`` mode: the grids of yu2019.thm1 and
    yu2019.cor2 (the same sweep: cor2 reads thm1's runs)."""
    return ModePlans(quick=plan_type(clients=(2, 4), horizons=(1_000, 2_000, 4_000, 16_000)),
                     default=plan_type(clients=(2, 4, 8), horizons=(1_000, 4_000, 16_000, 64_000)),
                     full=plan_type(clients=(2, 4, 8, 16), horizons=(1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000)))


def yu_sync_interval(T: int, N: int) -> int:
    """The largest K allowed by Corollary 2, K <= T^{1/4} / N^{3/4} (at least 1)."""
    return max(1, int(np.floor(T**0.25 / N**0.75 + 1e-12)))


def yu_theorem1_bound(
    steps: np.ndarray | float, *, s: float, K: int, N: int, L: float, G_sq: float, sigma_sq: float, f0: float,
) -> np.ndarray:
    """Theorem 1 of Yu, Yang, Zhu (AAAI 2019) as restated in the lecture note
    (``liu_lecture_fl_fedavg.md``): after T = ``steps`` local steps (array of shape (P,) or a scalar)
    with step s in (0, 1/L], sync interval K, N workers, G^2 >= E||stochastic gradient||^2 and
    sigma^2 >= its variance, f0 = f(xbar_0) - f*,

        (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 <= 2 f0 / (s T) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2.

    Returns the right-hand side at every T (same shape as ``steps``)."""
    T = np.asarray(steps, dtype=float)
    return 2 * f0 / (s * T) + 4 * s**2 * K**2 * G_sq * L**2 + L / N * s * sigma_sq


def sweep(settings: VerifySettings, plan: YuSweepPlan) -> list[dict]:
    """One PR-SGD run per (N, T) of the plan with T >= N^3, s = sqrt(N)/(L sqrt(T)) and K from Corollary 2."""
    clients, horizons = plan.clients, plan.horizons
    seeds = tuple(range(plan.seeds))
    plans = []
    for N in clients:
        problem = problems.build_problem(problems.problem_spec("identical_quadratic", n_clients=N, dim=10, mu=0.1,
                                                               L=10.0, samples_per_client=50, seed=0))
        optimum, note = claim_optimum(problem)
        L = problems.problem_constants(problem).L
        for T in (T for T in horizons if T >= N**3):  # K = 1 <= T^(1/4)/N^(3/4) needs T >= N^3
            K = yu_sync_interval(T, N)
            rounds = T // K
            config = convergence.PRSGDConfig.yu(N, L, rounds, K, batch_size=1, seeds=seeds,
                                                record_rounds=convergence.log_spaced_rounds(rounds, 12))
            plans.append({"N": N, "T": rounds * K, "T_nominal": T, "K": K, "L": L, "problem": problem,
                          "optimum": optimum, "config": config, "note": note})
    results = convergence.execute([convergence.RunRequest(convergence.RunConfig(p["problem"].spec, p["config"]),
                                                          p["optimum"]) for p in plans],
                                  settings.sweep_options(), description="PR-SGD runs")
    runs = [dict(plan, result=result) for plan, result in zip(plans, results)]
    return runs


def sweep_hypotheses(run: dict) -> tuple[Hypothesis, ...]:
    """Corollary 2's hypotheses on one run of ``sweep``: s = sqrt(N)/(L sqrt(T)) <= 1/L and
    K <= T^(1/4)/N^(3/4)."""
    N, T, K, L = run["N"], run["T"], run["K"], run["L"]
    s = run["config"].step_size.eta0
    limit = T**0.25 / N**0.75
    return (
        Hypothesis(f"[N={N}, T={T}] s = sqrt(N)/(L sqrt(T)) <= 1/L", abs(s - np.sqrt(N) / (L * np.sqrt(T))) < 1e-12 * s
                   and s <= 1 / L, f"s = {s:.4g}, 1/L = {1 / L:.4g}"),
        Hypothesis(f"[N={N}, T={T}] K <= T^(1/4)/N^(3/4)", K <= limit + 1e-12, f"K = {K}, T^(1/4)/N^(3/4) = {limit:.4g}"),
    )
