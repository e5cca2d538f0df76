"""Run metadata recorded in every report: command, settings, what the run store gave, wall time,
the git commit of a checkout, versions of every library a verdict depends on (and of fedbound),
machine, files."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .report_files import ReportFigure, relative_path

if TYPE_CHECKING:
    from proofs_check.framework.settings import VerifySettings

__all__ = ["run_metadata", "library_versions", "git_commit", "fedbound_version", "META_ORDER"]

LIBRARIES = ("numpy", "scipy", "numba", "cvxpy", "matplotlib", "hypothesis", "dask")
"""The libraries whose versions a report records (the ones its numbers or checks depend on)."""

META_ORDER = ("command", "seeds", "wall_time_s", "versions", "machine")
"""The metadata keys a report shows first, when present; any other key follows in its own order."""


def run_metadata(
    command: Sequence[str], settings: VerifySettings, wall_time: float, claims: list[str], reused: int, computed: int,
    *, merged: Sequence[str] = (), out: Path, figures: Sequence[ReportFigure] = (),
) -> dict[str, Any]:
    """A JSON-able dict describing how the report was produced (reports show ``META_ORDER`` first)."""
    cache = f"{reused} run(s) reused from the store, {computed} computed"
    if not settings.use_cache:
        cache += " (--no-cache: stored runs were not read)"
    files = ["report.md", "verdicts.json"] + [relative_path(f.path, out) for f in figures]
    if settings.store:
        files.append(relative_path(Path(settings.store), out))
    meta: dict[str, Any] = {
        "command": "fedbound " + " ".join(command),
        "claims": claims,
        "seeds": settings.seeds,
        "jobs": settings.jobs,
        "run_store": settings.store,
        "cache": cache,
        "scheduler": settings.scheduler or "local",
        "mode": settings.mode,
        "wall_time_s": round(wall_time, 2),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "versions": library_versions(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
        "files": files,
    }
    if merged:
        meta["merged"] = (f"claims {', '.join(merged)} were kept from the earlier report in this folder "
                          "(same mode and seeds); the others were computed by this command")
    return meta


def library_versions() -> dict[str, str]:
    """Installed versions of ``LIBRARIES`` (read from package metadata, nothing imported)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def fedbound_version() -> str:
    """The installed version of fedbound, or a note that it is not installed."""
    try:
        return metadata.version("fedbound")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def git_commit() -> str | None:
    """The commit of the checkout fedbound runs from (with ``+dirty`` for local changes), or
    None when it is an installed copy (no git checkout around the package)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")
