"""The second, independent solver for exact optima: cvxpy with the Clarabel interior-point solver.

Each row-weighted objective G(w) = sum_i r_i loss_i(w) + (mu/2) ||w||^2 + c (see ``_rows``) is
written with cvxpy atoms (each model's ``cvxpy_data_term``), so that cvxpy's own canonicalisation
(second-order and exponential cones) evaluates it, not the model's NumPy loss code:

* least squares: 1/2 ||diag(sqrt(r)) (X w - y)||^2                    (``sum_squares``);
* logistic:      r' log(1 + exp(s * (X w))), s_i = 1 - 2 y_i             (``logistic``);
* softmax:       r' logsumexp_rows(X W - (X W)_{i, y_i} 1')              (``log_sum_exp``).

The last two use the identities log(1 + e^z) - y z = log(1 + e^{(1 - 2y) z}) for y in {0, 1} and
logsumexp(z) - z_y = logsumexp(z - z_y 1): each term is then a nonnegative margin loss instead of a
difference of two large terms, which lets Clarabel reach ~1e-11 relative accuracy in the minimiser
where the direct form (loss minus a linear term) stalls near 1e-6 (measured on the test problems).

Clarabel runs with tolerances tightened from its defaults (1e-8) to ``_TOL``. When it stalls short
of them it stops with status ``optimal_inaccurate`` (Clarabel's "AlmostSolved"); the optimal value
is then usually still accurate to ~1e-13 but the minimiser may not be, which ``optimum`` takes into
account. Cost: every interior-point iteration factors a KKT system whose fill is that of the
softmax Hessian (each of the n rows couples all f*C weights), so a softmax cross-check is slow:
about a minute for 1868 rows x 610 weights on a 2-core machine, against ~0.1 s for Newton.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

from ._rows import RowObjective

__all__ = ["cvxpy_minimise"]

_TOL = 1e-12
_SETTINGS = {"tol_gap_abs": _TOL, "tol_gap_rel": _TOL, "tol_feas": _TOL}


def cvxpy_minimise(objective: RowObjective) -> tuple[np.ndarray, float, str]:
    """(argmin, min value including the constant, solver status) of ``objective`` via cvxpy."""
    w, data = objective.model.cvxpy_data_term(objective.X, objective.y, objective.r)
    problem = cp.Problem(cp.Minimize(data + 0.5 * objective.mu * cp.sum_squares(w)))
    with warnings.catch_warnings():  # the status returned below says whether it is inaccurate
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            problem.solve(solver=cp.CLARABEL, **_SETTINGS)
        except cp.error.SolverError as error:
            return np.full(objective.dim, np.nan), float("nan"), f"solver error: {error}"
    if w.value is None:
        return np.full(objective.dim, np.nan), float("nan"), str(problem.status)
    w_opt = np.asarray(w.value, dtype=np.float64).reshape(-1)
    return w_opt, float(problem.value) + objective.constant, str(problem.status)
