"""The tidy long table of a run store's results (``export_table``, ``fedbound export``): its CSV
(standard library) or Parquet (pyarrow) file, one ``run_metrics.MetricRow`` a line.

The columns are ``run_metrics.COLUMNS`` (the fields of MetricRow, in order); an empty ``index`` is
an empty CSV cell and a Parquet null. Parquet columns are typed: text for claim, run_id, config_id,
metric, algorithm, problem and step_size; 64-bit integers for seed, round, local_step, index,
clients and local_steps; float64 for value.
"""

from __future__ import annotations

import csv
import dataclasses
import os
from dataclasses import dataclass
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from .algorithms import DivergenceError
from .run_metrics import COLUMNS, MetricRow, claims_of, is_run, metric_rows
from .store import RunStore
from .store_file import StoreError

__all__ = ["TABLE_FORMATS", "TableSummary", "export_table", "write_table"]

TABLE_FORMATS = ("csv", "parquet")
"""The formats ``write_table`` writes."""

_BATCH_ROWS = 100_000
"""Rows per Parquet row group (the rows held in memory at once)."""

_TEXT = ("claim", "run_id", "config_id", "metric", "algorithm", "problem", "step_size")


@dataclass(frozen=True)
class TableSummary:
    """What ``export_table`` wrote: the ``rows``, the ``runs`` they come from, the store's entries that
    are no engine runs (``others``: PEP solutions, results of sweeps of one's own; ``run_metrics.is_run``)
    and the runs left out because they diverged (``diverged``: one line each, the DivergenceError's
    message naming the run, the seed and the round)."""

    rows: int
    runs: int
    others: int
    diverged: tuple[str, ...]


def write_table(path: Path, fmt: str, rows: Iterable[MetricRow]) -> int:
    """Write the rows as ``fmt`` ("csv" or "parquet") to ``path``; returns the row count."""
    return (_write_csv if fmt == "csv" else _write_parquet)(path, iter(rows))


def _write_csv(path: Path, rows: Iterator[MetricRow]) -> int:
    """Write the table as CSV (floats in shortest round-trip form); returns the row count."""
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(["" if value is None else value for value in dataclasses.astuple(row)])
            count += 1
    return count


def _write_parquet(path: Path, rows: Iterator[MetricRow]) -> int:
    """Write the table as Parquet with pyarrow, ``_BATCH_ROWS`` rows at a time; returns the row count."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise StoreError(
            "Parquet export needs pyarrow, which is not installed (pip install pyarrow); "
            "export to a .csv path instead, which needs nothing extra"
        ) from None
    schema = pa.schema([(name, pa.string() if name in _TEXT else pa.float64() if name == "value" else pa.int64())
                        for name in COLUMNS])
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        while batch := list(islice(rows, _BATCH_ROWS)):
            columns: list[list[Any]] = [[getattr(row, name) for row in batch] for name in COLUMNS]
            writer.write_table(pa.table(columns, schema=schema))
            count += len(batch)
    return count


def export_table(store: RunStore, path: str | os.PathLike[str], *, format: str | None = None,
                 claims: Mapping[str, Sequence[str]] | None = None, iterates: bool = False) -> TableSummary:
    """Write the metrics of every run of ``store`` as a tidy long table; returns what it wrote.

    One row per run x record point x metric (x block or coordinate, ``index``) x claim that read the
    run: ``run_metrics.MetricRow``, whose fields are the columns. ``claims`` maps claim ids to the keys
    of the runs each read (``reports.verification``: what ``fedbound verify`` and ``fedbound run``
    record in the store); a run no claim names gets one set of rows with an empty claim, a run several
    read one set per claim. ``iterates`` adds the coordinates of every recorded model (metric
    ``iterate``; d rows per record point). Entries that are not runs (PEP solutions) are left out, and
    so are runs that diverged (named in the summary).

    ``format`` is "csv" or "parquet", taken from the file suffix when None: CSV uses the standard
    library, Parquet needs pyarrow; pandas reads both (``read_csv``, ``read_parquet``). The table is
    written beside ``path`` and moved into place when complete, so a run that cannot be read back
    (CorruptRunError, or StoreError naming the run) leaves ``path`` as it was; ``path`` may not be the
    store itself.
    """
    path = Path(path)
    if path.exists() and os.path.samefile(path, store.path):
        raise StoreError(f"table: {str(path)!r} is the run store itself; choose another output file")
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in TABLE_FORMATS:
        raise StoreError(f"format: unknown table format {fmt!r} (from {path.name!r}); use 'csv' or 'parquet'")
    readers = claims_of({claim: tuple(keys) for claim, keys in (claims or {}).items()})
    runs, others, diverged = 0, 0, []

    def rows() -> Iterator[MetricRow]:
        nonlocal runs, others
        for run in store.runs():
            if not is_run(run):
                others += 1
                continue
            try:
                measured = list(metric_rows(run, readers.get(run.key, ("",)), iterates=iterates))
            except DivergenceError as exc:
                diverged.append(str(exc))
                continue
            runs += 1
            yield from measured

    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
    try:
        count = write_table(partial, fmt, rows())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return TableSummary(count, runs, others, tuple(diverged))
