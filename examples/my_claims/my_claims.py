"""mine.li-step-rate: FedAvg with Li et al.'s decaying step converges at O(1/T) (ICLR 2020, Theorem 1)."""

from __future__ import annotations

from dataclasses import dataclass

import convergence  # fedbound's packages load their modules on first use: `fedbound list` stays instant
import problems
from proofs_check import Claim, ClaimResult, ModePlans, PlantedVariant, Reference, claim_optimum, parameter

LI2020 = Reference("li2020", "Li, Huang, Yang, Wang, Zhang", "On the Convergence of FedAvg on Non-IID Data",
                   "ICLR", 2020, arxiv="1907.02189")
E = 5  # local steps per round


@dataclass(frozen=True)
class Plan:
    """The claim's parameters: `fedbound verify --claim 'mine.li-step-rate[rounds=40000]'`."""

    rounds: int = parameter(20_000, "rounds of the run", minimum=1_000)
    claimed_exponent: float = parameter(-1.0, "the claimed exponent of the gap in gamma + T")

    def workload(self):  # what the run costs, priced before anything runs (optional)
        from proofs_check.framework.plan_workloads import runs_workload

        return runs_workload(rounds=self.rounds, E=E, clients=5, records=30)


def evaluate(settings, plan: Plan) -> ClaimResult:
    """One FedAvg run on the Appendix C problem (mu = 0.1), exact gradients, eta_t = 2/(mu(gamma + t));
    the gap's exponent in gamma + T over the last decade of the horizon must be <= the claimed one."""
    spec = problems.problem_spec("li_counterexample", N=5, p=4, mu=0.1)
    problem = problems.build_problem(spec)
    optimum, _ = claim_optimum(problem)
    c = problems.problem_constants(problem)
    step = convergence.StepSize.li(c.mu, c.L, E)
    config = convergence.RunConfig(spec, convergence.FedAvgConfig(
        E, plan.rounds, step, 0, 1.0, convergence.log_spaced_rounds(plan.rounds, 30), (0,)))
    (run,) = convergence.execute([convergence.RunRequest(config, optimum)], settings.sweep_options())
    x = step.gamma + run.steps.astype(float)
    verdict = convergence.check_rate_exponent(CLAIM.id, x, run.gap, claimed_exponent=plan.claimed_exponent,
                                              fit_from=float(x[-1]) / 10, tolerance=0.05, deterministic=True)
    return ClaimResult(verdict)


CLAIM = Claim(
    "mine.li-step-rate", (LI2020,), "Theorem 1",
    "FedAvg, exact local gradients, E = 5, eta_t = 2/(mu(gamma + t)): F(w_T) - F* = O(1/(gamma + T)).",
    "the fitted exponent of the gap in gamma + T (claimed <= -1)",
    evaluate,
    plan=ModePlans(default=Plan()),
    variants=(PlantedVariant("rate O(T^-2.5)", "a claimed exponent of -2.5: the gap decays like T^-2 here",
                             {"claimed_exponent": -2.5}, sub_check="the claim"),),
)
