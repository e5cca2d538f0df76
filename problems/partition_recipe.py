"""A partition recipe as one typed value: which recipe of ``problems.partitions``, for how many
clients, with which seed and parameters.

``PartitionRecipe(name, n_clients, seed, alpha=..., shards_per_client=..., shape=..., sigma=...,
min_size=...)`` validates once: ``name`` is one of ``RECIPES``; a parameter the recipe does not take
is refused (naming it) rather than ignored; the ones it takes default as in ``problems.partitions``.
``recipe.apply(labels)`` returns ``client_of_row`` (n,), ``recipe.describe()`` a short label such as
"dirichlet(alpha=0.1), N=10, seed 0", ``recipe.to_json()`` the canonical dict.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .partitions import (
    DEFAULT_MIN_SIZE,
    dirichlet_partition,
    iid_partition,
    lognormal_partition,
    powerlaw_partition,
    shard_partition,
    sorted_partition,
)
from .validation import ProblemError, check_int

__all__ = ["RECIPES", "PartitionRecipe"]

RECIPES = ("shards", "dirichlet", "powerlaw", "lognormal", "iid", "sorted")
"""The recipe names, as ``fedbound partition --recipe`` takes them."""

_PARAMETERS = {  # the parameters each recipe takes, and their defaults (None: required)
    "shards": {"shards_per_client": 2},
    "sorted": {},
    "dirichlet": {"alpha": None, "min_size": DEFAULT_MIN_SIZE},
    "powerlaw": {"shape": 2.3, "min_size": DEFAULT_MIN_SIZE},
    "lognormal": {"sigma": 1.0, "min_size": DEFAULT_MIN_SIZE},
    "iid": {},
}
_FUNCTIONS = {
    "shards": shard_partition,
    "sorted": sorted_partition,
    "dirichlet": dirichlet_partition,
    "powerlaw": powerlaw_partition,
    "lognormal": lognormal_partition,
    "iid": iid_partition,
}


@dataclass(frozen=True)
class PartitionRecipe:
    """A recipe of ``problems.partitions`` with its clients, seed and parameters (module docstring);
    parameters a recipe does not take stay None."""

    name: str
    n_clients: int
    seed: int = 0
    alpha: float | None = None
    shards_per_client: int | None = None
    shape: float | None = None
    sigma: float | None = None
    min_size: int | None = None

    def __post_init__(self) -> None:
        if self.name not in RECIPES:
            raise ProblemError(f"recipe: expected one of {', '.join(RECIPES)}, got {self.name!r}")
        check_int("n_clients", self.n_clients, minimum=1)
        check_int("seed", self.seed, minimum=0)
        takes = _PARAMETERS[self.name]
        for field in self._parameter_names():
            value = getattr(self, field)
            if field not in takes:
                if value is not None:
                    raise ProblemError(f"{field}: the {self.name} recipe does not take it "
                                       f"(it takes {', '.join(takes) or 'no parameter'})")
            elif value is None:
                if takes[field] is None:
                    raise ProblemError(f"{field}: the {self.name} recipe needs it")
                object.__setattr__(self, field, takes[field])

    @staticmethod
    def _parameter_names() -> tuple[str, ...]:
        return tuple(f.name for f in fields(PartitionRecipe) if f.name not in ("name", "n_clients", "seed"))

    def parameters(self) -> dict[str, Any]:
        """The recipe's own parameters, by name (those it takes, with their values)."""
        return {field: getattr(self, field) for field in _PARAMETERS[self.name]}

    def apply(self, labels: Any) -> np.ndarray:
        """client_of_row (n,) int64 for integer labels (n,): the recipe's function of ``problems.partitions``."""
        return _FUNCTIONS[self.name](labels, self.n_clients, self.seed, **self.parameters())

    def describe(self) -> str:
        parameters = ", ".join(f"{k}={v:g}" for k, v in self.parameters().items())
        return f"{self.name}({parameters}), N={self.n_clients}, seed {self.seed}"

    def to_json(self) -> dict[str, Any]:
        return {"recipe": self.name, "n_clients": self.n_clients, "seed": self.seed, **self.parameters()}
