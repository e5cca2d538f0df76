"""Negative controls: claims built to be false, which a working checker must FAIL.

control.constant-step-rate: "FedAvg with a constant step and E > 1 converges at O(1/T)".
On Li et al.'s Appendix C problem it converges to a biased limit w~* != w* (Theorem 4), so the
gap F(w_T) - F* levels off at F(w~*) - F* > 0 and its fitted exponent in T is about 0, far
above the claimed -1. A report in which this control does not FAIL has a broken rate checker.

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

from convergence import FedAvgConfig, RunConfig, RunRequest, Status, StepSize, check_rate_exponent, execute
from convergence import log_spaced_rounds
from problems import build_problem, problem_constants, problem_spec

from .claim import ClaimResult, VerifySettings, claim_optimum
from .plans import ConstantStepControlPlan
from .plot_specs import ReferenceRate, rate_plot

__all__ = ["evaluate_constant_step"]

CONTROL_ID = "control.constant-step-rate"


def evaluate_constant_step(settings: VerifySettings, plan: ConstantStepControlPlan) -> ClaimResult:
    """E = 5 on the counterexample, exact gradients, ``plan.rounds`` rounds, the gap's exponent checked
    against a claimed O(1/T) (``check_rate_exponent``, tolerance 0.05, fit over the last decade of the horizon).

    ``plan.step="constant"``: eta = 0.05, fitted in T; the claim is false (Theorem 4) and must FAIL.
    ``plan.step="li"``: eta_t = 2/(mu(gamma + t)), fitted in gamma + T; the claim is Theorem 1's and must
    PASS (module docstring)."""
    step, rounds = plan.step, plan.rounds
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    problem = build_problem(spec)
    optimum, _ = claim_optimum(problem)
    E = 5
    if step == "constant":
        schedule, offset, expected = StepSize.constant(0.05), 0.0, Status.FAIL
    else:
        c = problem_constants(problem)
        schedule = StepSize.li(c.mu, c.L, E)
        offset, expected = schedule.gamma, Status.PASS
    cfg = RunConfig(spec, FedAvgConfig(E, rounds, schedule, 0, 1.0, log_spaced_rounds(rounds, 40), (0,)))
    (traj,) = execute([RunRequest(cfg, optimum)], settings.sweep_options(), description="negative control")
    x = offset + traj.steps.astype(float)
    horizon = "T" if step == "constant" else "gamma + T"
    finding = ("the claim 'gap = O(1/T)' is false (Theorem 4), so this must FAIL" if step == "constant" else
               "true counterpart: Theorem 1 gives gap = O(1/(gamma + T)), so this must PASS")
    verdict = check_rate_exponent(
        CONTROL_ID, x, traj.gap, claimed_exponent=-1.0, fit_from=float(x[-1]) / 10,
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
