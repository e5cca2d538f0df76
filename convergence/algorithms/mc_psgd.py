"""MC-PSGD (Ding et al., arXiv 2002.07454, Algorithm 2): MM-PSGD's block-mixed chain plus
block-separate chains (step eta, restarted from w_bar_m); each round the model with the smaller
average local loss feeds block m's predictor (eq. 8). Runs on the block-cyclic engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..config import ConfigError
from ..schedules import StepSize
from .block_cyclic.kernel import MODE_MC
from .mm_psgd import MMPSGDConfig, MMPSGDEngine

__all__ = ["MC_PSGD", "MCPSGDConfig"]


@dataclass(frozen=True, kw_only=True)
class MCPSGDConfig(MMPSGDConfig):
    """MC-PSGD (Ding et al., Algorithm 2): block-mixed step gamma = ``step_size``, block-separate
    step eta = ``block_step_size``; participants and predictor as in MMPSGDConfig (eq. 8)."""

    name: ClassVar[str] = "mc_psgd"

    block_step_size: StepSize

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.block_step_size, StepSize):
            raise ConfigError(f"block_step_size: must be a StepSize, got {self.block_step_size!r}")

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "block_step_size": self.block_step_size.to_json()}


class MCPSGDEngine(MMPSGDEngine):
    """MC-PSGD on the block-cyclic kernel (mode MC: both chains, predictors, selections)."""

    config_type = MCPSGDConfig
    mode = MODE_MC

    def block_step_size(self, config: MCPSGDConfig) -> StepSize:
        """eta, the step of the block-separate chains."""
        return config.block_step_size


MC_PSGD = MCPSGDEngine()
