"""The algorithm of an experiment: its ``[algorithm]`` table, its ``[grid]`` and the algorithm
config of every grid cell, built generically from the engine registry.

``[algorithm]`` names a registered algorithm (``convergence.algorithms.ALGORITHM_NAMES``) and gives
the fields of its config class (``convergence.algorithms.config_type``) by their own names; no
algorithm has code here. How a value is read depends only on the field's annotation:

* a ``StepSize`` field takes a table in ``StepSize.to_json``'s form, ``{kind = "constant",
  eta0 = 0.01}`` (``StepSize.from_json``; keys left out take their defaults);
* a numeric field (``int``, ``float``, optionally ``| None``), and each number of a step-size
  table, takes a number or an expression (``proofs_check.experiments.expression``) of the problem's
  names, the table's literal numeric fields and the grid's fields, e.g. Li et al.'s step
  ``{kind = "li", mu = "mu", gamma = "max(8 * kappa, local_steps)"}``; an integer field's
  expression must give an integral value (use ceil or floor);
* any other field takes its TOML value as it is, and the config checks it.

``seeds`` and ``record_rounds`` are set at the top level of the file, never here. ``[grid]`` lists,
for some of the fields, the values to run (a non-empty array each, read as the field is); the
cells are their Cartesian product, in the order the file lists them. A field is given either in
``[algorithm]`` or in ``[grid]``. Every bad value is one ExperimentError naming its field path.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .expression import Expression
from .fields import ExperimentError, check_keys, is_number, read_str, read_table, required
from .names import PROBLEM_NAMES

__all__ = ["AlgorithmTable", "ConfigField", "Grid", "GridCell"]

_INT64_MAX = 2**63 - 1  # the kernels' integers are 64-bit

EXPERIMENT_FIELDS = ("seeds", "record_rounds")
"""Fields of every algorithm config that the experiment sets at the top level of its file."""


@dataclass(frozen=True)
class ConfigField:
    """One field of an algorithm config: its ``name``, ``kind`` ("step_size", "int", "float" or
    "value": read as given) and whether the config has a default for it."""

    name: str
    kind: str
    has_default: bool

    @classmethod
    def of(cls, config_type: type) -> tuple[ConfigField, ...]:
        """The fields of ``config_type`` (a dataclass) except ``EXPERIMENT_FIELDS``, by their annotations."""
        from convergence import StepSize

        hints = typing.get_type_hints(config_type)
        out = []
        for f in dataclasses.fields(config_type):
            if f.name in EXPERIMENT_FIELDS:
                continue
            types_of = set(typing.get_args(hints[f.name])) if _is_union(hints[f.name]) else {hints[f.name]}
            types_of.discard(type(None))
            if types_of == {StepSize}:
                kind = "step_size"
            elif types_of and types_of <= {int, float}:
                kind = "float" if float in types_of else "int"
            else:
                kind = "value"
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            out.append(cls(f.name, kind, has_default))
        return tuple(out)


@dataclass(frozen=True)
class GridCell:
    """One cell of the grid: the value of each grid field (``values``, in the grid's order)."""

    values: Mapping[str, Any]

    @property
    def label(self) -> str:
        """E.g. ``local_steps=5, batch_size=4``; "all runs" for the one cell of an empty grid."""
        return ", ".join(f"{name}={_text(value)}" for name, value in self.values.items()) or "all runs"

    def matches(self, selector: Mapping[str, Any]) -> bool:
        """Whether every field of ``selector`` has the selector's value in this cell."""
        return all(name in self.values and _same(self.values[name], value) for name, value in selector.items())


@dataclass(frozen=True)
class Grid:
    """The grid fields and their values, in the file's order (module docstring)."""

    fields: Mapping[str, tuple[Any, ...]]

    @classmethod
    def parse(cls, table: Any, config_fields: Sequence[ConfigField], algorithm: Mapping[str, Any]) -> Grid:
        """The ``[grid]`` table checked against the config's fields and the ``[algorithm]`` table."""
        table = read_table(table, "grid")
        names = {f.name: f for f in config_fields}
        out = {}
        for name, values in table.items():
            if name in EXPERIMENT_FIELDS:
                raise ExperimentError(f"grid.{name}: {name} is set at the top level of the file, not in a grid")
            if name not in names:
                raise ExperimentError(f"grid.{name}: not a field of the algorithm's config (its fields: "
                                      f"{', '.join(names)})")
            if name in algorithm:
                raise ExperimentError(f"grid.{name}: also given in [algorithm]; give a field in one place")
            if not isinstance(values, list) or not values:
                raise ExperimentError(f"grid.{name}: expected a non-empty array of values, got {values!r}")
            for i, value in enumerate(values):
                if names[name].kind == "step_size":
                    _step_table(value, f"grid.{name}[{i}]")
                if any(_same(value, other) for other in values[:i]):
                    raise ExperimentError(f"grid.{name}[{i}]: {value!r} is listed twice")
            out[name] = tuple(values)
        return cls(out)

    @property
    def cells(self) -> tuple[GridCell, ...]:
        """The Cartesian product of the fields' values (one cell for an empty grid)."""
        return tuple(GridCell(dict(zip(self.fields, combo))) for combo in itertools.product(*self.fields.values()))

    def select(self, selector: Any, path: str) -> GridCell:
        """The one cell ``selector`` (a table of grid fields and values) picks; ExperimentError naming
        ``path`` when it names another field or a value the grid does not list, or picks several cells."""
        selector = read_table(selector, path)
        for name, value in selector.items():
            if name not in self.fields:
                raise ExperimentError(f"{path}.{name}: not a grid field (grid fields: {', '.join(self.fields) or 'none'})")
            if not any(_same(value, listed) for listed in self.fields[name]):
                raise ExperimentError(f"{path}.{name}: {value!r} is not among the grid's values {list(self.fields[name])}")
        chosen = [cell for cell in self.cells if cell.matches(selector)]
        if len(chosen) != 1:
            raise ExperimentError(f"{path}: selects {len(chosen)} grid cells ({'; '.join(c.label for c in chosen)}); "
                                  "name a value for every grid field")
        return chosen[0]


@dataclass(frozen=True)
class AlgorithmTable:
    """The ``[algorithm]`` table: the algorithm's ``name``, its config's ``fields`` and the values
    given for them (``entries``: field name -> TOML value), checked against the config class."""

    name: str
    fields: tuple[ConfigField, ...]
    entries: Mapping[str, Any]

    @classmethod
    def parse(cls, table: Any) -> AlgorithmTable:
        """The table checked: a registered ``name``, known fields, no experiment field, a table for a step size."""
        from convergence import ConfigError
        from convergence.algorithms import config_type

        table = read_table(table, "algorithm")
        name = read_str(required(table, "name", "algorithm"), "algorithm.name")
        try:
            config_fields = ConfigField.of(config_type(name))
        except ConfigError as exc:
            raise ExperimentError(f"algorithm.name: {str(exc).partition(': ')[2]}") from None
        entries = {key: value for key, value in table.items() if key != "name"}
        for key in EXPERIMENT_FIELDS:
            if key in entries:
                raise ExperimentError(f"algorithm.{key}: {key} is set at the top level of the file")
        check_keys(entries, [f.name for f in config_fields], "algorithm")
        for f in config_fields:
            if f.kind == "step_size" and f.name in entries:
                _step_table(entries[f.name], f"algorithm.{f.name}")
        return cls(name, config_fields, entries)

    def check_complete(self, grid: Grid) -> None:
        """ExperimentError naming ``algorithm.<field>`` for a field without a default given neither here nor in the grid."""
        for f in self.fields:
            if not f.has_default and f.name not in self.entries and f.name not in grid.fields:
                raise ExperimentError(f"algorithm.{f.name}: missing ({self.name}'s config needs it)")

    def field_names(self, kinds: Sequence[str]) -> tuple[str, ...]:
        """The names of the config fields of the given kinds."""
        return tuple(f.name for f in self.fields if f.kind in kinds)

    def expression_names(self, grid: Grid) -> frozenset[str]:
        """What a field's expression may use: the problem's names, the fields given a literal number
        in this table and the grid fields whose values are all numbers."""
        literal = [name for name, value in self.entries.items() if is_number(value)]
        numeric_grid = [name for name, values in grid.fields.items() if all(is_number(v) for v in values)]
        return frozenset(PROBLEM_NAMES) | frozenset(literal) | frozenset(numeric_grid)

    def check_expressions(self, grid: Grid) -> None:
        """Parse every expression of the table and of the grid, so that a bad one fails before any run
        (ExperimentError naming its path: ``algorithm.rounds``, ``algorithm.step_size.gamma``, ``grid.rounds[1]``)."""
        allowed = self.expression_names(grid)
        for f in self.fields:
            given = [(f"algorithm.{f.name}", self.entries[f.name])] if f.name in self.entries else []
            given += [(f"grid.{f.name}[{i}]", value) for i, value in enumerate(grid.fields.get(f.name, ()))]
            if f.kind == "step_size":
                given = [(f"{path}.{key}", item) for path, table in given if isinstance(table, Mapping)
                         for key, item in table.items() if key != "kind"]
            elif f.kind == "value":
                given = []
            for path, value in given:
                if isinstance(value, str):
                    Expression.parse(value, path, allowed)

    def config(self, cell: GridCell, problem_values: Mapping[str, float], seeds: tuple[int, ...],
               record_rounds: tuple[int, ...]) -> Any:
        """The config of one grid cell, with its expressions evaluated on ``problem_values`` (the
        problem's names) and the literal fields; ExperimentError naming the field path of a bad value."""
        from convergence import ConfigError, ScheduleError, StepSize
        from convergence.algorithms import config_type

        allowed = self.expression_names(Grid({name: (value,) for name, value in cell.values.items()}))
        literal = {name: float(value) for name, value in {**self.entries, **cell.values}.items() if is_number(value)}
        names = collections.ChainMap(literal, problem_values)  # the problem's values are computed on first use
        kwargs: dict[str, Any] = {}
        for f in self.fields:
            if f.name in cell.values:
                value, path = cell.values[f.name], f"grid.{f.name}"
            elif f.name in self.entries:
                value, path = self.entries[f.name], f"algorithm.{f.name}"
            else:
                continue
            if f.kind == "step_size":
                table = _step_table(value, path)
                resolved = {key: item if key == "kind" else _number(f"{path}.{key}", item, "float", allowed, names)
                            for key, item in table.items()}
                try:
                    kwargs[f.name] = StepSize.from_json(resolved)
                except ScheduleError as exc:
                    raise ExperimentError(f"{path}{str(exc).removeprefix('step_size')}") from None
            elif f.kind in ("int", "float"):
                kwargs[f.name] = _number(path, value, f.kind, allowed, names)
            else:
                kwargs[f.name] = value
        try:
            return config_type(self.name)(**kwargs, seeds=seeds, record_rounds=record_rounds)
        except (ConfigError, ScheduleError) as exc:
            raise ExperimentError(self._config_error(str(exc), cell)) from None

    def _config_error(self, message: str, cell: GridCell) -> str:
        """A config's error with its field path: ``grid.<field>`` when the field is a grid field."""
        field = message.split(":")[0].split(" (")[0].split(".")[0]
        if field in EXPERIMENT_FIELDS:
            return message
        if field in cell.values:
            return f"grid.{field} (cell {cell.label}): {message.partition(': ')[2]}"
        where = "" if not cell.values else f" (cell {cell.label})"
        return f"algorithm.{message}" if not where else f"algorithm.{field}{where}: {message.partition(': ')[2]}"


def _step_table(value: Any, path: str) -> Mapping[str, Any]:
    """A step-size table with the keys of ``StepSize.to_json`` only (its values are checked when the config is built)."""
    from convergence import StepSize

    table = read_table(value, path)
    check_keys(table, [f.name for f in dataclasses.fields(StepSize)], path)
    return table


def _number(path: str, value: Any, kind: str, allowed: frozenset[str], names: Mapping[str, float]) -> Any:
    """A numeric field's value: a literal as given (the config checks it), an expression evaluated
    on ``names``; an integer field's expression must give an integral value."""
    if not isinstance(value, str):
        return value
    expression = Expression.parse(value, path, allowed)
    result = expression.evaluate(names, path)
    if kind != "int":
        return result
    if not float(result).is_integer():
        raise ExperimentError(f"{path}: {expression.text!r} gives {result:.6g}, not an integer (use ceil or floor)")
    if abs(result) > _INT64_MAX:
        raise ExperimentError(f"{path}: {expression.text!r} gives {result:.6g}, beyond the largest integer a config "
                              f"field holds ({_INT64_MAX}, a 64-bit integer)")
    return int(result)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _same(a: Any, b: Any) -> bool:
    """TOML values equal as values of one type (1 and 1.0 are not the same grid value; True is not 1)."""
    return type(a) is type(b) and a == b


def _text(value: Any) -> str:
    """A grid value as short text: a table (a step size) as ``kind(key=value, ...)``."""
    if isinstance(value, Mapping):
        rest = ", ".join(f"{k}={v}" for k, v in value.items() if k != "kind")
        return f"{value.get('kind', 'table')}({rest})"
    return str(value)
