"""li2020.thm4's decaying-step sub-check: Appendix C.2 / Fig. 2b, eta_t = (1/5)/(5 + a t), for each decay a.

Li et al. (ICLR 2020), App. C.2: on the Appendix C problem (N = 5, p = 4, mu = 2e-4, exact gradients)
"the annealing scheme of learning rates is given by eta_t = (1/5)/(5 + t a) where a is the best parameter
chosen from the set {1e-2, 1e-4, 1e-6}"; Fig. 2b: with a decayed step FedAvg converges to the optimum even
with E > 1. ``Li2020Thm4Plan.decays`` lists the a that are run (default 1e-4, the run fedbound has always
made; ``--full`` all three).

Rate. With x = eta_0/eta_t = 1 + a t/5, sum_{s<t} eta_s = ln(x)/(5a) (to first order), so the error
along the slowest eigenvector of F's Hessian (eigenvalue mu_F = lambda_min, ``ProblemConstants.mu_global``)
contracts like exp(-mu_F ln(x)/(5a)) = x^(-mu_F/(5a)), while the bias of the current step is
Theta((E-1) eta_t) = Theta(1/x) (eq. 33). Hence ||w_t - w*|| = O(x^(-r)), r = min(1, mu_F/(5a)): on this
problem mu_F = 0.00427, so r = 1 for a = 1e-4 and 1e-6 (the distance shrinks like eta_t) and r = 0.085 for
a = 1e-2 (the step decays before the slow mode has contracted: FedAvg still tends to w*, since
sum eta_t = infinity, but slowly; the paper's "best" a is not 1e-2). The sub-check fits the exponent
of the distance in x over the run's last decade and claims <= -r with a tolerance of 0.1 r.

Horizon: a decay a runs round((decay_span - 1)/a) rounds of E = 5 steps (so x ends at decay_span), at most
``decay_max_rounds``; the default plan's decay_span = 41 gives a = 1e-4 its 400,000 rounds of before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import convergence

from ...framework.plot_specs import RatePlot, rate_plot

if TYPE_CHECKING:
    from convergence.verdict import Verdict
    from problems import Optimum, ProblemSpec

    from ...framework.settings import VerifySettings

__all__ = ["FIG2_DECAY", "PAPER_DECAYS", "decay_rounds", "decaying_step"]

CLAIM_ID = "li2020.thm4"
PAPER_DECAYS = (1e-6, 1e-4, 1e-2)
"""The a of App. C.2's set {1e-2, 1e-4, 1e-6}, increasing (plan tuples are)."""
FIG2_DECAY = 1e-4
"""The decay fedbound ran before the others were added (its check and figure keep their names)."""
E = 5
"""Local steps of the decaying-step runs (Fig. 2b shows E > 1; fedbound runs E = 5)."""
RELATIVE_TOLERANCE = 0.1
"""The fitted exponent may exceed -r by 0.1 r: the bias is Theta(eta) only to first order (eq. 33)."""


def decay_rounds(a: float, span: float, max_rounds: int) -> int:
    """Rounds of E = 5 steps after which eta_0/eta_t = 1 + a t/5 reaches ``span``, at most ``max_rounds``."""
    return max(1, min(int(max_rounds), int(round((span - 1) / a))))


def decaying_step(settings: VerifySettings, a: float, rounds: int, spec: ProblemSpec, optimum: Optimum,
                  mu_F: float) -> tuple[tuple[str, Verdict], RatePlot]:
    """App. C.2's decaying step with decay ``a``, E = 5, ``rounds`` rounds: ||w_t - w*|| = O(x^(-r)),
    x = eta_0/eta_t, r = min(1, mu_F/(5a)) (module docstring); the sub-check and its figure."""
    rate = min(1.0, mu_F / (5 * a))
    schedule = convergence.StepSize.inverse_time(1 / 25, a / 5)  # (1/5) / (5 + a t)
    records = convergence.log_spaced_rounds(rounds, 40)
    cfg = convergence.RunConfig(spec, convergence.FedAvgConfig(E, rounds, schedule, 0, 1.0, records, (0,)))
    (traj,) = convergence.execute([convergence.RunRequest(cfg, optimum)], settings.sweep_options(),
                                  description=f"thm4 decaying step a={a:g}")
    steps = traj.steps.astype(float)
    x = 1 + (a / 5) * steps  # eta_0 / eta_t
    dist = np.sqrt(traj.dist_sq)
    fig2 = a == FIG2_DECAY
    verdict = convergence.check_rate_exponent(
        f"{CLAIM_ID}/decaying-step" + ("" if fig2 else f"/a={a:g}"), x, dist, claimed_exponent=-rate,
        fit_from=float(x[-1]) / 10, tolerance=RELATIVE_TOLERANCE * rate,
        deterministic=True,  # exact local gradients, full participation
        notes=(f"eta_t = (1/5)/(5 + a t), a = {a:g}, E = {E}, T = {rounds * E} (eta_0/eta_T = {x[-1]:.4g}): fit of "
               "||w_t - w*|| against eta_0/eta_t over the last decade; the bias of a step eta is Theta((E-1) eta) "
               f"(eq. 33-34) and the slowest mode contracts like (eta_0/eta_t)^(-mu_F/(5a)), mu_F = {mu_F:.4g}, so the "
               f"distance must shrink at least like (eta_0/eta_t)^-{rate:.4g}. Final distance "
               f"{dist[0, -1]:.3g} (||w*|| = {np.linalg.norm(optimum.w_star):.3g})."),
    )
    suffix = "" if fig2 else f"_a{a:.0e}".replace("-", "m")
    plot = rate_plot(
        f"li2020_thm4_decay{suffix}", f"Decaying step (a = {a:g}), E=5: FedAvg reaches w* (Li et al. 2020, App. C.2)",
        f"||w_t - w*|| for eta_t = (1/5)/(5 + {a:g} t), E = 5, against eta_0/eta_t, with the fitted slope.",
        verdict, xlabel=r"$\eta_0 / \eta_t$", ylabel=r"$\|w_t - w^*\|$",
    )
    return (f"decaying step reaches w* (E = 5{'' if fig2 else f', a = {a:g}'})", verdict), plot
