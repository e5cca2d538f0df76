"""yu2019.cor2: Corollary 2 of Yu, Yang, Zhu (AAAI 2019, arXiv:1807.06629), "Parallel Restarted SGD
with Faster Convergence and Less Communication", as restated in the lecture note
``liu_lecture_fl_fedavg.md``: linear speedup of parallel restarted SGD.

Corollary 2: s = sqrt(N)/(L sqrt(T)) and K <= T^{1/4}/N^{3/4} give
    (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 = O(1/sqrt(NT)),
from Theorem 1 (identical data, f L-smooth, s in (0, 1/L]; ``thm1``).

Instance and sweep: ``sweep`` (``identical_quadratic``, single-row minibatches; the same runs as
yu2019.thm1, at least SPEEDUP_SEEDS seeds). Checks: the fitted exponent of the final average squared
gradient norm in N T at each N and in N at the largest T, both claimed <= -1/2, with the hypothesis
K <= T^{1/4}/N^{3/4} evaluated on every configuration.

Planted variant (the power self-test, ``fedbound verify --power``): ``yu2019.cor2[claimed_exponent=a]``
checks the rate (NT)^a; a working check FAILs it when it is false on the instance (a steeper than -1/2
by more than the tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence

from ..seeds import SPEEDUP_SEEDS
from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import parameter
from ...framework.plot_specs import rate_plot
from ...framework.references import LIU2022_NOTE, YU2019
from .sweep import RATE_TOLERANCE, YuSweepPlan, sweep, sweep_hypotheses, sweep_plans

if TYPE_CHECKING:
    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "YuCorollary2Plan"]



@dataclass(frozen=True)
class YuCorollary2Plan(YuSweepPlan):
    """yu2019.cor2: the sweep (at least SPEEDUP_SEEDS seeds) and the claimed rate."""

    seeds: int = parameter(SPEEDUP_SEEDS, "seeds of every run (at least 8: rate intervals over seeds)",
                           minimum=SPEEDUP_SEEDS, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (and in N)")


def evaluate(settings: VerifySettings, plan: YuCorollary2Plan) -> ClaimResult:
    """Exponent in N T at each N, and in N at the largest T, both claimed <= ``plan.claimed_exponent``
    (-1/2: Corollary 2's O(1/sqrt(NT)); a steeper planted exponent such as -1 is false and must FAIL)."""
    claimed_exponent = plan.claimed_exponent
    planted = "" if claimed_exponent == -0.5 else f" Planted variant: claimed exponent {claimed_exponent:g}."
    runs = sweep(settings, plan)
    checks, series = [], []
    for N in sorted({r["N"] for r in runs}):
        group = sorted((r for r in runs if r["N"] == N), key=lambda r: r["T"])
        x = np.array([r["N"] * r["T"] for r in group], dtype=float)
        values = np.stack([r["result"].extras.grad_sq_mean[:, -1] for r in group], axis=1)
        hypotheses = tuple(h for r in group for h in sweep_hypotheses(r))
        verdict = convergence.check_rate_exponent(
            f"yu2019.cor2/N={N}", x, values, claimed_exponent=claimed_exponent, hypotheses=hypotheses,
            tolerance=RATE_TOLERANCE,  # 0.05 = 10% of the claimed -1/2: slower than (NT)^-0.45 is not O(1/sqrt(NT))
            notes=f"final (1/T) sum ||grad f||^2 against N T for T in {[r['T'] for r in group]}, N = {N}.{planted}",
        )
        checks.append((f"rate in N T, N = {N}", verdict))
        series.append(verdict)
    T_max = max(r["T_nominal"] for r in runs)
    top = sorted((r for r in runs if r["T_nominal"] == T_max), key=lambda r: r["N"])
    speedup = convergence.check_rate_exponent(
        "yu2019.cor2/speedup", np.array([r["N"] for r in top], dtype=float),
        np.stack([r["result"].extras.grad_sq_mean[:, -1] for r in top], axis=1), claimed_exponent=claimed_exponent,
        min_points=len(top), notes=f"linear speedup: exponent in N at T = {T_max}.{planted}",
        tolerance=RATE_TOLERANCE,  # 10% of the claimed -1/2, as the rate in N T
    ) if len(top) >= 3 else None
    if speedup is not None:
        checks.append((f"linear speedup in N at T = {T_max}", speedup))
    verdict = combine_checks("yu2019.cor2", checks, headline=checks[0][1],
                             notes=f"Headline: the exponent in N T at the smallest N. Claimed: at most {claimed_exponent:g}."
                             + planted)
    plot = rate_plot(
        "yu2019_cor2", "Yu et al. Cor. 2: average squared gradient norm vs N T",
        "Final (1/T) sum ||grad f(xbar)||^2 (mean over seeds) against N T, smallest N, with the fitted slope.",
        series[0], xlabel=r"$NT$", ylabel=r"$\frac{1}{T}\sum_t \|\nabla f(\bar x_{t-1})\|^2$",
    )
    return ClaimResult(verdict, (plot,))


CLAIM = Claim(
    "yu2019.cor2", (YU2019, LIU2022_NOTE), "Corollary 2 (as restated in Liu's lecture note)",
    "s = √N/(L√T) and K ≤ T^(1/4)/N^(3/4) ⇒ (1/T) Σ_t E‖∇f(x̄_{t−1})‖² = O(1/√(NT)): linear speedup in N.",
    "the fitted exponent of the average squared gradient norm in N T at the smallest N (claimed ≤ −1/2)",
    evaluate,
    plan=sweep_plans(YuCorollary2Plan),
    variants=(
        PlantedVariant("rate O(1/(NT))", "claimed exponent -1 in N T (and in N) instead of -1/2: steeper than the "
                       "measured about -0.5", {"claimed_exponent": -1.0}, sub_check="rate in N T"),
    ),
    order=140,
)
