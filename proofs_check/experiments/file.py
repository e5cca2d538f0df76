"""An experiment file (TOML): a user's problem, algorithm, grid, seeds, record rounds and checks,
read into one immutable ``Experiment`` that ``fedbound run`` executes (``reports.verify.run_experiment``,
through the claim ``proofs_check.experiments.compile`` makes of it).

The file (``examples/fedavg_rate.toml`` is a worked one)::

    name = "fedavg-rate"             # prefix of the verdict ids (default: the file's stem)
    description = "..."              # optional, shown in the report
    seeds = 16                       # seeds 0..15, or a list of seeds [0, 3, 7]
    record_rounds = {log_spaced = 30}   # or a list of rounds [1, 10, 100]

    [problem]                        # a problem family and its parameters ...
    family = "synthetic"
    params = {alpha = 1.0, beta = 1.0, n_clients = 10}
    # builder = "my_builders.py:my_builder"   (a user family: a @problems.problem_builder function
    #   in a file of this file's folder, or "installed_module:my_builder"; it runs when the file is run)
    # ... or a user's arrays: from_arrays = "data.npz" (arrays X, y, client_of_row and optionally
    # weights; the path relative to this file), loss = "logistic", l2 = 0.1, and optionally
    # n_classes, name, data_dir (problems.from_arrays)

    [algorithm]                      # proofs_check.experiments.algorithm
    name = "fedavg"
    rounds = 4000
    step_size = {kind = "li", mu = "mu", gamma = "max(8 * kappa, local_steps)"}

    [grid]                           # optional: the Cartesian product of the listed values
    local_steps = [1, 5]

    [[checks]]                       # proofs_check.experiments.checks
    kind = "rate"
    name = "O(1/T)"
    x = "gamma + T"
    exponent = -1.0
    tolerance = 0.2

``record_rounds = {log_spaced = n}`` records about n rounds spaced evenly in log scale from 1 to the
last round of each cell's run (``convergence.log_spaced_rounds``). Everything is checked when the
file is read, before any run: each bad field is one ExperimentError naming its path
(``checks[1].expression: unknown name 'Lip' (allowed here: ...)``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .algorithm import AlgorithmTable, Grid
from .checks import Check, check_names, parse_checks
from .fields import ExperimentError, check_keys, read_float, read_int, read_str, read_table, required

if TYPE_CHECKING:
    from problems import ProblemSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, packaged as tomli
    import tomli as tomllib

__all__ = ["Experiment", "MAX_EXPERIMENT_BYTES", "RecordRounds", "load_experiment"]

MAX_EXPERIMENT_BYTES = 1 << 20
"""The largest experiment file read (1 MiB): the worked example has 2 KB; anything near this is no experiment."""

_TOP_KEYS = ("name", "description", "seeds", "record_rounds", "problem", "algorithm", "grid", "checks")
_FAMILY_KEYS = ("family", "params", "builder")
_ARRAYS_KEYS = ("from_arrays", "loss", "l2", "n_classes", "name", "data_dir")


@dataclass(frozen=True)
class RecordRounds:
    """The rounds at which every run records its global model: ``listed`` ones, or about
    ``log_spaced`` rounds spaced in log scale up to each run's last round."""

    listed: tuple[int, ...] = ()
    log_spaced: int = 0

    @classmethod
    def parse(cls, value: Any) -> RecordRounds:
        if isinstance(value, list):
            if not value:
                raise ExperimentError("record_rounds: the list is empty; give at least one round, or {log_spaced = n}")
            return cls(listed=tuple(read_int(v, f"record_rounds[{i}]", minimum=0) for i, v in enumerate(value)))
        if isinstance(value, Mapping):
            check_keys(value, ("log_spaced",), "record_rounds")
            return cls(log_spaced=read_int(required(value, "log_spaced", "record_rounds"), "record_rounds.log_spaced",
                                           minimum=2))
        raise ExperimentError(f"record_rounds: expected a list of rounds or {{log_spaced = n}}, got {value!r}")

    def rounds(self, last_round: int) -> tuple[int, ...]:
        """The record rounds of a run whose last round is ``last_round``."""
        from convergence import log_spaced_rounds

        return self.listed if self.listed else log_spaced_rounds(last_round, self.log_spaced)


