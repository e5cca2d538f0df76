"""The performance-estimation program of FedAvg, reduced by the clients' symmetry, written with PEPit.

The N-client program (Drori and Teboulle 2014; Taylor, Hendrickx and Glineur 2017) has one Gram
matrix over x_0 and every client's gradients, and one smooth strongly convex function per client
with its interpolation conditions. Its constraints and metric (``setting``) do not change when the
clients are permuted, and it is convex, so averaging an optimal solution over the permutations gives
an optimal solution that is permutation-invariant (Colla and Hendrickx 2024 use the same argument for
decentralised methods). In such a solution write each client vector as v_i = m + d_i, m = (1/N)
sum_j v_j the clients' mean and d_i the deviation: symmetry makes <d_i, c> = 0 for every vector c
shared by all clients (x_0, x*, the server models and every mean m), and <d_i^a, d_j^b> = D_ab for
i = j, -D_ab / (N - 1) for i != j, with D positive semidefinite. Every constraint then reads on one
client and the common vectors only:

* client 1's interpolation conditions involve its own points, gradients and values (those of the
  other clients are the same numbers);
* (1/N) sum_i ||grad f_i(x*)||^2 = ||d*||^2 (the mean gradient at x* is grad F(x*) = 0), and
  F* - (1/N) sum_i f_i* = f_1(x*) - f_1(x_1*);
* the server model moves by the mean of the clients' steps: x_(r+1) = x_r - s sum_e eta_t m_t.

So the program is one function f (client 1) over two orthogonal blocks of vectors: the common block
(x_0, and one mean m_t per local step t) and the deviation block (one d_t per local step, d* the
client's gradient at x*), each with its own Gram matrix. Conversely, any feasible point of that
reduced program is realised by N >= 2 clients: d_i^a = d^a (x) e_i with e_1, ..., e_N unit vectors in
R^(N-1) at mutual inner products -1/(N-1) (a regular simplex), and f_i = f o Q_i^(-1) for the isometry
Q_i that fixes the common block and maps d (x) e_1 to d (x) e_i. **The worst case is therefore the
same for every N >= 2**, and its program has one function whatever N is (with N = 1 the deviation
block is zero: FedAvg is gradient descent on f). Against PEPit's direct N-client program
(``direct``) the reduction halves the interpolation constraints at N = 2 and splits the Gram matrix
into two blocks of about half its size: E = 5, R = 4 took 0.9 s instead of 10 s, and the tests check
that the two agree at N = 2 and 3.

FedProx (``mu_prox`` > 0) keeps the reduction: its local step adds mu_prox (y_i - x_r) to client i's
gradient, and y_i - x_r = (the clients' mean displacement) + (client i's deviation) is a combination of
common and deviation leaves, so client i's iterates are the same combination of its own leaves as
client 1's of its (the step is the same map for every client and commutes with the permutations and
with the isometries Q_i above, which fix x_r). The mean displacement v = (1/N) sum_i y_i - x_r follows
v <- v - eta_t (m_t + mu_prox v) (``mean_move`` is -v); mu_prox = 0 takes FedAvg's branch, the same
expressions.

Two anchors remove the program's translation invariances, which leave its feasible set unbounded and
its SDP without a strictly feasible dual (the solver then stalls): x* = 0 and f(x*) = 0 (both the
zero vector and the zero value of PEPit, not variables).

The (G, B)-BGD pair (``setting.BGD``) keeps the reduction too: at a point where every client takes a
gradient, sum_i p_i ||g_i||^2 = ||m||^2 + ||d||^2 and grad F = m, so the constraint is the affine
||m + d||^2 - B^2 ||m||^2 <= G^2 on client 1's gradient, invariant under the permutations.

``fedavg_program`` builds the program of R rounds (``FedAvgPEP`` with equal weights), ``limit_program``
that of the fixed point of constant-step FedAvg or FedProx (``FedAvgLimitPEP``): x_0 = w~, and the
clients' mean displacement v_E = 0 after E steps from w~. With v <- v - eta (m_e + mu_prox v), v_0 = 0,
v_E = -eta sum_e a^(E-1-e) m_e, a = 1 - eta mu_prox, so the fixed point is sum_e a^(E-1-e) m_e = 0
(FedAvg: sum_e m_e = 0), written by taking the last mean as minus the weighted sum of the others.
Client 1's conditions are PEPit's smooth strongly convex interpolation conditions, or, for
``function_class = "quadratic"``, those of quadratics (``quadratic``: the same argument reduces that
class, since f o Q_i^(-1) is a quadratic). PEPit is imported here only, when a program is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .setting import FedAvgLimitPEP, FedAvgPEP, PEPError

if TYPE_CHECKING:
    from PEPit import Expression, Function, Point

__all__ = ["Program", "fedavg_program", "limit_program"]


@dataclass(frozen=True)
class Program:
    """A built program: the leaf vectors of its two blocks (PEPit ``Point`` leaves: ``common`` and
    ``deviation``), its scalar constraints (PEPit ``Constraint``s, ``expression <= 0`` or ``== 0``:
    initial condition, heterogeneity, gradient bound, then client 1's interpolation conditions), its
    linear matrix inequalities (``lmis``: square object arrays of PEPit ``Expression``s, each PSD; the
    quadratic class's), the ``objective`` to maximise (a PEPit ``Expression``), client 1's
    ``function`` (its ``list_of_points`` are the (point, gradient, value) triples the conditions
    cover), its ``minimiser`` (point, value) when the program has one (Gamma, the quadratic class),
    and the server models x_0, ..., x_R (``iterates``; the limit program: (w~,))."""

    common: tuple[Point, ...]
    deviation: tuple[Point, ...]
    constraints: tuple[Any, ...]
    objective: Expression
    function: Function
    iterates: tuple[Point, ...]
    lmis: tuple[Any, ...] = ()
    minimiser: tuple[Point, Expression] | None = None

    @property
    def blocks(self) -> tuple[tuple[Point, ...], ...]:
        """The leaves of each Gram block, the blocks mutually orthogonal: (common, deviation). A program
        with more blocks (``block_cyclic.BlockCyclicProgram``: one deviation block per data block)
        overrides it; ``sdp`` assembles whatever blocks it returns."""
        return (self.common, self.deviation)


class _Vectors:
    """Creates the leaves of the two blocks (the deviation block is empty for one client)."""

    def __init__(self, n_clients: int) -> None:
        from PEPit import Point

        self._point = Point
        self.deviating = n_clients > 1
        self.common: list[Point] = []
        self.deviation: list[Point] = []

    def zero(self) -> Point:
        return self._point(is_leaf=False, decomposition_dict={})

    def shared(self) -> Point:
        """A new leaf of the common block (a vector every client sees, or a mean over the clients)."""
        leaf = self._point()
        self.common.append(leaf)
        return leaf

    def deviation_of_client(self) -> Point:
        """A new leaf of the deviation block (client 1's deviation from the clients' mean; zero for N = 1)."""
        if not self.deviating:
            return self.zero()
        leaf = self._point()
        self.deviation.append(leaf)
        return leaf


def _start(setting: FedAvgPEP | FedAvgLimitPEP) -> tuple[Any, _Vectors, list, Any]:
    """A fresh PEPit problem with client 1's function, x* = 0 and f(x*) = 0 anchored, its gradient at x*
    (a pure deviation), its minimiser (with Gamma or the quadratic class) and the heterogeneity
    constraints; returns (f, vectors, constraints, minimiser or None)."""
    from PEPit import PEP, Expression
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()  # resets PEPit's leaf counters: the leaves below are numbered from 0
    f = problem.declare_function(SmoothStronglyConvexFunction, mu=setting.mu, L=setting.L)
    vectors = _Vectors(setting.n_clients)
    g_star = vectors.deviation_of_client()
    f.add_point((vectors.zero(), g_star, Expression(is_leaf=False, decomposition_dict={})))
    constraints, minimiser = [], None
    if setting.zeta is not None:
        constraints.append(g_star ** 2 <= setting.zeta ** 2)
    if setting.bgd is not None:  # at x*, where grad F = 0
        constraints.append(g_star ** 2 <= setting.bgd.G ** 2)
    if setting.Gamma is not None or setting.function_class == "quadratic":
        minimiser = (vectors.shared() + vectors.deviation_of_client(), Expression())
        if setting.function_class == "smooth":  # the quadratic conditions take it apart (``quadratic``)
            f.add_point((minimiser[0], vectors.zero(), minimiser[1]))
    if setting.Gamma is not None:
        constraints.append(-minimiser[1] <= setting.Gamma)  # f(x*) - f(x_1*) with f(x*) = 0
    return f, vectors, constraints, minimiser


def _finish(setting: FedAvgPEP | FedAvgLimitPEP, f: Any, vectors: _Vectors, constraints: list, objective: Any,
            iterates: list, minimiser: Any) -> Program:
    """Client 1's interpolation conditions added: PEPit's for the smooth class, ``quadratic``'s for quadratics."""
    lmis: tuple[Any, ...] = ()
    if setting.function_class == "quadratic":
        from .quadratic import quadratic_conditions

        equalities, T = quadratic_conditions(f.list_of_points, minimiser, setting.L, setting.mu)
        constraints += equalities
        lmis = (T,)
    else:
        f.set_class_constraints()
        constraints += f.list_of_class_constraints
    return Program(tuple(vectors.common), tuple(vectors.deviation), tuple(constraints), objective, f, tuple(iterates),
                   lmis, minimiser)


def _bgd(setting: FedAvgPEP | FedAvgLimitPEP, mean: Point, gradient: Point) -> list[Any]:
    """The (G, B)-BGD constraint at a point where client 1's gradient is ``gradient`` = ``mean`` + deviation:
    (1/N) sum_i ||g_i||^2 = ||mean||^2 + ||deviation||^2 = ||gradient||^2 (the blocks are orthogonal) and
    grad F = mean, so sum_i p_i ||g_i||^2 - B^2 ||grad F||^2 <= G^2 reads ||gradient||^2 - B^2 ||mean||^2 <= G^2."""
    if setting.bgd is None:
        return []
    return [gradient ** 2 - setting.bgd.B ** 2 * mean ** 2 <= setting.bgd.G ** 2]


def fedavg_program(setting: FedAvgPEP) -> Program:
    """The reduced program of ``setting`` (module docstring): maximise its metric after R rounds. Equal client
    weights only (``weighted.weighted_program`` writes unequal ones)."""
    from PEPit import Expression

    if setting.weights is not None:
        raise PEPError("weights: the symmetric program needs equal client weights (weighted.weighted_program "
                       "writes unequal ones)")
    f, vectors, constraints, minimiser = _start(setting)
    x = vectors.shared()
    constraints.append(x ** 2 <= setting.r0 ** 2)
    iterates = [x]
    t = 0
    for _ in range(setting.rounds):
        y, mean_move = x, vectors.zero()
        for e in range(setting.local_steps):
            mean = vectors.shared()
            g = mean + vectors.deviation_of_client()
            f.add_point((y, g, Expression()))
            if e == 0:  # at the server model x_r, where every client takes a gradient
                constraints += _bgd(setting, mean, g)
            if setting.G is not None:
                constraints.append(g ** 2 <= setting.G ** 2)
            if setting.mu_prox > 0:  # FedProx: the step of h(y) = f(y) + mu_prox/2 ||y - x_r||^2
                y, mean_move = (y - setting.steps[t] * (g + setting.mu_prox * (y - x)),
                                mean_move + setting.steps[t] * (mean - setting.mu_prox * mean_move))
            else:
                y = y - setting.steps[t] * g
                mean_move = mean_move + setting.steps[t] * mean
            t += 1
        x = x - setting.server_step * mean_move
        iterates.append(x)
    if setting.metric == "distance":
        objective = x ** 2
    else:
        value, mean = Expression(), vectors.shared()
        g = mean + vectors.deviation_of_client()
        f.add_point((x, g, value))
        constraints += _bgd(setting, mean, g)
        objective = value
    return _finish(setting, f, vectors, constraints, objective, iterates, minimiser)


def limit_program(setting: FedAvgLimitPEP) -> Program:
    """The reduced program of the limit (module docstring): maximise ||w~ - x*||^2 over the fixed points."""
    from PEPit import Expression

    f, vectors, constraints, minimiser = _start(setting)
    w = vectors.shared()
    E, eta, a = setting.local_steps, setting.step, 1 - setting.step * setting.mu_prox
    y, means = w, []
    for e in range(E):
        if e < E - 1:
            mean = vectors.shared()
        else:  # the fixed point: sum_e a^(E-1-e) m_e = 0
            mean = vectors.zero() - sum((a ** (E - 1 - k) * m if a != 1 else m for k, m in enumerate(means)),
                                        vectors.zero())
        g = mean + vectors.deviation_of_client()
        f.add_point((y, g, Expression()))
        if e == 0:  # at w~, where every client takes a gradient
            constraints += _bgd(setting, mean, g)
        y = y - eta * (g + setting.mu_prox * (y - w)) if setting.mu_prox > 0 else y - eta * g
        means.append(mean)
    return _finish(setting, f, vectors, constraints, w ** 2, [w], minimiser)
