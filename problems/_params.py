"""Validation and normalisation of problem-family parameters.

Every family builder passes its arguments through these helpers, so that (i) bad input raises
one ``ProblemError`` naming the field and (ii) the values recorded in ``FederatedProblem.spec``
have a canonical JSON type (int stays int, float becomes float), which keeps config hashes stable
whether a caller wrote ``mu=0`` or ``mu=0.0``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ._base import ProblemError

__all__ = ["as_int", "as_float", "as_choice", "make_spec"]


def as_int(name: str, value: Any, minimum: int | None = None) -> int:
    """``value`` as a Python int (integral floats are accepted); ProblemError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ProblemError(f"{name}: expected an integer, got {value!r}")
    if not math.isfinite(float(value)) or float(value) != int(value):
        raise ProblemError(f"{name}: expected an integer, got {value!r}")
    out = int(value)
    if minimum is not None and out < minimum:
        raise ProblemError(f"{name}: must be >= {minimum}, got {out}")
    return out


def as_float(
    name: str,
    value: Any,
    minimum: float | None = None,
    *,
    strict: bool = False,
) -> float:
    """``value`` as a finite Python float, >= ``minimum`` (> when ``strict``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ProblemError(f"{name}: expected a real number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ProblemError(f"{name}: must be finite, got {value!r}")
    if minimum is not None and (out <= minimum if strict else out < minimum):
        raise ProblemError(f"{name}: must be {'>' if strict else '>='} {minimum}, got {out}")
    return out


def as_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; ProblemError naming ``name`` otherwise."""
    if value not in choices:
        raise ProblemError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return str(value)


def make_spec(family: str, params: dict[str, Any]) -> dict[str, Any]:
    """The canonical spec ``{"family": family, "params": params}`` (params sorted by name)."""
    return {"family": family, "params": {key: params[key] for key in sorted(params)}}
