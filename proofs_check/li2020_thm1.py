"""li2020.thm1: FedAvg with full participation and eta_t = 2/(mu(gamma+t)) converges as O(1/T).

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020),
Theorem 1 (eq. 4-5); constants and how they are bounded: ``li2020_constants``.

Checked on two instances, each with two sub-checks:
* explicit bound: the mean gap E F(w_T) - F* (with its interval over seeds) stays below eq. 4
  at every record point;
* rate: the fitted exponent of the gap in the horizon gamma + T is at most -1 (within a 0.05
  tolerance and the bootstrap interval over seeds). The bound is kappa/(gamma+T-1) times a
  constant, so its natural horizon is gamma + T; for T >> gamma the two exponents coincide,
  and the fit uses only the last decade of the horizon.
Instances: the Appendix C counterexample with exact gradients (Li's own problem; deterministic,
so one seed), and a synthetic(1, 1) softmax instance with minibatch gradients and several seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence import (
    FedAvgConfig,
    Hypothesis,
    RunConfig,
    RunRequest,
    StepSize,
    Verdict,
    check_rate_exponent,
    check_upper_bound,
    execute,
    log_spaced_rounds,
)
from problems import build_problem, problem_constants, problem_spec

from .claim import ClaimResult, PlotSpec, VerifySettings, claim_optimum, combine_checks, rate_plot
from .li2020_constants import LiConstants, li_theorem1_bound, li_theorem1_constants

__all__ = ["evaluate", "Instance", "INSTANCES", "li_hypotheses"]

CLAIM_ID = "li2020.thm1"
RATE_TOLERANCE = 0.05


@dataclass(frozen=True)
class Instance:
    """One problem on which Theorem 1 is checked, with its run shape."""

    label: str
    spec: dict
    local_steps: int
    batch_size: int
    horizon_over_gamma: float
    stochastic: bool


INSTANCES = (
    Instance("counterexample", problem_spec("li_counterexample", N=5, p=4, mu=2e-4), 5, 0, 60.0, False),
    Instance(
        "synthetic(1,1)",
        problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1),
        5, 24, 30.0, True,
    ),
)
"""The synthetic instance uses 10 clients and l2 = 0.25 (mu = 0.5) so that kappa is small enough
for the asymptotic regime T >> gamma = 8 kappa to fit in the verify budget; with Li's
lambda = 1e-4 (Appendix D.1) kappa is about 1e5 and gamma about 1e6 steps."""


def li_hypotheses(c: LiConstants, schedule: StepSize, total_steps: int, label: str = "") -> tuple[Hypothesis, ...]:
    """Theorem 1's hypotheses evaluated on the constants and the configured schedule; names are
    prefixed with ``[label]`` when given (one claim checks several instances)."""
    E = c.local_steps
    eta1 = schedule.first(E)
    ratio = schedule.at(0, E) / schedule.at(E, E)
    hypotheses = (
        Hypothesis("Assumptions 1-2: F_k L-smooth, mu-strongly convex, mu > 0", c.mu > 0, f"L = {c.L:.6g}, mu = {c.mu:.6g}"),
        Hypothesis(
            "gamma = max{8 kappa, E}", abs(schedule.gamma - max(8 * c.kappa, E)) <= 1e-9 * c.gamma,
            f"gamma = {schedule.gamma:.6g}, 8 kappa = {8 * c.kappa:.6g}, E = {E}",
        ),
        Hypothesis("eta_1 <= 1/(4L)", eta1 <= 1 / (4 * c.L) * (1 + 1e-12), f"eta_1 = {eta1:.6g}, 1/(4L) = {1 / (4 * c.L):.6g}"),
        Hypothesis("eta_t <= 2 eta_{t+E}", ratio <= 2, f"max eta_t / eta_(t+E) = {ratio:.6g} (at t = 1)"),
        Hypothesis("Assumptions 3-4 on the visited region: sigma_k, G finite", bool(np.isfinite(c.G_sq)),
                   f"G^2 = {c.G_sq:.6g} ({c.G_method}); max sigma_k^2 = {c.sigma_sq.max():.6g}"),
        Hypothesis("T divisible by E", total_steps % E == 0, f"T = {total_steps}, E = {E}"),
    )
    if not label:
        return hypotheses
    return tuple(Hypothesis(f"[{label}] {h.name}", h.met, h.detail) for h in hypotheses)


def _run_instance(inst: Instance, settings: VerifySettings) -> tuple[list[tuple[str, Verdict]], PlotSpec, dict]:
    problem = build_problem(inst.spec)
    optimum, optimum_note = claim_optimum(problem)
    consts = problem_constants(problem)
    schedule = StepSize.li(consts.mu, consts.L, inst.local_steps)
    scale = 0.2 if settings.quick else (3.0 if settings.full else 1.0)
    rounds = int(np.ceil(inst.horizon_over_gamma * scale * schedule.gamma / inst.local_steps))
    records = log_spaced_rounds(rounds, 40)
    seeds = tuple(range(settings.seeds)) if inst.stochastic else (0,)
    cfg = RunConfig(inst.spec, FedAvgConfig(inst.local_steps, rounds, schedule, inst.batch_size, 1.0, records, seeds))
    (traj,) = execute(
        [RunRequest(cfg, optimum, track=True)], **settings.sweep_options(), description=f"thm1 {inst.label}"
    )
    c = li_theorem1_constants(
        problem, optimum, inst.local_steps, inst.batch_size,
        radius=float(np.sqrt(np.max(traj.max_radius_sq))), observed_grad_sq=float(np.max(traj.max_grad_sq)),
    )
    hypotheses = li_hypotheses(c, schedule, cfg.algorithm.total_steps, inst.label)
    steps = traj.steps.astype(float)
    bound = li_theorem1_bound(c, steps)
    where = f"{inst.label}, E = {inst.local_steps}, batch = {inst.batch_size or 'exact'}, {len(seeds)} seed(s)"
    upper = check_upper_bound(
        f"{CLAIM_ID}/{inst.label}/bound", steps, traj.gap, bound, hypotheses=hypotheses,
        deterministic=not inst.stochastic,  # exact gradients, full participation: one seed is the expectation
        notes=f"{where}; eq. 4 at every record point, T up to {int(steps[-1])}, with the constants of the "
        f"per-instance table. The gap is measured against the {optimum_note}.",
    )
    horizon = c.gamma + steps
    rate = check_rate_exponent(
        f"{CLAIM_ID}/{inst.label}/rate", horizon, traj.gap, claimed_exponent=-1.0,
        tolerance=RATE_TOLERANCE,  # 0.05 = 5% of the claimed -1: a slower rate than T^-0.95 is not O(1/T)
        deterministic=not inst.stochastic,
        fit_from=float(horizon[-1]) / 10, floor=1e-13 * max(1.0, abs(optimum.F_star)), hypotheses=hypotheses,
        notes=f"{where}; exponent of the gap in gamma + T (gamma = {c.gamma:.4g}) over the last decade.",
    )
    plot = rate_plot(
        f"li2020_thm1_{inst.label.replace('(', '').replace(')', '').replace(',', '_')}",
        f"Li et al. Thm 1 on {inst.label}: gap vs gamma + T with the explicit bound",
        f"Mean gap F(w_T) - F* over {len(seeds)} seed(s) ({where}) against gamma + T, the eq. 4 bound (dashed) and "
        "the fitted slope over the last decade.",
        rate, xlabel=r"$\gamma + T$ (local steps)", ylabel=r"$F(w_T) - F^*$", bound=bound.tolist(),
    )
    checks = [(f"explicit bound, {inst.label}", upper), (f"rate exponent <= -1, {inst.label}", rate)]
    return checks, plot, {"instance": inst.label, **c.as_dict(), "T": int(steps[-1]), "seeds": len(seeds)}


def evaluate(settings: VerifySettings) -> ClaimResult:
    """Both instances, both sub-checks; the headline is the counterexample's rate."""
    checks, plots, constants = [], [], []
    for inst in INSTANCES:
        inst_checks, plot, consts = _run_instance(inst, settings)
        checks += inst_checks
        plots.append(plot)
        constants.append(consts)
    verdict = combine_checks(
        CLAIM_ID, checks, headline=checks[1][1],
        notes="Headline: fitted exponent of the gap in gamma + T on the counterexample (claimed <= -1). "
        "Sub-checks: the explicit bound of eq. 4 at every record point and the rate on each instance.",
    )
    verdict.evidence["constants"] = constants
    return ClaimResult(verdict, tuple(plots))

