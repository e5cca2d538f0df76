"""Digests, made one way for every layer: of a JSON value, and of a file's bytes.

* ``canonical_json(data)``: ``data`` as compact JSON with sorted keys (no whitespace), the one text
  form that problem specs, run configs and store keys hash; equal values give equal text in every
  process and on every machine.
* ``json_digest(data, hex_digits=64)``: the SHA-256 (hex) of ``canonical_json(data)``, cut to its
  first ``hex_digits`` digits (run ids and store keys keep 16, problem specs all 64).
* ``file_digest(path, algorithm)``: the hex digest of a file's bytes, read in chunks
  (``hashlib.file_digest``), for any ``hashlib`` algorithm ("sha256" for the content-addressed
  arrays files, "md5" for the data files whose publishers print MD5). An unreadable file raises
  the OSError, which the caller words for its file.
* ``is_hex_digest(value, algorithm)``: whether ``value`` is written as ``algorithm``'s hex digests
  are (its digest size in lower-case hex digits: 32 for MD5, 64 for SHA-256).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

__all__ = ["canonical_json", "file_digest", "is_hex_digest", "json_digest"]

_HEX_DIGITS = frozenset("0123456789abcdef")


def canonical_json(data: Any) -> str:
    """``data`` (a JSON-able value) as JSON with sorted keys and no whitespace."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def json_digest(data: Any, hex_digits: int = 64) -> str:
    """The first ``hex_digits`` hex digits of the SHA-256 of ``canonical_json(data)``."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()[:hex_digits]


def file_digest(path: Path, algorithm: str) -> str:
    """The ``algorithm`` (a ``hashlib`` name) hex digest of the bytes of the file at ``path``,
    streamed in chunks; OSError when it cannot be opened or read."""
    with Path(path).open("rb") as stream:
        return hashlib.file_digest(stream, algorithm).hexdigest()


def is_hex_digest(value: Any, algorithm: str) -> bool:
    """Whether ``value`` is a string of as many lower-case hex digits as an ``algorithm`` hex digest has."""
    return (isinstance(value, str) and len(value) == 2 * hashlib.new(algorithm).digest_size
            and all(c in _HEX_DIGITS for c in value))
