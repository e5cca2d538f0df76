"""pep.yu2019.drift: Yu et al.'s client-drift lemma against the exact worst-case drift over its class.

Yu, Yang, Zhu (AAAI 2019), as Lemma 1 of Liu's lecture note (``liu_lecture_fl_fedavg.md``): under
FedAvg (parallel restarted SGD) with a constant step s, at most K local steps since the last average
and ||g|| <= G for every gradient a client takes,

    E||xbar^t - x_i^t||^2 <= 4 s^2 K^2 G^2,      xbar^t = (1/N) sum_i x_i^t.

The class with exact gradients: N clients, every f_i L-smooth (non-convex allowed), ||grad f_i|| <= G at
every local iterate. Over it the worst-case drift of client 1 after K local steps, W(N, K), is the
performance-estimation program of ``proofs_check.pep.drift`` (PEPit's direct N-client program: one
``SmoothFunction`` per client; ``proofs_check.pep.DriftPEP``), and the lemma holds at (N, K) iff
4 s^2 K^2 G^2 >= W(N, K). The worst case has a closed form (``proofs_check.pep.drift``, derived there):
W(N, K) = 4 (1 - 1/N)^2 s^2 K^2 G^2, attained by linear clients (client 1's gradient G e, every other
client's -G e), whatever L; so the lemma's looseness bound / W is (1 - 1/N)^-2 (4 at N = 2, 2.25 at N = 3,
1.78 at N = 4, 1 as N -> infinity: the constant 4 cannot be lowered for all N). The evidence puts the
solved W beside the closed form (measured: within 1e-7, relative).

fedbound solves W(N, K) on the plan's grid (N in ``N_grid``, K in ``K_grid``) with L = 1, s = ``step``,
G = 1 (the statement is homogeneous: scaling x by c scales G by c and both sides by c^2; W does not
depend on L). Per N, one sub-check: ``bound_constant`` s^2 K^2 G^2 >= W(N, K) at every K
(``pep.check_against_worst_case``: an SDP not solved to tolerance is INCONCLUSIVE, never PASS).

Planted false variant: ``bound_constant = 2`` (the lemma with 2 in place of 4): below W at N >= 4, where
4 (1 - 1/N)^2 = 2.25 > 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convergence.verdict import Hypothesis

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import PlantedParameters, combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import Curve, CurvesPlot
from ...framework.references import LIU2022_NOTE, PEPIT2024, TAYLOR2017, YU2019

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "PepYu2019DriftPlan", "evaluate", "PAPER_CONSTANT"]

CLAIM_ID = "pep.yu2019.drift"
PAPER_CONSTANT = 4.0
"""The constant of Lemma 1: E||xbar^t - x_i^t||^2 <= 4 s^2 K^2 G^2."""


@dataclass(frozen=True)
class PepYu2019DriftPlan:
    """pep.yu2019.drift: the (N, K) grid, the step, the lemma's constant and the solver's iteration limit."""

    N_grid: tuple[int, ...] = parameter(doc="clients N", minimum=2)
    K_grid: tuple[int, ...] = parameter(doc="local steps K since the last average", minimum=1)
    step: float = parameter(0.1, "the constant step s (L = 1, G = 1)", above=0)
    bound_constant: float = parameter(PAPER_CONSTANT, "the lemma's constant (4)", above=0)
    max_iter: int = parameter(200, "the SDP solver's iteration limit (Clarabel's default)", minimum=1)

    def workload(self) -> Workload:
        """One program per (N, K), of N K gradient leaves, priced as a program of T = N K local steps
        (``proofs_check.pep.workload``)."""
        from ...pep.workload import programs_workload

        return programs_workload([N * K for N in self.N_grid for K in self.K_grid], "N_grid")


def evaluate(settings: VerifySettings, plan: PepYu2019DriftPlan) -> ClaimResult:
    """W(N, K) and the lemma's bound at every point of the plan's grid, one sub-check per N (module docstring)."""
    from ...pep import DriftPEP, check_against_worst_case, drift_closed_form, worst_case

    planted = PlantedParameters.of(("bound_constant", plan.bound_constant, PAPER_CONSTANT))
    L, G, s = 1.0, 1.0, plan.step
    checks, rows, by_N = [], [], {}
    for N in plan.N_grid:
        entries = []
        for K in plan.K_grid:
            setting = DriftPEP(N, K, L, s, G)
            worst = worst_case(setting, max_iter=plan.max_iter, store=settings.run_store, use_cache=settings.use_cache)
            bound = plan.bound_constant * (s * K * G) ** 2
            closed = drift_closed_form(setting)
            entries.append((K, worst, bound, closed))
            rows.append({"N": N, "K": K, "worst_case": worst.value, "closed_form": closed,
                         "relative_difference": abs(worst.value - closed) / closed if worst.solved else None,
                         "bound": bound, "looseness": bound / worst.value if worst.solved and worst.value > 0 else None,
                         "status": worst.status, "solved": worst.solved, "accuracy": worst.accuracy,
                         "seconds": worst.seconds, "cpu_seconds": worst.cpu_seconds})
        by_N[N] = entries
        hypotheses = (
            Hypothesis("constant step s, K local steps since the last average", True, f"s = {s:g}, K in {list(plan.K_grid)}"),
            Hypothesis("||grad f_i||^2 <= G^2 at every local iterate (exact gradients)", True,
                       f"the class: every f_i L-smooth (non-convex allowed), L = {L:g}, G = {G:g}, N = {N}"),
        )
        scaled = "" if plan.bound_constant == PAPER_CONSTANT else f" (constant {plan.bound_constant:g}: planted)"
        checks.append((f"lemma >= worst case, N = {N}", check_against_worst_case(
            f"{CLAIM_ID}/N={N}", [K for K, *_ in entries], [w for _, w, *_ in entries], [b for _, _, b, _ in entries],
            upper=True, hypotheses=hypotheses, x_name="K",
            notes=f"N = {N}: client 1's worst-case drift ||x_1 - xbar||^2 over the class against "
                  f"{plan.bound_constant:g} s^2 K^2 G^2{scaled}.")))
    headline = max((v for _, v in checks), key=lambda v: v.measured if math.isfinite(v.measured) else -math.inf)
    solved = [r for r in rows if r["looseness"] is not None]
    looseness = ", ".join(f"N = {N}: {1 / (1 - 1 / N) ** 2:.3g}" for N in plan.N_grid)
    differences = [r["relative_difference"] for r in solved]
    agreement = (f"the solved worst cases match the closed form 4 (1 - 1/N)^2 s^2 K^2 G^2 within "
                 f"{max(differences):.2g} (relative) at {len(solved)} of {len(rows)} points" if solved
                 else "no program solved to tolerance")
    verdict = combine_checks(
        CLAIM_ID, checks, headline=headline,
        notes=(f"{planted.note()}Worst case of client 1's drift ||x_1 - xbar||^2 after K local steps over N L-smooth "
               f"(non-convex) clients with ||grad f_i|| <= G at every local iterate (L = {L:g}, s = {s:g}, G = {G:g}), "
               f"solved exactly as an SDP (PEPit's N-client program, Clarabel), against {plan.bound_constant:g} "
               f"s^2 K^2 G^2. Headline: the largest worst case / bound over the grid (<= 1: the lemma holds); "
               f"{agreement}. Looseness bound / worst case = (1 - 1/N)^-2: {looseness}."),
    )
    verdict = planted.mark(verdict.with_evidence(drift=rows, step=s, L=L, G=G))
    return ClaimResult(verdict, (_plot(by_N, plan),))


def _plot(by_N: dict, plan: PepYu2019DriftPlan) -> CurvesPlot:
    """W / (s K G)^2 against N per K, beside the closed form 4 (1 - 1/N)^2 and the lemma's constant."""
    Ns = sorted(by_N)
    curves = []
    for i, K in enumerate(plan.K_grid):
        solved = [(N, by_N[N][i][1].value / (plan.step * K) ** 2) for N in Ns if by_N[N][i][1].solved]
        if solved:
            curves.append(Curve([float(N) for N, _ in solved], [v for _, v in solved], f"worst case, K = {K}"))
    curves.append(Curve([float(N) for N in Ns], [4 * (1 - 1 / N) ** 2 for N in Ns], "closed form 4 (1 - 1/N)^2"))
    curves.append(Curve([float(N) for N in Ns], [plan.bound_constant] * len(Ns),
                        f"lemma's constant {plan.bound_constant:g}"))
    return CurvesPlot("pep_yu2019_drift", "Yu et al.'s client drift: exact worst case against Lemma 1",
                      "Client 1's worst-case drift ||x_1 - xbar||^2 over L-smooth clients with gradients bounded by G, "
                      "divided by (s K G)^2 (a solved SDP per N and K), against the number of clients N, beside its "
                      "closed form 4 (1 - 1/N)^2 (the solved curves lie on it: they coincide) and the lemma's "
                      "constant.",
                      tuple(curves), r"clients $N$", r"drift / $(sKG)^2$", False, False)


