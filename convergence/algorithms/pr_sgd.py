"""Parallel restarted SGD (Yu, Yang, Zhu, AAAI 2019, as in the lecture note
``liu_lecture_fl_fedavg.md``): FedAvg with simple averaging, a sync every K local steps, on any
problem with uniform weights 1/N. It runs on the block-cyclic engine with one block (M = 1) and
per-step tracking always on: (1/t) sum_{tau <= t} ||grad f(x_bar_{tau-1})||^2 with x_bar the
average of the local models at every step (Yu Thm 1), and the drift maxima of ||x_bar_t - x_t^i||^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from problems import (
    BlockCyclicImageProblem, BlockCyclicProblem, FederatedProblem, ImageClassificationProblem, ProblemError, ProblemSpec,
    build_block_cyclic, build_problem, check_real,
)

from ..config import ConfigError, ReseedableConfig, check_step_and_batch, config_int, config_json, set_records_and_seeds
from ..schedules import StepSize
from .block_cyclic.engine import BlockCyclicEngine, block_plan, participants_field
from .block_cyclic.kernel import MODE_MM, PREDICTOR_AVERAGE, Plan

__all__ = ["PR_SGD", "PRSGDConfig"]


@dataclass(frozen=True, kw_only=True)
class PRSGDConfig(ReseedableConfig):
    """Parallel restarted SGD (Yu et al. 2019 as in the lecture note): ``rounds`` rounds of
    ``sync_interval`` (K) local steps, T = rounds K, step ``step_size`` (Yu: constant s in (0, 1/L]),
    simple averaging over ``participants`` (None: all N) at every sync. Record rounds in
    [0, rounds] (empty: the last)."""

    name: ClassVar[str] = "pr_sgd"

    rounds: int
    sync_interval: int
    step_size: StepSize
    batch_size: int = 0
    participants: int | None = None
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rounds", config_int("rounds", self.rounds))
        object.__setattr__(self, "sync_interval", config_int("sync_interval", self.sync_interval))
        check_step_and_batch(self)
        object.__setattr__(self, "participants", participants_field(self.participants))
        set_records_and_seeds(self, self.rounds)

    @classmethod
    def yu(cls, n_clients: int, L: float, rounds: int, sync_interval: int, **kwargs: Any) -> "PRSGDConfig":
        """Corollary 2's constant step s = sqrt(N) / (L sqrt(T)), T = rounds * sync_interval."""
        L = check_real("L", L, 0.0, strict=True, error=ConfigError)
        T = config_int("rounds", rounds) * config_int("sync_interval", sync_interval)
        step = math.sqrt(config_int("n_clients", n_clients)) / (L * math.sqrt(T))
        return cls(rounds=rounds, sync_interval=sync_interval, step_size=StepSize.constant(step), **kwargs)

    @property
    def steps_per_round(self) -> int:
        """K local steps between two synchronisations."""
        return self.sync_interval

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.name, **config_json(self, (
            "rounds", "sync_interval", "step_size", "batch_size", "participants", "record_rounds", "seeds"))}


class PRSGDEngine(BlockCyclicEngine):
    """PR-SGD: the problem (uniform weights) wrapped as one block; tracking always on. On a CNN it
    runs on a ``block_cyclic_images`` problem of one block (N clients with weights 1/N, scored on
    the whole test set of its labels)."""

    config_type = PRSGDConfig

    def build_problem(self, spec: ProblemSpec) -> BlockCyclicProblem | BlockCyclicImageProblem:
        problem = build_problem(spec)
        if isinstance(problem, ImageClassificationProblem):
            return self.check_problem(build_block_cyclic(spec), spec)
        return self.one_block(problem)

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> BlockCyclicProblem | BlockCyclicImageProblem:
        if isinstance(problem, (BlockCyclicProblem, BlockCyclicImageProblem)) and problem.n_blocks == 1:
            return super().check_problem(problem, spec)
        if isinstance(problem, BlockCyclicImageProblem):
            raise ProblemError(f"n_blocks: parallel restarted SGD runs on one block, the CNN problem {problem.name!r} "
                               f"has {problem.n_blocks}")
        if not isinstance(problem, FederatedProblem):
            raise ProblemError(f"problem: expected a FederatedProblem, got {type(problem).__name__}")
        return super().check_problem(self.one_block(problem), spec)

    @staticmethod
    def one_block(problem: FederatedProblem) -> BlockCyclicProblem:
        """``problem`` as one block of N clients; ProblemError unless its weights are uniform."""
        N = problem.n_clients
        if not np.allclose(problem.weights, 1.0 / N, rtol=1e-12, atol=0.0):
            raise ProblemError("weights: parallel restarted SGD averages with weight 1/N; these weights are not uniform")
        return BlockCyclicProblem(problem, 1, N, problem.spec)

    def plan(self, problem: BlockCyclicProblem | BlockCyclicImageProblem, config: PRSGDConfig, track: bool = False, trace: bool = False) -> Plan:
        return block_plan(problem, MODE_MM, PREDICTOR_AVERAGE, config.step_size, config.step_size,
                          config.sync_interval, config.rounds, config.rounds, config.batch_size, config.participants,
                          config.record_rounds, True, trace)


PR_SGD = PRSGDEngine()
