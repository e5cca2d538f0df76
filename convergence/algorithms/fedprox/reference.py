"""FedProx's plain-NumPy reference path: the local-SGD reference loop (``local_sgd_reference``) with the
proximal term mu_prox (w_k - w_g) added to every local gradient, dense on all d coordinates
(no support trick), vectorised over clients. It is the correctness reference of
``kernel.fedprox_kernel``: the same trajectory from the same seed (the same counter-based
minibatches)."""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem

from ..local_sgd_reference import local_sgd_reference
from .config import FedProxConfig

__all__ = ["fedprox_reference"]


def fedprox_reference(
    problem: FederatedProblem, config: FedProxConfig, seed: int, w0: np.ndarray, w_star: np.ndarray, track: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed from w0 (d,); returns (records (n_rec, d), stats [max ||w - w*||^2, max ||g||^2],
    diverged round or -1), as ``fedprox_kernel`` does (stats are meaningful only when ``track``)."""
    return local_sgd_reference(problem, config.fedavg_config, seed, w0, w_star, track, mu_prox=config.mu_prox)
