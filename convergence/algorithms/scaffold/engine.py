"""SCAFFOLD's engine: one seed through the shared local-SGD loop, the Numba kernel
(``local_sgd.local_sgd_seed`` with ``kernel.ScaffoldState``) or the NumPy reference
(``local_sgd_reference`` with ``reference.ScaffoldStateNP``). Everything else is FedAvg's
(``fedavg.FedAvgEngine``), applied to the FedAvg config of the same schedule
(``ScaffoldConfig.fedavg_config``): the problem it runs on, the checks of the initial model and of
K against it, the per-seed records (``FedAvgSeed``), the extras (``FedAvgExtras``: max ||w - w*||^2
over every local iterate and max ||g||^2 over every corrected direction lambda_k grad h_k - c_k + c
a client stepped along) and the work estimate; the memory estimate adds the control variates.
A SCAFFOLD run keeps no per-step trace (the traces' readers are FedAvg's lemma checks).
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem, ImageClassificationProblem

from ...budget import Workload
from ...config import ConfigError
from ...resources import FLOAT_BYTES
from ..fedavg import FedAvgEngine, FedAvgPlan, FedAvgSeed
from ..local_models import local_model
from ..local_sgd import RoundPlan, local_sgd_seed
from ..local_sgd_reference import local_sgd_reference
from ..participation import kernel_participation
from .config import ScaffoldConfig
from .kernel import ScaffoldState
from .reference import ScaffoldStateNP

__all__ = ["SCAFFOLD", "ScaffoldEngine"]

Problem = FederatedProblem | ImageClassificationProblem
"""The problems SCAFFOLD runs on: linear models, and CNNs."""


class ScaffoldEngine(FedAvgEngine):
    """SCAFFOLD (``ScaffoldConfig``: full participation or a sampling scheme) on a FederatedProblem
    (linear models) or a CNN's ImageClassificationProblem, the model chosen once
    (``local_models.local_model``) as for FedAvg."""

    config_type = ScaffoldConfig

    def plan(self, problem: Problem, config: ScaffoldConfig, track: bool = False, trace: bool = False) -> FedAvgPlan:
        if trace:
            raise ConfigError("trace: SCAFFOLD keeps no per-step trace (only FedAvg's and the block-cyclic "
                              "algorithms' traces have readers); run it with trace=False")
        super().plan(problem, config.fedavg_config, track)  # FedAvg's checks of the schedule against the problem
        return FedAvgPlan(config, config.record_rounds, track)

    def run_seed(
        self, problem: Problem, plan: FedAvgPlan, seed: int, w_star: np.ndarray | None, engine: str
    ) -> FedAvgSeed:
        config: ScaffoldConfig = plan.config
        model = local_model(problem)
        w0 = model.start(config.initial_model, seed)
        w_star = np.ascontiguousarray(w0 if w_star is None else w_star, dtype=np.float64)  # None: anchored at w0
        if engine == "numpy":
            state = ScaffoldStateNP(problem.weights, model.shape, config.control_variates)
            records, stats, diverged = local_sgd_reference(problem, config, seed, w0, w_star, plan.track, state=state)
        else:
            scheme = kernel_participation(config.participation, config.participants, problem)
            state = ScaffoldState.zeros(problem.n_clients, problem.dim, config.control_variates)
            dense = config.control_variates != "zero"  # the correction moves every coordinate (kernel docstring)
            records, stats, diverged = local_sgd_seed(problem, model.kernel_clients(config.batch_size, dense), scheme,
                                                      config.step_size.schedule, RoundPlan.of(config, seed), w0,
                                                      w_star, plan.track, state)
        return FedAvgSeed(records, np.array(stats[0]), np.array(stats[1]), np.array(int(diverged), dtype=np.int64))

    def memory_bytes(self, problem: Problem, config: ScaffoldConfig, engine: str, trace: bool = False) -> int:
        """FedAvg's estimate for the same schedule plus the control variates: c, c_k and the round's
        new c_k in the kernel (2 N d + d), c, c_k and the correction (N d) on the reference path;
        the kernel's dense packing adds the off-support zeros of the clients' rows (n f <= n d)."""
        fedavg = super().memory_bytes(problem, config.fedavg_config, engine, trace)
        N, d = problem.n_clients, problem.dim
        dense_rows = 0 if engine == "numpy" else int(problem.client_sizes.sum()) * d
        return fedavg + FLOAT_BYTES * (2 * N * d + d + dense_rows)

    def workload(self, problem: Problem, config: ScaffoldConfig, engine: str, track: bool = False,
                 trace: bool = False) -> Workload:
        """FedAvg's estimate for the same schedule (``FedAvgEngine.workload``); the correction (2 d
        flops a step) and the control update (4 d a client-round) are within its per-row count."""
        return super().workload(problem, config.fedavg_config, engine, track, trace)


SCAFFOLD = ScaffoldEngine()
