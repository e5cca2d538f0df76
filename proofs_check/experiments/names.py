"""The names an experiment's expressions may use, what each means and how its value is obtained.

Notation of Li et al. (ICLR 2020), Sec. 3 and Assumptions 1-4: clients k = 1..N with weights p_k,
F = sum_k p_k F_k the objective (for a block-cyclic family, the combined problem
``problems.build_problem`` returns, on which the gap is measured), w* its exact minimiser, runs
start at w_0 = 0. Three groups:

* ``PROBLEM_NAMES``, fixed by the problem: L = max_k L_k and mu = min_k mu_k (Assumptions 1-2,
  ``problems.problem_constants``), kappa = L / mu, L_F and mu_F (the constants of F itself), N,
  d (parameters), Gamma = F* - sum_k p_k F_k* (``problems.heterogeneity_gamma``), F_star, dist0_sq
  = ||w_0 - w*||^2 = ||w*||^2 and gap0 = F(w_0) - F*.
* config names, fixed by one grid cell's algorithm config: every numeric field of the config by
  its own name (``local_steps``, ``rounds``, ``batch_size``, ``server_lr`` for FedAvg), ``E`` its
  local steps between communications (``steps_per_round``) and, for the schedule in its
  ``step_size`` field (``convergence.StepSize``), ``eta0`` = its first step eta at t = 0,
  ``gamma`` and ``decay`` (its parameters: gamma is the ``li`` schedule's offset, 0 for the others).
* ``RUN_NAMES``, known once the runs are done: ``T`` the record steps (an array over the record
  points, so an expression of T is a curve) and Li's Assumptions 3-4 constants with the config's
  ``batch_size`` b: ``sigma_sq`` = max_k sigma_k^2, ``p2_sigma_sq`` = sum_k p_k^2 sigma_k^2 (the
  first term of Li's B) and ``G_sq`` = G^2, each the supremum over the ball around w* of radius
  R = max(||w*||, max over seeds and record points of ||w - w*||), the ball that holds w_0 and
  every recorded global model (``proofs_check.constants.variance_bound`` / ``second_moment_bound``: exact
  for least squares, certified upper bounds for logistic and softmax). Local iterates between
  record points can leave that ball, so these are estimates of the constants on the region the
  recorded run visits; the report says so where a bound uses them.

A config field's expression (``rounds = "ceil(20 * kappa)"``) may use the problem names, the
literal numeric fields of the algorithm table and the grid's fields; a check's expression may use
every name.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .fields import is_number

__all__ = [
    "MOMENT_NAMES", "PROBLEM_NAMES", "RUN_NAMES", "STEP_NAMES", "CellValues", "ProblemValues", "RunMoments", "config_values",
]

PROBLEM_NAMES: Mapping[str, str] = {
    "L": "Li's L = max_k L_k (every F_k is L-smooth)",
    "mu": "Li's mu = min_k mu_k (every F_k is mu-strongly convex)",
    "kappa": "L / mu",
    "L_F": "the smoothness constant of F",
    "mu_F": "the strong-convexity constant of F",
    "N": "the number of clients",
    "d": "the number of parameters",
    "Gamma": "F* - sum_k p_k F_k*, Li's heterogeneity",
    "F_star": "F* = F(w*)",
    "dist0_sq": "||w_0 - w*||^2 = ||w*||^2 (runs start at w_0 = 0)",
    "gap0": "F(w_0) - F*",
}
"""The problem's names and their meaning (module docstring)."""

STEP_NAMES: Mapping[str, str] = {
    "E": "local steps between two communications (the config's steps_per_round)",
    "eta0": "the first step size eta at t = 0 of the config's step_size",
    "gamma": "the gamma of the config's step_size (the li schedule's offset; 0 for the others)",
    "decay": "the decay of the config's step_size (inverse_time; 0 for the others)",
}
"""Names every config provides besides its numeric fields (``E``) or that its ``step_size`` field gives."""

RUN_NAMES: Mapping[str, str] = {
    "T": "the record steps, one value per record point",
    "sigma_sq": "max_k sigma_k^2, the minibatch-gradient variance bound (Li, Assumption 3)",
    "p2_sigma_sq": "sum_k p_k^2 sigma_k^2 (the first term of Li's B)",
    "G_sq": "G^2, the bound on E||g_k||^2 (Li, Assumption 4)",
}
"""The names known once the runs are done; the moments are taken over the ball of the module docstring."""

MOMENT_NAMES = frozenset({"sigma_sq", "p2_sigma_sq", "G_sq"})
"""The run names that are Li's Assumptions 3-4 constants (computed over the ball of the module docstring)."""


