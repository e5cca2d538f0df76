"""The client drift of FedAvg as a performance-estimation program: PEPit's direct N-client program.

Yu, Yang and Zhu (AAAI 2019; Lemma 1 of Liu's lecture note, ``liu_lecture_fl_fedavg.md``): with a
constant step s, K local steps since the last average xbar^(t0) and ||g|| <= G for every gradient
taken, E||xbar^t - x_i^t||^2 <= 4 s^2 K^2 G^2. ``setting.DriftPEP`` is that situation with exact
gradients over L-smooth (non-convex) clients; its worst case is a program with one PEPit
``SmoothFunction`` per client (Taylor, Hendrickx and Glineur 2017, Theorem 3.10: the interpolation
conditions of L-smooth functions), every client's K gradients at its own iterates
x_i^k = xbar^(t0) - s sum_(j<k) g_i^j, ||g_i^k||^2 <= G^2, and the drift as the metric. It is not
reduced by symmetry (the metric ``"client"`` singles out client 1): N K gradient leaves in one Gram
block, solved by ``sdp`` with its accuracy measured (N = 4, K = 3: 12 leaves, about 0.05 s).
Anchors: xbar^(t0) = 0 and f_i(xbar^(t0)) = 0 (the class and the metric are invariant under
translations of x and of each f_i's value).

**Closed form** (``drift_closed_form``). With a_i = x_i^K - xbar^(t0) = -s sum_k g_i^k, ||a_i|| <= s K G
by the gradient bound, and x_i - xbar = a_i - (1/N) sum_j a_j, so

* client 1: ||x_1 - xbar|| = ||(1 - 1/N) a_1 - (1/N) sum_(j>1) a_j|| <= 2 (1 - 1/N) s K G, attained by
  linear clients f_1(x) = G <e, x>, f_j(x) = -G <e, x> (j > 1; a linear function is L-smooth for every
  L): the worst case is 4 (1 - 1/N)^2 s^2 K^2 G^2, below the lemma's 4 s^2 K^2 G^2 by (1 - 1/N)^2 and
  equal to it as N -> infinity (the constant 4 is exact);
* the average: (1/N) sum_i ||x_i - xbar||^2 = (1/N) sum_i ||a_i||^2 - ||(1/N) sum_i a_i||^2 <= s^2 K^2 G^2,
  attained by linear clients whose gradients G u_i sum to zero (u_i unit vectors, e.g. the vertices of a
  regular simplex): the worst case is s^2 K^2 G^2 for every N >= 2.

The program's value equals these (tests/test_pep_drift.py), whatever L: the bound uses the gradient
bound only, and the linear worst case is in the class for every L.
"""

from __future__ import annotations

from typing import Any

from .program import Program
from .setting import DriftPEP

__all__ = ["drift_closed_form", "drift_program"]


def drift_closed_form(setting: DriftPEP) -> float:
    """The worst-case drift of the module docstring: 4 (1 - 1/N)^2 s^2 K^2 G^2 (``"client"``) or s^2 K^2 G^2
    (``"average"``)."""
    move = (setting.step * setting.local_steps * setting.G) ** 2
    if setting.metric == "client":
        return 4 * (1 - 1 / setting.n_clients) ** 2 * move
    return move


def drift_program(setting: DriftPEP) -> Program:
    """PEPit's direct program of ``setting`` (module docstring): maximise the drift after K local steps."""
    from PEPit import PEP, Expression, Point
    from PEPit.functions import SmoothFunction

    problem = PEP()  # resets PEPit's leaf counters
    N, K, s = setting.n_clients, setting.local_steps, setting.step
    start = Point(is_leaf=False, decomposition_dict={})  # xbar^(t0) = 0
    leaves: list[Any] = []
    constraints: list[Any] = []
    functions, ends = [], []
    for _ in range(N):
        f = problem.declare_function(SmoothFunction, L=setting.L)
        x = start
        for k in range(K):
            g = Point()
            leaves.append(g)
            value = Expression(is_leaf=False, decomposition_dict={}) if k == 0 else Expression()  # f_i(xbar^(t0)) = 0
            f.add_point((x, g, value))
            constraints.append(g ** 2 <= setting.G ** 2)
            x = x - s * g
        functions.append(f)
        ends.append(x)
    mean = sum(ends[1:], ends[0]) / N
    if setting.metric == "client":
        objective = (ends[0] - mean) ** 2
    else:
        objective = sum(((x - mean) ** 2 for x in ends[1:]), (ends[0] - mean) ** 2) / N
    for f in functions:
        f.set_class_constraints()
        constraints += f.list_of_class_constraints
    return Program(tuple(leaves), (), tuple(constraints), objective, functions[0], (start,))
