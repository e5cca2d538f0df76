"""FedAvg's config: local SGD with full participation and two-sided learning rates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from problems import check_real

from ...config import ConfigError, config_int, config_record_rounds, config_seeds
from ...schedules import StepSize

__all__ = ["FedAvgConfig"]


@dataclass(frozen=True)
class FedAvgConfig:
    """FedAvg / local SGD with full participation (Li et al. 2020, Sec. 2).

    Each of ``rounds`` rounds: every client starts from the global model and takes
    ``local_steps`` (E) SGD steps w <- w - eta_t g_k(w) on F_k, where g_k is the exact gradient
    (``batch_size`` = 0) or a minibatch gradient over ``batch_size`` rows drawn uniformly with
    replacement; the server then sets w <- w + server_lr * (sum_k p_k w_k - w) (two-sided
    learning rates; server_lr = 1 is plain FedAvg). T = rounds * E local steps in all.
    The global model is recorded after each round in ``record_rounds`` (0 = the initial point).
    The run starts from ``initial_model`` w_0 (d reals; empty: w_0 = 0, the default, which the
    config's JSON then leaves out so that its run id is that of a config without the field).
    """

    name: ClassVar[str] = "fedavg"

    local_steps: int
    rounds: int
    step_size: StepSize
    batch_size: int = 0
    server_lr: float = 1.0
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    initial_model: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "local_steps", config_int("local_steps (E)", self.local_steps))
        object.__setattr__(self, "rounds", config_int("rounds", self.rounds))
        if not isinstance(self.step_size, StepSize):
            raise ConfigError(f"step_size: must be a StepSize, got {self.step_size!r}")
        object.__setattr__(self, "batch_size", config_int("batch_size", self.batch_size, minimum=0))
        object.__setattr__(self, "server_lr", check_real("server_lr", self.server_lr, 0.0, strict=True, error=ConfigError))
        record = config_record_rounds(self.record_rounds, self.rounds) or (self.rounds,)
        object.__setattr__(self, "record_rounds", record)
        object.__setattr__(self, "seeds", config_seeds(self.seeds))
        if isinstance(self.initial_model, (str, bytes)) or np.ndim(self.initial_model) != 1:
            raise ConfigError(f"initial_model: expected a sequence of d reals, got {self.initial_model!r}")
        object.__setattr__(self, "initial_model", tuple(check_real(f"initial_model[{i}]", value, error=ConfigError)
                                                        for i, value in enumerate(self.initial_model)))

    @property
    def steps_per_round(self) -> int:
        """E local steps between two communications."""
        return self.local_steps

    @property
    def total_steps(self) -> int:
        """T = rounds * E."""
        return self.rounds * self.local_steps

    @property
    def record_steps(self) -> np.ndarray:
        """Global step counts at the record points, shape (n_records,)."""
        return np.asarray(self.record_rounds, dtype=np.int64) * self.local_steps

    def with_seeds(self, seeds: tuple[int, ...]) -> "FedAvgConfig":
        """The same config with other seeds."""
        return FedAvgConfig(
            self.local_steps, self.rounds, self.step_size, self.batch_size, self.server_lr, self.record_rounds, seeds,
            self.initial_model,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": self.name,
            "local_steps": self.local_steps,
            "rounds": self.rounds,
            "step_size": self.step_size.to_json(),
            "batch_size": self.batch_size,
            "server_lr": self.server_lr,
            "record_rounds": list(self.record_rounds),
            "seeds": list(self.seeds),
            **({"initial_model": list(self.initial_model)} if self.initial_model else {}),
        }
