"""Run configurations: an algorithm config plus a problem spec, JSON-serialisable and hashed.

A run config fully determines a trajectory: same config (and seeds) give bit-identical results.
The run id is the SHA-256 of the canonical JSON (sorted keys, no whitespace), so it is stable
across processes and machines.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from problems import ProblemSpec, check_int, check_ints, check_real

from ._rng import SEED_MAX
from .schedules import StepSize

__all__ = [
    "ConfigError", "FedAvgConfig", "RunConfig", "config_digest", "config_int", "config_record_rounds", "config_seeds",
    "log_spaced_rounds",
]


def config_digest(data: Any, hex_digits: int = 16) -> str:
    """The first ``hex_digits`` hex digits of the SHA-256 of ``data``'s canonical JSON (sorted keys,
    no whitespace): the one way run ids and store keys are made, stable across processes."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:hex_digits]


class ConfigError(ValueError):
    """Invalid run configuration; the message names the offending field."""


def config_int(name: str, value: Any, minimum: int = 1) -> int:
    """An integer config field >= ``minimum`` (problems.check_int); ConfigError naming ``name``."""
    return check_int(name, value, minimum=minimum, error=ConfigError)


def config_seeds(value: Any) -> tuple[int, ...]:
    """At least one seed, distinct integers in [0, SEED_MAX] (the sampler's range); ConfigError naming seeds."""
    seeds = check_ints("seeds", value, minimum=0, maximum=SEED_MAX, error=ConfigError)
    if not seeds:
        raise ConfigError("seeds: need at least one seed")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds: must be distinct, got {value!r}")
    return seeds


def config_record_rounds(value: Any, rounds: int | None = None) -> tuple[int, ...]:
    """Strictly increasing integer record rounds >= 0, at most ``rounds`` when it is given."""
    record = check_ints("record_rounds", value, minimum=0, error=ConfigError)
    if list(record) != sorted(set(record)):
        raise ConfigError(f"record_rounds: must be strictly increasing, got {value!r}")
    if rounds is not None and record and record[-1] > rounds:
        raise ConfigError(f"record_rounds: every record round must lie in [0, rounds={rounds}]")
    return record


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
        object.__setattr__(self, "local_steps", config_int("local_steps (E)", self.local_steps))
        object.__setattr__(self, "rounds", config_int("rounds", self.rounds))
        if not isinstance(self.step_size, StepSize):
            raise ConfigError(f"step_size: must be a StepSize, got {self.step_size!r}")
        object.__setattr__(self, "batch_size", config_int("batch_size", self.batch_size, minimum=0))
        object.__setattr__(self, "server_lr", check_real("server_lr", self.server_lr, 0.0, strict=True, error=ConfigError))
        record = config_record_rounds(self.record_rounds, self.rounds) or (self.rounds,)
        object.__setattr__(self, "record_rounds", record)
        object.__setattr__(self, "seeds", config_seeds(self.seeds))

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
    """A problem spec (see problems.build_problem; None for a problem made directly) plus an algorithm config."""

    problem: ProblemSpec | None
    algorithm: FedAvgConfig
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.problem is not None and not isinstance(self.problem, ProblemSpec):
            raise ConfigError(f"problem: expected a ProblemSpec (or None), got {type(self.problem).__name__}")
        if not isinstance(self.algorithm, FedAvgConfig):
            raise ConfigError(f"algorithm: expected a FedAvgConfig, got {type(self.algorithm).__name__}")

    def to_json(self) -> dict[str, Any]:
        return {"problem": None if self.problem is None else self.problem.to_json(), "algorithm": self.algorithm.to_json()}

    @property
    def run_id(self) -> str:
        """SHA-256 of the canonical JSON of the config (first 16 hex digits)."""
        return config_digest(self.to_json())


def log_spaced_rounds(rounds: int, n_points: int, first: int = 1) -> tuple[int, ...]:
    """About ``n_points`` distinct rounds spaced evenly in log scale from ``first`` to ``rounds``."""
    if config_int("rounds", rounds) < config_int("first", first):
        raise ConfigError(f"rounds: must be >= {first}")
    config_int("n_points", n_points)
    grid = np.unique(np.round(np.geomspace(first, rounds, n_points)).astype(np.int64))
    return tuple(int(r) for r in grid)
