"""Run configurations: an algorithm config plus a problem spec, JSON-serialisable and hashed.

A run config fully determines a trajectory: same config (and seeds) give bit-identical results.
The run id is the SHA-256 of the canonical JSON (sorted keys, no whitespace), so it is stable
across processes and machines.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .schedules import StepSize

__all__ = ["ConfigError", "FedAvgConfig", "RunConfig", "log_spaced_rounds"]


class ConfigError(ValueError):
    """Invalid run configuration; the message names the offending field."""


@dataclass(frozen=True)
class FedAvgConfig:
    """FedAvg / local SGD with full participation (Li et al. 2020, Sec. 2).

    Each of ``rounds`` rounds: every client starts from the global model and takes
    ``local_steps`` (E) SGD steps w <- w - eta_t g_k(w) on F_k, where g_k is the exact gradient
    (``batch_size`` = 0) or a minibatch gradient over ``batch_size`` rows drawn uniformly with
    replacement; the server then sets w <- w + server_lr * (sum_k p_k w_k - w) (two-sided
    learning rates; server_lr = 1 is plain FedAvg). T = rounds * E local steps in all.
    The global model is recorded after each round in ``record_rounds`` (0 = the initial point).
    """

    local_steps: int
    rounds: int
    step_size: StepSize
    batch_size: int = 0
    server_lr: float = 1.0
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        if not isinstance(self.local_steps, (int, np.integer)) or self.local_steps < 1:
            raise ConfigError(f"local_steps (E): must be an integer >= 1, got {self.local_steps!r}")
        if not isinstance(self.rounds, (int, np.integer)) or self.rounds < 1:
            raise ConfigError(f"rounds: must be an integer >= 1, got {self.rounds!r}")
        if not isinstance(self.step_size, StepSize):
            raise ConfigError("step_size: must be a StepSize")
        if not isinstance(self.batch_size, (int, np.integer)) or self.batch_size < 0:
            raise ConfigError(f"batch_size: must be an integer >= 0 (0 = exact gradients), got {self.batch_size!r}")
        if not (isinstance(self.server_lr, (int, float)) and math.isfinite(self.server_lr) and self.server_lr > 0):
            raise ConfigError(f"server_lr: must be a finite number > 0, got {self.server_lr!r}")
        record = tuple(int(r) for r in (self.record_rounds or (self.rounds,)))
        if any(r < 0 or r > self.rounds for r in record):
            raise ConfigError(f"record_rounds: every record round must lie in [0, rounds={self.rounds}]")
        if list(record) != sorted(set(record)):
            raise ConfigError("record_rounds: must be strictly increasing")
        seeds = tuple(int(s) for s in self.seeds)
        if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
            raise ConfigError("seeds: need at least one seed, all distinct integers >= 0")
        object.__setattr__(self, "record_rounds", record)
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "local_steps", int(self.local_steps))
        object.__setattr__(self, "rounds", int(self.rounds))
        object.__setattr__(self, "batch_size", int(self.batch_size))
        object.__setattr__(self, "server_lr", float(self.server_lr))

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
            self.local_steps, self.rounds, self.step_size, self.batch_size, self.server_lr, self.record_rounds, seeds
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": "fedavg",
            "local_steps": self.local_steps,
            "rounds": self.rounds,
            "step_size": self.step_size.to_json(),
            "batch_size": self.batch_size,
            "server_lr": self.server_lr,
            "record_rounds": list(self.record_rounds),
            "seeds": list(self.seeds),
        }


@dataclass(frozen=True)
class RunConfig:
    """A problem spec (see problems.build_problem) plus an algorithm config."""

    problem: dict[str, Any]
    algorithm: FedAvgConfig
    label: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem, "algorithm": self.algorithm.to_json()}

    @property
    def run_id(self) -> str:
        """SHA-256 of the canonical JSON of the config (first 16 hex digits)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def log_spaced_rounds(rounds: int, n_points: int, first: int = 1) -> tuple[int, ...]:
    """About ``n_points`` distinct rounds spaced evenly in log scale from ``first`` to ``rounds``."""
    if rounds < first:
        raise ConfigError(f"rounds: must be >= {first}")
    grid = np.unique(np.round(np.geomspace(first, rounds, n_points)).astype(np.int64))
    return tuple(int(r) for r in grid)
