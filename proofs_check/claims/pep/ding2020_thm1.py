"""pep.ding2020.thm1: Ding et al.'s Theorem 1 (MM-PSGD, sigma = 0) against the exact worst case over its class.

Ding, Niu, Zheng, Liu (arXiv 2002.07454), Theorem 1 with its explicit constant (eq. 16, 17, 33; THEOREMS.md,
``proofs_check.constants.ding2020.DingConstants``): with gamma = sqrt(N)/(L sqrt(T)), I <= T^(1/4)/N^(3/4)
and K > C M N (K = E I steps per block, T = C M K),

    (1/M) sum_m F_m(x~_m) - F(x*) <= 2B^2/(gamma T) + 2 gamma^2 I^2 G^2 L^2/mu + 4 gamma^3 I^2 G^2 L^2
        + 4(B^2 L^2 + B^2 + B^2 L)/K + 4 gamma^3 I^2 G^2 L^2 + 2 gamma^3 I^3 G^2 L^2          (sigma = 0).

The class, with exact gradients (sigma = 0, Assumption 3): every F_m^i L-smooth and mu-strongly convex,
||grad F_m^i|| <= G and ||x|| <= B (Assumptions 4-5). ``proofs_check.pep.MMPSGDPEP`` imposes 4 and 5 at the
points the method and the proof use (every local iterate, x*, the x_m*, the predictors): its class R
contains the paper's, so its worst case W is an upper bound on the paper's (``proofs_check.pep.block_cyclic``
says why no exact program of "bounded gradients on a ball" is known). So **eq. (bound) >= W proves the theorem
at those constants**, and a bound below W is false over R (the theorem with Assumptions 4-5 read at those
points), which is what a FAIL here means. W is the same for every N >= 1 at I = 1 and for every N >= 2 at
I >= 2 (the clients' symmetry within each block, ``block_cyclic``); the bound depends on N through gamma and I.

The bound cannot fail where it is at least the class's **ceiling**, the largest mini-max gap any predictors
in the ball reach over the class (the same program with free predictors: G^2/(2 mu) when the ball does not
bind, 1.75 at the defaults). The explicit constant's 4(B^2 L^2 + B^2 + B^2 L)/K and 2 gamma^2 I^2 G^2 L^2/mu
keep it above that ceiling until T is about 30 (N = 2, mu = 0.5, G = 1.5): smaller points are listed as
uninformative, never counted as PASS.

fedbound solves W on the plan's grid (M in ``M_grid``, K in ``K_grid`` with K > C M N and T = C M K <=
``max_steps``), L = 1, B = 1 (the statement scales: x -> c x scales B and G by c and both sides by c^2;
the bound's Lemma 9 term is not homogeneous in L, so L = 1 is the normalisation gamma = sqrt(N)/(L sqrt(T))
suggests), I the largest divisor of K allowed by I <= T^(1/4)/N^(3/4) (1 at these sizes), E = K / I. Per M,
one sub-check: bound x ``bound_scale`` >= W at every informative K (``pep.check_against_worst_case``: an SDP
not solved to tolerance is INCONCLUSIVE). The looseness bound / W against T and M is the finding (measured
at the default grid: 22 to 58, two plots) with each program's solve time (CPU seconds, two loaded cores:
0.03 at T = 8, 0.2 at T = 16, 0.5 at T = 20, 1.1 to 1.3 at T = 24, 2 to 3.2 at T = 32, 5.6 to 6.1 at T = 40).
Clarabel does not solve these programs to tolerance beyond T of about 40 (T = 44, M = 2: accuracy 2.7e-4;
T = 36, M = 3: a solver error), so ``--full`` adds only the point M = 1, T = 24 to the default's. At fixed T
the worst case grows with M (T = 32: 0.051 at M = 1, 0.081 at M = 2; T = 24: 0.063, 0.096, 0.112 at M = 1, 2,
3) faster than the bound (whose 4(B^2 L^2 + B^2 + B^2 L)/K grows as K = T/(C M) falls): the looseness falls
with M. The theorem's I <= T^(1/4)/N^(3/4) forces I = 1 at these sizes (I = 2 needs T >= 128 at N = 2), where
the worst case does not depend on N (``block_cyclic``): the local steps' drift, which the bound's G terms
pay for, is absent from every program the theorem allows at solvable sizes.

Planted false variant: ``bound_scale = 0.02``: below W wherever the looseness is under 50, at every informative
point (22 to 30).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convergence.verdict import Hypothesis, Uninformative

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import PlantedParameters, combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import Curve, CurvesPlot
from ...framework.references import DING2020, PEPIT2024, TAYLOR2017

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "PepDing2020Thm1Plan", "evaluate", "local_steps"]

CLAIM_ID = "pep.ding2020.thm1"


def local_steps(K: int, T: int, N: int) -> int | None:
    """The largest I dividing K with I <= T^(1/4) / N^(3/4) (Theorem 1's condition), None when even I = 1 breaks it."""
    limit = T ** 0.25 / N ** 0.75
    allowed = [I for I in range(1, K + 1) if K % I == 0 and I <= limit]
    return max(allowed) if allowed else None


@dataclass(frozen=True)
class PepDing2020Thm1Plan:
    """pep.ding2020.thm1: the (M, K) grid, the class's constants, the bound's scale and the solver's iteration limit."""

    M_grid: tuple[int, ...] = parameter(doc="blocks M", minimum=1)
    K_grid: tuple[int, ...] = parameter(doc="steps per block K = E I (those with K > C M N are solved)", minimum=1)
    max_steps: int = parameter(40, "the largest T = C M K solved", minimum=1)
    n_clients: int = parameter(2, "clients N per block", minimum=1)
    cycles: int = parameter(1, "cycles C", minimum=1)
    mu: float = parameter(0.5, "strong convexity mu of every F_m^i (L = 1)", above=0, maximum=0.999)
    G: float = parameter(1.5, "Assumption 4's gradient bound G (B = 1)", above=0)
    bound_scale: float = parameter(1.0, "multiplies the explicit bound", above=0)
    max_iter: int = parameter(200, "the SDP solver's iteration limit (Clarabel's default)", minimum=1)

    def points(self) -> list[tuple[int, int, int]]:
        """The (M, K, I) solved: K > C M N, T = C M K <= max_steps and some I allowed, sorted."""
        out = []
        for M in sorted(set(self.M_grid)):
            for K in sorted(set(self.K_grid)):
                T = self.cycles * M * K
                I = local_steps(K, T, self.n_clients)
                if K > self.cycles * M * self.n_clients and T <= self.max_steps and I is not None:
                    out.append((M, K, I))
        return out

    def workload(self) -> Workload:
        """One program per point, of T local steps, and one ceiling per M (``proofs_check.pep.workload``)."""
        from ...pep.workload import programs_workload

        return programs_workload([self.cycles * M * K for M, K, _ in self.points()] + [1] * len(self.M_grid), "K_grid")


def evaluate(settings: VerifySettings, plan: PepDing2020Thm1Plan) -> ClaimResult:
    """W and the explicit bound at every point of the plan's grid, one sub-check per M (module docstring)."""
    from ...constants.ding2020 import DingConstants
    from ...pep import MMPSGDPEP, check_against_worst_case, mm_psgd_worst_case, worst_case

    planted = PlantedParameters.of(("bound_scale", plan.bound_scale, 1.0))
    L, B, N, C = 1.0, 1.0, plan.n_clients, plan.cycles
    points = plan.points()
    if not points:
        raise ValueError(f"K_grid: claim {CLAIM_ID!r} needs some K > C M N with C M K <= max_steps")
    solve = {"max_iter": plan.max_iter, "store": settings.run_store}
    rows, by_M, ceilings = [], {}, {}
    for M, K, I in points:
        if M not in ceilings:
            ceilings[M] = worst_case(MMPSGDPEP(1, M, 1, 1, 1, L, plan.mu, 1.0, B, plan.G, anywhere=True),
                                     use_cache=settings.use_cache, **solve)
        T = C * M * K
        gamma = math.sqrt(N) / (L * math.sqrt(T))
        worst = mm_psgd_worst_case(N, M, C, K // I, I, L, plan.mu, gamma, B, plan.G, use_cache=settings.use_cache,
                                   **solve)
        bound = plan.bound_scale * DingConstants(N, T, K, I, gamma, L, plan.mu, B ** 2, plan.G ** 2, 0.0).bound
        informative = ceilings[M].solved and bound < ceilings[M].value
        by_M.setdefault(M, []).append((T, worst, bound, informative, K, I))
        rows.append({"M": M, "K": K, "I": I, "E": K // I, "T": T, "rounds": T // I, "gamma": gamma,
                     "worst_case": worst.value, "bound": bound, "ceiling": ceilings[M].value,
                     "informative": informative,
                     "looseness": bound / worst.value if worst.solved and worst.value > 0 else None,
                     "status": worst.status, "solved": worst.solved, "accuracy": worst.accuracy,
                     "seconds": worst.seconds, "cpu_seconds": worst.cpu_seconds})
    scaled = "" if plan.bound_scale == 1.0 else f" x {plan.bound_scale:g} (planted)"
    checks, uninformative = [], []
    for M, entries in by_M.items():
        name = f"bound >= worst case, M = {M}"
        hypotheses = (
            Hypothesis("gamma = sqrt(N)/(L sqrt(T)), I <= T^(1/4)/N^(3/4), K > C M N", True,
                       f"N = {N}, C = {C}, M = {M}, (K, I) in {[(K, I) for *_, K, I in entries]}"),
            Hypothesis("Assumptions 1-5 with sigma = 0, 4-5 at the points the method and the proof use", True,
                       f"the class R: L = {L:g}, mu = {plan.mu:g}, G = {plan.G:g}, B = {B:g} (contains the paper's)"),
        )
        kept = [e for e in entries if e[3]] or entries
        verdict = check_against_worst_case(
            f"{CLAIM_ID}/M={M}", [T for T, *_ in kept], [e[1] for e in kept], [e[2] for e in kept], upper=True,
            hypotheses=hypotheses, x_name="T",
            notes=f"M = {M}: the mini-max gap's worst case over the class against the explicit bound{scaled} at T in "
                  f"{[T for T, *_ in kept]} (the points where the bound is below the ceiling {ceilings[M].value:.4g}).")
        if any(e[3] for e in entries):
            checks.append((name, verdict))
        else:
            uninformative.append(Uninformative.of(name, verdict, (
                f"the bound is at or above the class's ceiling {ceilings[M].value:.4g} (the largest mini-max gap of "
                f"any predictors in the ball) at every T in {[T for T, *_ in entries]}, so it cannot fail")))
    headline = max((v for _, v in checks), key=lambda v: v.measured if math.isfinite(v.measured) else -math.inf,
                   default=None)
    solved = [r for r in rows if r["looseness"] is not None]
    finding = ", ".join(f"M = {r['M']}, T = {r['T']}: {r['looseness']:.3g}" for r in solved)
    times = ", ".join(f"T = {r['T']} (M = {r['M']}): {r['cpu_seconds']:.2g} s" for r in rows)
    verdict = combine_checks(
        CLAIM_ID, checks, headline=headline, uninformative=uninformative,
        notes=(f"{planted.note()}Worst case of (1/M) sum_m F_m(x~_m) - F(x*) for MM-PSGD (exact gradients, N = {N} "
               f"clients per block, C = {C}) over Theorem 1's class with Assumptions 4-5 read at the points the method "
               f"and the proof use (L = {L:g}, mu = {plan.mu:g}, G = {plan.G:g}, B = {B:g}), solved exactly as an SDP "
               f"(PEPit, Clarabel), against the explicit bound{scaled}. Headline: the largest worst case / bound over "
               f"the informative points (<= 1: the theorem holds). Looseness bound / worst case: {finding}. "
               f"CPU time per program (a cached program reports its original solve): {times}."),
    )
    verdict = planted.mark(verdict.with_evidence(
        looseness=rows, mu=plan.mu, G=plan.G, B=B, L=L, n_clients=N, cycles=C,
        ceiling={str(M): c.figures() for M, c in ceilings.items()}))
    return ClaimResult(verdict, _plots(by_M, ceilings, scaled))


def _plots(by_M: dict, ceilings: dict, scaled: str) -> tuple[CurvesPlot, CurvesPlot]:
    """Worst case and the bound against T per M, with the class's ceiling; the looseness bound / worst case
    against T per M."""
    values, ratios = [], []
    for M, entries in by_M.items():
        solved = [(T, w.value, b) for T, w, b, *_ in entries if w.solved and w.value > 0]
        if not solved:
            continue
        Ts = [float(T) for T, _, _ in solved]
        values += [Curve(Ts, [v for _, v, _ in solved], f"worst case, M = {M}"),
                   Curve(Ts, [b for _, _, b in solved], f"bound{scaled}, M = {M}")]
        ratios.append(Curve(Ts, [b / v for _, v, b in solved], f"M = {M}"))
    Ts = sorted({float(T) for entries in by_M.values() for T, *_ in entries})
    solved_ceilings = [c.value for c in ceilings.values() if c.solved]
    if values and solved_ceilings:
        values.append(Curve(Ts, [max(solved_ceilings)] * len(Ts), "ceiling (any predictors in the ball)"))
    empty = (Curve((1.0,), (1.0,), "no program solved to tolerance"),)
    return (
        CurvesPlot("pep_ding2020_thm1_worst_case", "Ding et al. Thm 1 (sigma = 0): exact worst case and the bound",
                   "The mini-max gap (1/M) sum_m F_m(x~_m) - F(x*) of MM-PSGD: its exact worst case over Theorem 1's "
                   "class (solved SDP) and the explicit bound (eq. 16, 17, 33), against the steps T, per M; a bound "
                   "at or above the ceiling (the largest gap any predictors in the ball reach) cannot fail.",
                   tuple(values) or empty, r"steps $T$", "mini-max gap", True, True),
        CurvesPlot("pep_ding2020_thm1_looseness", "Ding et al. Thm 1 (sigma = 0): looseness of the bound",
                   "The explicit bound divided by the exact worst case over Theorem 1's class, against T, per M "
                   "(1: tight).",
                   tuple(ratios) or empty, r"steps $T$", "bound / worst case", True, True),
    )


CLAIM = Claim(
    CLAIM_ID, (DING2020, TAYLOR2017, PEPIT2024), "Theorem 1 (MM-PSGD), sigma = 0, against the exact worst case",
    "F_m^i L-smooth μ-strongly convex, σ = 0, ‖∇F_m^i‖ ≤ G, ‖x‖ ≤ B; γ = √N/(L√T), I ≤ T^(1/4)/N^(3/4), K > CMN ⇒ "
    "(1/M) Σ_m F_m(x̃_m) − F(x*) ≤ the explicit bound of eq. 16, 17, 33 for every instance; equivalently the bound ≥ "
    "W, the exact worst case over the class with Assumptions 4-5 read at the points the method and the proof use (a "
    "performance-estimation SDP that contains the paper's class).",
    "the largest worst case / bound over the informative (M, T) points (≤ 1: the theorem holds; its inverse is the "
    "looseness)",
    evaluate,
    plan=ModePlans(
        quick=PepDing2020Thm1Plan(M_grid=(1, 2), K_grid=(10, 20)),
        default=PepDing2020Thm1Plan(M_grid=(1, 2, 3), K_grid=(8, 16, 20, 32)),
        full=PepDing2020Thm1Plan(M_grid=(1, 2, 3), K_grid=(8, 16, 20, 24, 32), max_steps=40),
    ),
    variants=(
        PlantedVariant("bound x 0.02", "the explicit bound times 0.02: below the exact worst case (the looseness is 22 "
                       "to 58 at the default grid), so the smaller bound is false for some instance of the class",
                       {"bound_scale": 0.02}, sub_check="bound >= worst case"),
    ),
    order=132,
)
