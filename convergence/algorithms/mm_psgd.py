"""MM-PSGD (Ding et al., arXiv 2002.07454, Algorithm 1): one block-mixed model trained by local
SGD on the current block's data; the predictor of block m is the average of the global models of
block m's rounds (eq. 7) or the exponential average of Sec. 5. Runs on the block-cyclic engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from problems import BlockCyclicImageProblem, BlockCyclicProblem

from ..config import ConfigError
from ..schedules import StepSize
from .block_cyclic.engine import PREDICTORS, BlockCyclicEngine, CyclicSchedule, block_plan, participants_field
from .block_cyclic.kernel import MODE_MM, Plan

__all__ = ["MM_PSGD", "MMPSGDConfig"]


@dataclass(frozen=True, kw_only=True)
class MMPSGDConfig(CyclicSchedule):
    """MM-PSGD (Ding et al., Algorithm 1): step gamma = ``step_size``; ``participants`` K per round
    (None: all N); ``predictor`` "average" (eq. 7) or "exponential" (Sec. 5). Empty
    ``record_rounds`` records the last round."""

    name: ClassVar[str] = "mm_psgd"

    participants: int | None = None
    predictor: str = "average"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "participants", participants_field(self.participants))
        if not isinstance(self.predictor, str) or self.predictor not in PREDICTORS:
            raise ConfigError(f"predictor: expected one of {sorted(PREDICTORS)}, got {self.predictor!r}")

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.name, **self.schedule_json(), "participants": self.participants,
                "predictor": self.predictor}


class MMPSGDEngine(BlockCyclicEngine):
    """MM-PSGD on the block-cyclic kernel (mode MM, predictors kept; the y chain's step is unused)."""

    config_type: type = MMPSGDConfig
    has_predictors = True
    mode = MODE_MM

    def block_step_size(self, config: MMPSGDConfig) -> StepSize:
        """The step of the block-separate chain (none in MM-PSGD: gamma stands in, unused)."""
        return config.step_size

    def plan(self, problem: BlockCyclicProblem | BlockCyclicImageProblem, config: MMPSGDConfig, track: bool = False,
             trace: bool = False) -> Plan:
        return block_plan(problem, self.mode, PREDICTORS[config.predictor], config.step_size,
                          self.block_step_size(config), config.local_steps, config.rounds_per_block,
                          config.total_rounds(problem.n_blocks), config.batch_size, config.participants,
                          config.record_rounds, track, trace)


MM_PSGD = MMPSGDEngine()
