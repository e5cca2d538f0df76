"""FedProx's engine: one seed through the Numba kernel (``kernel``) or the NumPy reference path
(``reference``). Everything else is FedAvg's (``fedavg.engine``): the problem it runs on, the
per-seed records (``FedAvgSeed``), the extras (``FedAvgExtras``: max ||w - w*||^2 over every
local iterate and max ||g||^2 over every realised gradient of the local objective h_k, prox
term included) and the memory estimate (the prox term adds one support-sized buffer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem

from ..fedavg.engine import FedAvgEngine, FedAvgSeed
from .config import FedProxConfig
from .kernel import fedprox_kernel
from .reference import fedprox_reference

__all__ = ["FEDPROX", "FedProxEngine", "FedProxPlan"]


@dataclass(frozen=True)
class FedProxPlan:
    """A FedProx config as it runs: the config and whether to track; its record rounds are the config's."""

    config: FedProxConfig
    track: bool

    @property
    def record_rounds(self) -> tuple[int, ...]:
        """The config's record rounds (in [0, rounds], checked by the config)."""
        return self.config.record_rounds


class FedProxEngine(FedAvgEngine):
    """FedProx with full participation (``FedProxConfig``) on a FederatedProblem."""

    config_type = FedProxConfig

    def plan(self, problem: FederatedProblem, config: FedProxConfig, track: bool) -> FedProxPlan:
        return FedProxPlan(config, track)

    def run_seed(
        self, problem: FederatedProblem, plan: FedProxPlan, seed: int, w_star: np.ndarray, engine: str
    ) -> FedAvgSeed:
        path = fedprox_reference if engine == "numpy" else fedprox_kernel
        w_star = np.ascontiguousarray(w_star, dtype=np.float64)
        records, stats, diverged = path(problem, plan.config, seed, np.zeros(problem.dim), w_star, plan.track)
        return FedAvgSeed(records, np.array(stats[0]), np.array(stats[1]), np.array(diverged, dtype=np.int64))


FEDPROX = FedProxEngine()
