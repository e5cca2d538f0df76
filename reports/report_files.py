"""The files of a report folder: its figures (PNG with an SVG beside it), paths written relative
to the report, and writing a report file atomically (a reader never sees half a file)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ReportFigure", "relative_path", "atomic_write"]


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
