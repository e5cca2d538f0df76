"""The run store's file: what is and is not a fedbound run store, creating one, opening one, and
saying in one StoreError why SQLite could not use it.

What a file is, before SQLite opens it (``check_store_file``): the file is marked as a fedbound
store (``PRAGMA application_id``) and carries its schema version (``PRAGMA user_version``); any
other file (a foreign SQLite database, an empty, truncated or non-SQLite file, a directory, a FIFO)
is refused from its header alone, naming the path, and left as it is. A new store is created
atomically (``create_store``: initialised beside its path, then linked into place).

Opening (``open_store``) tells apart four states of a file that is a fedbound store, because each
asks something else of the user:

* **damaged**: SQLite's own structural check (``PRAGMA quick_check``) fails, or a table of the
  schema is missing or has other columns (a table dropped by hand): the store cannot be trusted,
  and the message says to move it away or delete it;
* **busy**: another process holds it locked (a fedbound writing to it, a program that opened it in
  exclusive locking mode) for longer than ``BUSY_TIMEOUT_S``: it is not damaged, and the message
  says to wait for that process or give another path;
* **read-only** (a read-only file, folder or mount): a store opened for reading is read as it is,
  through SQLite's ``immutable`` URI when the folder cannot hold the shared-memory file that WAL
  readers use (safe there: nobody can write a store that no one may write); a store opened for
  writing is refused before anything runs, since the runs computed would have nowhere to go;
* usable.

Failures while a store is in use (``store_failure``): a full disk is named as such, with the path,
and since every run is written in one transaction the store keeps every run committed before it:
the message says so, and that rerunning the command resumes from them. A lock held too long and a
read-only file are named as above. Nothing here ever advises deleting a store that passes its checks.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

__all__ = ["APPLICATION_ID", "BUSY_TIMEOUT_S", "RECORDS_TABLE", "SCHEMA_VERSION", "StoreError", "check_store_file",
           "create_store", "open_store", "store_failure"]

SCHEMA_VERSION = 2  # 1: .npy blobs without checksums; 2: raw arrays, per-array and per-run SHA-256
APPLICATION_ID = int.from_bytes(b"fbnd", "big")  # PRAGMA application_id of every fedbound run store
BUSY_TIMEOUT_S = 60.0
"""How long a reader or a writer waits for a lock held by another process before calling the store busy."""

_SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite 3 database file
_HEADER_BYTES = 100  # the SQLite file header: user_version at offset 60, application_id at offset 68
_SCHEMA = (
    "CREATE TABLE runs (key TEXT PRIMARY KEY, config TEXT NOT NULL, meta TEXT NOT NULL, digest TEXT NOT NULL)",
    "CREATE TABLE arrays (key TEXT NOT NULL, name TEXT NOT NULL, dtype TEXT NOT NULL, shape TEXT NOT NULL,"
    " data BLOB NOT NULL, digest TEXT NOT NULL, PRIMARY KEY (key, name)) WITHOUT ROWID",
)
RECORDS_TABLE = "CREATE TABLE IF NOT EXISTS records (name TEXT PRIMARY KEY, value TEXT NOT NULL, digest TEXT NOT NULL)"
"""The table of named records, created by the first record stored (a store without it has none)."""
_COLUMNS = {  # the columns of each table of the schema; records is optional
    "runs": ("key", "config", "meta", "digest"),
    "arrays": ("key", "name", "dtype", "shape", "data", "digest"),
    "records": ("name", "value", "digest"),
}


class StoreError(RuntimeError):
    """A run store that cannot be used as asked (not a fedbound store, another schema version, damaged,
    busy, read-only, a full disk, a bad array)."""


def check_store_file(path: Path, field: str) -> bool:
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
                f"schema {SCHEMA_VERSION}: delete it or choose another path, and its runs are recomputed")
    if application_id != APPLICATION_ID:
        return f"is a SQLite database but not a fedbound run store (application id {application_id})"
    if version != SCHEMA_VERSION:
        return f"is a fedbound run store of schema version {version}; this fedbound reads {SCHEMA_VERSION}"
    return None


def create_store(path: Path, field: str) -> None:
    """Create an empty store at ``path``: initialised in a file beside it, then linked into place, so no
    reader ever sees a half-made store (when another process creates it first, its store is kept)."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        db = sqlite3.connect(partial, isolation_level=None)
        try:
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
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
        if path.resolve().parent.is_dir() and not _writable(path):
            raise StoreError(f"{field}: cannot create a run store at {str(path)!r}: its folder is read-only here (a "
                             "read-only folder or mount); give a path in a writable folder") from None
        raise StoreError(f"{field}: cannot create a run store at {str(path)!r} ({exc})") from None
    finally:
        partial.unlink(missing_ok=True)


