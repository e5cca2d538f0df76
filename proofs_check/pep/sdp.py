"""A built program (``program.Program``) as a semidefinite program, solved, with its accuracy measured.

The program's unknowns are the Gram matrices of its blocks (``Program.blocks``: two for FedAvg's
program, G_c (n_c x n_c) and G_d (n_d x n_d); one more per data block for MM-PSGD's), each positive
semidefinite, and the values of its functions at their points (a vector v). Every
scalar constraint of the program is affine in (G_c, G_d, v) (an inner product of two leaves of one
block is an entry of that block's Gram matrix; of leaves of two blocks, zero: the blocks are
orthogonal), so with z = (vec G_c, vec G_d, v) the SDP is

    maximise  c'z + c_0   subject to  A z + b <= 0,  A_eq z + b_eq = 0,  T_k(z) >= 0,  G_c >= 0,  G_d >= 0

(>= 0 on a matrix: PSD; the equalities and the affine matrices T_k are the quadratic class's, ``quadratic``).

A and c are read from PEPit's expressions (their ``decomposition_dict``) into one sparse matrix,
so cvxpy compiles one vectorised constraint instead of one per scalar (PEPit's own cvxpy wrapper
builds a dense n x n weight matrix per constraint: its compilation took longer than the solve).

Clarabel (interior point, through cvxpy) solves it with ``SOLVER_TOLERANCE`` as its feasibility
and gap tolerances and one thread (so the result is the same on any machine). Its dual gives, with
Lagrange multipliers y >= 0, nu, Lambda_k >= 0 and S_c, S_d >= 0, the certificate
c - A'y - A_eq'nu + sum_k M_k'Lambda_k + (S_c, S_d, 0) = 0 (T_k(z) = M_k z + t_k) with value
c_0 - b'y - b_eq'nu + sum_k <Lambda_k, t_k>, an upper bound on the worst case when it holds. The accuracy is measured on the
solution returned, whatever the solver says (``SDPSolution``):

* primal residual: the largest violation of the scalar constraints and the most negative eigenvalue
  of G_c, G_d and the T_k, over max(1, max |b|, max |b_eq|);
* dual residual: the largest entry of the certificate's left side (symmetrised), a negative
  multiplier y or eigenvalue of S, Lambda, over max(1, max |c|);
* duality gap: |primal value - dual value| / max(|primal value|, |dual value|).

The solution is **solved** when cvxpy reports "optimal" or "optimal_inaccurate" and the largest of
the three is at most ``ACCURACY_TOLERANCE``; anything else (an iteration limit, a solver failure,
a larger residual) is not, and a check reading it is INCONCLUSIVE.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .program import Program

__all__ = ["ACCURACY_TOLERANCE", "SOLVED_STATUSES", "SOLVER", "SOLVER_TOLERANCE", "SDPSolution", "solve_program"]

SOLVER = "CLARABEL"
SOLVER_TOLERANCE = 1e-7
"""Clarabel's tol_feas, tol_gap_abs and tol_gap_rel (its defaults, 1e-8, stall on these programs at
residuals of 1e-7 to 1e-8: it then reports "almost solved")."""
ACCURACY_TOLERANCE = 1e-4
"""The largest accuracy (residuals and duality gap, module docstring) of a solution counted as solved.
The relative duality gap is what limits it: Clarabel stops on an absolute gap of SOLVER_TOLERANCE, so a
small worst case (F(x_T) - F* = 3e-3 at E = 8, T = 32) ends with a relative gap of 2e-5."""
SOLVED_STATUSES = ("optimal", "optimal_inaccurate")
"""cvxpy's statuses under which a solution is measured; any other status is not solved."""
DEFAULT_MAX_ITER = 200
"""Clarabel's own default iteration limit."""


class SolverAccuracy:
    """What a solved program's record (``SDPSolution``, ``worst_case.WorstCase``) derives from its
    ``status``, ``primal_residual``, ``dual_residual`` and ``duality_gap``."""

    status: str
    primal_residual: float
    dual_residual: float
    duality_gap: float

    @property
    def accuracy(self) -> float:
        """The largest of the primal residual, the dual residual and the duality gap (NaN: no solution)."""
        return max(self.primal_residual, self.dual_residual, self.duality_gap)

    @property
    def solved(self) -> bool:
        """Solved to tolerance: a solved status and accuracy <= ACCURACY_TOLERANCE."""
        return self.status in SOLVED_STATUSES and math.isfinite(self.accuracy) and self.accuracy <= ACCURACY_TOLERANCE


