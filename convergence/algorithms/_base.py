"""The algorithm contract: what every federated algorithm provides and what every run returns.

An algorithm is two things (see ``docs/architecture.md``, "Adding an algorithm"):

* a **config**: a frozen dataclass of its hyper-parameters, ``seeds`` and ``record_rounds``, with
  a class-level ``name`` (its registry name, also the ``"algorithm"`` entry of its JSON),
  ``steps_per_round`` (local steps between two communications), ``with_seeds`` and ``to_json``;
* an **engine** (``Algorithm``) registered for that name in ``registry``: it builds and checks
  the problem the algorithm runs on, turns a config into a plan checked against that problem
  (record rounds resolved, participants <= clients, ...), runs one seed through its Numba kernel
  or its NumPy reference path, and stacks the per-seed arrays into its typed ``extras``.

One ``RunConfig`` (problem spec + algorithm config; ``run_config``) has one run id for every
algorithm, and every run returns one ``RunResult`` (``run_config``): the common core (run id, seeds, record rounds and steps, the
global model at each record point and its gap F(w) - F* and squared distance ||w - w*||^2 to the
exact optimum of the problem's objective F) plus the engine's typed extras (per-block predictors,
chain selections, tracked maxima).

The exact optimum is optional. A problem without one (a CNN: non-convex, no closed form; see
``convergence.run.objective_optimum``) runs with ``w_star = None``: its gap and distance are
None ("not available", ``RunResult.metric`` says so by name), and the engines anchor what they
measured from w* at the run's start w0 instead: the divergence test (``DivergenceError``) and the
tracked radii. Every problem that has an optimum runs exactly as before. ``convergence.run`` (one config, in this process) and
``convergence.execute`` (many configs, any executor, a run store) are the one run path; a
worker's per-seed result is the engine's ``SeedRun`` NamedTuple as the engine's ``stored`` keeps it
(the same names; arrays no claim reads from a sweep may be emptied, e.g. a CNN block-cyclic seed's
models, whose per-block accuracies are kept), stored as its arrays.

Tracing. A run planned with ``trace=True`` keeps every local iterate: the NumPy reference path
(only it: the Numba kernels keep records) writes the per-step arrays (every local model, the
stochastic and full gradients, and the algorithm's per-round state) into the seed's ``trace_*``
arrays (that prefix, ``store.TRACE_ARRAY_PREFIX``, marks arrays whose axis 0 is the local step),
from the very arithmetic that produces its records, so a traced run's records equal the
untraced run's bit for bit. The engine's extras then carry one typed, read-only trace per seed
(``fedavg.trace.FedAvgTrace``, ``block_cyclic.trace.BlockCyclicTrace``); the lemma checks and
eq. 13 of Li et al. read them. Traces go through ``execute``, any executor and the run store
like every other result, and an engine's ``memory_bytes`` counts them, so a trace that cannot
fit is refused before the run starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from problems import FederatedProblem, ProblemSpec

from ..budget import Workload
from .local_steps import DIVERGENCE_FACTOR

__all__ = [
    "COMMON_METRICS", "ENGINES", "NOT_TRACED", "Algorithm", "AlgorithmConfig", "DivergenceError", "MetricUnavailable",
    "RunPlan", "SeedRun",
]

ENGINES = ("numba", "numpy")
"""How a seed runs: the Numba kernel (default) or the plain-NumPy reference path (the kernel's
correctness reference; every algorithm provides both and a test that they agree)."""

NOT_TRACED = np.zeros(0)
"""The value of a SeedRun's ``trace_*`` arrays when its run is not traced (empty, read-only)."""
NOT_TRACED.setflags(write=False)

ConfigT = TypeVar("ConfigT", bound="AlgorithmConfig")
ProblemT = TypeVar("ProblemT")
PlanT = TypeVar("PlanT", bound="RunPlan")
SeedT = TypeVar("SeedT", bound="SeedRun")
ExtrasT = TypeVar("ExtrasT")


class AlgorithmConfig(Protocol):
    """An algorithm's hyper-parameters, seeds and record rounds (a frozen dataclass).

    ``name`` is its registry name; ``to_json()`` is its canonical JSON with ``"algorithm": name``
    (the run id hashes it); ``with_seeds`` gives the same config with other seeds (a sweep runs
    one task per seed); ``steps_per_round`` is the number of local steps between communications,
    so that record round r is local step r * steps_per_round.
    """

    name: ClassVar[str]
    seeds: tuple[int, ...]
    record_rounds: tuple[int, ...]

    @property
    def steps_per_round(self) -> int: ...

    def with_seeds(self, seeds: tuple[int, ...]) -> Any: ...

    def to_json(self) -> dict[str, Any]: ...


class RunPlan(Protocol):
    """What one run of a config on a problem executes, checked against the problem; the common
    part is the resolved record rounds (sorted, in [0, total rounds]) and whether the run keeps
    every local iterate (``trace``, module docstring)."""

    record_rounds: tuple[int, ...]
    trace: bool


