"""Clients that hold identical data: the setting of Yu, Yang, Zhu (AAAI 2019) Theorem 1.

Parallel restarted SGD is analysed for workers that sample from one distribution, so every
worker's stochastic gradient is unbiased for the global f. With finite data that is exact only
when every client holds the same rows: here one ``random_quadratic`` client (mu-strongly convex,
L-smooth with the exact constants) is replicated to N clients with weights 1/N, so F_k = F.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind
from .spec import FamilySpec
from .validation import check_int, check_problem_size, check_real
from .quadratic import random_quadratic

__all__ = ["identical_quadratic"]


def identical_quadratic(
    n_clients: int = 8, dim: int = 10, mu: float = 0.1, L: float = 10.0, samples_per_client: int = 50, seed: int = 0
) -> FederatedProblem:
    """N clients, each with the same ``samples_per_client`` least-squares rows in R^dim."""
    N = check_int("n_clients", n_clients, minimum=1)
    d = check_int("dim", dim, minimum=2)
    n = check_int("samples_per_client", samples_per_client, minimum=d)
    check_problem_size("n_clients, dim, samples_per_client", N * n, d, d)
    base = random_quadratic(1, dim, mu, L, 0.0, samples_per_client, seed)
    spec = FamilySpec(
        "identical_quadratic",
        {"n_clients": N, "dim": d, "mu": check_real("mu", mu), "L": check_real("L", L), "samples_per_client": n,
         "seed": check_int("seed", seed)},
    )
    return FederatedProblem(
        name=f"identical_quadratic(N={N}, d={dim}, seed={seed})",
        loss=LossKind.LEAST_SQUARES,
        X=np.tile(base.X, (N, 1)),
        y=np.tile(base.y, N),
        offsets=np.arange(N + 1) * n,
        weights=np.full(N, 1.0 / N),
        mu=base.mu,
        spec=spec,
        notes="identical data on every client (Yu et al. 2019, Thm 1)",
    )
