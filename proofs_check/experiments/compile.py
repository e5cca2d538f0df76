"""An experiment compiled into a claim: ``fedbound run`` and ``fedbound verify`` share one runner.

``compile_experiment(experiment)`` makes the ``Claim`` of an experiment file (``file.Experiment``),
which ``reports.verify.run_experiment`` evaluates with the runner, run store and report writers of
``fedbound verify``:

* its id is the experiment's ``name``, the prefix of its verdict ids (``Experiment.check_id``:
  ``name/check name``); its reference is the file (``source``), its statement the file's
  ``description`` and the statement of every check;
* its plan (``ExperimentPlan``, the same in every mode) holds the parsed experiment and the grid
  compiled into one run request per cell; it has no parameter (the file states every value, the
  seeds included), so ``ID[name=value]`` sets nothing;
* its evaluator (``evaluate_experiment``) runs every cell as one sweep through
  ``convergence.execute`` with the settings' store, jobs and scheduler (a run the store holds is
  read back, not recomputed) and returns one ``ClaimResult`` per check, in the file's order
  (``verdicts.evaluate_check``: a sub-check per cell, or the two cells of an ordering), each its own
  verdict and card in the report (``ClaimResults``). Every check reads the same runs, so the
  sweep runs once for all of them.

Compiling checks, before anything is created, everything that does not need the runs:

1. The problem's spec is built (``problems.build_problem``: the objective F, for a block-cyclic
   family the combined problem) and its exact optimum computed once
   (``proofs_check.framework.evaluation.claim_optimum``, which also certifies it); the problem's
   names are evaluated on first use (``names.ProblemValues``).
2. The config of every grid cell is built from the ``[algorithm]`` table and the cell's values
   (``AlgorithmTable.config``); ``record_rounds = {log_spaced = n}`` takes the last round from the
   engine's plan of the config (``Algorithm.plan``, the one place that knows it for every
   algorithm).
3. Every request is checked as ``execute`` checks it (``convergence.check_requests``: plans,
   memory) and every check's expressions that read no run moment are evaluated at each cell's
   record steps (``verdicts.check_before_runs``).

So bad input (ExperimentError naming the field; ConfigError as ``execute``) leaves neither a report
folder nor a run store behind. The experiment's work is priced from its shape before it is compiled
(``workload.check_experiment_budget``, by the runner); the compiled plan has no ``workload()``, and
``execute`` prices its runs again from their configs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..framework.claim import Claim, ClaimResults
from ..framework.parameters import ModePlans, fixed
from ..framework.references import Reference
from .algorithm import GridCell
from .fields import ExperimentError
from .file import Experiment
from .names import ProblemValues

if TYPE_CHECKING:
    from convergence import RunRequest

    from ..framework.settings import VerifySettings

__all__ = ["ExperimentPlan", "compile_experiment", "evaluate_experiment"]


@dataclass(frozen=True, eq=False)
class ExperimentPlan:
    """The plan of a compiled experiment: the parsed file, its problem's values (the objective and its
    exact optimum), the optimum's note and one run request per grid cell, in the grid's order."""

    experiment: Experiment = fixed("the parsed experiment file")
    problem: ProblemValues = fixed("the values of the problem's names, with its exact optimum")
    optimum_note: str = fixed("how the exact optimum was computed and certified (claim_optimum)")
    requests: tuple[RunRequest, ...] = fixed("the run request of every grid cell, in the grid's order")


def compile_experiment(experiment: Experiment) -> Claim:
    """The claim of ``experiment`` (module docstring), with its problem, optimum, configs and the
    checks that need no run checked now. ExperimentError naming the field for a problem without an
    exact optimum or whose optimum cannot be computed, and for a value that only the problem shows
    to be bad (an integer field's expression that is not integral, a bound <= 0); ConfigError as
    ``convergence.check_requests``."""
    from convergence import RunConfig, RunRequest, check_requests
    from problems import FederatedProblem, OptimumError, build_problem

    from ..framework.evaluation import claim_optimum
    from .verdicts import check_before_runs

    objective = build_problem(experiment.problem)
    if not isinstance(objective, FederatedProblem):
        raise ExperimentError(f"problem: {objective.name!r} has no exact optimum, so the gap and the distance that "
                              "every check of an experiment reads are not available for it")
    try:
        optimum, optimum_note = claim_optimum(objective)
    except OptimumError as exc:
        where = "problem.from_arrays" if experiment.problem.to_json().get("family") == "arrays" else "problem.params"
        raise ExperimentError(f"{where}: the exact optimum of {objective.name}, which every check measures from, "
                              f"cannot be computed or confirmed on this problem ({exc}); choose better-conditioned "
                              "values") from None
    problem = ProblemValues(objective, optimum)
    cells = experiment.grid.cells
    configs = [_config(experiment, cell, problem) for cell in cells]
    requests = tuple(RunRequest(RunConfig(experiment.problem, config, cell.label), optimum)
                     for cell, config in zip(cells, configs))
    check_requests(requests)
    for index in range(len(experiment.checks)):
        check_before_runs(experiment, index, cells, configs, problem)
    plan = ExperimentPlan(experiment, problem, optimum_note, requests)
    source = experiment.source or experiment.name
    return Claim(
        experiment.name,
        (Reference(experiment.name, source, experiment.description or experiment.name, "experiment file", None),),
        experiment.description or "its checks",
        " ".join(f"{experiment.check_id(check)}: {check.statement}." for check in experiment.checks),
        "per check: its checker's headline figure (a rate exponent, the tightness of a bound, a difference)",
        evaluate_experiment, plan=ModePlans(plan), default=False,
        no_variant="an experiment file states its own checks; fedbound run has no power self-test",
    )


def evaluate_experiment(settings: VerifySettings, plan: ExperimentPlan) -> ClaimResults:
    """Run every grid cell of ``plan`` as one sweep and evaluate each check on the runs: one result
    per check, in the file's order, its notes saying which optimum the gaps are measured against."""
    from convergence import execute

    from .verdicts import CellRuns, evaluate_check

    experiment = plan.experiment
    results = execute(list(plan.requests), settings.sweep_options(), description=experiment.name)
    runs = [CellRuns.of(cell, result, plan.problem) for cell, result in zip(experiment.grid.cells, results)]
    evaluated = [evaluate_check(experiment, i, runs) for i in range(len(experiment.checks))]
    return ClaimResults(tuple(dataclasses.replace(r, verdict=dataclasses.replace(
        r.verdict, notes=f"{r.verdict.notes} Gaps against the {plan.optimum_note}.")) for r in evaluated))


def _config(experiment: Experiment, cell: GridCell, problem: ProblemValues) -> Any:
    """The algorithm config of one grid cell with the experiment's seeds and record rounds."""
    from convergence.algorithms import algorithm_for

    record = experiment.record_rounds
    if record.listed:
        return experiment.algorithm.config(cell, problem, experiment.seeds, record.listed)
    provisional = experiment.algorithm.config(cell, problem, experiment.seeds, ())
    engine = algorithm_for(provisional)
    last = engine.plan(engine.build_problem(experiment.problem), provisional, False).record_rounds[-1]
    return dataclasses.replace(provisional, record_rounds=record.rounds(last))
