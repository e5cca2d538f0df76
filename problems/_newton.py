"""Damped Newton's method with exact Hessians, run to machine precision.

For a smooth strongly convex G (mu > 0, or a positive definite Hessian), iterate
w <- w + t Delta, Delta = -H(w)^{-1} grad G(w) (Cholesky solve), with t from backtracking on the
Armijo condition G(w + t Delta) <= G(w) - t lambda^2 / 4, lambda^2 = -grad'Delta (the squared Newton
decrement). Near the optimum G decreases by lambda^2/2 ~ ||grad||^2 / L, which rounding can hide
once it falls below eps * |G|; there a step is also accepted when it halves ||grad|| without
raising G beyond rounding (the pure Newton phase converges quadratically in ||grad||).
Stops when ||grad G(w)|| <= gtol * max(1, ||grad G(w0)||). Reference: Boyd & Vandenberghe,
Convex Optimization, Sec. 9.5 (Algorithm 9.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, solve

from ._rows import RowObjective

__all__ = ["NewtonResult", "newton_minimise"]

_ARMIJO = 0.25
_MIN_STEP = 2.0**-40


@dataclass(frozen=True)
class NewtonResult:
    """Outcome of :func:`newton_minimise`: the point, its value and gradient norm, the tolerance."""

    w: np.ndarray
    value: float
    grad_norm: float
    tolerance: float
    iterations: int
    converged: bool
    message: str


def newton_minimise(
    objective: RowObjective,
    w0: np.ndarray | None = None,
    gtol: float = 1e-12,
    max_iter: int = 200,
) -> NewtonResult:
    """Minimise ``objective`` by damped Newton from w0 (default 0); see the module docstring."""
    w = np.zeros(objective.dim) if w0 is None else np.array(w0, dtype=np.float64)
    value, grad = objective.value_grad(w)
    tolerance = gtol * max(1.0, float(np.linalg.norm(grad)))
    for it in range(max_iter):
        gnorm = float(np.linalg.norm(grad))
        if gnorm <= tolerance:
            return NewtonResult(w, value, gnorm, tolerance, it, True, "gradient tolerance reached")
        try:
            step = solve(objective.hessian(w), -grad, assume_a="pos", check_finite=False)
        except LinAlgError:
            return NewtonResult(w, value, gnorm, tolerance, it, False, "Hessian not positive definite")
        decrement = -float(grad @ step)
        slack = 8.0 * np.finfo(float).eps * max(1.0, abs(value))
        t = 1.0
        while True:
            new_value, new_grad = objective.value_grad(w + t * step)
            if new_value <= value - _ARMIJO * t * decrement:
                break
            if new_value <= value + slack and np.linalg.norm(new_grad) <= 0.5 * gnorm:
                break
            t *= 0.5
            if t < _MIN_STEP:
                return NewtonResult(w, value, gnorm, tolerance, it, False, "line search stalled")
        w = w + t * step
        value, grad = new_value, new_grad
    gnorm = float(np.linalg.norm(grad))
    return NewtonResult(w, value, gnorm, tolerance, max_iter, gnorm <= tolerance, "iteration limit")
