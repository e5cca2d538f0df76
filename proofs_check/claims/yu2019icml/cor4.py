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
    seeds: int = parameter(SPEEDUP_SEEDS, "seeds of every run (at least 8: rate intervals over seeds)",
                           minimum=SPEEDUP_SEEDS, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (and in N)")

    def __post_init__(self) -> None:
        if any(N % 2 for N in self.clients):
            raise PlanError("clients", f"every N must be even (stiff and soft clients alternate), got {self.clients}")
        if len(self.horizons) < MIN_HORIZONS:
            raise PlanError("horizons", f"a rate in N T needs at least {MIN_HORIZONS} horizons, got {self.horizons}")

    def workload(self) -> Workload:
        """One run of T steps on N clients per configuration some counted check uses (``checked_settings``)."""
        from convergence.budget import Workload

        from ...framework.plan_workloads import runs_workload

        run = checked_settings(self.clients, self.horizons, INSTANCE_L).run
        unique = {(s.N, s.T, s.K, s.s) for s in run}
        return sum((runs_workload(seeds=self.seeds, rounds=T // K, E=K, clients=N) for N, T, K, _ in unique),
                   Workload())


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
    verdict = combine_checks(
        "yu2019icml.cor4", checks, headline=checks[0][1] if checks else None, uninformative=uninformative,
        notes=f"Headline: the first counted exponent in N T. Claimed: at most {claimed:g} + {RATE_TOLERANCE:g}. "
        f"Finding: the note's s = sqrt(N/T) has no L; at L = {INSTANCE_L:g} the first bullet's T >= 36 L^2 N makes "
        f"K = 1 <= 1/(6 L s), the second bullet's T >= L^2 N does not make K <= 1/(6 L s) (needs N T >= (6 L)^4 = "
        f"{(6 * INSTANCE_L) ** 4:g} for K = T^(1/4)/N^(3/4)); configurations outside the hypotheses are not run."
        + planted)
    return ClaimResult(verdict, tuple(plots))


CLAIM = Claim(
    "yu2019icml.cor4", (YU2019ICML, LIU2022_NOTE), "Corollary 4, momentum-less (as restated in Liu's lecture note)",
    "s = √N/√T, K = 1, T ≥ 36 L² N ⇒ (1/T) Σ_{t<T} E‖∇f(x̄ᵗ)‖² = O(1/√(NT)) + O(N/T); s = √N/√T, "
    "K = O(T^(1/4)/N^(3/4)), T ≥ L² N ⇒ O(1/√(NT)): linear speedup in N (checked as stated and with s = √N/(L√T)).",
    "the fitted exponent of the final average squared gradient norm in N T, first counted rule and N (claimed ≤ −1/2)",
    evaluate,
    plan=ModePlans(
        quick=YuICMLCorollary4Plan(clients=(2, 4, 8), horizons=(1_024, 4_096, 16_384)),
        default=YuICMLCorollary4Plan(clients=(2, 4, 8), horizons=(1_024, 4_096, 16_384, 65_536)),
        full=YuICMLCorollary4Plan(clients=(2, 4, 8, 16), horizons=(1_024, 4_096, 16_384, 65_536, 262_144)),
    ),
    variants=(
        PlantedVariant("rate O(1/(NT))", "claimed exponent -1 in N T (and in N) instead of -1/2: steeper than the "
                       "measured about -0.5", {"claimed_exponent": -1.0}, sub_check="rate in N T"),
    ),
    order=154,
)
