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

Integrity. The file is marked as a fedbound store and carries its schema version; any other file
(a foreign SQLite database, an empty, truncated or non-SQLite file, a directory) is refused with a
StoreError naming the path, before anything in it is touched, and a store that is damaged (it
fails SQLite's check, or a table of its schema is missing), busy (locked by another process) or
read-only is told apart from the others in one StoreError (``store_file``: a read-only store is
read as it is; a full disk while writing is named, with the path, and the store stays intact).
Each array row carries a SHA-256 over its run key, name, dtype, shape and bytes, so an edited,
reshaped or retyped array, or one moved to another run, fails its check; each run row carries a
SHA-256 over its key, config, metadata and the digests of its arrays, so an edited config or a
removed or added array fails too. A row whose checksums were rewritten to match but that cannot
be decoded (an array whose bytes do not fill its shape, a config or metadata that is not a JSON
object) is corrupt too. ``load`` verifies all of it and raises CorruptRunError (naming the run and
the store) rather than return anything unverified; what the values must be for a given run is
the sweep's to check (``SweepTask.check``).

``runs`` reads every run back in one snapshot (``store_table.export_table`` writes them as a tidy
table of the metrics the claims read, for pandas, R or a spreadsheet).

Records. Beside the runs a store keeps named JSON records (``put_record`` / ``record``; ``update_record``
reads and replaces one in a single transaction, so concurrent writers lose no update), each with
its own SHA-256 like a run: ``fedbound verify --store`` records there which verification the store
holds, so that ``fedbound report`` can rebuild its report from the runs alone. The ``records`` table
is created by the first ``put_record``; a store without it simply has no record.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .store_codec import (
    CorruptRunError, CorruptRunWarning, StoredRun, encode_array, json_object, json_text, record_digest, run_digest,
    stored_text, verified_run,
)
from .store_file import RECORDS_TABLE, StoreError, check_store_file, create_store, open_store, store_failure

__all__ = [
    "CorruptRunError", "CorruptRunWarning", "RunStore", "StoreError", "StoredRun", "TRACE_ARRAY_PREFIX",
]

TRACE_ARRAY_PREFIX = "trace_"
"""Result arrays named with this prefix hold a traced run's every local step (``algorithms._base``,
"Tracing"): their axis 0 is the local step, not the record point."""


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
        if not check_store_file(self.path, field):
            if readonly:
                raise StoreError(f"{field}: no run store at {str(self.path)!r}")
            create_store(self.path, field)
        self._db = open_store(self.path, readonly, field)
        if not readonly:
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.text_factory = stored_text  # text that is not UTF-8 any more reads, and fails its digest

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
    def _transaction(self, doing: str) -> Iterator[None]:
        """One write transaction: committed whole on success, rolled back on any error; an SQLite
        error is the StoreError that says what it means (``store_file.store_failure``: a full disk,
        a lock held too long, a read-only file), naming the store and what was being ``doing``."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLite rolls some failures (a full disk) back itself
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise store_failure(exc, self.path, self.field, doing) from None

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction: every query inside sees the same committed state (an SQLite error is
        a StoreError, as for ``_transaction``)."""
        try:
            self._db.execute("BEGIN DEFERRED")
            try:
                yield
            finally:
                if self._db.in_transaction:
                    self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise store_failure(exc, self.path, self.field, "reading it") from None

    def has(self, key: str) -> bool:
        """Whether a run is stored under ``key`` (whether it is intact is for ``load`` to say)."""
        with self._snapshot():
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
        return verified_run(self.path, key, row, arrays)

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
        arrays = [encode_array(key, name, array) for name, array in result.items()]
        config_text = json_text(key, "config", config_json)
        meta_text = json_text(key, "meta", meta)
        digest = run_digest(key, config_text, meta_text, [(array.name, array.digest) for array in arrays])
        with self._transaction(f"writing run {key}"):
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
        with self._transaction(f"deleting run {key}"):
            self._db.execute("DELETE FROM arrays WHERE key = ?", (key,))
            removed = self._db.execute("DELETE FROM runs WHERE key = ?", (key,)).rowcount
        return removed > 0

    def put_record(self, name: str, record: Mapping[str, Any]) -> None:
        """Store (or replace) the JSON record ``name`` in one transaction, with its checksum."""
        self.update_record(name, lambda _: record)

    def update_record(self, name: str, update: Callable[[dict[str, Any] | None], Mapping[str, Any]]) -> dict[str, Any]:
        """Replace the JSON record ``name`` by ``update(current)`` (``current``: the verified record, or
        None when there is none) in one write transaction, so that concurrent updates of one record by
        several processes are applied one after the other and none is lost; returns the record written."""
        if not isinstance(name, str) or not name:
            raise StoreError(f"name: a record name must be a non-empty string, got {name!r}")
        with self._transaction(f"writing record {name!r}"):
            self._db.execute(RECORDS_TABLE)
            row = self._db.execute("SELECT value, digest FROM records WHERE name = ?", (name,)).fetchone()
            text = json_text(name, "record", update(None if row is None else self._verified_record(name, *row)))
            self._db.execute("INSERT OR REPLACE INTO records (name, value, digest) VALUES (?, ?, ?)",
                             (name, text, record_digest(name, text)))
        return json.loads(text)

    def record(self, name: str) -> dict[str, Any] | None:
        """The JSON record ``name``, verified, or None when the store has none; StoreError (naming the
        record and the store) when it fails its checksum or is no JSON object."""
        with self._snapshot():
            exists = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").fetchone()
            row = self._db.execute("SELECT value, digest FROM records WHERE name = ?", (name,)).fetchone() if exists else None
        return None if row is None else self._verified_record(name, *row)

    def _verified_record(self, name: str, text: Any, digest: Any) -> dict[str, Any]:
        """A record's JSON object, after its checksum; StoreError naming the record and the store otherwise."""
        if record_digest(name, text) != digest:
            raise StoreError(f"run store {str(self.path)!r}: record {name!r} is corrupt: it fails its checksum")
        try:
            return json_object(self.path, name, "record", text)
        except CorruptRunError as exc:
            raise StoreError(f"run store {str(self.path)!r}: record {name!r} is corrupt: {exc.reason}") from None

    def keys(self) -> list[str]:
        """The stored keys, in the order they were (last) stored."""
        with self._snapshot():
            return [key for (key,) in self._db.execute("SELECT key FROM runs ORDER BY rowid")]

    def __len__(self) -> int:
        with self._snapshot():
            return self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def runs(self) -> Iterator[StoredRun]:
        """Every stored run, verified (``load``), in key order, all read in one read transaction (a
        consistent snapshot while a sweep writes); CorruptRunError for the first that fails its checks."""
        with self._snapshot():
            keys = [key for (key,) in self._db.execute("SELECT key FROM runs ORDER BY key")]
            for key in keys:
                run = self._read(key)
                assert run is not None  # the keys come from the same read transaction
                yield run
