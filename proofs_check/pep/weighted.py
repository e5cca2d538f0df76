"""FedAvg's performance-estimation program with unequal client weights p_i: one function per client.

``program``'s reduction needs the clients to be exchangeable: with weights p_i the server average
sum_i p_i y_i^E, F = sum_i p_i f_i and the heterogeneity measures (``setting``) change when two clients
of different weights are swapped, so the N-client program is written here as it is (Drori and Teboulle
2014; Taylor, Hendrickx and Glineur 2017): one L-smooth mu-strongly convex function per client with its
interpolation conditions (PEPit's, or ``quadratic``'s for ``function_class = "quadratic"``), and one
Gram matrix over x_0, every client's gradients and minimiser. sum_i p_i grad f_i(x*) = 0 is written by
taking client N's gradient at x* as -(sum_(i<N) p_i grad f_i(x*)) / p_N. Anchors, as in ``program``:
x* = 0 and every f_i(x*) = 0 (each f_i's value is invariant under a constant shift). Its size grows with
N: N E R + N + 1 leaves (N = 3, E R = 8: 28 leaves).

**What does reduce.** The argument of ``program`` applies to any group of clients of equal weight: the
program is invariant under permutations within the group, so an optimal solution is symmetric within
every group, each group's clients have one common mean and deviations orthogonal to everything shared,
and the program keeps one function per group (a group of n_a >= 2 clients with a deviation block; the
worst case depends on a group's total weight P_a = n_a p_a and on whether n_a >= 2, not on n_a beyond
that). That grouped program is not built here: with weights the N-client program itself is solved, and
the tests check it against the symmetric program at equal weights and against PEPit's direct program
(``direct``) at unequal ones.

The metric: ||x_R - x*||^2, or F(x_R) - F* = sum_i p_i f_i(x_R) (F* = 0 with the anchors).
"""

from __future__ import annotations

from typing import Any

from .program import Program
from .setting import FedAvgPEP

__all__ = ["weighted_program"]


def weighted_program(setting: FedAvgPEP) -> Program:
    """The N-client program of ``setting`` with its weights ``setting.client_weights`` (module docstring)."""
    from PEPit import PEP, Expression, Point
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()  # resets PEPit's leaf counters
    p, N = setting.client_weights, setting.n_clients
    leaves: list[Any] = []

    def leaf() -> Point:
        point = Point()
        leaves.append(point)
        return point

    def weighted(vectors: list[Any]) -> Any:
        return sum((w * v for w, v in zip(p[1:], vectors[1:])), p[0] * vectors[0])

    zero = Point(is_leaf=False, decomposition_dict={})
    functions = [problem.declare_function(SmoothStronglyConvexFunction, mu=setting.mu, L=setting.L) for _ in range(N)]
    at_star = [leaf() for _ in range(N - 1)]
    at_star.append(-1 / p[-1] * sum((w * g for w, g in zip(p, at_star)), zero))
    for f, g in zip(functions, at_star):
        f.add_point((zero, g, Expression(is_leaf=False, decomposition_dict={})))
    constraints: list[Any] = []
    heterogeneity = weighted([g ** 2 for g in at_star])
    if setting.zeta is not None:
        constraints.append(heterogeneity <= setting.zeta ** 2)

    def bgd(gradients: list[Any]) -> None:
        if setting.bgd is not None:
            constraints.append(weighted([g ** 2 for g in gradients]) - setting.bgd.B ** 2 * weighted(gradients) ** 2
                               <= setting.bgd.G ** 2)

    bgd(at_star)
    minimisers = []
    if setting.Gamma is not None or setting.function_class == "quadratic":
        minimisers = [(leaf(), Expression()) for _ in range(N)]
        if setting.function_class == "smooth":
            for f, (x_s, f_s) in zip(functions, minimisers):
                f.add_point((x_s, zero, f_s))
    if setting.Gamma is not None:  # F* - sum_i p_i f_i* with F* = 0
        constraints.append(-weighted([f_s for _, f_s in minimisers]) <= setting.Gamma)
    x = leaf()
    constraints.append(x ** 2 <= setting.r0 ** 2)
    iterates, t0 = [x], 0
    for _ in range(setting.rounds):
        ends, first = [], []
        for f in functions:
            y = x
            for e in range(setting.local_steps):
                g = leaf()
                f.add_point((y, g, Expression()))
                if e == 0:
                    first.append(g)
                if setting.G is not None:
                    constraints.append(g ** 2 <= setting.G ** 2)
                step = g + setting.mu_prox * (y - x) if setting.mu_prox > 0 else g
                y = y - setting.steps[t0 + e] * step
            ends.append(y)
        bgd(first)
        x = x + setting.server_step * (weighted(ends) - x)
        iterates.append(x)
        t0 += setting.local_steps
    if setting.metric == "distance":
        objective = x ** 2
    else:
        values, gradients = [Expression() for _ in range(N)], [leaf() for _ in range(N)]
        for f, g, v in zip(functions, gradients, values):
            f.add_point((x, g, v))
        bgd(gradients)
        objective = weighted(values)
    lmis: list[Any] = []
    if setting.function_class == "quadratic":
        from .quadratic import quadratic_conditions

        for f, minimiser in zip(functions, minimisers):
            equalities, T = quadratic_conditions(f.list_of_points, minimiser, setting.L, setting.mu)
            constraints += equalities
            lmis.append(T)
    else:
        for f in functions:
            f.set_class_constraints()
            constraints += f.list_of_class_constraints
    return Program(tuple(leaves), (), tuple(constraints), objective, functions[0], tuple(iterates), tuple(lmis),
                   minimisers[0] if minimisers else None)
