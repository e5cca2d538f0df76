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
a Dask cluster) and the driver stores each one as soon as it completes. Each result array is one
row: its dtype (``dtype.str``), its shape (JSON) and its raw C-order bytes, so reading a store
never runs code; the config and the metadata (wall-clock seconds, executor, time finished) are
JSON text columns. Metadata is not a result: it never enters the result arrays.

Integrity. The file is marked as a fedbound store (``PRAGMA application_id``) and carries its
schema version (``PRAGMA user_version``); any other file (a foreign SQLite database, an empty,
truncated or non-SQLite file, a directory) is refused with a StoreError naming the path, before
anything in it is touched, and a new store is created atomically (initialised beside its path,
then linked into place). Each array row carries a SHA-256 over its run key, name, dtype, shape
and bytes, so an edited, reshaped or retyped array, or one moved to another run, fails its
check; each run row carries a SHA-256 over its key, config, metadata and the digests of its
arrays, so an edited config or a removed or added array fails too. ``load`` verifies both and
raises CorruptRunError (naming the run and the store) rather than return anything unverified.

``export_table`` writes a tidy long table of every stored result for pandas, R or a spreadsheet.

Records. Beside the runs a store keeps named JSON records (``put_record`` / ``record``), each with
its own SHA-256 like a run: ``fedbound verify --store`` records there which verification the store
holds, so that ``fedbound report`` can rebuild its report from the runs alone. The ``records`` table
is created by the first ``put_record``; a store without it simply has no record.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CorruptRunError", "CorruptRunWarning", "RunStore", "StoreError", "StoredRun", "TABLE_COLUMNS", "TRACE_ARRAY_PREFIX",
]

_SCHEMA_VERSION = 2  # 1: .npy blobs without checksums; 2: raw arrays, per-array and per-run SHA-256
_APPLICATION_ID = int.from_bytes(b"fbnd", "big")  # PRAGMA application_id of every fedbound run store
_SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite 3 database file
_HEADER_BYTES = 100  # the SQLite file header: user_version at offset 60, application_id at offset 68
_SCHEMA = (
    "CREATE TABLE runs (key TEXT PRIMARY KEY, config TEXT NOT NULL, meta TEXT NOT NULL, digest TEXT NOT NULL)",
    "CREATE TABLE arrays (key TEXT NOT NULL, name TEXT NOT NULL, dtype TEXT NOT NULL, shape TEXT NOT NULL,"
    " data BLOB NOT NULL, digest TEXT NOT NULL, PRIMARY KEY (key, name)) WITHOUT ROWID",
)
_RECORDS_TABLE = "CREATE TABLE IF NOT EXISTS records (name TEXT PRIMARY KEY, value TEXT NOT NULL, digest TEXT NOT NULL)"
_BUSY_TIMEOUT_S = 60.0  # how long a reader or the writer waits for a lock held by another process
_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats: what a tidy table's value holds

TABLE_COLUMNS = ("run_id", "seed", "record", "step", "metric", "value")
"""The fixed columns of the exported table; the flattened config fields sit between run_id and seed."""
TRACE_ARRAY_PREFIX = "trace_"
"""Result arrays named with this prefix hold a traced run's every local step (``algorithms._base``,
"Tracing"); the exported table leaves them out."""


class StoreError(RuntimeError):
    """A run store that cannot be used as asked (not a fedbound store, another schema version, a bad array)."""


class CorruptRunError(StoreError):
    """A stored run that fails its checksums; ``key`` names the run and ``path`` the store."""

    def __init__(self, path: Path, key: str, reason: str) -> None:
        super().__init__(f"run store {str(path)!r}: run {key} is corrupt: {reason}")
        self.path = path
        self.key = key
        self.reason = reason


class CorruptRunWarning(UserWarning):
    """A stored run failed its checks and is being recomputed (the message names the run and the store)."""


@dataclass(frozen=True)
class StoredRun:
    """One run read back from the store, every checksum verified.

    ``config`` and ``meta`` are the JSON documents given to ``put``; ``result`` maps names to
    arrays with the dtype, shape and bits they were stored with.
    """

    key: str
    config: dict[str, Any]
    meta: dict[str, Any]
    result: dict[str, np.ndarray]


@dataclass(frozen=True)
class _ArrayRow:
    """One array as stored: its dtype, shape (JSON), C-order bytes and their digest."""

    name: str
    dtype: str
    shape: str
    data: bytes
    digest: str


