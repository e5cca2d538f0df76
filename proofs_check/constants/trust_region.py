"""The maximum of a quadratic over a ball: the trust-region subproblem, solved exactly.

For q(w) = w'Aw - 2a'w + s (A symmetric (d, d), a (d,)) and the ball ||w - c|| <= R, write
w = c + u, g = A c - a and A = Q diag(lambda) Q' (eigen-decomposition). By Lagrangian duality
(Moré & Sorensen, "Computing a trust region step", SIAM J. Sci. Stat. Comput. 4, 1983), for every
nu >= max(0, lambda_max), nu > lambda_max,

    max_{||u|| <= R} q(c + u) <= nu R^2 + g'(nu I - A)^{-1} g + q(c),

with equality at the root nu of ||(nu I - A)^{-1} g|| = R (found by Brent's method), where
u = (nu I - A)^{-1} g attains it; nu = 0 when q is concave with its maximiser inside the ball; in
the "hard case" (g has no component along the top eigenvector) nu = lambda_max and u moves along
that eigenvector onto the sphere. ``Quadratic.max_on_ball`` returns (the dual bound, the primal
value at the point found): equal up to rounding, which ``exact_gap`` checks (relative gap
<= EXACT_RTOL), so the constants built on it are reported exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import brentq

from .regions import Ball

__all__ = ["Quadratic", "exact_gap", "EXACT_RTOL"]

EXACT_RTOL = 1e-9
"""Dual bound and attained primal value within this relative gap: the maximum is exact."""


@dataclass(frozen=True)
class Quadratic:
    """q(w) = w'Aw - 2a'w + s with A symmetric (d, d), a (d,)."""

    A: np.ndarray
    a: np.ndarray
    s: float

    def at(self, W: np.ndarray) -> np.ndarray:
        """q at the rows of W (m, d)."""
        return np.einsum("md,de,me->m", W, self.A, W) - 2.0 * W @ self.a + self.s

    def max_on_ball(self, ball: Ball) -> tuple[float, float]:
        """(dual upper bound, attained primal value) of max q over the ball (module docstring)."""
        c, R = ball.centre, ball.radius
        q0 = float(self.at(c[None, :])[0])
        if R == 0.0:
            return q0, q0
        lam, Q = eigh(0.5 * (self.A + self.A.T))
        h = Q.T @ (self.A @ c - self.a)
        norm_h = float(np.linalg.norm(h))
        scale = max(float(np.abs(lam).max()), norm_h / R, np.finfo(float).tiny)

        def step_norm(nu: float) -> float:
            return float(np.linalg.norm(h / (nu - lam)))

        hard = False
        if lam[-1] < 0 and step_norm(0.0) <= R:
            nu = 0.0  # interior maximiser of a concave quadratic
        else:
            low = max(float(lam[-1]), 0.0) + 1e-13 * scale
            hard = step_norm(low) <= R  # g has (almost) no component along the top eigenvector
            if hard:
                nu = low
            else:
                high = max(float(lam[-1]), 0.0) + norm_h / R + 1e-13 * scale
                nu = brentq(lambda v: step_norm(v) - R, low, high, xtol=1e-15 * scale, rtol=4 * np.finfo(float).eps)
        u = Q @ (h / (nu - lam))
        if hard:  # move along the top eigenvector onto the sphere: ||u + tau q|| = R, the better root
            top = Q[:, -1]
            along = float(u @ top)
            reach = math.sqrt(max(along**2 + R**2 - float(u @ u), 0.0))
            u = max((u + (-along + reach) * top, u + (-along - reach) * top),
                    key=lambda v: float(self.at((c + v)[None, :])[0]))
        norm_u = float(np.linalg.norm(u))
        if norm_u > R:
            u *= R / norm_u
        upper = float(nu * R**2 + np.sum(h**2 / (nu - lam)) + q0)
        attained = float(self.at((c + u)[None, :])[0])
        return max(upper, attained), attained


def exact_gap(upper: float, attained: float) -> bool:
    """True when a dual bound and the attained value agree up to EXACT_RTOL (relative, floor 1)."""
    return upper - attained <= EXACT_RTOL * max(1.0, abs(upper))
