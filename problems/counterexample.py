"""The counterexample of Li et al. (ICLR 2020), Appendix C: FedAvg with E > 1 and a constant step.

Source: X. Li, K. Huang, W. Yang, S. Wang, Z. Zhang, "On the Convergence of FedAvg on Non-IID
Data", ICLR 2020, Appendix C.1 (eq. 27-30) and C.3 (eq. 31, Proposition 1); the text is in
``shared/papers/li2020_fedavg_noniid.txt``. Indices below are 1-based as in the paper.

With p > 1, N > 1 and d = N p + 1:

* eq. 28: A in R^{d x d} is tridiagonal, 2 on the diagonal and -1 beside it; b = e_1.
* eq. 29: B_k is the path-graph Laplacian on the block I_k = {(k-1)p+1, ..., kp+1}: 1 at the two
  ends of the block, 2 inside it, -1 between neighbours of the block, 0 elsewhere.
* A_1 = B_1 + E_{1,1}, A_k = B_k (2 <= k <= N-1), A_N = B_N + E_{d,d}; b_1 = e_1, b_k = 0 (k >= 2);
  so sum_k A_k = A and sum_k b_k = b.
* eq. 30: F_k(w) = 1/2 [w'A_k w - 2 b_k'w + mu ||w||^2]; eq. 27: F = (1/N) sum_k F_k, p_k = 1/N.

Proposition 1.3 factors A_k = X_k'X_k with rows supported on I_k: the incidence rows e_i - e_{i+1}
(i, i+1 in I_k, p of them; sum of their outer products is B_k), plus e_1 for k = 1 and e_d for
k = N. Appendix C.3 pads every client with zero rows to n_k = p + 1 rows ("balanced"). The
toolkit's least-squares client has F_k(w) = (1/(2 n_k)) ||X~_k w - y_k||^2 + mu/2 ||w||^2 + c_k,
so the stored rows are X~_k = sqrt(n_k) X_k (then X~_k'X~_k / n_k = A_k); with
w~ = (1, ..., 1, 0, ..., 0) (p + 1 ones), Proposition 1.4 gives A_1 w~ = b_1, so the targets are
y_1 = sqrt(n_1) X_1 w~ (then X~_1'y_1 / n_1 = A_1 w~ = e_1 = b_1) and y_k = 0 otherwise.
Expanding the square, (1/(2 n_1)) ||X~_1 w - y_1||^2 = 1/2 w'A_1 w - b_1'w + ||y_1||^2/(2 n_1), so
c_1 = -||y_1||^2 / (2 n_1) = -1/2 and c_k = 0 make F_k equal eq. 30 exactly (not only up to a
constant), and F* = -(1/(2N)) b'A^{-1}b for mu = 0 matches eq. 27.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind
from .spec import FamilySpec
from .validation import check_int, check_memory, check_problem_size, check_real

__all__ = ["li_counterexample", "li_counterexample_matrices"]


def _validate(N: int, p: int) -> tuple[int, int]:
    """Check Li's standing assumptions N > 1 and p > 1 (Appendix C.1)."""
    return check_int("N", N, minimum=2), check_int("p", p, minimum=2)


def li_counterexample_matrices(N: int = 5, p: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(A_k, b_k) for k = 1..N built entry by entry from eq. 28-29 of Li et al. (2020).

    Returns ``A_list`` of shape (N, d, d) and ``b_list`` of shape (N, d), d = N p + 1, with
    A_1 = B_1 + E_{1,1}, A_k = B_k (2 <= k <= N-1), A_N = B_N + E_{d,d}, b_1 = e_1, b_k = 0.
    This is independent of the row factorisation used by :func:`li_counterexample`.
    """
    N, p = _validate(N, p)
    d = N * p + 1
    check_memory("N, p", 8 * N * d * d, f"{N} matrices {d} x {d}")
    idx = np.arange(1, d + 1)  # 1-based coordinates as in eq. 29
    i, j = idx[:, None], idx[None, :]
    A_list = np.zeros((N, d, d))
    for k in range(1, N + 1):
        lo, hi = (k - 1) * p + 1, k * p + 1
        in_block = (i >= lo) & (i <= hi) & (j >= lo) & (j <= hi)
        B = np.where((i == j) & ((i == lo) | (i == hi)), 1.0, 0.0)
        B += np.where((i == j) & (i > lo) & (i < hi), 2.0, 0.0)
        B += np.where((np.abs(i - j) == 1) & in_block, -1.0, 0.0)
        A_list[k - 1] = B
    A_list[0, 0, 0] += 1.0  # E_{1,1}
    A_list[N - 1, d - 1, d - 1] += 1.0  # E_{d,d}
    b_list = np.zeros((N, d))
    b_list[0, 0] = 1.0
    return A_list, b_list


def _factor_rows(N: int, p: int, k: int) -> np.ndarray:
    """X_k of Proposition 1.3 padded with zero rows to p + 1 rows; k is 0-based here."""
    d = N * p + 1
    start = k * p  # 0-based first coordinate of the block I_{k+1}
    rows = np.zeros((p + 1, d))
    for r in range(p):  # incidence rows e_i - e_{i+1}, i = start..start+p-1
        rows[r, start + r] = 1.0
        rows[r, start + r + 1] = -1.0
    if k == 0:
        rows[p, 0] = 1.0  # e_1: A_1 = B_1 + E_{1,1}
    elif k == N - 1:
        rows[p, d - 1] = 1.0  # e_d: A_N = B_N + E_{d,d}
    return rows  # for 2 <= k <= N-1 the last row stays zero (padding)


def li_counterexample(N: int = 5, p: int = 4, mu: float = 2e-4) -> FederatedProblem:
    """Li et al. (2020) Appendix C as a balanced least-squares federated problem.

    d = N p + 1 parameters, N clients of n_k = p + 1 rows each, p_k = 1/N, and
    F_k(w) = 1/2 [w'A_k w - 2 b_k'w + mu ||w||^2] exactly (eq. 30; see the module docstring for
    the factorisation, the sqrt(n_k) row scaling and the constant c_1 = -1/2). The defaults
    N = 5, p = 4, mu = 2e-4 are the paper's numerical illustration (Appendix C.2, Fig. 2).
    """
    N, p = _validate(N, p)
    mu = check_real("mu", mu, minimum=0.0)
    check_problem_size("N, p", N * (p + 1), N * p + 1, N * p + 1)
    n_k = p + 1
    d = N * p + 1
    X_paper = [_factor_rows(N, p, k) for k in range(N)]
    w_tilde = np.zeros(d)
    w_tilde[: p + 1] = 1.0  # Proposition 1.4
    y = np.zeros((N, n_k))
    y[0] = np.sqrt(n_k) * (X_paper[0] @ w_tilde)
    constants = np.zeros(N)
    constants[0] = -(y[0] @ y[0]) / (2.0 * n_k)
    return FederatedProblem(
        name=f"li_counterexample(N={N}, p={p}, mu={mu:g})",
        loss=LossKind.LEAST_SQUARES,
        X=np.sqrt(n_k) * np.vstack(X_paper),
        y=y.reshape(-1),
        offsets=np.arange(N + 1) * n_k,
        weights=np.full(N, 1.0 / N),
        mu=mu,
        constants=constants,
        spec=FamilySpec("li_counterexample", {"N": N, "p": p, "mu": mu}),
        notes="Li et al., ICLR 2020, Appendix C (eq. 27-30, Proposition 1); Theorems 4-5.",
    )
