"""The folder fedbound reads and writes data files in: arrays files (``problems.from_arrays``) and
the image datasets (``problems.image_data``, ``problems.data_fetch``)."""

from __future__ import annotations

import os
from pathlib import Path

from ._base import ProblemError

__all__ = ["DATA_ENV", "data_folder"]

DATA_ENV = "FEDBOUND_DATA"
"""Environment variable naming the data folder (when no ``data_dir`` is given)."""


def data_folder(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds arrays files: ``data_dir``, else $FEDBOUND_DATA, else the user cache folder."""
    if data_dir is not None:
        if not isinstance(data_dir, (str, os.PathLike)) or not str(data_dir):
            raise ProblemError(f"data_dir: expected a folder path, got {data_dir!r}")
        return Path(data_dir).expanduser().resolve()
    from_env = os.environ.get(DATA_ENV)
    if from_env:
        return Path(from_env).expanduser().resolve()
    try:
        import platformdirs
    except ImportError:
        return Path.home() / ".cache" / "fedbound"
    return Path(platformdirs.user_cache_dir("fedbound"))
