"""Interpolation conditions of quadratic functions, for a program whose worst case is sought among quadratics.

Bousselmi, Hendrickx and Glineur (2023, "Interpolation conditions for linear operators and applications
to performance estimation problems", arXiv:2302.08781, Theorem 3.9; PEPit's
``SmoothStronglyConvexQuadraticFunction``): triples (x_i, g_i, f_i) and a point x_s with gradient 0
and value f_s are interpolated by a quadratic f(x) = 1/2 (x - x_s)' Q (x - x_s) + f_s with
mu I <= Q <= L I if and only if, with u_i = x_i - x_s,

    f_i - f_s = 1/2 <u_i, g_i>,   <u_i, g_j> = <u_j, g_i>   (every i < j),
    T >= 0 (PSD),   T_ij = (L + mu) <g_i, u_j> - <g_i, g_j> - mu L <u_i, u_j>.

PEPit's class creates its stationary point as one leaf vector; client 1's minimiser in fedbound's
reduced program (``program``) has a common and a deviation part, so the conditions are written here
on the function's points, with the minimiser given. Every condition is affine in the Gram matrices
and the values: equalities and one linear matrix inequality (``sdp`` solves them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["quadratic_conditions"]


def quadratic_conditions(points: Sequence[tuple[Any, Any, Any]], minimiser: tuple[Any, Any], L: float,
                         mu: float) -> tuple[list[Any], np.ndarray]:
    """The equality constraints (PEPit ``Constraint``s) and the matrix T (an object array of PEPit
    ``Expression``s, T >= 0) of the module docstring for ``points`` (point, gradient, value) and the
    ``minimiser`` (point, value)."""
    x_s, f_s = minimiser
    shifted = [(x - x_s, g, f) for x, g, f in points]
    equalities = [f - f_s == 0.5 * (u * g) for u, g, f in shifted]
    for i, (u_i, g_i, _) in enumerate(shifted):
        equalities += [u_i * g_j == u_j * g_i for u_j, g_j, _ in shifted[i + 1:]]
    n = len(shifted)
    T = np.empty((n, n), dtype=object)
    for i, (u_i, g_i, _) in enumerate(shifted):
        for j, (u_j, g_j, _) in enumerate(shifted):
            T[i, j] = (L + mu) * (g_i * u_j) - g_i * g_j - mu * L * (u_i * u_j)
    return equalities, T
