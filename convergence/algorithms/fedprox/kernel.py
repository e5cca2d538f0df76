"""FedProx's Numba path: one seed of ``local_sgd.local_sgd_kernel`` with FedProx's mu_prox.

Each local step is w <- w - eta_t (g_k(w) + mu w + mu_prox (w - w_g)) on client k's support,
with w_g the round's global model on that support (the kernel's ``anchor``). Off its support S_k
the data gradient vanishes and a coordinate that starts the round at the global value W_j stays
s W_j, one scalar per client: from s = 1,

    s W_j - eta (mu s W_j + mu_prox (s W_j - W_j)) = [s - eta (mu s + mu_prox (s - 1))] W_j,

so s <- s - eta (mu s + mu_prox (s - 1)) = (1 - eta (mu + mu_prox)) s + eta mu_prox
(``local_steps.off_support_scale``): the prox term pulls s towards 1, where FedAvg's
s <- (1 - eta mu) s decays towards 0. The server average and the tracked statistics use s
exactly as FedAvg's kernel does.
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem

from ..participation import kernel_participation
from ..local_sgd import RoundPlan, local_sgd_seed
from ..packing import pack_clients
from .config import FedProxConfig

__all__ = ["fedprox_kernel"]


def fedprox_kernel(
    problem: FederatedProblem, config: FedProxConfig, seed: int, w0: np.ndarray, w_star: np.ndarray, track: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one seed from w0 (d,) through the Numba kernel; returns (records (n_rec, d), stats
    [max ||w - w*||^2, max ||g||^2] (meaningful only when ``track``), diverged round or -1), as
    ``fedprox_reference`` does. w_star (d,) anchors the divergence test and the tracked radius."""
    plan = RoundPlan.of(config.fedavg_config, seed, config.mu_prox)
    full = kernel_participation("full", None, problem)
    return local_sgd_seed(problem, pack_clients(problem), full, config.step_size.schedule, plan, w0, w_star, track)
