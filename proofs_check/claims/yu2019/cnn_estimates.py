"""The constants of yu2019.cnn's Theorem 1 and Corollary 2, ESTIMATED on the CNN (``cnn``): the L of
Cor. 2's step and the estimates along each run.

A ReLU / max-pool network's loss is only piecewise smooth (its gradient jumps across kinks), so no
finite global L exists and G^2, sigma^2 "for all x" are not computable. ``run_constants`` gives lower
estimates at the points a run recorded (its averaged models xbar at the record rounds, every seed):
L = the largest of the secant ratios between consecutive recorded models, the Hessian power iteration
at the last recorded model of every seed (radius FD_RADIUS: an effective curvature at the scale of a
step) and the initial models' estimate (``initial_smoothness``); G^2 and sigma^2 = the largest exact
minibatch moments E||g_b||^2 and E||g_b - grad f||^2 at the recorded models; f* >= 0 (cross-entropy
is non-negative), so f(xbar_0) - 0 (mean over seeds) stands for f(xbar_0) - f*, and the lowest
training loss recorded is reported as the evidence that f* is at most that. ``restoring_L`` is the L
with which Theorem 1's bound (``sweep.yu_theorem1_bound``) reaches a given level, the other estimates
fixed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ... import constants

if TYPE_CHECKING:
    from problems import ImageClassificationProblem

__all__ = ["FD_RADIUS", "POWER_ITERATIONS", "RunConstants", "ScheduleL", "initial_smoothness", "restoring_L",
           "round_up", "run_constants"]

FD_RADIUS = 1e-2
"""h of the Hessian power iteration, the scale of a step (the runs' steps move the model by s ||g_b||,
about 1e-3 to 1e-1): the descent lemma behind Theorem 1 needs the curvature at that scale. A much
smaller probe resolves single ReLU kinks instead: at h = 1e-5 one kink crossed gives a gradient jump
over 2h, ~10^2 on the digits net (a discontinuity, not a curvature), at points where other probes
read 1 to 3."""
POWER_ITERATIONS = 12
"""Power-iteration steps per point (each step's ||H v|| is a lower bound of L; the largest is kept)."""


def round_up(value: float, digits: int = 2) -> float:
    """``value`` > 0 rounded up to ``digits`` significant digits (e.g. 2.714 -> 2.8)."""
    scale = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.ceil(value / scale - 1e-9) * scale


def initial_smoothness(f: ImageClassificationProblem, seeds: tuple[int, ...]) -> float:
    """The largest ``power_smoothness`` of f at the initial models of ``seeds`` (a lower estimate of L)."""
    return max(constants.power_smoothness(f.gradient, f.initial_model(s), iterations=POWER_ITERATIONS,
                                          radius=FD_RADIUS, seed=s) for s in seeds)


@dataclass(frozen=True)
class ScheduleL:
    """How Cor. 2's L was estimated: ``initial`` at the initial models, ``pilot`` along the pilot run
    (at least ``initial``), ``value`` = ``pilot`` rounded up to two significant digits."""

    initial: float
    pilot: float
    value: float


@dataclass(frozen=True)
class RunConstants:
    """Estimates along one run (module docstring), all lower estimates of the suprema Theorem 1 takes:
    L_secant, L_hessian and L = max(L_secant, L_hessian, the initial models' estimate); G_sq, sigma_sq;
    f0 = mean over seeds of f(xbar_0) (f* >= 0 taken as 0) and f_min, the lowest f recorded."""

    L_secant: float
    L_hessian: float
    L: float
    G_sq: float
    sigma_sq: float
    f0: float
    f_min: float

    def to_json(self) -> dict[str, float]:
        return {"L (estimate)": self.L, "L secant (estimate)": self.L_secant, "L Hessian (estimate)": self.L_hessian,
                "G^2 (estimate)": self.G_sq, "sigma^2 (estimate)": self.sigma_sq, "f(xbar_0) - 0": self.f0,
                "lowest f recorded": self.f_min}


def run_constants(f: ImageClassificationProblem, iterates: np.ndarray, batch_size: int, L_init: float) -> RunConstants:
    """The estimates along a run whose recorded models are ``iterates`` (S, P, d), first record round 0,
    for minibatches of ``batch_size``; ``L_init`` the initial models' estimate."""
    secant, hessian, G_sq, sigma_sq, values = 0.0, 0.0, 0.0, 0.0, []
    for s, models in enumerate(iterates):
        gradients = np.array([f.gradient(x) for x in models])
        secant = max(secant, constants.secant_smoothness(models, gradients))
        hessian = max(hessian, constants.power_smoothness(f.gradient, models[-1], iterations=POWER_ITERATIONS,
                                                          radius=FD_RADIUS, seed=s))
        for x in models:
            second, variance = constants.sample_minibatch_moments(f.sample_gradients(x, 0), batch_size)
            G_sq, sigma_sq = max(G_sq, second), max(sigma_sq, variance)
        values.append([f.objective(x) for x in models])
    values = np.array(values)
    return RunConstants(secant, hessian, max(secant, hessian, L_init), G_sq, sigma_sq, float(values[:, 0].mean()),
                        float(values.min()))


def restoring_L(target: float, *, steps: float, s: float, K: int, N: int, G_sq: float, sigma_sq: float,
                f0: float) -> float:
    """The smallest L >= 0 with Theorem 1's right-hand side (``yu_theorem1_bound``) >= ``target`` after
    ``steps`` steps, the other constants fixed: the root of 4 s^2 K^2 G^2 L^2 + (s sigma^2 / N) L +
    2 f0 / (s T) - target = 0 (0 when the L-free term alone reaches the target; inf when no L does)."""
    a, b, c = 4 * s**2 * K**2 * G_sq, s * sigma_sq / N, 2 * f0 / (s * steps) - target
    if c >= 0:
        return 0.0
    if a == 0:
        return -c / b if b > 0 else math.inf
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)

