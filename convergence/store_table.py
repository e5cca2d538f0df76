"""The tidy long table of a run store's results (``RunStore.export_table``): its rows and its
CSV (standard library) or Parquet (pyarrow) file.

One row per run key x seed x record point x metric; the columns are ``run_id``, the config's
fields flattened to dotted names, then ``seed``, ``record``, ``step``, ``metric``, ``value``
(``TABLE_COLUMNS`` without the fields). ``RunStore.export_table`` documents the layout.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .store_file import StoreError

__all__ = ["TABLE_COLUMNS", "array_rows", "config_fields", "write_table"]

TABLE_COLUMNS = ("run_id", "seed", "record", "step", "metric", "value")
"""The fixed columns of the exported table; the flattened config fields sit between run_id and seed."""


def array_rows(prefix: list[Any], seed: Any, steps: Any, name: str, array: np.ndarray) -> Iterator[list[Any]]:
    """The table rows of one array: one per record point and element, or one for a rank-0 array;
    ``prefix`` is the run's run_id and config fields, ``steps`` the config's record steps."""
    if array.ndim == 0:
        yield [*prefix, seed, None, None, name, _scalar(array)]
        return
    steps = steps if isinstance(steps, list) and len(steps) == array.shape[0] else None
    for record in range(array.shape[0]):
        step = None if steps is None else steps[record]
        values = array[record]
        for index in np.ndindex(values.shape):
            metric = f"{name}[{','.join(map(str, index))}]" if index else name
            yield [*prefix, seed, record, step, metric, _scalar(values[index])]


def config_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config's fields flattened to dotted names, minus the ones with columns of their own."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for name, item in value.items():
                walk(f"{prefix}.{name}" if prefix else str(name), item)
        elif isinstance(value, (list, tuple, Mapping)):
            flat[prefix] = json.dumps(value, sort_keys=True)
        else:
            flat[prefix] = value

    walk("", {name: value for name, value in config.items() if name not in ("seed", "record_steps")})
    return {f"config.{name}" if name in TABLE_COLUMNS else name: value for name, value in flat.items()}


def write_table(path: Path, fmt: str, columns: list[str], rows: Iterator[list[Any]]) -> int:
    """Write the rows as ``fmt`` ("csv" or "parquet") to ``path``; returns the row count."""
    return (_write_csv if fmt == "csv" else _write_parquet)(path, columns, rows)


def _scalar(value: np.ndarray | np.generic) -> int | float:
    """A table value: Python int for booleans and integers, float otherwise."""
    item = value.item()
    return int(item) if isinstance(item, (bool, int)) else float(item)


def _write_csv(path: Path, columns: list[str], rows: Iterator[list[Any]]) -> int:
    """Write the table as CSV (floats in shortest round-trip form); returns the row count."""
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if value is None else value for value in row])
            count += 1
    return count


def _write_parquet(path: Path, columns: list[str], rows: Iterator[list[Any]]) -> int:
    """Write the table as Parquet with pyarrow; returns the row count."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise StoreError(
            "Parquet export needs pyarrow, which is not installed (pip install pyarrow); "
            "export to a .csv path instead, which needs nothing extra"
        ) from None
    data: list[list[Any]] = [[] for _ in columns]
    count = 0
    for row in rows:
        for column, value in zip(data, row):
            column.append(value)
        count += 1
    value_column = len(columns) - 1
    data[value_column] = [float(value) for value in data[value_column]]
    arrays = {name: pa.array(_uniform(values)) for name, values in zip(columns, data)}
    pq.write_table(pa.table(arrays), path)
    return count


def _uniform(values: list[Any]) -> list[Any]:
    """Values of one column with a single Parquet type: numbers stay numbers, mixtures become text."""
    kinds = {type(value) for value in values if value is not None}
    if len(kinds) <= 1 or kinds == {int, float}:
        return values
    return [None if value is None else str(value) for value in values]
