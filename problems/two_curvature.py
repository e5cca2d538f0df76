"""Two kinds of clients, a stiff and a soft one, pulling apart at the optimum: the instance on which
client drift biases FedAvg the most (Yu, Jin, Yang, ICML 2019, Theorem 3's sigma_G^2 term).

Construction (one parameter, d = 1; N even, clients alternate): client k is stiff (curvature L) for
k even and soft (curvature m = ``soft_curvature``, 0 < m < L) for k odd, with

    F_k(w) = (c_k/2) (w - w*)^2 + g_k (w - w*) + const,    c_k = L, g_k = +beta  (k even),
                                                            c_k = m, g_k = -beta  (k odd),

so F = (1/N) sum_k F_k has F'(w) = ((L + m)/2)(w - w*) and minimiser w* = ``optimum``, and at w*
every client's gradient is +-beta (``dissimilarity``): (1/N) sum_k ||grad F_k(w*) - grad F(w*)||^2 =
beta^2. Away from w*, grad F_k(w) - grad F(w) = +-((L - m)/2 (w - w*) + beta).

Why it is the extreme case. Local SGD from y with K steps of size s moves client k by about
-s k grad F_k(y) in its k-th step, so to first order in s K the average's fixed point y~ has
grad F(y~) = (s (K - 1)/2) (1/N) sum_k (A_k - c I) e_k for any c, with A_k the Hessians and e_k =
grad F_k - grad F (sum_k e_k = 0). For m I <= A_k <= L I and c = (L + m)/2, Cauchy-Schwarz bounds
its norm by (s (K - 1)/2) ((L - m)/2) sigma_G, with equality here (each e_k an eigenvector of A_k,
stiff and soft e_k opposite): ||grad F(y~)|| = s (K - 1) (L - m) beta / 4, the largest drift bias any
problem with these L, m and sigma_G^2 can have at first order.

Rows. Client k holds n = ``samples_per_client`` (even) rows x_j = sqrt(c_k) and targets y_j =
sqrt(c_k) (w* - g_k / c_k) + noise z_j with z_j = (-1)^j, so that the least-squares client
(1/(2n)) sum_j (x_j w - y_j)^2 is F_k above (mean z = 0), and the stochastic gradient of one row,
x_j (x_j w - y_j) = grad F_k(w) - sqrt(c_k) noise z_j, has variance c_k noise^2 at every w (a
minibatch of b rows drawn with replacement: c_k noise^2 / b). Weights 1/N; no l2 term (mu = 0:
F_k is c_k-strongly convex through its rows). The clients of the N-client problem are the first N
of any larger one.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind, ProblemError
from .spec import FamilySpec
from .validation import check_int, check_problem_size, check_real

__all__ = ["two_curvature_quadratic"]


def two_curvature_quadratic(
    n_clients: int = 2,
    L: float = 1.0,
    soft_curvature: float = 0.1,
    dissimilarity: float = 1.0,
    optimum: float = 0.0,
    noise: float = 0.0,
    samples_per_client: int = 2,
) -> FederatedProblem:
    """N one-parameter least-squares clients alternating curvature L and m (module docstring).

    Shapes: X (N n, 1), y (N n,), d = 1. Requires N even, 0 < m < L, beta >= 0, noise >= 0 and n
    even; ProblemError naming the field otherwise.
    """
    N = check_int("n_clients", n_clients, minimum=2)
    if N % 2:
        raise ProblemError(f"n_clients: must be even (stiff and soft clients alternate), got {N}")
    L = check_real("L", L, 0.0, strict=True)
    m = check_real("soft_curvature", soft_curvature, 0.0, strict=True)
    if m >= L:
        raise ProblemError(f"soft_curvature: must be below L = {L:g}, got {m:g}")
    beta = check_real("dissimilarity", dissimilarity, 0.0)
    w_star = check_real("optimum", optimum)
    noise = check_real("noise", noise, 0.0)
    n = check_int("samples_per_client", samples_per_client, minimum=2)
    if n % 2:
        raise ProblemError(f"samples_per_client: must be even (the noise pattern (-1)^j has mean 0), got {n}")
    check_problem_size("n_clients, samples_per_client", N * n, 1, 1)
    curvature = np.where(np.arange(N) % 2 == 0, L, m)  # (N,)
    pull = np.where(np.arange(N) % 2 == 0, beta, -beta)  # g_k = grad F_k(w*)
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)  # z_j = (-1)^j
    X = np.repeat(np.sqrt(curvature), n)[:, None]
    y = (np.sqrt(curvature) * (w_star - pull / curvature))[:, None] + noise * signs[None, :]
    params = {"n_clients": N, "L": L, "soft_curvature": m, "dissimilarity": beta, "optimum": w_star, "noise": noise,
              "samples_per_client": n}
    return FederatedProblem(
        name=f"two_curvature_quadratic(N={N}, L={L:g}, m={m:g}, beta={beta:g}, w*={w_star:g}, noise={noise:g})",
        loss=LossKind.LEAST_SQUARES,
        X=X,
        y=y.reshape(-1),
        offsets=np.arange(N + 1) * n,
        weights=np.full(N, 1.0 / N),
        mu=0.0,
        spec=FamilySpec("two_curvature_quadratic", params),
        notes="Exact: L-smooth (max_k L_k = L), sigma_G^2(w*) = beta^2, minibatch variance c_k noise^2 / b at every w.",
    )
