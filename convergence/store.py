"""The run store: finished runs kept in one embedded SQLite file, keyed by run key.

Why SQLite (standard library, no server):

- atomic commits: a run is written in one transaction (its config, its metadata and every result
  array), so the store holds a run completely or not at all;
- survives ``kill -9`` mid-write: in WAL mode a transaction that has not committed is simply
  absent when the file is next opened, and a committed one is on disk (``synchronous=NORMAL``
  may lose the last commits on a power cut, never consistency; a lost run is recomputed);
- one file, easy to copy, archive or hand to a reader;
- concurrent readers: WAL lets other processes read (a report, a notebook) while a sweep writes;
- no extra dependency.

A sweep's driver process is the only writer: results arrive from the workers (local processes or
a Dask cluster) and the driver stores each one as soon as it completes. Arrays are serialised
with NumPy's ``.npy`` format (``allow_pickle=False``, so reading a store never runs code) into one
BLOB per array; the config and the metadata are JSON text columns.

``export_table`` writes a tidy long table of every stored result for pandas, R or a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RunStore", "StoreError", "TABLE_COLUMNS"]

_SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, config TEXT NOT NULL, meta TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS arrays ("
    " key TEXT NOT NULL, name TEXT NOT NULL, npy BLOB NOT NULL, PRIMARY KEY (key, name)) WITHOUT ROWID",
)
_BUSY_TIMEOUT_S = 60.0  # how long a reader or the writer waits for a lock held by another process
_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats: what a tidy table's value holds

TABLE_COLUMNS = ("run_id", "seed", "record", "step", "metric", "value")
"""The fixed columns of the exported table; the flattened config fields sit between run_id and seed."""


class StoreError(RuntimeError):
    """A run store that cannot be used as asked (another schema version, a bad array or format)."""


class RunStore:
    """Finished runs in the SQLite file ``path`` (created when missing).

    Each run is stored under its ``key`` with its config (JSON), its metadata (JSON: timing,
    executor, ...) and its result, a mapping of names to numeric NumPy arrays, returned by
    ``get`` with the same dtype, shape and bits. Open it as a context manager, or ``close()`` it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, _SCHEMA_VERSION):
            self._db.close()
            raise StoreError(f"{self.path}: run store schema version {version}, this fedbound reads {_SCHEMA_VERSION}")
        if version == 0:  # a new file (or one a concurrent opener is initialising): create the tables
            with self._transaction():
                for statement in _SCHEMA:
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")

    def close(self) -> None:
        """Close the connection (committed runs are already on disk)."""
        self._db.close()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: committed whole on success, rolled back on any error."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction: every query inside sees the same committed state."""
        self._db.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    def has(self, key: str) -> bool:
        """Whether a run is stored under ``key``."""
        return self._db.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        """The stored result of ``key`` (name -> array), or None when there is none."""
        rows = self._db.execute(
            "SELECT arrays.name, arrays.npy FROM runs LEFT JOIN arrays USING (key) WHERE runs.key = ?", (key,)
        ).fetchall()
        if not rows:
            return None
        return {name: _decode(blob) for name, blob in rows if name is not None}

    def config(self, key: str) -> dict[str, Any] | None:
        """The stored config JSON of ``key``, or None."""
        row = self._db.execute("SELECT config FROM runs WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def meta(self, key: str) -> dict[str, Any] | None:
        """The stored metadata of ``key`` (e.g. seconds, executor, finished), or None."""
        row = self._db.execute("SELECT meta FROM runs WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(
        self, key: str, config_json: Mapping[str, Any], result: Mapping[str, np.ndarray], meta: Mapping[str, Any]
    ) -> None:
        """Store (or replace) the run ``key`` in one transaction.

        ``result`` maps names to numeric arrays (bool, integer or float dtypes); config and meta
        must be JSON-serialisable. Nothing is written when any of them is invalid.
        """
        if not isinstance(key, str) or not key:
            raise StoreError(f"key: must be a non-empty string, got {key!r}")
        blobs = [(key, name, _encode(key, name, array)) for name, array in result.items()]
        config_text = _json_text(key, "config", config_json)
        meta_text = _json_text(key, "meta", meta)
        with self._transaction():
            self._db.execute("DELETE FROM arrays WHERE key = ?", (key,))
            self._db.execute("DELETE FROM runs WHERE key = ?", (key,))
            self._db.execute("INSERT INTO runs (key, config, meta) VALUES (?, ?, ?)", (key, config_text, meta_text))
            self._db.executemany("INSERT INTO arrays (key, name, npy) VALUES (?, ?, ?)", blobs)

    def delete(self, key: str) -> bool:
        """Remove the run ``key``; returns whether there was one."""
        with self._transaction():
            self._db.execute("DELETE FROM arrays WHERE key = ?", (key,))
            removed = self._db.execute("DELETE FROM runs WHERE key = ?", (key,)).rowcount
        return removed > 0

    def keys(self) -> list[str]:
        """The stored keys, in the order they were (last) stored."""
        return [key for (key,) in self._db.execute("SELECT key FROM runs ORDER BY rowid")]

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def export_table(self, path: str | os.PathLike[str], *, format: str | None = None) -> int:
        """Write every stored result as a tidy long table; returns the number of data rows.

        One row per run key x seed x record point x metric. Columns: ``run_id`` (the key), the
        config fields flattened to dotted names (``problem.params.alpha``; lists as JSON text; a
        field whose name clashes with a fixed column is prefixed ``config.``), then ``seed``,
        ``record``, ``step``, ``metric``, ``value``. ``seed`` is the config's top-level ``seed``
        field; axis 0 of every array of rank >= 1 is the record axis (``record`` = its index,
        ``step`` = the config's top-level ``record_steps`` entry when the lengths agree), and
        further axes are folded into the metric name (``records[3]``); a rank-0 array is one row
        with empty record and step. Missing values are empty in CSV and null in Parquet.

        ``format`` is "csv" or "parquet", taken from the file suffix when None. CSV uses the
        standard library; Parquet needs pyarrow. pandas reads both (``read_csv``, ``read_parquet``).
        """
        path = Path(path)
        fmt = (format or path.suffix.lstrip(".")).lower()
        if fmt not in ("csv", "parquet"):
            raise StoreError(f"format: unknown table format {fmt!r} (from {path.name!r}); use 'csv' or 'parquet'")
        with self._snapshot():
            fields = sorted({name for (text,) in self._db.execute("SELECT config FROM runs")
                             for name in _config_fields(json.loads(text))})
            columns = ["run_id", *fields, *TABLE_COLUMNS[1:]]
            write = _write_csv if fmt == "csv" else _write_parquet
            return write(path, columns, self._rows(fields))

    def _rows(self, fields: list[str]) -> Iterator[list[Any]]:
        """Rows of the tidy table, aligned with run_id, ``fields`` and the fixed columns."""
        runs = self._db.execute(
            "SELECT runs.key, runs.config, arrays.name, arrays.npy FROM runs JOIN arrays USING (key) "
            "ORDER BY runs.key, arrays.name"
        )
        for key, text, name, blob in runs:
            config = json.loads(text)
            flat = _config_fields(config)
            prefix = [key, *(flat.get(field) for field in fields)]
            seed = config.get("seed")
            array = _decode(blob)
            if array.ndim == 0:
                yield [*prefix, seed, None, None, name, _scalar(array)]
                continue
            steps = config.get("record_steps")
            steps = steps if isinstance(steps, list) and len(steps) == array.shape[0] else None
            for record in range(array.shape[0]):
                step = None if steps is None else steps[record]
                values = array[record]
                for index in np.ndindex(values.shape):
                    metric = f"{name}[{','.join(map(str, index))}]" if index else name
                    yield [*prefix, seed, record, step, metric, _scalar(values[index])]


def _encode(key: str, name: str, array: np.ndarray) -> bytes:
    """The .npy bytes of a numeric array (anything else is refused, naming run and array)."""
    if not isinstance(name, str) or not name:
        raise StoreError(f"run {key}: array names must be non-empty strings, got {name!r}")
    if not isinstance(array, np.ndarray) or array.dtype.kind not in _NUMERIC_KINDS:
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise StoreError(f"run {key}: result {name!r} must be a numeric numpy array (bool, int, float), got {kind}")
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _decode(blob: bytes) -> np.ndarray:
    """The array stored as .npy bytes."""
    return np.load(io.BytesIO(blob), allow_pickle=False)


def _scalar(value: np.ndarray | np.generic) -> int | float:
    """A table value: Python int for booleans and integers, float otherwise."""
    item = value.item()
    return int(item) if isinstance(item, (bool, int)) else float(item)


def _json_text(key: str, what: str, value: Mapping[str, Any]) -> str:
    """Canonical JSON text (sorted keys, finite numbers) of a run's config or metadata."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run {key}: {what} is not JSON-serialisable: {exc}") from None


def _config_fields(config: Mapping[str, Any]) -> dict[str, Any]:
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
