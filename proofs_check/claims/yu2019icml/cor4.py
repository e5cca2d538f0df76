"""yu2019icml.cor4: Corollary 4 of Yu, Jin, Yang (ICML 2019, arXiv:1905.03817), momentum-less, as restated
in the lecture note ``liu_lecture_fl_fedavg.md`` (l. 457-467): FedAvg's rate and linear speedup on
non-iid data, from Theorem 3 (``thm3``).

Corollary 4: s = sqrt(N)/sqrt(T) and K = 1 give, for T >= 36 L^2 N,
    (1/T) sum_{t<T} E||grad f(xbar^t)||^2 = O(1/sqrt(NT)) + O(N/T);
s = sqrt(N)/sqrt(T) and K = O(T^(1/4)/N^(3/4)) give O(1/sqrt(NT)) for T >= L^2 N: linear speedup in N.

Finding (``cor4_runs``): the note's step has no L, so s = sqrt(N/T) <= 1/L only for T >= L^2 N; K = 1
<= 1/(6 L s) is exactly the first bullet's T >= 36 L^2 N, but the second bullet's T >= L^2 N does not
give Theorem 3's K <= 1/(6 L s), which for K = T^(1/4)/N^(3/4) needs N T >= (6 L)^4. Both rules are
checked as stated and with the step s = sqrt(N)/(L sqrt(T)) (L restored, as in AAAI Corollary 2);
every configuration carries its hypotheses, and a check whose configurations do not meet them is not
applicable: listed as uninformative with the unmet hypotheses, never PASS (on the default grid, at
L = 4: the stated K = 1 rule at N = 8, and the stated K = floor(T^(1/4)/N^(3/4)) rule everywhere).

Instance and runs (``cor4_runs``): ``two_curvature_quadratic`` (L = 4, stiff and soft clients pulling
apart, w* = 1), N clients nested, one PR-SGD run per applicable configuration with at least
``SPEEDUP_SEEDS`` seeds. Checks (``convergence.check_rate_exponent``, intervals over seeds: Student t
with the delete-one jackknife, tolerance ``RATE_TOLERANCE`` = 0.05, 10% of the claimed -1/2): for each
rule, the exponent in N T of the final average squared gradient norm at each N (at least 3 applicable
horizons), and the exponent in N at the largest T (linear speedup, at least 3 applicable N), each
claimed <= -1/2 (the O(N/T) term of K = 1 decays faster in T at fixed N). Holm over every counted
sub-check (``combine_checks``).

The smooth network (``cor4_smooth``; ``smooth_horizon`` T, 0: not run, and T/4, T/16, ... as many
as ``smooth_horizon_count``; at N in ``smooth_clients``; on by default at N = 2, T in {512, 2,048,
8,192}, n = 48 images, 4 seeds; N in {2, 4, 8} and T up to 65,536
under ``--full``): the first bullet as stated (s = sqrt(N/T), K = 1) for FedAvg on ``digits_tanh_mlp``
over ``sorted_images`` (N label-sorted clients of equal size), the average exact, the hypotheses with
L = max_k L_k estimated along the runs at each N (a lower estimate; the clients, hence the f_k, differ
with N), the same exponent checks in N T and in N, and
``yu2019.cnn``'s rule: a check whose range Theorem 3's bound (estimated constants) cannot bite, the
bound at its largest point above the average measured at its smallest, is uninformative.

Planted variant (``fedbound verify --power``): ``yu2019icml.cor4[claimed_exponent=-1]`` claims O(1/(NT))
in N T and in N; the measured exponents are about -0.5, so a working check FAILs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
from convergence.verdict import Status, Uninformative, Verdict

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, PlanError, parameter
from ...framework.plot_specs import rate_plot
from ...framework.references import LIU2022_NOTE, YU2019ICML
from ..seeds import SPEEDUP_SEEDS
from ..yu2019.sweep import RATE_TOLERANCE
from . import cor4_smooth as smooth
from .cor4_runs import INSTANCE_L, MIN_HORIZONS, Rule, Setting, checked_settings, final_averages

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "YuICMLCorollary4Plan"]


@dataclass(frozen=True)
class YuICMLCorollary4Plan:
    """yu2019icml.cor4: the grid of N and T, the seeds (at least SPEEDUP_SEEDS) and the claimed rate."""

    clients: tuple[int, ...] = parameter(doc="workers N (even: two-curvature clients alternate)", minimum=2)
    horizons: tuple[int, ...] = parameter(doc="total steps T of the sweep", minimum=1)
    smooth_horizon: int = parameter(doc="largest total steps T of the smooth-network runs (digits_tanh_mlp on N "
                                    "label-sorted clients, s = sqrt(N/T), K = 1; 0: not run)", minimum=0)
    smooth_horizon_count: int = parameter(doc="horizons of the smooth-network runs: T, T/4, T/16, ...",
                                          minimum=MIN_HORIZONS)
    smooth_clients: tuple[int, ...] = parameter(doc="clients N of the smooth-network runs", minimum=1)
    seeds: int = parameter(SPEEDUP_SEEDS, "seeds of every run (at least 8: rate intervals over seeds)",
                           minimum=SPEEDUP_SEEDS, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (and in N)")
    smooth_seeds: int = parameter(4, "seeds of every smooth-network run", minimum=3)
    smooth_n_train: int = parameter(48, "images of the smooth network, n / N per client (every N divides it)",
                                    minimum=1)

    def __post_init__(self) -> None:
        if any(N % 2 for N in self.clients):
            raise PlanError("clients", f"every N must be even (stiff and soft clients alternate), got {self.clients}")
        if len(self.horizons) < MIN_HORIZONS:
            raise PlanError("horizons", f"a rate in N T needs at least {MIN_HORIZONS} horizons, got {self.horizons}")
        if self.smooth_horizon and self.smooth_horizon < 4 ** (self.smooth_horizon_count - 1):
            raise PlanError("smooth_horizon", f"T = {self.smooth_horizon} has no {self.smooth_horizon_count} horizons "
                            "a factor 4 apart")
        if any(self.smooth_n_train % N for N in self.smooth_clients):
            raise PlanError("smooth_n_train", f"{self.smooth_n_train} images cannot be cut into clients of equal size "
                            f"for every N in {self.smooth_clients}")

    @property
    def smooth_on(self) -> bool:
        """Whether the smooth-network runs are part of the plan."""
        return self.smooth_horizon > 0

    @property
    def smooth_horizons(self) -> tuple[int, ...]:
        """The smooth network's horizons, increasing, a factor 4 apart, the largest ``smooth_horizon``."""
        return tuple(self.smooth_horizon // 4**i for i in reversed(range(self.smooth_horizon_count)))

    def workload(self) -> Workload:
        """One run of T steps on N clients per configuration some counted check uses (``checked_settings``)."""
        from convergence.budget import Workload

        from ...framework.plan_workloads import runs_workload

        run = checked_settings(self.clients, self.horizons, INSTANCE_L).run
        unique = {(s.N, s.T, s.K, s.s) for s in run}
        work = sum((runs_workload(seeds=self.seeds, rounds=T // K, E=K, clients=N) for N, T, K, _ in unique),
                   Workload())
        if self.smooth_on:
            from convergence.budget import pass_workload

            from ...framework.plan_workloads import network_flops_per_image

            flops = network_flops_per_image(smooth.NETWORK)
            for N in self.smooth_clients:
                for T in self.smooth_horizons:
                    work += (runs_workload(seeds=self.smooth_seeds, rounds=T, clients=N, records=2, rows=smooth.BATCH,
                                           network_flops=flops)
                             + pass_workload(passes=self.smooth_seeds * T, rows=self.smooth_n_train,
                                             flops_per_row=flops, network=True))
        return work


def _not_applicable(name: str, claim_id: str, group: tuple[Setting, ...], claimed: float, what: str) -> Uninformative:
    """A check none or too few of whose configurations meet their hypotheses: not applicable."""
    applicable = [s for s in group if s.applicable]
    unmet = " | ".join(f"{s.unmet()}" for s in group if not s.applicable)
    reason = (f"not applicable: {len(applicable)} of the {len(group)} {what} meet the hypotheses, a fit needs "
              f"{MIN_HORIZONS}; unmet: {unmet}")
    hypotheses = tuple(h for s in group for h in s.hypotheses)
    return Uninformative(name, reason, "not run", Verdict(claim_id, Status.INCONCLUSIVE, math.nan, claimed, None,
                                                          hypotheses, f"uninformative: {reason}"))


def _rate(claim_id: str, group: tuple[Setting, ...], in_N: bool, finals: dict[tuple[Rule, int, int], np.ndarray],
          claimed: float, notes: str) -> convergence.Verdict:
    """The exponent check over the applicable settings of ``group``: in N (``in_N``, the speedup) or in N T."""
    used = [s for s in group if s.applicable]
    skipped = [f"{f'N = {s.N}' if in_N else f'T = {s.T}'} ({s.unmet()})" for s in group if not s.applicable]
    values = np.stack([finals[(s.rule, s.N, s.horizon)] for s in used], axis=1)
    x = np.array([s.N if in_N else s.N * s.T for s in used], dtype=float)
    return convergence.check_rate_exponent(
        claim_id, x, values, claimed_exponent=claimed,
        tolerance=RATE_TOLERANCE,  # 0.05 = 10% of the claimed -1/2: slower than (NT)^-0.45 is not O(1/sqrt(NT))
        min_points=MIN_HORIZONS, hypotheses=tuple(h for s in used for h in s.hypotheses),
        notes=notes + (f"; not applicable, left out: {', '.join(skipped)}" if skipped else "")
        + f"; K = {[s.K for s in used]}, s = {[float(f'{s.s:.4g}') for s in used]}",
    )


def _smooth_part(settings: VerifySettings, plan: YuICMLCorollary4Plan, claimed: float, planted: str,
                 checks: list, uninformative: list, plots: list) -> list[dict]:
    """The smooth network's exponent checks (``cor4_smooth``), appended to ``checks``, ``uninformative`` and
    ``plots``; returns the estimates of every run (evidence)."""
    points = smooth.smooth_points(settings, plan.smooth_clients, plan.smooth_horizons, plan.smooth_seeds,
                                  plan.smooth_n_train)
    L = {N: max(p.estimates.L for p in points if p.N == N) for N in plan.smooth_clients}  # f_k differ with N
    at = {(p.N, p.T): p for p in points}
    finals = {(smooth.RULE, p.N, p.T): p.final for p in points}
    tag = f"{smooth.NETWORK}, {smooth.RULE.label}, L = max_k L_k estimated along the runs at each N"

    def add(name: str, cid: str, group: tuple[Setting, ...], in_N: bool, what: str, notes: str) -> None:
        if sum(s.applicable for s in group) < MIN_HORIZONS:
            uninformative.append(_not_applicable(name, cid, group, claimed, what))
            return
        verdict = _rate(cid, group, in_N, finals, claimed, notes + planted)
        used = [at[(s.N, s.T)] for s in group if s.applicable]
        reason = smooth.flat_reason(used[-1], used[0], L[used[-1].N])
        if reason is None:
            checks.append((name, verdict))
        else:
            uninformative.append(Uninformative.of(name, verdict, reason))
        if not in_N and used[0].N == min(plan.smooth_clients):
            plots.append(rate_plot(
                f"yu2019icml_cor4_{smooth.NETWORK}_N{used[0].N}",
                f"Yu, Jin, Yang Cor. 4 on {smooth.NETWORK}, s = sqrt(N/T), K = 1: average squared gradient norm vs "
                f"N T, N = {used[0].N}",
                "Final (1/T) sum ||grad f(xbar^t)||^2 (exact, mean over seeds) against N T with the fitted slope.",
                verdict, xlabel=r"$NT$", ylabel=r"$\frac{1}{T}\sum_t \|\nabla f(\bar x^t)\|^2$"))

    for N in plan.smooth_clients:
        group = tuple(smooth.RULE.setting(N, T, L[N]) for T in sorted(plan.smooth_horizons))
        add(f"rate in N T, {smooth.NETWORK}, N = {N}", f"yu2019icml.cor4/{smooth.NETWORK}/N={N}", group, False,
            f"horizons at N = {N}", f"final (1/T) sum ||grad f(xbar^t)||^2 (exact) against N T, {tag} ({L[N]:.3g} at "
            f"N = {N}), "
            f"{plan.smooth_n_train} images on N label-sorted clients, b = {smooth.BATCH}.")
    if len(plan.smooth_clients) < MIN_HORIZONS:  # the default plan: N = 2 only, the speedup under --full
        return _smooth_rows(points, L, plan.smooth_n_train)
    T_max = max(plan.smooth_horizons)
    group = tuple(smooth.RULE.setting(N, T_max, L[N]) for N in sorted(plan.smooth_clients))
    add(f"linear speedup in N at T = {T_max}, {smooth.NETWORK}", f"yu2019icml.cor4/{smooth.NETWORK}/speedup", group,
        True, f"N at T = {T_max}", f"linear speedup: exponent in N at T = {T_max}, {tag}.")
    return _smooth_rows(points, L, plan.smooth_n_train)


def _smooth_rows(points: list[smooth.SmoothPoint], L: dict[int, float], n_train: int) -> list[dict]:
    """The evidence of every smooth-network run: N, T, s, the mean final average, the bound and the estimates."""
    return [{"instance": f"{smooth.NETWORK}, {smooth.FAMILY}, n = {n_train}", "N": p.N, "T": p.T, "K": 1, "s": p.s,
             "mean final average": float(p.final.mean()), "bound (estimated constants, L at N)": smooth.bound_at(p, L[p.N]),
             "L of the hypotheses (max over the runs at N)": L[p.N], **p.estimates.to_json()} for p in points]


def evaluate(settings: VerifySettings, plan: YuICMLCorollary4Plan) -> ClaimResult:
    """The exponents in N T per rule and N, and in N at the largest T per rule (module docstring), each
    claimed <= ``plan.claimed_exponent`` (-1/2; a steeper planted exponent such as -1 must FAIL)."""
    claimed = plan.claimed_exponent
    planted = "" if claimed == -0.5 else f" Planted variant: claimed exponent {claimed:g}."
    grid = checked_settings(plan.clients, plan.horizons, INSTANCE_L)
    finals = final_averages(settings, grid.run, plan.seeds)
    checks, uninformative, plots = [], [], []
    for (rule, N), group in grid.rates.items():
        name, cid = f"rate in N T, {rule.label}, N = {N}", f"yu2019icml.cor4/{rule.label}/N={N}"
        if sum(s.applicable for s in group) < MIN_HORIZONS:
            uninformative.append(_not_applicable(name, cid, group, claimed, f"horizons at N = {N}"))
            continue
        verdict = _rate(cid, group, False, finals, claimed,
                        f"final (1/T) sum ||grad f(xbar^t)||^2 against N T, {rule.label}, N = {N}.{planted}")
        checks.append((name, verdict))
        if N == min(plan.clients):
            plots.append(rate_plot(
                f"yu2019icml_cor4_{'stated' if rule.stated_step else 'corrected'}_{'K1' if rule.unit_sync else 'Kyu'}",
                f"Yu, Jin, Yang Cor. 4, {rule.label}: average squared gradient norm vs N T, N = {N}",
                "Final (1/T) sum ||grad f(xbar^t)||^2 (mean over seeds) against N T with the fitted slope.",
                verdict, xlabel=r"$NT$", ylabel=r"$\frac{1}{T}\sum_t \|\nabla f(\bar x^t)\|^2$"))
    T_max = max(plan.horizons)
    for rule, group in grid.speedups.items():
        name, cid = f"linear speedup in N at T = {T_max}, {rule.label}", f"yu2019icml.cor4/{rule.label}/speedup"
        if sum(s.applicable for s in group) < MIN_HORIZONS:
            uninformative.append(_not_applicable(name, cid, group, claimed, f"N at T = {T_max}"))
            continue
        checks.append((name, _rate(cid, group, True, finals, claimed,
                                   f"linear speedup: exponent in N at T = {T_max}, {rule.label}.{planted}")))
    rows = _smooth_part(settings, plan, claimed, planted, checks, uninformative, plots) if plan.smooth_on else []
    verdict = combine_checks(
        "yu2019icml.cor4", checks, headline=checks[0][1] if checks else None, uninformative=uninformative,
        notes=f"Headline: the first counted exponent in N T. Claimed: at most {claimed:g} + {RATE_TOLERANCE:g}. "
        f"Finding: the note's s = sqrt(N/T) has no L; at L = {INSTANCE_L:g} the first bullet's T >= 36 L^2 N makes "
        f"K = 1 <= 1/(6 L s), the second bullet's T >= L^2 N does not make K <= 1/(6 L s) (needs N T >= (6 L)^4 = "
        f"{(6 * INSTANCE_L) ** 4:g} for K = T^(1/4)/N^(3/4)); configurations outside the hypotheses are not run."
        + planted)
    return ClaimResult(verdict.with_evidence(smooth_network=rows) if rows else verdict, tuple(plots))


CLAIM = Claim(
    "yu2019icml.cor4", (YU2019ICML, LIU2022_NOTE), "Corollary 4, momentum-less (as restated in Liu's lecture note)",
    "s = √N/√T, K = 1, T ≥ 36 L² N ⇒ (1/T) Σ_{t<T} E‖∇f(x̄ᵗ)‖² = O(1/√(NT)) + O(N/T); s = √N/√T, "
    "K = O(T^(1/4)/N^(3/4)), T ≥ L² N ⇒ O(1/√(NT)): linear speedup in N (checked as stated and with s = √N/(L√T)).",
    "the fitted exponent of the final average squared gradient norm in N T, first counted rule and N (claimed ≤ −1/2)",
    evaluate,
    plan=ModePlans(
        quick=YuICMLCorollary4Plan(clients=(2, 4, 8), horizons=(1_024, 4_096, 16_384), smooth_horizon=0,
                                   smooth_horizon_count=3, smooth_clients=(2,)),
        default=YuICMLCorollary4Plan(clients=(2, 4, 8), horizons=(1_024, 4_096, 16_384, 65_536), smooth_horizon=8_192,
                                     smooth_horizon_count=3, smooth_clients=(2,)),
        full=YuICMLCorollary4Plan(clients=(2, 4, 8, 16), horizons=(1_024, 4_096, 16_384, 65_536, 262_144),
                                  smooth_horizon=65_536, smooth_horizon_count=4, smooth_clients=(2, 4, 8)),
    ),
    variants=(
        PlantedVariant("rate O(1/(NT))", "claimed exponent -1 in N T (and in N) instead of -1/2: steeper than the "
                       "measured about -0.5", {"claimed_exponent": -1.0}, sub_check="rate in N T"),
    ),
    order=154,
)
