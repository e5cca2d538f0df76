"""The work an experiment file asks for, estimated from its shape before any config is built.

``experiment_workload`` prices an ``Experiment`` with ``convergence.budget``: the grid's cells are
counted from its shape (the product of its lists' lengths; a 10^6-cell grid is never enumerated),
each cell's run is the engine's own count (``Algorithm.workload``: rounds, local steps, clients,
minibatch and the model's flops) for one probe config of that cell (one seed, its expressions
evaluated on the problem's names: ``rounds = "ceil(kappa * 1e12)"`` is priced as the number it
gives), then scaled by the seeds and the record points. A grid of more than ``SAMPLED_CELLS`` cells
is priced by that many (a Latin hypercube sample of its fields' values: their mean times the number
of cells), never enumerated.
``record_rounds = {log_spaced = n}`` adds the memory of the n log-spaced points computed before
their rounds are made distinct (three arrays of n numbers), and each run records at most its
rounds + 1 points.

``check_experiment_budget`` refuses (BudgetError naming the field: ``algorithm.rounds``,
``grid.rounds``, ``grid`` for the number of cells, ``seeds``, ``record_rounds.log_spaced``) an
experiment estimated over the limit or beyond the memory available, before the output folder or
the run store is made.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping
from typing import Any

from convergence.budget import Workload, check_workload, model_flops_per_row, record_workload

from .algorithm import GridCell
from .file import Experiment

__all__ = ["SAMPLED_CELLS", "check_experiment_budget", "experiment_workload"]

SAMPLED_CELLS = 256
"""A grid with more cells is priced from this many (a Latin hypercube sample of its fields' values)."""
_GEOMSPACE_BYTES = 24
"""Bytes per requested log-spaced point before its rounds are made distinct: the float array, its
rounded integers and the unique sort's copy (``convergence.log_spaced_rounds``)."""


def experiment_workload(experiment: Experiment) -> Workload:
    """The estimated work of ``experiment`` (module docstring), its drivers named by field path."""
    from convergence.algorithms import algorithm_for
    from problems import build_problem

    from .names import ProblemValues

    objective = build_problem(experiment.problem)
    values = ProblemValues(objective, lambda: _optimum(objective))
    grid = experiment.grid.fields
    cells = math.prod(len(listed) for listed in grid.values())
    sample = experiment.grid.cells if cells <= SAMPLED_CELLS else _latin_hypercube(grid, SAMPLED_CELLS)
    seeds = len(experiment.seeds)
    record = experiment.record_rounds
    per_cell = Workload()
    for cell in sample:
        probe = experiment.algorithm.config(cell, values, (0,), ())
        engine = algorithm_for(probe)
        problem = engine.build_problem(experiment.problem)
        last = engine.plan(problem, probe, False).record_rounds[-1]  # no record rounds given: its last round
        records = len(record.listed) if record.listed else min(record.log_spaced, last + 1)
        work = engine.workload(problem, probe, "numba", False, False)
        named = [(_path(name, cell), value) for name, value in work.drivers if name not in ("seeds", "record_rounds")]
        per_cell += dataclasses.replace(work.times(seeds), drivers=()).with_drivers(*named)
        per_cell += _records(objective, seeds, records - 1)
    total = per_cell.times(cells / len(sample)).with_drivers(("seeds", seeds))
    if cells > 1:
        total = total.with_drivers(("grid", cells))
    if record.log_spaced:
        total += Workload(memory_bytes=_GEOMSPACE_BYTES * float(record.log_spaced),
                          drivers=(("record_rounds.log_spaced", float(record.log_spaced)),))
    return total


def check_experiment_budget(experiment: Experiment, limit_hours: float | None = None) -> Workload:
    """``experiment_workload``, after a BudgetError naming its largest field if it is over the limit
    (``convergence.budget.max_cpu_hours(limit_hours)``) or beyond the memory available."""
    work = experiment_workload(experiment)
    check_workload(work, f"experiment {experiment.name!r}", limit_hours=limit_hours)
    return work


def _optimum(objective: Any) -> Any:
    """The exact optimum, computed only when an expression of the estimate needs it (F_star, Gamma, ...)."""
    from ..framework.evaluation import claim_optimum

    return claim_optimum(objective)[0]


def _latin_hypercube(grid: Mapping[str, tuple[Any, ...]], n: int) -> list[GridCell]:
    """``n`` cells of the grid, a Latin hypercube sample: each field's values taken at ``n`` evenly
    spaced positions (every value about equally often), paired across fields by a fixed shuffle per
    field, so the sample's mean cost follows each field's values whatever the grid's size."""
    columns = []
    for k, listed in enumerate(grid.values()):
        positions = [(2 * j + 1) * len(listed) // (2 * n) for j in range(n)]
        random.Random(k).shuffle(positions)
        columns.append([listed[position] for position in positions])
    return [GridCell(dict(zip(grid, values))) for values in zip(*columns)]


def _path(name: str, cell: GridCell) -> str:
    """Where a config field is set in the file: ``grid.<name>`` or ``algorithm.<name>`` (a field left
    at the config's default is named as ``algorithm.<name>``, where it would be set)."""
    return f"grid.{name}" if name in cell.values else f"algorithm.{name}"


def _records(objective: Any, seeds: int, extra: int) -> Workload:
    """``extra`` record points per seed beyond the one the probe config counts."""
    if extra <= 0:
        return Workload()
    flops, network = model_flops_per_row(objective)
    return record_workload(seeds=seeds, records=extra, data_rows=int(objective.client_sizes.sum()),
                           flops_per_row=flops, dim=objective.dim, network=network)
