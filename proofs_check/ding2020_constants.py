"""The constants of Ding et al.'s lemmas that both a lemma check and the theorem's explicit bound use,
each stated once (Ding, Niu, Zheng, Liu, "Distributed Optimization over Block-Cyclic Data", arXiv
2002.07454; ``shared/THEOREMS.md``, "Ding et al. 2020"; ``shared/papers/ding2020_block_cyclic.md``).
"""

from __future__ import annotations

from convergence import Ceiling

__all__ = ["lemma6_constant", "lemma9_constant", "lemma9_ceiling"]


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