@dataclass(frozen=True)
class Experiment:
    """A user's experiment, checked (module docstring): ``problem`` its problem spec, ``algorithm``
    its ``[algorithm]`` table, ``grid`` its grid, ``seeds``, ``record_rounds``, ``checks``;
    ``name`` prefixes the verdict ids (``name/check name``), ``source`` is the file it came from."""

    name: str
    description: str
    problem: ProblemSpec
    algorithm: AlgorithmTable
    grid: Grid
    seeds: tuple[int, ...]
    record_rounds: RecordRounds
    checks: tuple[Check, ...]
    source: str = ""

    @classmethod
    def parse(cls, data: Mapping[str, Any], *, base_dir: str | os.PathLike[str], name: str, source: str = "") -> Experiment:
        """The experiment of a parsed TOML document; relative paths (``from_arrays``) are taken from
        ``base_dir``, and ``name`` is the default of the ``name`` key."""
        check_keys(data, _TOP_KEYS, "")
        name = read_str(data.get("name", name), "name")
        if "/" in name:
            raise ExperimentError(f"name: {name!r} has a '/', which separates the parts of a verdict id")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise ExperimentError(f"description: expected a string, got {description!r}")
        seeds = _seeds(required(data, "seeds", ""))
        record = RecordRounds.parse(required(data, "record_rounds", ""))
        problem = _problem_spec(required(data, "problem", ""), Path(base_dir))
        algorithm = AlgorithmTable.parse(required(data, "algorithm", ""))
        grid = Grid.parse(data.get("grid", {}), algorithm.fields, algorithm.entries)
        algorithm.check_complete(grid)
        algorithm.check_expressions(grid)
        checks = parse_checks(required(data, "checks", ""), check_names(algorithm), grid)
        return cls(name, description, problem, algorithm, grid, seeds, record, checks, source)

    def check_id(self, check: Check) -> str:
        """The verdict id of one of its checks."""
        return f"{self.name}/{check.name}"


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """The experiment in the TOML file at ``path`` (module docstring); ExperimentError naming the
    file when it cannot be read or is not TOML, or naming the bad field."""
    file = Path(path)
    text = _experiment_text(file)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"EXPERIMENT: {str(file)!r} is not valid TOML ({exc})") from None
    except RecursionError:
        raise ExperimentError(f"EXPERIMENT: {str(file)!r} nests arrays or tables too deeply to be read (an experiment "
                              "file nests a few levels)") from None
    return Experiment.parse(data, base_dir=file.resolve().parent, name=file.stem, source=str(file))


def _experiment_text(file: Path) -> str:
    """The text of the experiment file; ExperimentError naming it when it is missing, unreadable, not
    a regular file (a FIFO would block for ever), larger than MAX_EXPERIMENT_BYTES or not UTF-8."""
    from problems import ProblemError
    from problems.file_checksum import regular_file

    try:
        size = regular_file(file).st_size
    except ProblemError as exc:
        raise ExperimentError(f"EXPERIMENT: {exc}") from None
    if size > MAX_EXPERIMENT_BYTES:
        raise ExperimentError(f"EXPERIMENT: {str(file)!r} has {size} bytes; an experiment file has at most "
                              f"{MAX_EXPERIMENT_BYTES} (a few kilobytes describe any experiment)")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExperimentError(f"EXPERIMENT: cannot read {str(file)!r} ({getattr(exc, 'strerror', None) or exc})") from None


def _seeds(value: Any) -> tuple[int, ...]:
    """``n`` (seeds 0..n-1) or a list of seeds (the algorithm config checks them); ``n`` is bounded as
    ``--seeds`` is (``convergence.check_sweep_memory``) before the seeds are made."""
    from convergence import check_sweep_memory

    if isinstance(value, list):
        return tuple(read_int(v, f"seeds[{i}]", minimum=0) for i, v in enumerate(value))
    count = read_int(value, "seeds", minimum=1)
    check_sweep_memory(count, 0, name="seeds")
    return tuple(range(count))


