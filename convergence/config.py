"""What every run config is made of: its field validators, its error type and its digest.

Every algorithm config (``convergence.algorithms``) validates its fields with these, so a bad
value gets one ConfigError naming the field; ``config_digest`` turns a config's canonical JSON
(sorted keys, no whitespace: ``problems.canonical_json``) into run ids and store keys, stable across
processes and machines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from problems import check_int, check_ints, json_digest

from ._rng import SEED_MAX

__all__ = [
    "ConfigError", "config_digest", "config_int", "config_record_rounds", "config_seeds", "log_spaced_rounds",
]


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


def log_spaced_rounds(rounds: int, n_points: int, first: int = 1) -> tuple[int, ...]:
    """About ``n_points`` distinct rounds spaced evenly in log scale from ``first`` to ``rounds``."""
    if config_int("rounds", rounds) < config_int("first", first):
        raise ConfigError(f"rounds: must be >= {first}")
    config_int("n_points", n_points)
    grid = np.unique(np.round(np.geomspace(first, rounds, n_points)).astype(np.int64))
    return tuple(int(r) for r in grid)
