"""MD5 digests of data files, checked against the digests their publishers print.

MD5 is what the publishers of MNIST (through torchvision's mirror list), Fashion-MNIST and CIFAR-10
print beside their files; it guards against truncated and corrupted downloads, not against
tampering. ``read_checked(path, accepted)`` reads a file whole and, when ``accepted`` names digests,
requires the MD5 of its bytes to be one of them; every failure is one ProblemError naming the file.
Only regular files are read (``regular_file``: a FIFO would block for ever, /dev/zero never ends),
and only when their size fits in the memory available.
``file_identity(path)`` names one version of a file (resolved path, size, modification time) for
in-process caches of what was read from it; ``check_digests`` validates an ``accepted`` tuple.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .digest import is_hex_digest
from .validation import ProblemError, check_memory

__all__ = ["FileIdentity", "check_digests", "file_identity", "read_checked", "regular_file"]


@dataclass(frozen=True)
class FileIdentity:
    """One version of a file: ``path`` as found, its ``resolved`` absolute path (symbolic links
    followed), ``size`` in bytes and modification time ``mtime_ns`` (ns since the epoch). A file
    rewritten in place gets another size or time (unless both are restored by hand)."""

    path: Path
    resolved: str
    size: int
    mtime_ns: int


def file_identity(path: Path) -> FileIdentity:
    """The identity of the file at ``path`` now; ProblemError naming the file when it cannot be read
    or is not a regular file (``regular_file``)."""
    path = Path(path)
    try:
        resolved = str(path.resolve(strict=True))
    except OSError as exc:
        raise _unreadable(path, exc) from None
    status = regular_file(path)
    return FileIdentity(path, resolved, status.st_size, status.st_mtime_ns)


def regular_file(path: Path) -> os.stat_result:
    """The status of ``path`` (symbolic links followed) if it is a regular file; ProblemError naming the
    file when it is missing or unreadable, or anything else: a FIFO, a device such as /dev/zero or a
    folder, whose reading would block, never end or fail. Nothing is opened."""
    try:
        status = Path(path).stat()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if not stat.S_ISREG(status.st_mode):
        raise ProblemError(f"{path}: not a regular file but a FIFO, a device or a folder; fedbound reads regular files "
                           "only (reading this one could block or never end)")
    return status


def check_digests(accepted: tuple[str, ...]) -> tuple[str, ...]:
    """``accepted`` as a tuple, every item an MD5 hex digest (32 lower-case hex digits); ProblemError
    naming ``accepted`` otherwise (a bare string is refused, not split into characters)."""
    if isinstance(accepted, str):
        raise ProblemError(f"accepted: expected a tuple of MD5 digests, got the string {accepted!r}")
    for md5 in accepted:
        if not is_hex_digest(md5, "md5"):
            raise ProblemError(f"accepted: expected MD5 digests of 32 lower-case hex digits, got {md5!r}")
    return tuple(accepted)


def read_checked(path: Path, accepted: tuple[str, ...] = ()) -> bytes:
    """The bytes of ``path``; when ``accepted`` is not empty its MD5 hex digest must be one of them.

    ProblemError naming the file when it is missing or unreadable, not a regular file, larger than
    the memory available (checked before reading), or when its digest is none of
    the accepted ones (a truncated, partial or corrupt copy); ProblemError naming ``accepted`` when a
    digest is not 32 lower-case hex digits.
    """
    accepted = check_digests(accepted)
    size = regular_file(path).st_size
    check_memory(str(path), size, "the file read whole")
    try:
        content = Path(path).read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if accepted:
        found = hashlib.md5(content).hexdigest()
        if found not in accepted:
            raise ProblemError(
                f"{path}: MD5 {found} is not the published {' or '.join(accepted)}: the file is truncated or corrupt "
                "(download it again)"
            )
    return content


def _unreadable(path: Path, exc: OSError) -> ProblemError:
    return ProblemError(f"{path}: cannot read the file ({exc.strerror or exc})")
