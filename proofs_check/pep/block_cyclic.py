"""The performance-estimation program of MM-PSGD (Ding et al., arXiv 2002.07454, Algorithm 1) on block-cyclic
data, reduced by the clients' symmetry within each block.

**The method** (fedbound's ``convergence.MM_PSGD`` with exact gradients, every client, the ``"average"``
predictor). M blocks, C cycles, E rounds per block, I local steps per round: R = C M E rounds, T = R I
steps. Round r (0-based) uses block m = (r // E) mod M; every client i of the N starts at the global
model x_r and takes I steps y <- y - gamma grad F_m^i(y); x_(r+1) = (1/N) sum_i y_i (Algorithm 1, lines
5, 9, 11-12). The predictor of block m is the mean of the x_(r+1) over block m's rounds (eq. 7). The
metric is Theorem 1's mini-max gap (1/M) sum_m F_m(x~_m) - F(x*), F_m = (1/N) sum_i F_m^i,
F = (1/M) sum_m F_m, x* = argmin F.

**The class** (``MMPSGDPEP``). Every F_m^i L-smooth and mu-strongly convex (Assumptions 1-2); Assumption
4 with exact gradients (sigma = 0), ||grad F_m^i(x)||^2 <= G^2; Assumption 5, ||x||^2 <= B^2 for every
model. The paper states 4 and 5 "for all x"; with strong convexity on R^d that can only mean a domain,
the ball ||x|| <= B, on which the iterates stay (the reading of ``ding2020.thm1``, whose B also covers
x* and the x_m*, which the proof's eq. 36 and Lemma 9 need). A performance-estimation program imposes
them at finitely many points: here ||x||^2 <= B^2 at x_0, every client's local iterate (the local model
at a communication iteration included), x* and every x_m* = argmin F_m; ||grad F_m^i||^2 <= G^2 at every
point where F_m^i is evaluated (the local iterates, x*, x_m*, the predictors: all in the ball). No
interpolation theorem is known for "smooth strongly convex with bounded gradients on a ball", so the
program's class R contains the paper's (any instance of the paper's class gives a feasible point) and its
value is an upper bound on the paper's worst case: **worst case over R <= bound proves the theorem at
those constants**; above the bound it shows the bound false over R (the theorem with Assumptions 4-5 read
at the points the method and the proof use), not necessarily over the paper's narrower class.

**The reduction.** The program is invariant under permuting the N clients of each block separately (the
group S_N^M), so (as in ``program``, Colla and Hendrickx 2024) it has an invariant optimal solution.
Write client i of block m's vectors as common part + deviation d_(m,i): the deviations of block m
have Gram D_m (i = j) and -D_m / (N - 1) (i != j); those of two different blocks are orthogonal
(invariance under independent permutations makes <d_(m,i), d_(m',j)> one number c for all i, j, and
sum_i d_(m,i) = 0 makes N c = 0), and orthogonal to every common vector. So the program is one function
f_m per block (client 1's) over M + 1 orthogonal Gram blocks: the common block (x_0, x*, the x_m*, one
mean gradient per local step, the common parts of the gradients at x* and at the predictors) and one
deviation block per data block; realised by N >= 2 clients per block through a regular simplex exactly as
in ``program``. **The worst case is the same for every N >= 2.** With I = 1 it is the same for every
N >= 1: the iterates move by the mean gradient only, and replacing each block's clients by their mean
F_m (L-smooth, mu-strongly convex, ||grad F_m|| <= G by Jensen, its one model the average of the clients'
local models, in the ball) keeps every constraint and the metric; so the program drops the deviations
(``reduced_clients``). Anchors: the ball's centre is PEPit's zero vector, and f_m(x*) = 0 (each function's
value is defined up to a constant the metric does not see). Optimality of x*: the gradients' common
parts at x* sum to zero over the blocks (the last is minus the sum of the others).

``function_class = "quadratic"`` restricts every F_m^i to quadratics (``quadratic``'s conditions on each
f_m with its own minimiser, a common and a deviation leaf; the reduction holds as in ``program``): its worst
case is below the smooth class's (0.80 to 0.95 of it at T <= 16; Clarabel fails on its programs with M >= 2
from T = 16 at the claim's constants), and ``block_cyclic_instance`` runs its worst instance through the
engine's MM-PSGD.

``worst_case.mm_psgd_worst_case`` solves it (cached, accuracy measured, scaled to B = 1);
``block_cyclic_direct`` is PEPit's direct program with N M functions, the check of the reduction.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .program import Program
from .setting import FUNCTION_CLASSES, PEPError, checked_class, checked_int, checked_real

if TYPE_CHECKING:
    from PEPit import Point

__all__ = ["MMPSGDPEP", "BlockCyclicProgram", "mm_psgd_program", "reduced_clients"]


@dataclass(frozen=True)
class MMPSGDPEP:
    """The worst-case mini-max gap of MM-PSGD (module docstring): ``n_clients`` N per block, ``blocks`` M,
    ``cycles`` C, ``rounds_per_block`` E, ``local_steps`` I, the class's ``L`` and ``mu`` (> 0: Theorem 1
    needs strong convexity), the constant ``step`` gamma, the ball radius ``B`` and the gradient bound ``G``.
    ``anywhere``: the predictors are free points of the ball instead of MM-PSGD's (no method runs): the
    program's value is then the largest the mini-max gap can be over the class whatever the method, its
    ceiling (a bound at or above it cannot fail)."""

    kind: ClassVar[str] = "mm_psgd"
    metric: ClassVar[str] = "gap"

    n_clients: int
    blocks: int
    cycles: int
    rounds_per_block: int
    local_steps: int
    L: float
    mu: float
    step: float
    B: float
    G: float
    anywhere: bool = False
    function_class: str = "smooth"

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)  # the fields of a frozen dataclass, checked
        for name in ("n_clients", "blocks", "cycles", "rounds_per_block", "local_steps"):
            set_(name, checked_int(name, getattr(self, name), 1))
        L, mu = checked_class(self.L, self.mu)
        if mu == 0:
            raise PEPError("mu: Theorem 1's class is mu-strongly convex with mu > 0, got 0")
        set_("L", L)
        set_("mu", mu)
        for name in ("step", "B", "G"):
            set_(name, checked_real(name, getattr(self, name), 0.0, strict=True))
        if not isinstance(self.anywhere, bool):
            raise PEPError(f"anywhere: expected True or False, got {self.anywhere!r}")
        if self.function_class not in FUNCTION_CLASSES:
            raise PEPError(f"function_class: expected one of {FUNCTION_CLASSES}, got {self.function_class!r}")

    @property
    def rounds(self) -> int:
        """R = C M E rounds."""
        return self.cycles * self.blocks * self.rounds_per_block

    @property
    def total_steps(self) -> int:
        """T = C M E I local steps."""
        return self.rounds * self.local_steps

    def block_of_round(self, r: int) -> int:
        """The block of round r (0-based): (r // E) mod M."""
        return (r // self.rounds_per_block) % self.blocks

    def unit_length(self) -> tuple[MMPSGDPEP, float]:
        """The setting with B = 1 and B: x -> x / B keeps the class (L, mu) and the method, scales G by 1/B and
        the metric by 1/B^2."""
        return dataclasses.replace(self, B=1.0, G=self.G / self.B), self.B

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON, with ``kind``."""
        return {"kind": self.kind, "n_clients": self.n_clients, "blocks": self.blocks, "cycles": self.cycles,
                "rounds_per_block": self.rounds_per_block, "local_steps": self.local_steps, "L": self.L, "mu": self.mu,
                "step": self.step, "B": self.B, "G": self.G, "anywhere": self.anywhere,
                "function_class": self.function_class}


def reduced_clients(setting: MMPSGDPEP) -> int:
    """The clients per block of the program that has ``setting``'s worst case (module docstring): 1 when I = 1
    or N = 1, else 2."""
    return 1 if setting.local_steps == 1 or setting.n_clients == 1 else 2


@dataclass(frozen=True)
class BlockCyclicProgram(Program):
    """A ``Program`` with one deviation block per data block (``deviations``), every block's function
    (``functions``; ``function`` is block 1's) and, for the quadratic class, each one's minimiser (point, value).
    ``iterates``: the global models x_0, ..., x_R (with ``anywhere``, the first predictor alone)."""

    deviations: tuple[tuple[Point, ...], ...] = ()
    functions: tuple[Any, ...] = ()
    minimisers: tuple[tuple[Point, Any], ...] = ()

    @property
    def blocks(self) -> tuple[tuple[Point, ...], ...]:
        """The common block, then one deviation block per data block (empty ones dropped)."""
        return (self.common, *(block for block in self.deviations if block))


def mm_psgd_program(setting: MMPSGDPEP) -> BlockCyclicProgram:
    """The reduced program of ``setting`` (module docstring): maximise (1/M) sum_m f_m(x~_m) - f_m(x*)."""
    from PEPit import PEP, Expression, Point
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()  # resets PEPit's leaf counters
    M, deviating = setting.blocks, reduced_clients(setting) > 1
    functions = [problem.declare_function(SmoothStronglyConvexFunction, mu=setting.mu, L=setting.L) for _ in range(M)]
    common: list[Point] = []
    deviations: list[list[Point]] = [[] for _ in range(M)]
    constraints: list[Any] = []

    def zero() -> Point:
        return Point(is_leaf=False, decomposition_dict={})

    def shared() -> Point:
        common.append(Point())
        return common[-1]

    def deviation(m: int) -> Point:
        if not deviating:
            return zero()
        deviations[m].append(Point())
        return deviations[m][-1]

    def in_ball(x: Point) -> None:
        constraints.append(x ** 2 <= setting.B ** 2)

    x_star = shared()
    in_ball(x_star)
    parts = [shared() for _ in range(M - 1)]
    parts.append(zero() - sum(parts, zero()))  # sum_m grad F_m(x*) = 0: the common parts sum to zero
    for f, part, m in zip(functions, parts, range(M)):
        f.add_point((x_star, part + deviation(m), Expression(is_leaf=False, decomposition_dict={})))  # f_m(x*) = 0
    if M > 1:  # x_m* = argmin F_m: the gradient's common part (grad F_m(x_m*)) is zero
        for m, f in enumerate(functions):
            x_m = shared()
            in_ball(x_m)
            f.add_point((x_m, deviation(m), Expression()))
    x = shared()
    in_ball(x)
    iterates = [x]
    sums, counts = [zero() for _ in range(M)], [0] * M
    for r in range(0 if setting.anywhere else setting.rounds):
        m = setting.block_of_round(r)
        y, move = x, zero()
        for e in range(setting.local_steps):
            mean = shared()
            gradient = mean + deviation(m)
            if e > 0:
                in_ball(y)
            functions[m].add_point((y, gradient, Expression()))
            y = y - setting.step * gradient
            move = move + setting.step * mean
        in_ball(y)  # client 1's local model at the communication iteration
        x = x - move
        iterates.append(x)
        sums[m], counts[m] = sums[m] + x, counts[m] + 1
    objective = Expression(is_leaf=False, decomposition_dict={})
    for m, f in enumerate(functions):
        value = Expression()
        predictor = x if setting.anywhere else sums[m] / counts[m]
        if setting.anywhere and m < M - 1:
            x = shared()
            in_ball(x)
        f.add_point((predictor, shared() + deviation(m), value))
        objective = objective + value / M
    lmis, minimisers = [], []
    for m, f in enumerate(functions):
        constraints += [g ** 2 <= setting.G ** 2 for _, g, _ in f.list_of_points]
        if setting.function_class == "quadratic":  # client 1's own minimiser: a common and a deviation part
            from .quadratic import quadratic_conditions

            minimisers.append((shared() + deviation(m), Expression()))
            equalities, T = quadratic_conditions(f.list_of_points, minimisers[-1], setting.L, setting.mu)
            constraints += equalities
            lmis.append(T)
        else:
            f.set_class_constraints()
            constraints += f.list_of_class_constraints
    return BlockCyclicProgram(tuple(common), (), tuple(constraints), objective, functions[0], tuple(iterates),
                              tuple(lmis),
                              deviations=tuple(tuple(block) for block in deviations), functions=tuple(functions),
                              minimisers=tuple(minimisers))