class RunStore:
    """Finished runs in the fedbound run store at ``path``.

    A missing ``path`` becomes a new, empty store (unless ``readonly``); an existing one must be a
    fedbound store of this schema version, undamaged, or StoreError says why, naming ``field``
    (the option or argument the path came from, e.g. ``--store``) and the path, and leaves the
    file as it was. ``readonly`` opens it for reading only (SQLite enforces it).

    Each run is stored under its ``key`` with its config (JSON), its metadata (JSON: timing,
    executor, ...) and its result, a mapping of names to numeric NumPy arrays, returned by
    ``load``/``get`` with the same dtype, shape and bits, or refused as CorruptRunError when
    its checksums fail. Open it as a context manager, or ``close()`` it.
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False, field: str = "store") -> None:
        self.path = Path(path)
        self.field = field
        self.readonly = readonly
        if not _check_store_file(self.path, field):
            if readonly:
                raise StoreError(f"{field}: no run store at {str(self.path)!r}")
            _create_store(self.path, field)
        self._db = self._connect(readonly)

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        """A connection to the (checked) store file, after SQLite's own structural check of it."""
        try:
            if readonly:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                db = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            else:
                db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.field}: cannot open run store {str(self.path)!r} ({exc})") from None
        try:
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(map(str, problems[:3])))
        except sqlite3.DatabaseError as exc:
            db.close()
            raise StoreError(
                f"{self.field}: {str(self.path)!r} is a damaged fedbound run store (truncated or overwritten: {exc});"
                " it was left as it is: move it away or delete it to start a new store"
            ) from None
        if not readonly:
            db.execute("PRAGMA synchronous=NORMAL")
        db.text_factory = _text  # text that is not UTF-8 any more reads, and fails its digest
        return db

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
        """Whether a run is stored under ``key`` (whether it is intact is for ``load`` to say)."""
        return self._db.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None

    def load(self, key: str) -> StoredRun | None:
        """The run stored under ``key``, verified, or None when there is none.

        Raises CorruptRunError, naming the run and the store, when an array's bytes, dtype or
        shape, the config, the metadata or the set of arrays no longer match their checksums.
        """
        with self._snapshot():
            return self._read(key)

    def _read(self, key: str) -> StoredRun | None:
        """``load`` inside the caller's read transaction."""
        row = self._db.execute("SELECT config, meta, digest FROM runs WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        arrays = self._db.execute(  # a value edited into text still reads as its bytes, and fails its digest
            "SELECT name, dtype, shape, CAST(data AS BLOB), digest FROM arrays WHERE key = ? ORDER BY name", (key,)
        ).fetchall()
        return _verified_run(self.path, key, row, arrays)

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        """The verified result of ``key`` (name -> array), or None; CorruptRunError when it fails its checks."""
        run = self.load(key)
        return None if run is None else run.result

    def config(self, key: str) -> dict[str, Any] | None:
        """The verified config JSON of ``key``, or None."""
        run = self.load(key)
        return None if run is None else run.config

    def meta(self, key: str) -> dict[str, Any] | None:
        """The verified metadata of ``key`` (e.g. seconds, executor, finished), or None."""
        run = self.load(key)
        return None if run is None else run.meta

    def put(
        self, key: str, config_json: Mapping[str, Any], result: Mapping[str, np.ndarray], meta: Mapping[str, Any]
    ) -> None:
        """Store (or replace) the run ``key`` in one transaction.

        ``result`` maps names to numeric arrays (bool, integer or float dtypes); config and meta
        must be JSON-serialisable. Nothing is written when any of them is invalid.
        """
        if not isinstance(key, str) or not key:
            raise StoreError(f"key: must be a non-empty string, got {key!r}")
        arrays = [_encode(key, name, array) for name, array in result.items()]
        config_text = _json_text(key, "config", config_json)
        meta_text = _json_text(key, "meta", meta)
        digest = _run_digest(key, config_text, meta_text, [(array.name, array.digest) for array in arrays])
        with self._transaction():
            self._db.execute("DELETE FROM arrays WHERE key = ?", (key,))
            self._db.execute("DELETE FROM runs WHERE key = ?", (key,))
            self._db.execute(
                "INSERT INTO runs (key, config, meta, digest) VALUES (?, ?, ?, ?)", (key, config_text, meta_text, digest)
            )
            self._db.executemany(
                "INSERT INTO arrays (key, name, dtype, shape, data, digest) VALUES (?, ?, ?, ?, ?, ?)",
                [(key, a.name, a.dtype, a.shape, a.data, a.digest) for a in arrays],
            )

    def delete(self, key: str) -> bool:
        """Remove the run ``key``; returns whether there was one."""
        with self._transaction():
            self._db.execute("DELETE FROM arrays WHERE key = ?", (key,))
            removed = self._db.execute("DELETE FROM runs WHERE key = ?", (key,)).rowcount
        return removed > 0

    def put_record(self, name: str, record: Mapping[str, Any]) -> None:
        """Store (or replace) the JSON record ``name`` in one transaction, with its checksum."""
        if not isinstance(name, str) or not name:
            raise StoreError(f"name: a record name must be a non-empty string, got {name!r}")
        text = _json_text(name, "record", record)
        with self._transaction():
            self._db.execute(_RECORDS_TABLE)
            self._db.execute("INSERT OR REPLACE INTO records (name, value, digest) VALUES (?, ?, ?)",
                             (name, text, _record_digest(name, text)))

    def record(self, name: str) -> dict[str, Any] | None:
        """The JSON record ``name``, verified, or None when the store has none; CorruptRunError
        (naming the record and the store) when it fails its checksum."""
        with self._snapshot():
            exists = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").fetchone()
            row = self._db.execute("SELECT value, digest FROM records WHERE name = ?", (name,)).fetchone() if exists else None
        if row is None:
            return None
        text, digest = row
        if _record_digest(name, text) != digest:
            raise StoreError(f"run store {str(self.path)!r}: record {name!r} is corrupt: it fails its checksum")
        return json.loads(text)

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
        with empty record and step. Missing values are empty in CSV and null in Parquet. Only
        results are exported: metadata (wall-clock seconds and the like) is not, nor are the
        per-step arrays of traced runs (named ``trace_*``, ``TRACE_ARRAY_PREFIX``), whose axis 0 is
        the local step rather than the record point (millions of rows for one lemma check).

        ``format`` is "csv" or "parquet", taken from the file suffix when None. CSV uses the
        standard library; Parquet needs pyarrow. pandas reads both (``read_csv``, ``read_parquet``).
        The table is written beside ``path`` and moved into place when complete, so a run that
        fails its checksums (CorruptRunError) leaves ``path`` as it was; ``path`` may not be the
        store itself.
        """
        path = Path(path)
        if path.exists() and os.path.samefile(path, self.path):
            raise StoreError(f"table: {str(path)!r} is the run store itself; choose another output file")
        fmt = (format or path.suffix.lstrip(".")).lower()
        if fmt not in ("csv", "parquet"):
            raise StoreError(f"format: unknown table format {fmt!r} (from {path.name!r}); use 'csv' or 'parquet'")
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
        try:
            with self._snapshot():
                fields = self._field_names()
                columns = ["run_id", *fields, *TABLE_COLUMNS[1:]]
                write = _write_csv if fmt == "csv" else _write_parquet
                count = write(partial, columns, self._rows(fields))
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        return count

    def _field_names(self) -> list[str]:
        """The flattened config fields of every stored run, sorted (a config that is no JSON is corrupt)."""
        names: set[str] = set()
        for key, text in self._db.execute("SELECT key, config FROM runs"):
            try:
                names.update(_config_fields(json.loads(text)))
            except ValueError:
                raise CorruptRunError(self.path, key, "its config is no longer JSON") from None
        return sorted(names)

    def _rows(self, fields: list[str]) -> Iterator[list[Any]]:
        """Rows of the tidy table (verified runs, by key and array name), aligned with run_id, ``fields``
        and the fixed columns."""
        keys = [key for (key,) in self._db.execute("SELECT key FROM runs ORDER BY key")]
        for key in keys:
            run = self._read(key)
            assert run is not None  # the keys come from the same read transaction
            flat = _config_fields(run.config)
            prefix = [key, *(flat.get(field) for field in fields)]
            seed = run.config.get("seed")
            for name, array in run.result.items():
                if not name.startswith(TRACE_ARRAY_PREFIX):
                    yield from _array_rows(prefix, seed, run.config.get("record_steps"), name, array)


def _array_rows(prefix: list[Any], seed: Any, steps: Any, name: str, array: np.ndarray) -> Iterator[list[Any]]:
    """The table rows of one array: one per record point and element, or one for a rank-0 array."""
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


def _check_store_file(path: Path, field: str) -> bool:
    """Whether ``path`` holds a store (False when there is no file); StoreError when it is anything but
    a fedbound run store of this schema version. Reads the file header only, writes nothing."""
    if path.is_dir():
        raise StoreError(f"{field}: {str(path)!r} is a directory, not a fedbound run store (give a file path)")
    if path.exists() and not path.is_file():
        raise StoreError(f"{field}: {str(path)!r} is not a regular file, so not a fedbound run store")
    try:
        with path.open("rb") as handle:
            header = handle.read(_HEADER_BYTES)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(f"{field}: cannot read run store {str(path)!r} ({exc.strerror or exc})") from None
    reason = _header_problem(header)
    if reason is not None:
        raise StoreError(f"{field}: {str(path)!r} {reason}; it was left as it is")
    return True


def _header_problem(header: bytes) -> str | None:
    """Why a file with this header is not a fedbound run store of this schema version, or None."""
    if not header:
        return "is an empty file, not a fedbound run store (a path that does not exist yet makes a new store)"
    if not header.startswith(_SQLITE_MAGIC):
        return "is not a SQLite database, so not a fedbound run store"
    if len(header) < _HEADER_BYTES:
        return "is a truncated SQLite file (shorter than its header), not a usable run store"
    version = int.from_bytes(header[60:64], "big", signed=True)
    application_id = int.from_bytes(header[68:72], "big", signed=True)
    if application_id == 0 and version == 1:
        return (f"looks like a run store of an older fedbound (schema 1, without checksums); this fedbound reads "
                f"schema {_SCHEMA_VERSION}: delete it or choose another path, and its runs are recomputed")
    if application_id != _APPLICATION_ID:
        return f"is a SQLite database but not a fedbound run store (application id {application_id})"
    if version != _SCHEMA_VERSION:
        return f"is a fedbound run store of schema version {version}; this fedbound reads {_SCHEMA_VERSION}"
    return None


def _create_store(path: Path, field: str) -> None:
    """Create an empty store at ``path``: initialised in a file beside it, then linked into place, so no
    reader ever sees a half-made store (when another process creates it first, its store is kept)."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        db = sqlite3.connect(partial, isolation_level=None)
        try:
            db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute("PRAGMA journal_mode=WAL")
        finally:
            db.close()
        try:
            os.link(partial, path)
        except FileExistsError:
            pass  # another process created the store meanwhile: use theirs
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{field}: cannot create a run store at {str(path)!r} ({exc})") from None
    finally:
        partial.unlink(missing_ok=True)


