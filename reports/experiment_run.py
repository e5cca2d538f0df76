"""``run_experiment``: a user's experiment (``reports.experiment_file``) through the same engine,
run store and report as ``fedbound verify``.

1. The problem's spec is built (``problems.build_problem``: the objective F, for a block-cyclic
   family the combined problem) and its exact optimum computed once (``proofs_check.claim_optimum``,
   which also certifies it); the problem's names are evaluated on first use.
2. The config of every grid cell is built from the ``[algorithm]`` table and the cell's values
   (``AlgorithmTable.config``); ``record_rounds = {log_spaced = n}`` takes the last round from the
   engine's plan of the config (``Algorithm.plan``, the one place that knows it for every
   algorithm).
3. Before anything is created, every request is checked as ``execute`` checks it
   (``convergence.check_requests``: plans, memory) and every check's expressions that read no run
   moment are evaluated at each cell's record steps (``experiment_verdicts.check_before_runs``), so
   bad input leaves neither a report folder nor a run store behind. Then all cells run as one sweep
   through ``convergence.execute`` with the settings' store, jobs and scheduler: a run the store
   holds is read back, not recomputed.
4. Each check becomes one Verdict with a sub-check per cell (``reports.experiment_verdicts``), and
   the report folder gets ``verdicts.json``, ``report.md``, ``index.html`` and the figures, written
   by the report modules ``fedbound verify`` uses, holding the folder's lock
   (``report_files.report_lock``). The metadata's ``mode`` is "experiment", so that ``fedbound
   verify`` never merges claims into an experiment's report folder.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from convergence import RunConfig, RunRequest, Status, Verdict, check_requests, execute
from convergence.algorithms import algorithm_for
from problems import FederatedProblem, OptimumError, build_problem
from proofs_check.framework.claim import ClaimResult
from proofs_check.framework.evaluation import claim_optimum
from proofs_check.framework.settings import VerifySettings

from .experiment_algorithm import GridCell
from .experiment_fields import ExperimentError
from .experiment_file import Experiment
from .experiment_names import ProblemValues
from .experiment_verdicts import CellRuns, check_before_runs, evaluate_check
from .experiment_workload import check_experiment_budget
from .html_report import write_html
from .markdown import write_markdown
from .progress import VerifyProgress
from .report_files import ReportFigure, report_lock
from .run_metadata import run_metadata
from .verdicts_json import write_verdicts_json
from .verify import VerifyOutcome, prepare_out

__all__ = ["run_experiment"]


def run_experiment(
    experiment: Experiment,
    out: str | Path,
    *,
    jobs: int = 1,
    store: str | None = None,
    use_cache: bool = True,
    scheduler: str | None = None,
    progress: bool | VerifyProgress = True,
    command: Sequence[str] = (),
    figures: bool = True,
    max_cpu_hours: float | None = None,
) -> VerifyOutcome:
    """Run ``experiment`` and write its report into ``out`` (module docstring); returns what was written.

    ``jobs`` worker processes (or the Dask cluster at ``scheduler``); ``store`` the run store's path
    (None: no store, every run computed), read back unless ``use_cache`` is False; ``progress`` a
    VerifyProgress (its ``reused`` and ``computed`` count the runs), or True / False for one printing
    to stderr or silent; ``command`` the command line recorded in the metadata; ``figures`` False
    writes the report without its figures (a quicker re-check: each figure takes about a second to draw).
    Before the output folder is made, the experiment's work is estimated and priced
    (``experiment_workload.check_experiment_budget``): BudgetError naming the field when it is over
    ``max_cpu_hours`` (None: ``$FEDBOUND_MAX_CPU_HOURS`` or the default), the limit of every sweep too.
    ExperimentError naming the field of a value that only the problem or the runs show to be bad (an integer field's
    expression that is not integral, a bound <= 0); ConfigError / DivergenceError as ``execute``. Everything that
    does not need the runs (the problem, every cell's config and plan, the memory, the checks' expressions that read
    no run moment) is checked before ``out`` or the run store is created, so bad input leaves no folder behind."""
    check_experiment_budget(experiment, max_cpu_hours)
    monitor = progress if isinstance(progress, VerifyProgress) else VerifyProgress([experiment.name], enabled=progress)
    settings = VerifySettings(len(experiment.seeds), jobs, progress=monitor, store=store, use_cache=use_cache,
                              scheduler=scheduler, max_cpu_hours=max_cpu_hours)
    start = time.perf_counter()
    monitor.claim_started(experiment.name, experiment.description or experiment.source or "experiment")
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
    requests = [RunRequest(RunConfig(experiment.problem, config, cell.label), optimum)
                for cell, config in zip(cells, configs)]
    check_requests(requests)  # everything checked before the report folder and the run store are created
    for index in range(len(experiment.checks)):
        check_before_runs(experiment, index, cells, configs, problem)
    out = prepare_out(out)
    try:
        results = execute(requests, settings.sweep_options(), description=experiment.name)
    finally:
        settings.close()
    runs = [CellRuns.of(cell, result, problem) for cell, result in zip(cells, results)]
    evaluated = [evaluate_check(experiment, i, runs) for i in range(len(experiment.checks))]
    verdicts = [dataclasses.replace(r.verdict, notes=f"{r.verdict.notes} Gaps against the {optimum_note}.")
                for r in evaluated]
    status = _overall(verdicts)
    drawn = _draw(evaluated, out) if figures else []
    monitor.claim_finished(experiment.name, status.value, time.perf_counter() - start)
    ids = [v.claim_id for v in verdicts]
    meta = run_metadata(command, settings, time.perf_counter() - start, ids, monitor.reused, monitor.computed,
                        out=out, figures=drawn)
    meta.update(mode="experiment", experiment=experiment.source or experiment.name,
                problem=experiment.problem.to_json(), algorithm=experiment.algorithm.name)
    grid = [record.summary() for record in monitor.sweeps.get(experiment.name, ())]
    grids = {cid: grid for cid in ids}
    with report_lock(out):
        write_verdicts_json(out / "verdicts.json", verdicts, meta, figures=drawn, grids=grids)
        write_markdown(out / "report.md", verdicts, drawn, meta, grids=grids)
        write_html(out / "index.html", verdicts, drawn, meta, grids=grids)
    return VerifyOutcome(tuple(verdicts), tuple(ids), tuple(drawn), meta, out)


def _config(experiment: Experiment, cell: GridCell, problem: ProblemValues) -> Any:
    """The algorithm config of one grid cell with the experiment's seeds and record rounds."""
    record = experiment.record_rounds
    if record.listed:
        return experiment.algorithm.config(cell, problem, experiment.seeds, record.listed)
    provisional = experiment.algorithm.config(cell, problem, experiment.seeds, ())
    engine = algorithm_for(provisional)
    last = engine.plan(engine.build_problem(experiment.problem), provisional, False).record_rounds[-1]
    return dataclasses.replace(provisional, record_rounds=record.rounds(last))


def _draw(evaluated: Sequence[ClaimResult], out: Path) -> list[ReportFigure]:
    """Every check's figures, saved into ``out`` (matplotlib is imported here, once there is something to draw)."""
    from .plots import draw

    return [draw(plot, r.verdict.claim_id, out) for r in evaluated for plot in r.plots]


def _overall(verdicts: Sequence[Verdict]) -> Status:
    """FAIL if a check fails, PASS if all pass, else INCONCLUSIVE."""
    statuses = {v.status for v in verdicts}
    if Status.FAIL in statuses:
        return Status.FAIL
    return Status.PASS if statuses == {Status.PASS} else Status.INCONCLUSIVE
