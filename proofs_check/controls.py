"""Negative controls: claims built to be false, which a working checker must FAIL.

control.constant-step-rate: "FedAvg with a constant step and E > 1 converges at O(1/T)".
On Li et al.'s Appendix C problem it converges to a biased limit w~* != w* (Theorem 4), so the
gap F(w_T) - F* levels off at F(w~*) - F* > 0 and its fitted exponent in T is about 0, far
above the claimed -1. A report in which this control does not FAIL has a broken rate checker.
"""

from __future__ import annotations

import dataclasses

from convergence import FedAvgConfig, RunConfig, RunRequest, Status, StepSize, check_rate_exponent, execute
from convergence import log_spaced_rounds
from problems import build_problem, problem_spec

from .claim import ClaimResult, VerifySettings, claim_optimum, rate_plot

__all__ = ["evaluate_constant_step"]

CONTROL_ID = "control.constant-step-rate"


def evaluate_constant_step(settings: VerifySettings) -> ClaimResult:
    """Constant eta = 0.05, E = 5 on the counterexample, checked against a claimed O(1/T)."""
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    optimum, _ = claim_optimum(build_problem(spec))
    E, eta = 5, 0.05
    rounds = 40_000 if settings.quick else 200_000
    cfg = RunConfig(spec, FedAvgConfig(E, rounds, StepSize.constant(eta), 0, 1.0, log_spaced_rounds(rounds, 40), (0,)))
    (traj,) = execute([RunRequest(cfg, optimum)], **settings.sweep_options(), description="negative control")
    steps = traj.steps.astype(float)
    verdict = check_rate_exponent(
        CONTROL_ID, steps, traj.gap, claimed_exponent=-1.0, fit_from=float(steps[-1]) / 10,
        tolerance=0.05,  # 5% of -1, as li2020.thm1's rate check: the control must FAIL at the same tolerance
        deterministic=True,  # exact local gradients, full participation
        notes=f"Negative control: constant eta = {eta}, E = {E}, exact gradients on the Li counterexample, T up to "
        f"{int(steps[-1])}; the claim 'gap = O(1/T)' is false (Theorem 4), so this must FAIL.",
    )
    verdict = dataclasses.replace(verdict, expected=Status.FAIL)
    plot = rate_plot(
        "control_constant_step", "Negative control: constant step, E=5 (claimed O(1/T), expected FAIL)",
        "Gap F(w_T) - F* of constant-step FedAvg on the counterexample: it levels off at the biased limit.",
        verdict, xlabel=r"$T$ (local steps)", ylabel=r"$F(w_T) - F^*$", reference=(-1.0, r"claimed $O(1/T)$"),
    )
    return ClaimResult(verdict, (plot,))

