"""FedProx's engine: one seed through the Numba kernel (``kernel``) or the NumPy reference path
(``reference``). Everything else is FedAvg's (``fedavg.engine``), applied to the FedAvg config
of the same schedule (``FedProxConfig.fedavg_config``): the problem it runs on, the check of the
initial model against it, the per-seed records (``FedAvgSeed``), the extras (``FedAvgExtras``:
max ||w - w*||^2 over every local iterate and max ||g||^2 over every realised gradient of the
local objective h_k, prox term included) and the memory estimate (the prox term adds one
support-sized buffer). A FedProx run keeps no per-step trace: the traces' readers (the lemma
checks, eq. 13 of Li et al.) are FedAvg's, so ``plan`` refuses ``trace=True``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem

from ...budget import Workload
from ...config import ConfigError
from ..fedavg import FedAvgEngine, FedAvgSeed
from .config import FedProxConfig
from .kernel import fedprox_kernel
from .reference import fedprox_reference

__all__ = ["FEDPROX", "FedProxEngine", "FedProxPlan"]


@dataclass(frozen=True)
class FedProxPlan:
    """A FedProx config as it runs: the config and whether to track; its record rounds are the
    config's, and it is never traced."""

    config: FedProxConfig
    track: bool
    trace = False

    @property
    def record_rounds(self) -> tuple[int, ...]:
        """The config's record rounds (in [0, rounds], checked by the config)."""
        return self.config.record_rounds


class FedProxEngine(FedAvgEngine):
    """FedProx with full participation (``FedProxConfig``) on a FederatedProblem."""

    config_type = FedProxConfig

    def plan(self, problem: FederatedProblem, config: FedProxConfig, track: bool = False,
             trace: bool = False) -> FedProxPlan:
        if trace:
            raise ConfigError("trace: FedProx keeps no per-step trace (only FedAvg's and the block-cyclic "
                              "algorithms' traces have readers); run it with trace=False")
        if not isinstance(problem, FederatedProblem):
            raise ConfigError(f"problem: FedProx runs on linear models (a FederatedProblem); {problem.name!r} is a "
                              f"{type(problem).__name__}")
        super().plan(problem, config.fedavg_config, track)  # FedAvg's checks of the config against the problem
        return FedProxPlan(config, track)

    def run_seed(
        self, problem: FederatedProblem, plan: FedProxPlan, seed: int, w_star: np.ndarray | None, engine: str
    ) -> FedAvgSeed:
        config = plan.config
        w0 = np.array(config.initial_model, dtype=np.float64) if config.initial_model else np.zeros(problem.dim)
        path = fedprox_reference if engine == "numpy" else fedprox_kernel
        w_star = np.ascontiguousarray(w0 if w_star is None else w_star, dtype=np.float64)  # None: anchored at w0
        records, stats, diverged = path(problem, config, seed, w0, w_star, plan.track)
        return FedAvgSeed(records, np.array(stats[0]), np.array(stats[1]), np.array(diverged, dtype=np.int64))

    def memory_bytes(self, problem: FederatedProblem, config: FedProxConfig, engine: str, trace: bool = False) -> int:
        """FedAvg's estimate for the same schedule (``FedAvgEngine.memory_bytes``)."""
        return super().memory_bytes(problem, config.fedavg_config, engine, trace)

    def workload(self, problem: FederatedProblem, config: FedProxConfig, engine: str, track: bool = False,
                 trace: bool = False) -> Workload:
        """FedAvg's estimate for the same schedule (``FedAvgEngine.workload``)."""
        return super().workload(problem, config.fedavg_config, engine, track, trace)


FEDPROX = FedProxEngine()
