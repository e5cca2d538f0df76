"""The engine registry: an algorithm's name (its config's ``name``) -> its engine.

Engines are named by "module:attribute" and imported on first use, so that looking up or listing
algorithms costs no kernel import. Adding an algorithm is one folder (config, kernel, reference,
engine) and one line here.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..config import ConfigError
from ._base import Algorithm

__all__ = ["ALGORITHM_NAMES", "algorithm_for", "config_type"]

_ENGINES = {
    "fedavg": "convergence.algorithms.fedavg.engine:FEDAVG",
    "fedavg_cyclic": "convergence.algorithms.fedavg_cyclic:FEDAVG_CYCLIC",
    "mm_psgd": "convergence.algorithms.mm_psgd:MM_PSGD",
    "mc_psgd": "convergence.algorithms.mc_psgd:MC_PSGD",
    "pr_sgd": "convergence.algorithms.pr_sgd:PR_SGD",
    "fedprox": "convergence.algorithms.fedprox.engine:FEDPROX",
    "scaffold": "convergence.algorithms.scaffold.engine:SCAFFOLD",
}

ALGORITHM_NAMES = tuple(_ENGINES)
"""The registered algorithms, by the name their config's JSON carries."""


def _engine(name: str) -> Algorithm:
    module, attribute = _ENGINES[name].split(":")
    return getattr(importlib.import_module(module), attribute)


def algorithm_for(config: Any) -> Algorithm:
    """The engine that runs ``config``; ConfigError naming ``algorithm`` for anything that is not
    a registered algorithm's config."""
    name = getattr(type(config), "name", None)
    if not isinstance(name, str) or name not in _ENGINES:
        raise ConfigError(f"algorithm: expected the config of a registered algorithm {ALGORITHM_NAMES}, "
                          f"got {type(config).__name__}")
    engine = _engine(name)
    if type(config) is not engine.config_type:
        raise ConfigError(f"algorithm: {type(config).__name__} is not {name!r}'s config {engine.config_type.__name__}")
    return engine


def config_type(name: str) -> type:
    """The config class of the algorithm registered as ``name``; ConfigError naming ``algorithm``."""
    if name not in _ENGINES:
        raise ConfigError(f"algorithm: unknown algorithm {name!r}; choose one of {ALGORITHM_NAMES}")
    return _engine(name).config_type