@dataclass(frozen=True)
class SDPSolution(SolverAccuracy):
    """What the solver returned and how accurate it is (module docstring). ``value`` is the primal
    objective (NaN when the solver returned no point), ``dual_value`` the dual's; ``gram`` the two
    blocks' Gram matrices and ``values`` client 1's function values, ``values[k]`` that of PEPit's leaf
    ``Expression`` numbered ``value_counters[k]``; ``seconds`` and ``cpu_seconds`` the wall and process CPU time of the
    assembly and the solve; ``iterations`` the solver's. ``gram`` has one matrix per block of
    ``Program.blocks``."""

    status: str
    value: float
    dual_value: float
    primal_residual: float
    dual_residual: float
    duality_gap: float
    iterations: int
    seconds: float
    cpu_seconds: float
    gram: tuple[np.ndarray, ...] = field(repr=False)
    values: np.ndarray = field(repr=False)
    value_counters: tuple[int, ...] = field(repr=False, default=())


class _Layout:
    """The columns of z: each leaf Point's block and index, each leaf Expression's column."""

    def __init__(self, program: Program) -> None:
        blocks = program.blocks
        self.block_of = {p.counter: (k, i) for k, block in enumerate(blocks) for i, p in enumerate(block)}
        self.sizes = tuple(len(block) for block in blocks)
        self.offsets = tuple(sum(n * n for n in self.sizes[:k]) for k in range(len(blocks)))
        self.value_column: dict[int, int] = {}
        self.value_leaves: list[Any] = []

    @property
    def gram_columns(self) -> int:
        return sum(n * n for n in self.sizes)

    def row(self, expression: Any) -> tuple[list[int], list[float], float]:
        """(columns, coefficients, constant) of an affine PEPit expression."""
        from PEPit import Expression

        terms = {expression: 1.0} if expression.get_is_leaf() else expression.decomposition_dict
        columns, coefficients, constant = [], [], 0.0
        for key, weight in terms.items():
            if isinstance(key, tuple):
                (block, i), (other, j) = self.block_of[key[0].counter], self.block_of[key[1].counter]
                if block == other:  # leaves of different blocks are orthogonal
                    columns.append(self.offsets[block] + i * self.sizes[block] + j)
                    coefficients.append(float(weight))
            elif isinstance(key, Expression):
                if key.counter not in self.value_column:
                    self.value_column[key.counter] = len(self.value_leaves)
                    self.value_leaves.append(key)
                columns.append(-1 - self.value_column[key.counter])  # placed after the Gram columns below
                coefficients.append(float(weight))
            else:
                constant += float(weight)
        return columns, coefficients, constant


def _matrix(layout: _Layout, rows: list[tuple[list[int], list[float], float]]):
    """The sparse matrix and constant vector of ``rows`` (value columns after the Gram columns)."""
    import scipy.sparse as sp

    width = layout.gram_columns + len(layout.value_leaves)
    I, J, V = [], [], []
    for k, (columns, coefficients, _) in enumerate(rows):
        I += [k] * len(columns)
        J += [c if c >= 0 else layout.gram_columns - 1 - c for c in columns]
        V += coefficients
    return sp.csr_matrix((V, (I, J)), shape=(len(rows), width)), np.array([r[2] for r in rows], dtype=float)


