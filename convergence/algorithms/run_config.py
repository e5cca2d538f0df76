"""A run's config and its result, for every algorithm (``_base`` states the contract).

``RunConfig`` is a problem spec plus the config of a registered algorithm (``registry``): one run id
for every algorithm (the digest of its canonical JSON). ``RunResult`` is what a run returns: the
common core (run id, seeds, record rounds and steps, the global model at each record point and its
gap and squared distance to the exact optimum) plus the engine's typed extras.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Generic

import numpy as np

from problems import ProblemSpec

from ..config import ConfigError, config_digest
from ..schedules import StepSize
from ._base import COMMON_METRICS, AlgorithmConfig, ExtrasT, MetricUnavailable
from .registry import algorithm_for, config_type

__all__ = ["RunConfig", "RunResult"]


@dataclass(frozen=True)
class RunConfig:
    """A problem spec (see problems.build_problem; None for a problem made directly) plus an
    algorithm config (any registered algorithm's); its run id is one hash for every algorithm."""

    problem: ProblemSpec | None
    algorithm: AlgorithmConfig
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.problem is not None and not isinstance(self.problem, ProblemSpec):
            raise ConfigError(f"problem: expected a ProblemSpec (or None), got {type(self.problem).__name__}")
        algorithm_for(self.algorithm)

    def to_json(self) -> dict[str, Any]:
        return {"problem": None if self.problem is None else self.problem.to_json(), "algorithm": self.algorithm.to_json()}

    @property
    def run_id(self) -> str:
        """SHA-256 of the canonical JSON of the config (first 16 hex digits)."""
        return config_digest(self.to_json())

    def with_seeds(self, seeds: tuple[int, ...]) -> "RunConfig":
        """The same run with other seeds."""
        return RunConfig(self.problem, self.algorithm.with_seeds(seeds), self.label)

    @classmethod
    def from_json(cls, data: Any) -> "RunConfig":
        """The run config whose ``to_json()`` is ``data`` (a run store's config, which adds keys of its
        own: they are ignored): the problem by ``ProblemSpec.from_json``, the algorithm by its
        registered config type (a step size by ``StepSize.from_json``, a list as a tuple). ConfigError
        naming the field when ``data`` is not such JSON, or when the config read back does not write
        the same JSON (an older or foreign format); ProblemError naming the problem's field."""
        if not isinstance(data, dict) or not isinstance(data.get("algorithm"), dict) or "problem" not in data:
            raise ConfigError(f"config: expected the JSON of a run config (keys 'problem' and 'algorithm'), got "
                              f"{sorted(data) if isinstance(data, dict) else type(data).__name__}")
        fields = dict(data["algorithm"])
        kind = config_type(str(fields.pop("algorithm", None)))
        values = {name: StepSize.from_json(value) if isinstance(value, dict) and "kind" in value
                  else tuple(value) if isinstance(value, list) else value for name, value in fields.items()}
        try:
            config = cls(None if data["problem"] is None else ProblemSpec.from_json(data["problem"]), kind(**values))
        except TypeError as exc:
            raise ConfigError(f"algorithm: not the JSON of a {kind.__name__} ({exc})") from None
        if config.algorithm.to_json() != data["algorithm"]:
            raise ConfigError(f"algorithm: {data['algorithm']!r} does not read back as the same {kind.__name__}")
        return config


@dataclass(frozen=True, eq=False)
class RunResult(Generic[ExtrasT]):
    """One run config's results at its record points, for every seed. S seeds, P record points, d parameters.

    rounds (P,) the record rounds; steps (P,) = rounds * steps_per_round local steps; iterates
    (S, P, d) the global model (float64; a float32 run's iterates converted exactly); gap (S, P) =
    max(F(w) - F*, 0) and dist_sq (S, P) = ||w - w*||^2 on the algorithm's objective
    (``Algorithm.objective``), from its exact optimum, both None when the objective has none (a
    CNN's; ``metric`` names what is missing); ``extras`` the algorithm's own results (typed, see
    its engine); ``seconds`` the compute time of all seeds.
    """

    run_id: str
    config: RunConfig
    seeds: tuple[int, ...]
    rounds: np.ndarray
    steps: np.ndarray
    iterates: np.ndarray
    gap: np.ndarray | None
    dist_sq: np.ndarray | None
    extras: ExtrasT
    engine: str
    seconds: float

    @property
    def algorithm(self) -> AlgorithmConfig:
        """The algorithm config that ran."""
        return self.config.algorithm

    @property
    def has_optimum(self) -> bool:
        """Whether the objective had an exact optimum, so that gap and dist_sq are available."""
        return self.gap is not None

    def metric(self, name: str) -> np.ndarray:
        """The common metric ``name`` ("gap" or "dist_sq"), (S, P); MetricUnavailable naming it
        when the objective has no exact optimum, ConfigError naming ``metric`` for another name."""
        if name not in COMMON_METRICS:
            raise ConfigError(f"metric: unknown metric {name!r}; choose one of {sorted(COMMON_METRICS)}")
        values = getattr(self, name)
        if values is None:
            raise MetricUnavailable(name, self.run_id)
        return values

    def to_frame(self) -> Any:
        """A tidy pandas DataFrame: one row per seed, record point and metric, with columns
        ``run_id``, ``seed``, ``round`` (r of the record), ``local_step`` (r E, the local steps every
        client took by then), ``metric`` (``gap`` = F(w) - F*, ``dist_sq`` = ||w - w*||^2; no rows for a
        run without an exact optimum) and ``value``: the columns of the same names in ``fedbound
        export``'s table (``run_metrics.MetricRow``). Needs pandas (``pip install 'fedbound[data]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas: pip install 'fedbound[data]'") from None
        rows = [(self.run_id, int(seed), int(round_), int(step), metric, float(values[s, p]))
                for metric, values in (("gap", self.gap), ("dist_sq", self.dist_sq)) if values is not None
                for s, seed in enumerate(self.seeds)
                for p, (round_, step) in enumerate(zip(self.rounds, self.steps))]
        return pd.DataFrame(rows, columns=["run_id", "seed", "round", "local_step", "metric", "value"])

    def _repr_html_(self) -> str:
        """A short HTML summary for notebooks: the config and the mean metrics at a few record points."""
        problem = self.config.problem
        family = "a problem made directly" if problem is None else problem.to_json().get("family", "a view")
        head = (f"<p><b>{html.escape(self.algorithm.name)}</b> run <code>{self.run_id}</code>: "
                f"{html.escape(str(family))}, {int(self.rounds[-1])} rounds, {len(self.seeds)} seed(s), "
                f"engine {self.engine}</p>")
        picked = sorted({0, len(self.steps) // 2, len(self.steps) - 1})
        if not self.has_optimum:
            return head + "<p>F(w) - F* and ||w - w*||²: not available (the problem has no exact optimum)</p>"
        rows = "".join(
            f"<tr><td>{int(self.steps[p])}</td><td>{np.mean(self.gap[:, p]):.4g}</td>"
            f"<td>{np.mean(self.dist_sq[:, p]):.4g}</td></tr>" for p in picked)
        return (head + "<table><tr><th>step</th><th>mean F(w) - F*</th><th>mean ||w - w*||²</th></tr>"
                + rows + "</table>")
