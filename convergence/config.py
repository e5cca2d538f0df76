"""What every run config is made of: its field validators, its error type, its JSON and its digest.

Every algorithm config (``convergence.algorithms``) validates its fields with these, so a bad
value gets one ConfigError naming the field (``check_step_and_batch`` and ``set_records_and_seeds``
normalise the fields most configs share); ``config_json`` writes its fields, ``ReseedableConfig``
gives it ``with_seeds``; ``config_digest`` turns a config's canonical JSON
(sorted keys, no whitespace: ``problems.canonical_json``) into run ids and store keys, stable across
processes and machines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from problems import check_int, check_ints, json_digest

from ._rng import SEED_MAX
from .schedules import StepSize

__all__ = [
    "ConfigError", "LocalRoundsConfig", "ReseedableConfig", "check_step_and_batch", "config_digest", "config_int", "config_json",
    "config_record_rounds", "config_seeds", "log_spaced_rounds", "set_records_and_seeds",
]

ConfigT = TypeVar("ConfigT")


def config_digest(data: Any) -> str:
    """The run id or store key of a config's JSON ``data``: the first 16 hex digits of the SHA-256 of
    its canonical JSON (``problems.json_digest``), stable across processes."""
    return json_digest(data, 16)


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


def check_step_and_batch(config: Any) -> None:
    """Validate ``config.step_size`` (a StepSize) and normalise ``config.batch_size`` (int >= 0) of a
    frozen config in place."""
    if not isinstance(config.step_size, StepSize):
        raise ConfigError(f"step_size: must be a StepSize, got {config.step_size!r}")
    object.__setattr__(config, "batch_size", config_int("batch_size", config.batch_size, minimum=0))


def set_records_and_seeds(config: Any, rounds: int | None = None) -> None:
    """Normalise ``config.record_rounds`` (``config_record_rounds``) and then ``config.seeds``
    (``config_seeds``) of a frozen config in place. With ``rounds`` (a config that knows its number of
    rounds) every record round is at most ``rounds`` and none means (rounds,), the last round; without,
    none stays none (the engine's default, once the problem fixes the rounds)."""
    record = config_record_rounds(config.record_rounds, rounds)
    object.__setattr__(config, "record_rounds", record or (() if rounds is None else (rounds,)))
    object.__setattr__(config, "seeds", config_seeds(config.seeds))


def config_json(config: Any, names: Sequence[str]) -> dict[str, Any]:
    """The JSON form of the fields ``names`` of a config, in that order: a StepSize by its ``to_json``,
    a tuple as a list, any other value (int, float, str, None) as it is."""
    def value(field: Any) -> Any:
        if isinstance(field, StepSize):
            return field.to_json()
        return list(field) if isinstance(field, tuple) else field

    return {name: value(getattr(config, name)) for name in names}


class ReseedableConfig:
    """What an algorithm config (a frozen dataclass with a ``seeds`` field, ``algorithms.AlgorithmConfig``)
    inherits to give a sweep its per-seed configs."""

    def with_seeds(self: ConfigT, seeds: tuple[int, ...]) -> ConfigT:
        """The same config with other seeds."""
        return replace(self, seeds=seeds)  # type: ignore[type-var]


class LocalRoundsConfig(ReseedableConfig):
    """What a config of the local-SGD family (``rounds`` rounds of ``local_steps`` E local steps,
    ``record_rounds``: FedAvg, FedProx, SCAFFOLD) derives from those fields."""

    local_steps: int
    rounds: int
    record_rounds: tuple[int, ...]

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


def log_spaced_rounds(rounds: int, n_points: int, first: int = 1) -> tuple[int, ...]:
    """About ``n_points`` distinct rounds spaced evenly in log scale from ``first`` to ``rounds``."""
    if config_int("rounds", rounds) < config_int("first", first):
        raise ConfigError(f"rounds: must be >= {first}")
    config_int("n_points", n_points)
    grid = np.unique(np.round(np.geomspace(first, rounds, n_points)).astype(np.int64))
    return tuple(int(r) for r in grid)
