"""FedAvg on block-cyclic data (Ding et al., Sec. 5, the paper's first baseline): full
participation, one global model. Step for step it is MM-PSGD's block-mixed chain (same seed, same
numbers), so it runs on the block-cyclic engine in mode MM without predictors; it records the end
of every block visit by default, to show the oscillation over blocks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from problems import BlockCyclicImageProblem, BlockCyclicProblem

from .block_cyclic.engine import BlockCyclicEngine, CyclicSchedule, block_plan
from .block_cyclic.kernel import MODE_MM, PREDICTOR_AVERAGE, Plan

__all__ = ["FEDAVG_CYCLIC", "FedAvgCyclicConfig"]


@dataclass(frozen=True, kw_only=True)
class FedAvgCyclicConfig(CyclicSchedule):
    """FedAvg on block-cyclic data (Ding et al. Sec. 5 baseline), full participation, one global
    model. Empty ``record_rounds`` records the end of every block visit (rounds E, 2E, ..., C M E)."""

    name: ClassVar[str] = "fedavg_cyclic"

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.name, **self.schedule_json()}


class FedAvgCyclicEngine(BlockCyclicEngine):
    """FedAvg-cyclic on the block-cyclic kernel (mode MM; its predictors are not reported)."""

    config_type = FedAvgCyclicConfig

    def plan(self, problem: BlockCyclicProblem | BlockCyclicImageProblem, config: FedAvgCyclicConfig, track: bool = False,
             trace: bool = False) -> Plan:
        R, E = config.total_rounds(problem.n_blocks), config.rounds_per_block
        record = config.record_rounds or tuple(range(E, R + 1, E))
        return block_plan(problem, MODE_MM, PREDICTOR_AVERAGE, config.step_size, config.step_size, config.local_steps,
                          E, R, config.batch_size, None, record, track, trace)


FEDAVG_CYCLIC = FedAvgCyclicEngine()