def _text(data: bytes) -> str:
    """A stored text value, its bytes kept (invalid UTF-8 as surrogate escapes) so a digest can judge it."""
    return data.decode("utf-8", "surrogateescape")


def _encode(key: str, name: str, array: np.ndarray) -> _ArrayRow:
    """The stored row of a numeric array (anything else is refused, naming run and array)."""
    if not isinstance(name, str) or not name:
        raise StoreError(f"run {key}: array names must be non-empty strings, got {name!r}")
    if not isinstance(array, np.ndarray) or array.dtype.kind not in _NUMERIC_KINDS:
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise StoreError(f"run {key}: result {name!r} must be a numeric numpy array (bool, int, float), got {kind}")
    dtype, shape, data = array.dtype.str, json.dumps(list(array.shape)), array.tobytes()
    return _ArrayRow(name, dtype, shape, data, _array_digest(key, name, dtype, shape, data))


def _array_digest(key: str, name: str, dtype: Any, shape: Any, data: bytes) -> str:
    """SHA-256 of an array row bound to its run key and name, so a row moved to another run fails it."""
    digest = hashlib.sha256(json.dumps([key, name, dtype, shape]).encode())
    digest.update(b"\n")
    digest.update(data)
    return digest.hexdigest()


def _run_digest(key: str, config_text: Any, meta_text: Any, arrays: list[tuple[str, str]]) -> str:
    """SHA-256 of a run row: its key, config and metadata text and its arrays' names and digests."""
    return hashlib.sha256(json.dumps([key, config_text, meta_text, sorted(arrays)]).encode()).hexdigest()


