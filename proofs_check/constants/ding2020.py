"""The constants of Ding et al.'s lemmas that both a lemma check and the theorem's explicit bound use,
and the explicit bound of Theorems 1-2 itself (``DingConstants``, ``ding_bound``),
each stated once (Ding, Niu, Zheng, Liu, "Distributed Optimization over Block-Cyclic Data", arXiv
2002.07454; ``shared/THEOREMS.md``, "Ding et al. 2020"; ``shared/papers/ding2020_block_cyclic.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from convergence import Ceiling
from problems import exact_optimum, problem_constants

from .assumptions import second_moment_bound, variance_bound
from .regions import Ball

if TYPE_CHECKING:
    from ..claims.ding2020.theorem_runs import DingRun

__all__ = ["lemma6_constant", "lemma9_constant", "lemma9_ceiling", "DingConstants", "ding_bound"]


def lemma6_constant(gamma: float, I: int, G_sq: float, L: float, sigma_sq: float, N: int) -> float:
    """Lemma 6's additive constant (eq. 17): 2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L / (2N), by
    which the average loss at communication iterations may exceed the average over all iterations."""
    return 2 * gamma**3 * I**3 * G_sq * L**2 + gamma**2 * sigma_sq * I * L / (2 * N)


def lemma9_constant(B_sq: float, L: float) -> float:
    """Lemma 9's bound (eq. 60) on F_m(x) - F_m(y) for x, y in the ball of radius B (Assumption 5):
    2 B^2 L^2 + 2 B^2 + 2 B^2 L."""
    return 2 * B_sq * L**2 + 2 * B_sq + 2 * B_sq * L


def lemma9_ceiling(B_sq: float, L: float) -> Ceiling:
    """The largest value F_m(x) - F_m(y) can take over the ball ||x||, ||y|| <= B when F_m is L-smooth
    with its minimiser x_m* in the ball: F_m(x) - F_m(y) <= F_m(x) - F_m(x_m*) <= (L/2) ||x - x_m*||^2
    <= (L/2) (2B)^2 = 2 B^2 L, at most Lemma 9's bound ``lemma9_constant`` for every B and L, which
    therefore cannot fail."""
    return Ceiling(2.0 * B_sq * L, f"2 B^2 L = {2.0 * B_sq * L:.6g}: F_m is L-smooth with its minimum at x_m*, and "
                   "||x_m*|| <= B, so over the ball F_m(x) - F_m(y) <= F_m(x) - F_m(x_m*) <= (L/2) ||x - x_m*||^2 <= "
                   "2 B^2 L, at most the lemma's bound for every B and L")


@dataclass(frozen=True)
class DingConstants:
    """The constants of Ding et al.'s explicit bound at one configuration (THEOREMS.md, ding2020.thm1).

    N clients, T total iterations, K = E I iterations per block, I local iterations, gamma the
    step size, L and mu the smoothness and strong-convexity moduli of every F_m^i (Assumptions
    1-2), B_sq = B^2 (Assumption 5), G_sq = G^2 (Assumption 4), sigma_sq = sigma^2 (Assumption 3).
    """

    N: int
    T: int
    K: int
    I: int
    gamma: float
    L: float
    mu: float
    B_sq: float
    G_sq: float
    sigma_sq: float

    @property
    def bound(self) -> float:
        """The explicit form of Lemmas 4-6 (eq. 16, 17, 33), term by term as THEOREMS.md writes it:

        2B^2/(gamma T) + gamma sigma^2/(2N) + 2 gamma^2 I^2 G^2 L^2/mu + 4 gamma^3 I^2 G^2 L^2
        + gamma [4(B^2 L^2 + B^2 + B^2 L)/(gamma K) + 4 gamma^2 I^2 G^2 L^2 + L gamma sigma^2/N]
        + 2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L/(2N).
        """
        g, T, K, I, N = self.gamma, self.T, self.K, self.I, self.N
        B_sq, G_sq, s_sq, L, mu = self.B_sq, self.G_sq, self.sigma_sq, self.L, self.mu
        return float(
            2 * B_sq / (g * T) + g * s_sq / (2 * N) + 2 * g**2 * I**2 * G_sq * L**2 / mu + 4 * g**3 * I**2 * G_sq * L**2
            + g * (2 * lemma9_constant(B_sq, L) / (g * K) + 4 * g**2 * I**2 * G_sq * L**2 + L * g * s_sq / N)
            + lemma6_constant(g, I, G_sq, L, s_sq, N)
        )

    def to_json(self) -> dict[str, Any]:
        """The constants and the bound as a flat JSON-able dict (``B^2``, ``G^2``, ``sigma^2`` as in the paper)."""
        return {"T": self.T, "K": self.K, "I": self.I, "N": self.N, "gamma": self.gamma, "L": self.L, "mu": self.mu,
                "B^2": self.B_sq, "G^2": self.G_sq, "sigma^2": self.sigma_sq, "bound": self.bound}


def ding_bound(run: DingRun) -> tuple[float, DingConstants]:
    """The explicit form of THEOREMS.md (ding2020.thm1) at this run, and its constants.

    B^2 = max(max_t,i ||x_t^i||^2 over every local iterate of the run (all seeds), ||x*||^2,
    max_m ||x_m*||^2): Assumption 5 bounds every model the proof uses, the optima included (eq. 36
    bounds ||x_bar_1 - x*||^2 by 4B^2, which needs ||x*|| <= B; eq. 63 bounds ||y - x_m*||^2 by
    4B^2, which needs ||x_m*|| <= B). sigma^2 and G^2 are then bounded over the ball ||x|| <= B.
    """
    problem, result = run.problem, run.result
    consts = problem_constants(problem.combined)
    optima = [exact_optimum(problem.combined, crosscheck=False).w_star] + [
        exact_optimum(problem.block(m), crosscheck=False).w_star for m in range(problem.n_blocks)]
    B_sq = max(float(np.max(result.extras.max_norm_sq)), *(float(w @ w) for w in optima))
    ball = Ball(np.zeros(problem.dim), float(np.sqrt(B_sq)))
    constants = DingConstants(
        N=run.N, T=run.T, K=run.K, I=run.I, gamma=float(run.gamma), L=float(consts.L), mu=float(consts.mu),
        B_sq=B_sq, G_sq=float(second_moment_bound(problem.combined, ball, 1).value),
        sigma_sq=float(variance_bound(problem.combined, ball, 1).max),
    )
    return constants.bound, constants