def open_store(path: Path, readonly: bool, field: str) -> sqlite3.Connection:
    """A connection to the checked store file at ``path`` (module docstring: damaged, busy and
    read-only told apart); ``readonly`` opens it for reading only (SQLite enforces it)."""
    if not readonly and not _writable(path):
        raise StoreError(_read_only_message(path, field))
    try:
        return _checked_connection(path, readonly, immutable=False)
    except sqlite3.Error as exc:
        if not (readonly and _kind(exc) in ("read-only", "cannot open")):
            raise store_failure(exc, path, field, "opening it") from None
        wal = path.with_name(f"{path.name}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(f"{field}: run store {str(path)!r} is read-only here and has a write-ahead log beside it "
                             f"({wal.name}) that only a writable open folds in; copy both files to a writable folder "
                             "and read the copy") from None
    try:  # a read-only folder cannot hold WAL's shared-memory file: read the file as it is
        return _checked_connection(path, readonly, immutable=True)
    except sqlite3.Error as exc:
        raise store_failure(exc, path, field, "opening it") from None


def store_failure(exc: sqlite3.Error, path: Path, field: str, doing: str) -> StoreError:
    """The StoreError for ``exc``, raised by SQLite while ``doing`` something with the store at
    ``path`` (module docstring: full disk, busy, read-only, damaged, or SQLite's own words)."""
    kind = _kind(exc)
    where = f"{field}: run store {str(path)!r}"
    if kind == "full":
        return StoreError(f"{field}: disk full while {doing} in run store {str(path)!r} ({exc}); the store is intact: "
                          "each run is written in one transaction, so it holds every run stored before and none "
                          f"half-written. Free some space (or give another {field}) and rerun the same command: it "
                          "resumes from the runs the store holds")
    if kind == "busy":
        return StoreError(f"{where} is busy: another process holds it locked (a fedbound writing to it, or a program "
                          f"that opened it in exclusive mode) and it stayed locked for {BUSY_TIMEOUT_S:g} s while "
                          f"{doing}. It is not damaged and was left as it is: wait for that process to finish, or give "
                          "another path")
    if kind == "read-only":
        return StoreError(_read_only_message(path, field))
    if kind == "damaged":
        return StoreError(f"{field}: {str(path)!r} is a damaged fedbound run store ({exc}); it was left as it is: "
                          "move it away or delete it to start a new store")
    return StoreError(f"{where}: SQLite failed while {doing} ({exc}); the store was left as it is")


def _checked_connection(path: Path, readonly: bool, *, immutable: bool) -> sqlite3.Connection:
    """A connection after SQLite's structural check of the file and a check of the schema's tables
    (sqlite3.DatabaseError, as SQLite raises it, when either fails)."""
    if readonly:
        uri = f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    else:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError("; ".join(map(str, problems[:3])))
        for table, columns in _COLUMNS.items():
            found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
            if found != columns and (found or table != "records"):
                state = f"has columns {', '.join(found)}" if found else "is missing"
                raise sqlite3.DatabaseError(f"its table {table!r} {state}")
    except BaseException:
        db.close()
        raise
    return db


def _writable(path: Path) -> bool:
    """Whether this process may write the store file and its folder (WAL writes two files beside it)."""
    folder = path.resolve().parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _read_only_message(path: Path, field: str) -> str:
    return (f"{field}: run store {str(path)!r} is read-only here (a read-only file, folder or mount), so the runs "
            "computed now could not be stored in it; it was left as it is. `fedbound report` and `fedbound export` "
            "read it as it is; to add runs, copy it to a writable folder and give that path")


def _kind(exc: sqlite3.Error) -> str:
    """What an SQLite error says of the store: "full", "busy", "read-only", "cannot open", "damaged" or
    "other" (by its result code from Python 3.11 on, by its message before)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return "full"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in text:
        return "busy"
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return "read-only"
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return "cannot open"
    if (name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text
            or type(exc) is sqlite3.DatabaseError):  # the last: a check of ours (quick_check, the schema) failed
        return "damaged"
    return "other"
