"""FedAvg's performance-estimation program with unequal client weights p_i: one function per client.

``program``'s reduction needs the clients to be exchangeable: with weights p_i the server average
sum_i p_i y_i^E, F = sum_i p_i f_i and the heterogeneity measures (``setting``) change when two clients
of different weights are swapped, so the N-client program is written here as it is (Drori and Teboulle
2014; Taylor, Hendrickx and Glineur 2017): one L-smooth mu-strongly convex function per client with its
interpolation conditions (PEPit's, or ``quadratic``'s for ``function_class = "quadratic"``), and one
Gram matrix over x_0, every client's gradients and minimiser. sum_i p_i grad f_i(x*) = 0 is written by
taking client N's gradient at x* as -(sum_(i<N) p_i grad f_i(x*)) / p_N. Anchors, as in ``program``:
x* = 0 and every f_i(x*) = 0 (each f_i's value is invariant under a constant shift). Its size grows with
N: N E R + N + 1 leaves (N = 3, E R = 8: 28 leaves). Measured (CPU seconds of building and solving, E = 2,
zeta, loaded cores): E R = 4: 0.02, 0.03, 0.07, 0.29 at N = 2, 3, 4, 6; E R = 8: 0.07, 0.33, 0.91, 5.6
(the symmetric program: 0.04); pep.li2020.thm1's N = 3, T = 16: 10-16.

**What reduces: the weights matter only when one client has more than half of them.** Write W(p) for the
worst case with weights p and W for the equal-weight one (the same for every N >= 2, ``program``).

* W(p) <= W for every p. A float weight is a rational k_i / K: replacing client i by k_i identical copies
  of weight 1/K each gives an equal-weight instance of K clients with the same F, the same server models
  and the same heterogeneity (zeta, Gamma, the BGD pair: weighted sums over the copies), the per-client
  gradient bound unchanged: the same metric.
* W(p) = W when max_i p_i <= 1/2. Then there are unit vectors e_1, ..., e_N (in R^2) with
  sum_i p_i e_i = 0 (a closed polygon with sides p_i). ``program``'s lift of the symmetric solution with
  these e_i in place of the regular simplex (client i's deviations d (x) e_i, f_i = f o Q_i^(-1) for the
  isometry Q_i that fixes the common block and maps d (x) e_1 to d (x) e_i) is a weighted instance:
  sum_i p_i (m + d (x) e_i) = m, so the server models, grad F(x*) = 0 and F(x_R) are those of the
  symmetric solution, and sum_i p_i ||m + d (x) e_i||^2 = ||m||^2 + ||d||^2 (every e_i a unit vector),
  so every heterogeneity constraint reads as in ``program``.

* Clients of equal weight reduce to their group: ``program``'s argument applies to the permutations within a
  group, so W(p) depends on a group of n_a >= 2 clients of weight p_a only through its total n_a p_a
  (its clients' deviations, orthogonal to everything outside the group, lift to any n_a >= 2).

So ``worst_case.fedavg_worst_case`` solves the symmetric program whenever max_i p_i <= 1/2, and this N-client
program only when one client holds more than half the weight (measured below 1 there: W(1/3, 2/3) =
0.759958 against W = 0.760080 at E = R = 2, eta = 0.5, mu = 0.1, zeta = 1; the tests check both facts).
Beyond that, measured but not proven: with max_i p_i = p > 1/2 the worst case depends on p alone (p =
(0.4, 0.6), (0.1, 0.3, 0.6), (0.3, 0.1, 0.6), (0.2, 0.2, 0.6): 0.7600396 to 0.7600398; p = (0.2, 0.8),
(0.1, 0.1, 0.8), (0.05, 0.15, 0.8): 0.7595137 to 0.7595140), as if the other clients were one.

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
