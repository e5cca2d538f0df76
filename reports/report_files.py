"""The files of a report folder: its figures (PNG with an SVG beside it), paths written relative
to the report, writing a report file atomically (a reader never sees half a file), and the lock
that serialises the writers of one folder (``report_lock``)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LOCK_FILE", "ReportFigure", "relative_path", "atomic_write", "report_lock"]

LOCK_FILE = ".fedbound-report.lock"
"""The file in a report folder that ``report_lock`` locks (empty; it stays in the folder)."""


@dataclass(frozen=True)
class ReportFigure:
    """A PNG shown in the section of claim ``claim_id``, with its caption (its SVG lies beside it)."""

    claim_id: str
    path: Path
    caption: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if self.path.suffix.lower() != ".png":
            raise ValueError(f"path: a report figure must be a .png file, got {self.path}")


def relative_path(path: Path, base_dir: str | os.PathLike[str] | None) -> str:
    """``path`` as a POSIX path relative to ``base_dir`` (as given when ``base_dir`` is None or on
    another drive, on Windows)."""
    if base_dir is None:
        return Path(path).as_posix()
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(base_dir).resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def atomic_write(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to a temporary file beside ``path``, then move it into place."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return out


@contextlib.contextmanager
def report_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the report folder ``folder`` exclusively: a process that reads the report in it, merges
    into it and writes it does so inside this block, so two ``fedbound verify`` runs into one folder
    at once both end up in its report (the second waits for the first to finish writing, then reads
    what it wrote). An advisory lock on ``LOCK_FILE`` (``fcntl.flock``; ``msvcrt.locking`` on
    Windows), released when the block ends or the process dies; OSError naming ``--out`` when the
    lock file cannot be opened."""
    path = Path(folder) / LOCK_FILE
    try:
        handle = open(path, "a+b")
    except OSError as exc:
        raise OSError(f"--out: cannot open the lock file {str(path)!r} of the report folder "
                      f"({exc.strerror or exc})") from None
    with handle:
        if sys.platform == "win32":
            import msvcrt

            locking = msvcrt.locking  # type: ignore[attr-defined]
            while True:  # LK_LOCK retries for 10 s, then raises: wait as long as the other writer writes
                try:
                    locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
                    break
                except OSError:
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