class ProblemValues(Mapping[str, float]):
    """The values of ``PROBLEM_NAMES`` for an objective (a FederatedProblem) and its exact optimum,
    a read-only mapping that computes each value on first use (the constants need eigenvalues, Gamma
    the clients' optima) and keeps it. ``optimum`` is the Optimum, or a function that computes it
    when a name first needs it (L, mu, kappa, N and d do not)."""

    def __init__(self, problem: Any, optimum: Any) -> None:
        self.problem = problem
        self._optimum = optimum
        self._values: dict[str, float] = {}

    @functools.cached_property
    def optimum(self) -> Any:
        """The exact optimum (computed now when it was given as a function)."""
        return self._optimum() if callable(self._optimum) else self._optimum

    def __getitem__(self, name: str) -> float:
        if name not in PROBLEM_NAMES:
            raise KeyError(name)
        if name not in self._values:
            self._values[name] = float(self._compute(name))
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(PROBLEM_NAMES)

    def __len__(self) -> int:
        return len(PROBLEM_NAMES)

    @functools.cached_property
    def constants(self) -> Any:
        """``problems.problem_constants`` of the problem."""
        from problems import problem_constants

        return problem_constants(self.problem)

    def _compute(self, name: str) -> float:
        from problems import heterogeneity_gamma

        if name in ("L", "mu", "kappa"):
            return getattr(self.constants, name)
        if name in ("L_F", "mu_F"):
            return self.constants.L_global if name == "L_F" else self.constants.mu_global
        if name in ("N", "d"):
            return self.problem.n_clients if name == "N" else self.problem.dim
        if name == "Gamma":
            return heterogeneity_gamma(self.problem, self.optimum)
        if name == "gap0":
            return self.problem.objective(np.zeros(self.problem.dim)) - self.optimum.F_star
        w_star = self.optimum.w_star
        return {"F_star": self.optimum.F_star, "dist0_sq": w_star @ w_star}[name]


@dataclass(frozen=True)
class RunMoments:
    """Li's Assumptions 3-4 constants over the ball around w* of ``radius`` (module docstring), for
    minibatches of the config's batch size; ``method`` says how they were obtained."""

    sigma_sq: float
    p2_sigma_sq: float
    G_sq: float
    radius: float
    method: str


class CellValues(Mapping[str, Any]):
    """Every name's value for one grid cell's runs (module docstring), a read-only mapping computed
    on first use: the problem's (``problem``, a ProblemValues), the config's (``config``) and the
    runs': ``steps`` (P,) their record steps and ``dist_sq`` (S, P) their ||w - w*||^2."""

    def __init__(self, problem: ProblemValues, config: Any, steps: np.ndarray, dist_sq: np.ndarray) -> None:
        self.problem = problem
        self.config = config
        self.steps = np.asarray(steps, dtype=np.float64)
        self.dist_sq = np.asarray(dist_sq, dtype=np.float64)
        self._config_values = config_values(config)

    def __getitem__(self, name: str) -> Any:
        if name in self._config_values:
            return self._config_values[name]
        if name in PROBLEM_NAMES:
            return self.problem[name]
        if name == "T":
            return self.steps
        if name in MOMENT_NAMES:
            return getattr(self.moments, name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        names = dict.fromkeys([*self._config_values, *PROBLEM_NAMES, "T"])
        if isinstance(getattr(self.config, "batch_size", None), int):
            names.update(dict.fromkeys(MOMENT_NAMES))
        return iter(names)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @functools.cached_property
    def moments(self) -> RunMoments:
        """sigma_sq, p2_sigma_sq and G_sq with the config's ``batch_size`` over the ball around w* that
        holds w_0 and every recorded global model."""
        from ..constants import Ball, second_moment_bound, variance_bound

        problem, w_star = self.problem.problem, self.problem.optimum.w_star
        radius = math.sqrt(max(float(np.max(self.dist_sq)), float(w_star @ w_star)))
        ball = Ball(w_star, radius)
        batch = self.config.batch_size
        sigma = variance_bound(problem, ball, batch)
        second = second_moment_bound(problem, ball, batch)
        method = (f"sigma_k^2 and G^2 (batch {batch}) are taken over the ball of radius {radius:.4g} around w*, which "
                  "holds w_0 and every recorded global model (local iterates between record points may leave it): "
                  f"sigma_k^2 {'exact' if sigma.exact else 'certified upper bounds'}, G^2 "
                  f"{'exact' if second.exact else 'a certified upper bound'}")
        return RunMoments(float(sigma.values.max()), float(problem.weights**2 @ sigma.values), float(second.value),
                          radius, method)


def config_values(config: Any) -> dict[str, float]:
    """The config names of one algorithm config (module docstring): its numeric fields whose value
    is a number (an optional field left None has no value), ``E`` and the names of its ``step_size``."""
    from convergence import StepSize

    values = {f.name: float(getattr(config, f.name)) for f in fields(config) if is_number(getattr(config, f.name))}
    values["E"] = float(config.steps_per_round)
    step = getattr(config, "step_size", None)
    if isinstance(step, StepSize):
        values.update(eta0=step.first(config.steps_per_round), gamma=step.gamma, decay=step.decay)
    return values
