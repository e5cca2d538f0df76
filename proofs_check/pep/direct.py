"""PEPit's direct N-client program of FedAvg, solved by PEPit itself: the check of the symmetric reduction.

One ``SmoothStronglyConvexFunction`` per client (``SmoothStronglyConvexQuadraticFunction`` for the
quadratic class), x* the stationary point of F = p_1 f_1 + ... + p_N f_N (PEPit's ``stationary_point``
of the weighted sum; p_i = 1/N unless ``setting.weights``), x_0 a free point with ||x_0 - x*|| <= r0,
every client's local steps written with ``gradient`` calls (FedProx's proximal term mu_prox (y - x_r)
added to each), and the constraints of ``setting.FedAvgPEP`` on the N clients (heterogeneity weighted
by p_i, the gradient bound on each, the (G, B)-BGD pair at x* and at every server model where the clients
take a gradient, and at x_R for the metric "gap"). PEPit builds it, its cvxpy
wrapper compiles it and Clarabel solves it: nothing of fedbound's ``program`` or ``sdp`` is used, so
``direct_worst_case(s)`` against ``worst_case(s)`` tests the reduction (``program``), the weighted
program (``weighted``) and the assembly (``sdp``). It grows with N (N functions, N E R gradients) and compiles one dense constraint per
scalar: use it on small programs (N <= 3, E R <= 10 take seconds).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from .setting import FedAvgPEP

__all__ = ["DirectSolution", "direct_worst_case"]


@dataclass(frozen=True)
class DirectSolution:
    """PEPit's worst case (its dual value, PEPit's default return) and cvxpy's status."""

    value: float
    status: str


def direct_worst_case(setting: FedAvgPEP, solver: str = "CLARABEL", **options: Any) -> DirectSolution:
    """The worst case of ``setting`` from PEPit's direct program with ``setting.n_clients`` functions,
    solved by cvxpy's ``solver`` with its ``options`` (Clarabel fails on the quadratic class's direct
    program, which keeps its translation invariance: SCS solves it, with ``eps`` = 1e-9)."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction, SmoothStronglyConvexQuadraticFunction

    p = setting.client_weights
    problem = PEP()
    kind = SmoothStronglyConvexQuadraticFunction if setting.function_class == "quadratic" else SmoothStronglyConvexFunction
    functions = [problem.declare_function(kind, mu=setting.mu, L=setting.L) for _ in range(setting.n_clients)]

    def weighted(terms: list[Any]) -> Any:
        return sum((w * term for w, term in zip(p[1:], terms[1:])), p[0] * terms[0])

    x_star = weighted(functions).stationary_point()
    x = problem.set_initial_point()
    problem.set_initial_condition((x - x_star) ** 2 <= setting.r0 ** 2)

    def bgd(point: Any) -> None:
        if setting.bgd is not None:
            gradients = [f.gradient(point) for f in functions]
            problem.add_constraint(weighted([g ** 2 for g in gradients]) - setting.bgd.B ** 2 * weighted(gradients) ** 2
                                   <= setting.bgd.G ** 2)

    if setting.zeta is not None:
        problem.add_constraint(weighted([f.gradient(x_star) ** 2 for f in functions]) <= setting.zeta ** 2)
    bgd(x_star)
    if setting.Gamma is not None:
        local_minima = [f.stationary_point(return_gradient_and_function_value=True) for f in functions]
        problem.add_constraint(weighted([f(x_star) - value for f, (_, _, value) in zip(functions, local_minima)])
                               <= setting.Gamma)
    for r in range(setting.rounds):
        bgd(x)
        ends = []
        for f in functions:
            y = x
            for e in range(setting.local_steps):
                g = f.gradient(y)
                if setting.G is not None:
                    problem.add_constraint(g ** 2 <= setting.G ** 2)
                if setting.mu_prox > 0:
                    g = g + setting.mu_prox * (y - x)
                y = y - setting.steps[r * setting.local_steps + e] * g
            ends.append(y)
        x = x + setting.server_step * (weighted(ends) - x)
    if setting.metric == "distance":
        problem.set_performance_metric((x - x_star) ** 2)
    else:
        bgd(x)
        problem.set_performance_metric(weighted([f(x) - f(x_star) for f in functions]))
    with warnings.catch_warnings():  # cvxpy warns of an inaccurate solution: the status says it
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        value = problem.solve(wrapper="cvxpy", solver=solver, verbose=0, **options)
    return DirectSolution(float(value), str(problem.wrapper.prob.status))
