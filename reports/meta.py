"""Run metadata recorded in every report: command, settings, wall time, versions, machine."""

from __future__ import annotations

import os
import platform
import sys
from datetime import datetime, timezone
from typing import Any, Sequence

import numba
import numpy
import scipy

from proofs_check import VerifySettings

__all__ = ["run_metadata"]


def run_metadata(argv: Sequence[str] | None, settings: VerifySettings, wall_time: float, claims: list[str]) -> dict[str, Any]:
    """A JSON-able dict describing how the report was produced."""
    args = list(sys.argv[1:] if argv is None else argv)
    return {
        "command": "fedbound " + " ".join(args),
        "claims": claims,
        "seeds": settings.seeds,
        "jobs": settings.jobs,
        "run_store": settings.store,
        "cache": "reused stored runs" if settings.use_cache else "recomputed (--no-cache)",
        "scheduler": settings.scheduler or "local",
        "mode": "quick" if settings.quick else ("full" if settings.full else "default"),
        "wall_time_s": round(wall_time, 2),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
    }