CLAIM = Claim(
    CLAIM_ID, (YU2019, LIU2022_NOTE, TAYLOR2017, PEPIT2024),
    "Lemma 1 of the lecture note (client drift), exact gradients, against the exact worst case",
    "Constant step s, K local steps since the last average, ‖∇f_i‖ ≤ G at every local iterate, f_i L-smooth "
    "(non-convex allowed): ‖x̄ᵗ − x_iᵗ‖² ≤ 4 s²K²G² for every instance; equivalently 4 s²K²G² ≥ W(N, K), the exact "
    "worst-case drift over the class (a performance-estimation SDP; closed form 4 (1 − 1/N)² s²K²G²).",
    "the largest worst case / bound over the (N, K) grid (≤ 1: the lemma holds; its inverse, the looseness, is "
    "(1 − 1/N)^−2)",
    evaluate,
    plan=ModePlans(
        quick=PepYu2019DriftPlan(N_grid=(2, 4), K_grid=(1, 2)),
        default=PepYu2019DriftPlan(N_grid=(2, 3, 4), K_grid=(1, 2, 3)),
        full=PepYu2019DriftPlan(N_grid=(2, 3, 4, 6, 8), K_grid=(1, 2, 3, 4)),
    ),
    variants=(
        PlantedVariant("constant 2", "the lemma with 2 in place of 4: below the exact worst case 4 (1 - 1/N)^2 s^2 K^2 "
                       "G^2 at N >= 4 (2.25 s^2 K^2 G^2 at N = 4), attained by linear clients, so the smaller bound is "
                       "false for some instance of the class", {"bound_constant": 2.0}, sub_check="lemma >= worst case"),
    ),
    order=131,
)
