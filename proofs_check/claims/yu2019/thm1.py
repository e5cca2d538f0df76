"""yu2019.thm1: Theorem 1 of Yu, Yang, Zhu (AAAI 2019, arXiv:1807.06629), "Parallel Restarted SGD
with Faster Convergence and Less Communication", as restated in the lecture note
``liu_lecture_fl_fedavg.md``.

Theorem 1 (identical data, L-smooth, s in (0, 1/L], sync every K steps):
    (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 <= 2/(s T) (f(xbar_0) - f*) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2,
with xbar_t the average of the local models at every step (not only at syncs).

Instance and sweep: ``sweep`` (``identical_quadratic``, single-row minibatches, s and K of Corollary
2). G^2 and sigma^2 are bounded over the ball ||x|| <= B that contains every local iterate (B tracked
exactly by the kernel; see ``constants.assumptions``: exact for least squares). Check: the explicit
bound at every record point of the largest-T run for each N, with the average's ceiling
(``bound_ceilings.gradient_ceiling``): every averaged model lies in the ball ||x|| <= B, where
||grad f(x)||^2 <= (||grad f(0)|| + L B)^2, so a bound at or above that at every record point could
not fail and is listed as uninformative (Theorem 1's first term 2 f0/(s t) exceeds it at the first
record points: those points are named in the check's evidence).

Planted variant (the power self-test, ``fedbound verify --power``): ``yu2019.thm1[bound_scale=c]``
checks c times Theorem 1's bound; a working check FAILs it when it is false on the instance (c below
the measured tightness).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence

from ... import constants
from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import parameter
from ...framework.plot_specs import rate_plot
from ...framework.references import LIU2022_NOTE, YU2019
from .sweep import YuSweepPlan, sweep, sweep_hypotheses, sweep_plans, yu_theorem1_bound

if TYPE_CHECKING:
    from convergence.bound_checks import Ceiling

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "YuTheorem1Plan"]


@dataclass(frozen=True)
class YuTheorem1Plan(YuSweepPlan):
    """yu2019.thm1: the sweep and the scale of Theorem 1's bound."""

    bound_scale: float = parameter(1.0, "multiplies Theorem 1's right-hand side", above=0)


def _bound(run: dict, steps: np.ndarray) -> tuple[np.ndarray, dict, Ceiling]:
    """Theorem 1's right-hand side (``yu_theorem1_bound``) after ``steps`` steps, with its constants and
    the ceiling of the average squared gradient norm over the ball ||x|| <= B that holds every iterate."""
    problem, result, L, K, N = run["problem"], run["result"], run["L"], run["K"], run["N"]
    s = run["config"].step_size.eta0
    B = float(np.sqrt(np.max(result.extras.max_norm_sq)))
    ball = constants.Ball(np.zeros(problem.dim), B)
    sigma_sq = constants.variance_bound(problem, ball, 1).max
    G_sq = constants.second_moment_bound(problem, ball, 1).value
    f0 = problem.objective(np.zeros(problem.dim)) - run["optimum"].F_star
    rhs = yu_theorem1_bound(steps, s=s, K=K, N=N, L=L, G_sq=G_sq, sigma_sq=sigma_sq, f0=f0)
    ceiling = constants.gradient_ceiling(L, float(np.linalg.norm(problem.gradient(np.zeros(problem.dim)))), B,
                                         "the ball ||x|| <= B (c = 0, R = B tracked by the kernel) that holds every "
                                         "local iterate of every seed, hence every average xbar_t")
    return rhs, {"N": N, "T": run["T"], "K": K, "s": s, "L": L, "G^2": G_sq, "sigma^2": sigma_sq,
                 "B = max ||x_t^i||": B, "f(x_0) - f*": f0, "ceiling of ||grad f||^2": float(ceiling.value)}, ceiling


def evaluate(settings: VerifySettings, plan: YuTheorem1Plan) -> ClaimResult:
    """The explicit bound at every record point of the largest-T run of each N (Holm-Bonferroni
    over the record points, ``check_upper_bound``). ``plan.bound_scale`` multiplies the bound: 1 is
    Theorem 1; a planted variant with a scale below the measured tightness is false and must FAIL."""
    bound_scale = plan.bound_scale
    planted = "" if bound_scale == 1.0 else f" Planted variant: the bound multiplied by {bound_scale:g}."
    runs = sweep(settings, plan)
    checks, plots, constants_rows = [], [], []
    for N in sorted({r["N"] for r in runs}):
        run = max((r for r in runs if r["N"] == N), key=lambda r: r["T"])
        result = run["result"]
        keep = result.steps > 0
        steps = result.steps[keep].astype(float)
        rhs, consts, ceiling = _bound(run, steps)
        rhs = bound_scale * rhs
        constants_rows.append(consts)
        verdict = convergence.check_upper_bound(
            f"yu2019.thm1/N={N}", steps, result.extras.grad_sq_mean[:, keep], rhs, hypotheses=sweep_hypotheses(run)[:1],
            ceiling=ceiling,
            notes=f"(1/t) sum ||grad f(xbar_(tau-1))||^2 against Thm 1 at every record point t, N = {N}, "
            f"T = {run['T']}, K = {run['K']}; {run['note']}.{planted}",
        )
        checks.append((f"explicit bound, N = {N}", verdict))
        plots.append(rate_plot(
            f"yu2019_thm1_N{N}", f"Yu et al. Thm 1, PR-SGD, N = {N}: average squared gradient norm and bound",
            f"(1/t) sum ||grad f(xbar)||^2 (mean over seeds) with Thm 1's bound (dashed), N = {N}, K = {run['K']}.",
            verdict, xlabel=r"$t$ (local steps)", ylabel=r"$\frac{1}{t}\sum_\tau \|\nabla f(\bar x_{\tau-1})\|^2$", bound=rhs.tolist(),
        ))
    counted = [v for _, v in checks if not v.cannot_fail]
    verdict = combine_checks("yu2019.thm1", checks, headline=max(counted, key=lambda v: v.measured) if counted else None,
                             notes="Headline: the largest ratio measured / bound over the checked runs." + planted)
    return ClaimResult(verdict.with_evidence(constants=constants_rows), tuple(plots))


CLAIM = Claim(
    "yu2019.thm1", (YU2019, LIU2022_NOTE), "Theorem 1 (as restated in Liu's lecture note)",
    "Parallel restarted SGD, identical data, f L-smooth, step s ∈ (0, 1/L], sync every K steps: "
    "(1/T) Σ_t E‖∇f(x̄_{t−1})‖² ≤ 2/(sT) · (f(x̄₀) − f*) + 4 s² K² G² L² + (L/N) s σ².",
    "the largest ratio measured / bound over the record points (must be ≤ 1)",
    evaluate,
    plan=sweep_plans(YuTheorem1Plan),
    variants=(
        PlantedVariant("bound x 0.2", "Theorem 1's right-hand side multiplied by 0.2, below the measured average "
                       "squared gradient norm (tightness about 0.3): false on the instance", {"bound_scale": 0.2},
                       sub_check="explicit bound"),
    ),
    order=130,
)
