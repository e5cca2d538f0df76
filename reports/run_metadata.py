"""Run metadata recorded in every report: command, settings, what the run store gave, wall time,
the git commit of a checkout, versions of every library a verdict depends on (and of fedbound),
machine, files."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

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


def git_commit(package: Path | None = None) -> str | None:
    """The commit of the fedbound checkout that runs, with ``+dirty`` for local changes to tracked files,
    or None (shown as n/a) outside a checkout or without a working ``git``.

    The checkout is the git work tree holding this package (``package``: its folder, this module's by
    default; run from a checkout, an editable install, a git worktree), if that work tree's
    ``reports/run_metadata.py`` is this very file (a virtual environment inside some other repository
    is not fedbound's checkout). An installed copy (``pip install .``) is no checkout: its commit is
    then that of the folder pip installed it from (PEP 610's ``direct_url.json``) when that folder is
    still a git checkout of fedbound, written ``COMMIT (installed from DIR)``: the checkout's commit
    now, which is the installed code's unless the checkout moved on since. git runs with its own
    trust rules (``safe.directory``): a checkout git refuses to read gives None."""
    here = (package or Path(__file__).resolve().parent).resolve()
    module = Path(__file__).name
    top = _git(here, "rev-parse", "--show-toplevel")
    if top and (Path(top) / here.name / module).resolve() == here / module:
        return _commit(Path(top))
    source = _install_source()
    if source is not None and (source / "reports" / module).is_file() and (source / "pyproject.toml").is_file():
        commit = _commit(source)
        return None if commit is None else f"{commit} (installed from {source})"
    return None


def _commit(root: Path) -> str | None:
    """HEAD of the checkout at ``root``, ``+dirty`` with changes to tracked files; None when git cannot tell."""
    commit = _git(root, "rev-parse", "HEAD")
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    if not commit or dirty is None:
        return None
    return commit + ("+dirty" if dirty else "")


def _git(folder: Path, *args: str) -> str | None:
    """``git -C folder args`` stdout, stripped; None when git is missing, fails or takes over 5 s."""
    try:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=5,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _install_source() -> Path | None:
    """The local folder an installed fedbound was built from (``direct_url.json``, PEP 610), or None."""
    try:
        text = metadata.distribution("fedbound").read_text("direct_url.json")
        url = json.loads(text)["url"] if text else ""
    except (metadata.PackageNotFoundError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    return Path(unquote(urlparse(url).path))
