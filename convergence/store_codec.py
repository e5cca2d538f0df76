"""How a run store holds a run (``convergence.store``): each result array as a row of its dtype, shape
(JSON) and C-order bytes with a SHA-256 digest bound to its run key and name; the run's config and
metadata as canonical JSON text with a digest over them and its arrays' digests; and reading it back,
every digest verified and every value decoded and checked, a failure being a ``CorruptRunError`` that
names the store and the run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .store_file import StoreError

__all__ = [
    "CorruptRunError", "CorruptRunWarning", "StoredRun", "ArrayRow", "NUMERIC_KINDS", "stored_text", "encode_array",
    "array_digest", "run_digest", "record_digest", "verified_run", "json_object", "decode_array", "json_text",
]

NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats: what a tidy table's value holds


class CorruptRunError(StoreError):
    """A stored run that fails its checksums, cannot be decoded or holds values its run cannot have;
    ``key`` names the run, ``path`` the store and ``reason`` what is wrong."""

    def __init__(self, path: Path, key: str, reason: str) -> None:
        super().__init__(f"run store {str(path)!r}: run {key} is corrupt: {reason}")
        self.path = path
        self.key = key
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (a claim evaluated in a worker process raises it)
        return type(self), (self.path, self.key, self.reason)


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
class ArrayRow:
    """One array as stored: its dtype, shape (JSON), C-order bytes and their digest."""

    name: str
    dtype: str
    shape: str
    data: bytes
    digest: str



def stored_text(data: bytes) -> str:
    """A stored text value, its bytes kept (invalid UTF-8 as surrogate escapes) so a digest can judge it."""
    return data.decode("utf-8", "surrogateescape")


def encode_array(key: str, name: str, array: np.ndarray) -> ArrayRow:
    """The stored row of a numeric array (anything else is refused, naming run and array)."""
    if not isinstance(name, str) or not name:
        raise StoreError(f"run {key}: array names must be non-empty strings, got {name!r}")
    if not isinstance(array, np.ndarray) or array.dtype.kind not in NUMERIC_KINDS:
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise StoreError(f"run {key}: result {name!r} must be a numeric numpy array (bool, int, float), got {kind}")
    dtype, shape, data = array.dtype.str, json.dumps(list(array.shape)), array.tobytes()
    return ArrayRow(name, dtype, shape, data, array_digest(key, name, dtype, shape, data))


def array_digest(key: str, name: str, dtype: Any, shape: Any, data: bytes) -> str:
    """SHA-256 of an array row bound to its run key and name, so a row moved to another run fails it."""
    digest = hashlib.sha256(json.dumps([key, name, dtype, shape]).encode())
    digest.update(b"\n")
    digest.update(data)
    return digest.hexdigest()


def run_digest(key: str, config_text: Any, meta_text: Any, arrays: list[tuple[str, str]]) -> str:
    """SHA-256 of a run row: its key, config and metadata text and its arrays' names and digests."""
    return hashlib.sha256(json.dumps([key, config_text, meta_text, sorted(arrays)]).encode()).hexdigest()


def record_digest(name: str, text: Any) -> str:
    """SHA-256 of a record: its name and JSON text."""
    return hashlib.sha256(json.dumps(["record", name, text]).encode()).hexdigest()


def verified_run(path: Path, key: str, row: tuple[Any, ...], arrays: list[tuple[Any, ...]]) -> StoredRun:
    """The run of a ``runs`` row and its ``arrays`` rows; CorruptRunError when a checksum fails."""
    config_text, meta_text, digest = row
    result: dict[str, np.ndarray] = {}
    for name, dtype, shape, data, stored_digest in arrays:
        if not isinstance(data, bytes) or array_digest(key, name, dtype, shape, data) != stored_digest:
            raise CorruptRunError(path, key, f"array {name!r} fails its checksum (its bytes, dtype or shape "
                                             "changed, or it was moved from another run)")
        result[name] = decode_array(path, key, name, dtype, shape, data)
    if run_digest(key, config_text, meta_text, [(array[0], array[4]) for array in arrays]) != digest:
        raise CorruptRunError(path, key, "its config, metadata or set of arrays fails the run checksum")
    return StoredRun(key, json_object(path, key, "config", config_text), json_object(path, key, "metadata", meta_text),
                     result)


def json_object(path: Path, key: str, what: str, text: Any) -> dict[str, Any]:
    """The JSON object a run's config or metadata text holds (text that checks out against its digest
    but is no JSON object is corrupt)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CorruptRunError(path, key, f"its {what} is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CorruptRunError(path, key, f"its {what} is JSON but not an object (got {type(value).__name__})")
    return value


def decode_array(path: Path, key: str, name: str, dtype: str, shape: str, data: bytes) -> np.ndarray:
    """The array of a row whose digest checked out (a row that still cannot be read is corrupt)."""
    try:
        kind = np.dtype(dtype)
        dims = tuple(json.loads(shape))
        if kind.kind not in NUMERIC_KINDS or len(data) != kind.itemsize * int(np.prod(dims, dtype=np.int64)):
            raise ValueError(f"{len(data)} bytes do not hold a {dtype} array of shape {dims}")
        return np.frombuffer(data, dtype=kind).reshape(dims).copy()
    except (TypeError, ValueError, RecursionError) as exc:
        raise CorruptRunError(path, key, f"array {name!r} cannot be read ({exc})") from None


def json_text(key: str, what: str, value: Mapping[str, Any]) -> str:
    """Canonical JSON text (sorted keys, finite numbers) of a run's config or metadata."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run {key}: {what} is not JSON-serialisable: {exc}") from None
