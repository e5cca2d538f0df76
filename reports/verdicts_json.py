"""``verdicts.json``: the machine-readable report, ``{"fedbound_version", "created", "meta",
"claims", "power"}``.

Each claim object is ``Verdict.to_json()`` (its sub-checks under ``evidence.checks`` and
``evidence.uninformative``, see ``convergence.verdict``) plus ``figures`` (``{"png", "svg",
"caption"}``, file names relative to the JSON's folder) and ``grid`` (the sweeps it ran, when
given); a bound check's tightness is in its evidence (``tightness``, ``tightness_label``).
``power`` is the list of ``PowerRow.to_json()`` (empty without ``--power``). JSON has no NaN or
infinity: they are written as null, and a value of any other type is refused, naming its field.
"""

from __future__ import annotations

import enum
import json
import math
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from convergence.verdict import Verdict

from .power import PowerRow
from .report_content import figures_by_claim
from .report_files import ReportFigure, atomic_write, relative_path
from .run_metadata import fedbound_version

__all__ = ["write_verdicts_json"]


def write_verdicts_json(
    path: str | os.PathLike[str], verdicts: Sequence[Verdict], meta: Mapping[str, Any] | None = None,
    *, figures: Sequence[ReportFigure] = (), grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> Path:
    """Write ``{"fedbound_version", "created", "meta", "claims", "power"}`` atomically (module
    docstring); NaN/inf become null."""
    by_claim = figures_by_claim(verdicts, figures)
    base = Path(path).parent
    claims = []
    for i, v in enumerate(verdicts):
        data = v.to_json()
        data["figures"] = [{"png": relative_path(f.path, base), "svg": relative_path(f.path.with_suffix(".svg"), base),
                            "caption": f.caption} for f in by_claim[v.claim_id]]
        if grids is not None:
            data["grid"] = list(grids.get(v.claim_id, []))
        claims.append(_jsonable(data, f"claims[{i}]"))
    document = {
        "fedbound_version": fedbound_version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "meta": _jsonable(dict(meta or {}), "meta"),
        "claims": claims,
        "power": [_jsonable(row.to_json(), f"power[{i}]") for i, row in enumerate(power)],
    }
    text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return atomic_write(path, text)


def _jsonable(value: Any, where: str) -> Any:
    """``value`` with JSON types only: NaN/inf -> None, NumPy -> Python, enums by value, paths as
    strings; TypeError naming the field (``where``) for anything else."""
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, where)
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), where)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: cannot write a {type(value).__name__} to JSON")
