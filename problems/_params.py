"""Choices and canonical specs of problem-family parameters.

Every family builder passes its integer and real arguments through ``validation`` (check_int,
check_real) and its string choices through ``as_choice``, so that (i) bad input raises one
``ProblemError`` naming the field and (ii) the values recorded in ``FederatedProblem.spec`` have a
canonical JSON type (int stays int, float becomes float), which keeps config hashes stable
whether a caller wrote ``mu=0`` or ``mu=0.0``.
"""

from __future__ import annotations

from typing import Any

from ._base import ProblemError

__all__ = ["as_choice", "make_spec"]


def as_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; ProblemError naming ``name`` otherwise."""
    if value not in choices:
        raise ProblemError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return str(value)


def make_spec(family: str, params: dict[str, Any]) -> dict[str, Any]:
    """The canonical spec ``{"family": family, "params": params}`` (params sorted by name)."""
    return {"family": family, "params": {key: params[key] for key in sorted(params)}}
