"""The second, independent solver for exact optima: cvxpy with the Clarabel interior-point solver.

Each row-weighted objective G(w) = sum_i r_i loss_i(w) + (mu/2) ||w||^2 + c (see ``_rows``) is
written with cvxpy atoms, so that cvxpy's own canonicalisation (second-order and exponential
cones) evaluates it, not the toolkit's loss code:

* least squares: 1/2 ||diag(sqrt(r)) (X w - y)||^2            (``sum_squares``);
* logistic:      r' log(1 + exp(X w)) - (X'(r * y))' w         (``logistic``);
* softmax:       r' logsumexp_rows(X W) - <X' diag(r) Y, W>    (``log_sum_exp``; Y one-hot labels).

Clarabel runs with tolerances tightened from its defaults (1e-8) to ``_TOL`` so that the minimiser
it returns is accurate enough to confirm the Newton solution to about 1e-8 relative.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ._base import LossKind
from ._rows import RowObjective

__all__ = ["cvxpy_minimise"]

_TOL = 1e-12
_SETTINGS = {
    "tol_gap_abs": _TOL,
    "tol_gap_rel": _TOL,
    "tol_feas": _TOL,
    "tol_ktratio": 1e-10,
    "max_iter": 400,
}


def cvxpy_minimise(objective: RowObjective) -> tuple[np.ndarray, float, str]:
    """(argmin, min value including the constant, solver status) of ``objective`` via cvxpy."""
    X, y, r, mu = objective.X, objective.y, objective.r, objective.mu
    if objective.loss is LossKind.SOFTMAX:
        C = objective.n_classes
        w = cp.Variable((X.shape[1], C))
        onehot = np.eye(C)[y.astype(np.int64)]
        data = r @ cp.log_sum_exp(X @ w, axis=1) - cp.sum(cp.multiply(X.T @ (r[:, None] * onehot), w))
    else:
        w = cp.Variable(X.shape[1])
        if objective.loss is LossKind.LOGISTIC:
            data = r @ cp.logistic(X @ w) - (X.T @ (r * y)) @ w
        else:
            sqrt_r = np.sqrt(r)
            data = 0.5 * cp.sum_squares((sqrt_r[:, None] * X) @ w - sqrt_r * y)
    problem = cp.Problem(cp.Minimize(data + 0.5 * mu * cp.sum_squares(w)))
    problem.solve(solver=cp.CLARABEL, **_SETTINGS)
    if w.value is None:
        return np.full(objective.dim, np.nan), float("nan"), str(problem.status)
    return np.asarray(w.value, dtype=np.float64).reshape(-1), float(problem.value) + objective.constant, str(problem.status)
