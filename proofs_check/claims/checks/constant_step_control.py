"""control.constant-step-rate, a negative control: a claim built to be false, which a working checker
must FAIL.

"FedAvg with a constant step and E > 1 converges at O(1/T)". On Li et al.'s Appendix C problem it
converges to a biased limit w~* != w* (Theorem 4), so the gap F(w_T) - F* levels off at
F(w~*) - F* > 0 and its fitted exponent in T is about 0, far above the claimed -1. A report in which
this control does not FAIL has a broken rate checker.

Its true counterpart (plan ``step="li"``, the planted variant with expected PASS of the power
self-test): the same problem, E, horizon and rate check with Li's decaying step
eta_t = 2/(mu (gamma + t)), gamma = max{8 L/mu, E} (Theorem 1, eq. 4-5; mu, L the clients'
constants), under which E F(w_T) - F* <= kappa/(gamma + T - 1) (...) = O(1/T). Theorem 1's
horizon is gamma + T, so that run is fitted in x = gamma + T, as li2020.thm1 does (for T >> gamma
the exponents in T and gamma + T coincide; at these horizons T < 10 gamma and a fit in T would
mix in the offset). With the same checker PASSing the counterpart, the control's FAIL is the
step size's doing, not a checker that fails every rate on this instance.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import convergence
import problems
from convergence.verdict import Status

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import claim_optimum
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import ReferenceRate, rate_plot
from ...framework.references import LI2020

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "ConstantStepControlPlan", "CONTROL_STEPS"]

CONTROL_STEPS = ("constant", "li")
"""The step sizes of the negative control: the constant eta = 0.05, or Li's Theorem 1 schedule (its
true counterpart)."""
E = 5
"""Local steps per round of the control's runs."""


@dataclass(frozen=True)
class ConstantStepControlPlan:
    """control.constant-step-rate: the horizon and the step size (its true counterpart: Li's)."""

    rounds: int = parameter(doc="rounds of the run (E = 5)", minimum=1)
    step: str = parameter("constant", "the step size: the constant 0.05, or Li's Theorem 1 schedule",
                          choices=CONTROL_STEPS)

    def workload(self) -> Workload:
        """One run: E = 5 on the counterexample (N = 5), exact gradients, 40 record points."""
        from ...framework.plan_workloads import runs_workload

        return runs_workload(rounds=self.rounds, E=E, clients=5, records=40)


def evaluate(settings: VerifySettings, plan: ConstantStepControlPlan) -> ClaimResult:
    """E = 5 on the counterexample, exact gradients, ``plan.rounds`` rounds, the gap's exponent checked
    against a claimed O(1/T) (``check_rate_exponent``, tolerance 0.05, fit over the last decade of the horizon).

    ``plan.step="constant"``: eta = 0.05, fitted in T; the claim is false (Theorem 4) and must FAIL.
    ``plan.step="li"``: eta_t = 2/(mu(gamma + t)), fitted in gamma + T; the claim is Theorem 1's and must
    PASS (module docstring)."""
    step, rounds = plan.step, plan.rounds
    spec = problems.problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    problem = problems.build_problem(spec)
    optimum, _ = claim_optimum(problem)
    if step == "constant":
        schedule, offset, expected = convergence.StepSize.constant(0.05), 0.0, Status.FAIL
    else:
        c = problems.problem_constants(problem)
        schedule = convergence.StepSize.li(c.mu, c.L, E)
        offset, expected = schedule.gamma, Status.PASS
    cfg = convergence.RunConfig(spec, convergence.FedAvgConfig(E, rounds, schedule, 0, 1.0,
                                                               convergence.log_spaced_rounds(rounds, 40), (0,)))
    (traj,) = convergence.execute([convergence.RunRequest(cfg, optimum)], settings.sweep_options(),
                                  description="negative control")
    x = offset + traj.steps.astype(float)
    horizon = "T" if step == "constant" else "gamma + T"
    finding = ("the claim 'gap = O(1/T)' is false (Theorem 4), so this must FAIL" if step == "constant" else
               "true counterpart: Theorem 1 gives gap = O(1/(gamma + T)), so this must PASS")
    verdict = convergence.check_rate_exponent(
        CLAIM.id, x, traj.gap, claimed_exponent=-1.0, fit_from=float(x[-1]) / 10,
        tolerance=0.05,  # 5% of -1, as li2020.thm1's rate check: the control must FAIL at the same tolerance
        deterministic=True,  # exact local gradients, full participation
        notes=f"Negative control: {schedule.describe()}, E = {E}, exact gradients on the Li counterexample, T up to "
        f"{int(traj.steps[-1])}, fitted in {horizon}; {finding}.",
    )
    verdict = dataclasses.replace(verdict, expected=expected)
    label = "constant step" if step == "constant" else "Li's decaying step"
    plot = rate_plot(
        "control_constant_step" if step == "constant" else "control_li_step",
        f"Negative control: {label}, E=5 (claimed O(1/T), expected {expected.value})",
        f"Gap F(w_T) - F* of FedAvg with {schedule.describe()} on the counterexample"
        + (": it levels off at the biased limit." if step == "constant" else ": it converges to w*."),
        verdict, xlabel=r"$T$ (local steps)" if step == "constant" else r"$\gamma + T$", ylabel=r"$F(w_T) - F^*$",
        reference=ReferenceRate(-1.0, r"claimed $O(1/T)$"),
    )
    return ClaimResult(verdict, (plot,))


CLAIM = Claim(
    "control.constant-step-rate", (LI2020,), "negative control: Theorem 4 makes it false",
    "False claim: FedAvg with a constant step and E > 1 converges at O(1/T) on the Appendix C problem "
    "(it converges to a biased limit, so the gap levels off).",
    "the fitted exponent of the gap in T (claimed −1; a working checker must FAIL it)",
    evaluate,
    plan=ModePlans(quick=ConstantStepControlPlan(rounds=40_000), default=ConstantStepControlPlan(rounds=200_000)),
    expected=Status.FAIL,
    variants=(
        PlantedVariant("true counterpart: decaying step", "true counterpart: Li's step 2/(mu(gamma+t)) (Theorem 1), "
                       "fitted in gamma + T, same check: must PASS, so the control's FAIL is the constant step's doing",
                       {"step": "li"}, expected=Status.PASS, sub_check="the claim"),
    ),
    order=180,
)