def _problem_spec(value: Any, base_dir: Path) -> ProblemSpec:
    """The problem spec of the ``[problem]`` table: a family's or a user's arrays', built once here
    (cached per process) so that a parameter the builder refuses is an error of the file. A user
    family's ``builder`` is ``FILE.py:NAME`` (a file in ``base_dir``, the experiment file's folder)
    or ``MODULE:NAME`` (installed), a function declared ``@problems.problem_builder``: checked before
    anything is imported (``problems.user_code``)."""
    from problems import CodeReference, ProblemError, ProblemSpec, build_problem

    table = read_table(value, "problem")
    if ("family" in table) == ("from_arrays" in table):
        raise ExperimentError("problem: give either family (with params) or from_arrays (an .npz file)")
    if "from_arrays" in table:
        return _arrays_spec(table, base_dir)
    check_keys(table, _FAMILY_KEYS, "problem")
    params = read_table(table.get("params", {}), "problem.params")
    known: Mapping[str, Any] = params
    try:
        given = {key: table[key] for key in _FAMILY_KEYS if key in table} | {"params": params}
        if "builder" in given:  # FILE.py:NAME from this file's folder, recorded by its absolute path
            given["builder"] = CodeReference.parse(given["builder"], "builder", base_dir, confine=True).text
        spec = ProblemSpec.from_json(given)
        known = spec.params  # every parameter of the family, defaults included
        build_problem(spec)
        return spec
    except ProblemError as exc:
        field, _, rest = str(exc).partition(": ")
        names = [name.strip() for name in field.split(",")]  # "alpha, beta": a message about several parameters
        where = (", ".join(f"problem.params.{name}" for name in names) if all(name in known for name in names)
                 else f"problem.{field}")
        raise ExperimentError(f"{where}: {rest}") from None


def _arrays_spec(table: Mapping[str, Any], base_dir: Path) -> ProblemSpec:
    """The spec of ``problems.from_arrays`` on the arrays of an .npz file (X, y, client_of_row, weights)."""
    import numpy as np

    from problems import ProblemError, from_arrays
    from problems.file_checksum import regular_file

    check_keys(table, _ARRAYS_KEYS, "problem")
    file = base_dir / read_str(table["from_arrays"], "problem.from_arrays")
    try:
        regular_file(file)  # a FIFO would block np.load for ever
    except ProblemError as exc:
        if file.exists():  # a missing file is np.load's to report, below
            raise ExperimentError(f"problem.from_arrays: {exc}") from None
    try:
        with np.load(file, allow_pickle=False) as stored:
            arrays = {key: stored[key] for key in stored.files}
    except (OSError, ValueError) as exc:
        raise ExperimentError(f"problem.from_arrays: cannot read {str(file)!r} as an .npz file ({exc})") from None
    unknown = sorted(set(arrays) - {"X", "y", "client_of_row", "weights"})
    missing = [key for key in ("X", "y", "client_of_row") if key not in arrays]
    if missing or unknown:
        problem = f"has no array {missing[0]!r}" if missing else f"has an array {unknown[0]!r} it does not use"
        raise ExperimentError(f"problem.from_arrays: {str(file)!r} {problem} (arrays: X, y, client_of_row and "
                              "optionally weights)")
    n_classes = table.get("n_classes")
    try:
        problem = from_arrays(
            arrays["X"], arrays["y"], arrays["client_of_row"], weights=arrays.get("weights"),
            loss=read_str(required(table, "loss", "problem"), "problem.loss"),
            l2=read_float(table.get("l2", 0.0), "problem.l2"),
            n_classes=None if n_classes is None else read_int(n_classes, "problem.n_classes", minimum=1),
            name=None if "name" not in table else read_str(table["name"], "problem.name"),
            data_dir=None if "data_dir" not in table else base_dir / read_str(table["data_dir"], "problem.data_dir"),
        )
    except ProblemError as exc:
        field = str(exc).partition(": ")[0]
        where = "problem.from_arrays: " if field in ("X", "y", "client_of_row", "weights") else "problem."
        raise ExperimentError(f"{where}{exc}") from None
    return problem.spec
