"""PEPit's direct program of MM-PSGD with N M functions, solved by PEPit itself: the check of
``block_cyclic``'s reduction.

One ``SmoothStronglyConvexFunction`` per client and block (F_m^i), x* the stationary point of their sum,
x_m* that of each block's sum, every client's local steps written with ``gradient`` calls, the
predictors as the means of each block's global models, and the constraints of ``block_cyclic.MMPSGDPEP``
on every client: ||x||^2 <= B^2 at x_0, every local iterate, x* and the x_m*; ||grad F_m^i||^2 <= G^2 at
every point where F_m^i is evaluated. The metric is (1/(M N)) sum_(m,i) F_m^i(x~_m) - F_m^i(x*). PEPit
builds it, its cvxpy wrapper compiles it and Clarabel solves it: nothing of fedbound's ``program`` or
``sdp`` is used. It grows with N M and C M E I N gradients: use it on small programs (seconds at N M <= 6,
T <= 8).
"""

from __future__ import annotations

import warnings
from typing import Any

from .block_cyclic import MMPSGDPEP
from .direct import DirectSolution

__all__ = ["block_cyclic_direct_worst_case"]


def block_cyclic_direct_worst_case(setting: MMPSGDPEP, solver: str = "CLARABEL", **options: Any) -> DirectSolution:
    """The worst case of ``setting`` from PEPit's direct program with ``setting.n_clients`` clients per block
    (module docstring), solved by cvxpy's ``solver`` with its ``options``."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    N, M = setting.n_clients, setting.blocks
    problem = PEP()
    clients = [[problem.declare_function(SmoothStronglyConvexFunction, mu=setting.mu, L=setting.L) for _ in range(N)]
               for _ in range(M)]
    block_sums = [_total(block) for block in clients]
    x_star = _total(block_sums).stationary_point()
    in_ball = [x_star] + ([F.stationary_point() for F in block_sums] if M > 1 else [])
    x = problem.set_initial_point()
    in_ball.append(x)
    sums, counts = [None] * M, [0] * M
    for r in range(setting.rounds):
        m = setting.block_of_round(r)
        ends = []
        for f in clients[m]:
            y = x
            for e in range(setting.local_steps):
                y = y - setting.step * f.gradient(y)
                in_ball.append(y)
            ends.append(y)
        x = _total(ends) / N
        sums[m] = x if sums[m] is None else sums[m] + x
        counts[m] += 1
    metric = _total([f(sums[m] / counts[m]) - f(x_star) for m in range(M) for f in clients[m]]) / (M * N)
    for point in in_ball:
        problem.add_constraint(point ** 2 <= setting.B ** 2)
    for block in clients:
        for f in block:
            for _, g, _ in list(f.list_of_points):
                problem.add_constraint(g ** 2 <= setting.G ** 2)
    problem.set_performance_metric(metric)
    with warnings.catch_warnings():  # cvxpy warns of an inaccurate solution: the status says it
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        value = problem.solve(wrapper="cvxpy", solver=solver, verbose=0, **options)
    return DirectSolution(float(value), str(problem.wrapper.prob.status))


def _total(items: list) -> Any:
    """The sum of PEPit functions or points."""
    return sum(items[1:], items[0])