class SeedRun(Protocol):
    """One seed's result as a worker returns it (a NamedTuple of arrays, stored as such):
    ``records`` (P, d) the global model at the record rounds and ``diverged`` the 0-based round
    at whose end the run diverged (-1 if it did not); engines add their own arrays, among them
    their ``trace_*`` arrays (``NOT_TRACED`` unless the run is traced)."""

    records: np.ndarray
    diverged: Any

    def _asdict(self) -> dict[str, Any]: ...


class Algorithm(Protocol[ConfigT, ProblemT, PlanT, SeedT, ExtrasT]):
    """The engine of one algorithm (registered for ``config_type.name`` in ``registry``).

    ``ProblemT`` is the problem the algorithm runs on (a FederatedProblem, or a
    BlockCyclicProblem for the block-cyclic algorithms); ``objective(problem)`` is the
    FederatedProblem whose objective F and exact optimum the common metrics use.
    """

    config_type: type[ConfigT]
    seed_type: type[SeedT]

    def build_problem(self, spec: ProblemSpec) -> ProblemT:
        """The problem ``spec`` describes (cached per process by ``problems``)."""
        ...

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> ProblemT:
        """``problem`` if it is the one ``spec`` describes; ProblemError naming ``problem`` otherwise."""
        ...

    def objective(self, problem: ProblemT) -> FederatedProblem:
        """The problem whose F(w) and exact optimum (w*, F*) the gap and distance are measured on."""
        ...

    def plan(self, problem: ProblemT, config: ConfigT, track: bool, trace: bool) -> PlanT:
        """The config checked against the problem (ConfigError naming the field otherwise); ``track``
        asks for the engine's per-step statistics, ``trace`` for every local iterate (module
        docstring; the caller has checked that the engine is "numpy")."""
        ...

    def run_seed(self, problem: ProblemT, plan: PlanT, seed: int, w_star: np.ndarray | None, engine: str) -> SeedT:
        """One seed from the engine's start w0 (0, the config's initial model, or the problem's
        initialisation); ``w_star`` anchors the divergence test and the tracked radii, and without
        an exact optimum (None) w0 anchors them. BLAS is single-threaded by the caller."""
        ...

    def stored(self, problem: ProblemT, seed_run: SeedT) -> SeedT:
        """``seed_run`` as a sweep keeps it (what its worker returns and the run store holds): the
        arrays a claim reads from a sweep's results; an engine may empty the others (same names)."""
        ...

    def extras(self, problem: ProblemT, plan: PlanT, seed_runs: Sequence[SeedT]) -> ExtrasT:
        """The algorithm's typed extras, stacked over seeds (shapes in the extras' docstring), with
        one read-only trace per seed when the plan traces."""
        ...

    def memory_bytes(self, problem: ProblemT, config: ConfigT, engine: str, trace: bool) -> int:
        """Estimated bytes one run of ``config`` (all its seeds) allocates, its traces included
        when ``trace``."""
        ...

    def workload(self, problem: ProblemT, config: ConfigT, engine: str, track: bool, trace: bool) -> Workload:
        """The work of one run of ``config`` (all its seeds) on ``engine``, tracked and traced as asked
        (``convergence.budget``: client-steps and their flops, records, the tracked metrics), in
        constant time, named by the config's fields."""
        ...


COMMON_METRICS = {"gap": "F(w) - F*", "dist_sq": "||w - w*||^2"}
"""The metrics of every RunResult measured from the exact optimum, by name."""


class MetricUnavailable(ValueError):
    """A metric measured from the exact optimum, asked of a run whose objective has none."""

    def __init__(self, name: str, run_id: str) -> None:
        super().__init__(f"{name}: not available for run {run_id}: {COMMON_METRICS[name]} needs an exact optimum "
                         "and the problem has none (a non-convex model)")
        self.name = name


class DivergenceError(RuntimeError):
    """A run whose iterates blew up; says at which seed, round and local steps.

    The test (every engine, ``local_steps.DIVERGENCE_FACTOR``): the global model w is non-finite or
    ||w - a||^2 > DIVERGENCE_FACTOR (1 + ||w0 - a||^2), with the anchor a = w* when the problem has
    an exact optimum and a = w0 when it has none (then the reference scale is 1: ||w - w0||^2 > 1e30).
    """

    def __init__(self, run_id: str, seed: int, round_index: int, local_steps: int, anchored_at_w0: bool = False) -> None:
        first, last = round_index * local_steps + 1, (round_index + 1) * local_steps
        test = (f"||w - w0||^2 exceeded {DIVERGENCE_FACTOR:g} (the problem has no exact optimum)" if anchored_at_w0
                else f"||w - w*||^2 exceeded {DIVERGENCE_FACTOR:g} (1 + ||w0 - w*||^2)")
        super().__init__(
            f"run {run_id} diverged: seed {seed}, round {round_index + 1} (local steps {first}-{last}); "
            f"{test} or became non-finite. Lower the step size."
        )
        self.seed, self.round_index = seed, round_index