def _record_digest(name: str, text: Any) -> str:
    """SHA-256 of a record: its name and JSON text."""
    return hashlib.sha256(json.dumps(["record", name, text]).encode()).hexdigest()


def _verified_run(path: Path, key: str, row: tuple[Any, ...], arrays: list[tuple[Any, ...]]) -> StoredRun:
    """The run of a ``runs`` row and its ``arrays`` rows; CorruptRunError when a checksum fails."""
    config_text, meta_text, digest = row
    result: dict[str, np.ndarray] = {}
    for name, dtype, shape, data, array_digest in arrays:
        if not isinstance(data, bytes) or _array_digest(key, name, dtype, shape, data) != array_digest:
            raise CorruptRunError(path, key, f"array {name!r} fails its checksum (its bytes, dtype or shape "
                                             "changed, or it was moved from another run)")
        result[name] = _decode(path, key, name, dtype, shape, data)
    if _run_digest(key, config_text, meta_text, [(array[0], array[4]) for array in arrays]) != digest:
        raise CorruptRunError(path, key, "its config, metadata or set of arrays fails the run checksum")
    return StoredRun(key, json.loads(config_text), json.loads(meta_text), result)


def _decode(path: Path, key: str, name: str, dtype: str, shape: str, data: bytes) -> np.ndarray:
    """The array of a row whose digest checked out (a row that still cannot be read is corrupt)."""
    try:
        kind = np.dtype(dtype)
        dims = tuple(json.loads(shape))
        if kind.kind not in _NUMERIC_KINDS or len(data) != kind.itemsize * int(np.prod(dims, dtype=np.int64)):
            raise ValueError(f"{len(data)} bytes do not hold a {dtype} array of shape {dims}")
        return np.frombuffer(data, dtype=kind).reshape(dims).copy()
    except (TypeError, ValueError) as exc:
        raise CorruptRunError(path, key, f"array {name!r} cannot be read ({exc})") from None


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
