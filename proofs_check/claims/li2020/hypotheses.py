"""The hypotheses of Li et al.'s Theorem 1 (ICLR 2020, eq. 4-5: Assumptions 1-4, gamma = max{8 kappa, E},
eta_1 <= 1/(4L), eta_t <= 2 eta_{t+E}, E dividing T), evaluated on an instance's constants and a configured
schedule: checked by li2020.thm1 and, on the (transformed) constants of each run, by li2020.thm2 and thm3."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from convergence.verdict import Hypothesis

if TYPE_CHECKING:
    from convergence import StepSize

    from ...constants.li2020 import LiConstants

__all__ = ["li_hypotheses"]


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
