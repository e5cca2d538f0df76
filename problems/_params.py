"""String choices of problem-family parameters.

Every family builder passes its integer and real arguments through ``validation`` (check_int,
check_real) and its string choices through ``as_choice``, so that bad input raises one
``ProblemError`` naming the field; the spec it records (``spec.FamilySpec``) holds the canonical
values.
"""

from __future__ import annotations

from typing import Any

from ._base import ProblemError

__all__ = ["as_choice"]


def as_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices`` (a string); ProblemError naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise ProblemError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value