def solve_program(program: Program, max_iter: int = DEFAULT_MAX_ITER) -> SDPSolution:
    """Assemble and solve ``program`` (module docstring); never raises for a solver failure (its status
    says it, with NaN figures)."""
    import cvxpy as cp

    start, cpu_start = time.perf_counter(), time.process_time()
    layout = _Layout(program)
    kinds = [c.equality_or_inequality for c in program.constraints]
    rows = [layout.row(c.expression) for c in program.constraints]
    lmi_rows = [[layout.row(entry) for entry in np.asarray(T).ravel()] for T in program.lmis]
    objective_row = layout.row(program.objective)  # every row read: the value columns are all known now
    A, b = _matrix(layout, [r for r, kind in zip(rows, kinds) if kind == "inequality"])
    A_eq, b_eq = _matrix(layout, [r for r, kind in zip(rows, kinds) if kind == "equality"])
    lmis = [_matrix(layout, entries) for entries in lmi_rows]
    c_matrix, (c0,) = _matrix(layout, [objective_row])
    c = np.asarray(c_matrix.toarray()).ravel()
    blocks = [cp.Variable((n, n), symmetric=True) for n in layout.sizes if n > 0]
    values = cp.Variable(len(layout.value_leaves))
    z = cp.hstack([cp.vec(block, order="C") for block in blocks] + [values])
    inequalities = A @ z + b <= 0
    equalities = [A_eq @ z + b_eq == 0] if A_eq.shape[0] else []
    matrices = [cp.reshape(M @ z + t, (len(T), len(T)), order="C") for (M, t), T in zip(lmis, program.lmis)]
    cones = [block >> 0 for block in blocks] + [(T + T.T) / 2 >> 0 for T in matrices]
    problem = cp.Problem(cp.Maximize(c @ z + c0), [inequalities, *equalities, *cones])
    try:
        with warnings.catch_warnings():  # cvxpy warns of an inaccurate solution: the status and accuracy say it
            warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
            problem.solve(solver=SOLVER, max_iter=max_iter, max_threads=1, tol_feas=SOLVER_TOLERANCE,
                          tol_gap_abs=SOLVER_TOLERANCE, tol_gap_rel=SOLVER_TOLERANCE)
        status = str(problem.status)
    except cp.error.SolverError:
        status = "solver_error"
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    counters = tuple(leaf.counter for leaf in layout.value_leaves)
    iterations = int(getattr(problem.solver_stats, "num_iters", None) or 0) if problem.solver_stats else 0
    if status not in SOLVED_STATUSES or z.value is None or inequalities.dual_value is None:
        nan = math.nan
        empty = tuple(np.full((n, n), nan) for n in layout.sizes)
        return SDPSolution(status, nan, nan, nan, nan, nan, iterations, seconds, cpu_seconds, empty,
                           np.full(len(layout.value_leaves), nan), counters)
    z_value = np.asarray(z.value)
    y = np.asarray(inequalities.dual_value).ravel()
    nu = np.asarray(equalities[0].dual_value).ravel() if equalities else np.zeros(0)
    duals = [np.asarray(cone.dual_value) for cone in cones]
    lmi_duals = duals[len(blocks):]
    primal = float(c @ z_value + c0)
    dual = float(c0 - b @ y - b_eq @ nu + sum(float(t @ D.ravel()) for (_, t), D in zip(lmis, lmi_duals)))
    grams = [np.asarray(block.value) for block in blocks]
    lmi_values = [(M @ z_value + t).reshape(len(D), len(D)) for (M, t), D in zip(lmis, lmi_duals)]
    primal_misfit = ([float(np.max(A @ z_value + b, initial=0.0)), float(np.max(np.abs(A_eq @ z_value + b_eq), initial=0.0))]
                     + [-float(np.linalg.eigvalsh((m + m.T) / 2)[0]) for m in grams + lmi_values])
    data_scale = max(1.0, float(np.max(np.abs(np.concatenate([b, b_eq])), initial=0.0)))
    primal_residual = max(0.0, *primal_misfit) / data_scale
    stationarity = c - A.T @ y - A_eq.T @ nu + sum((M.T @ D.ravel() for (M, _), D in zip(lmis, lmi_duals)),
                                                    np.zeros_like(c))
    misfit, offset = [-float(np.min(y, initial=0.0))], 0
    for n, S in zip([n for n in layout.sizes if n > 0], duals):
        block = stationarity[offset:offset + n * n].reshape(n, n)
        misfit.append(float(np.max(np.abs((block + block.T) / 2 + S))))
        offset += n * n
    misfit.append(float(np.max(np.abs(stationarity[offset:]), initial=0.0)))
    misfit += [-float(np.linalg.eigvalsh(D)[0]) for D in duals]
    dual_residual = max(0.0, *misfit) / max(1.0, float(np.max(np.abs(c), initial=0)))
    scale = max(abs(primal), abs(dual))
    gap = abs(primal - dual) / scale if scale > 0 else 0.0
    solved_grams = iter(grams)
    gram = tuple(next(solved_grams) if n else np.zeros((0, 0)) for n in layout.sizes)
    return SDPSolution(status, primal, dual, primal_residual, dual_residual, gap, iterations, seconds,
                       cpu_seconds, gram, np.asarray(values.value, dtype=float), counters)
