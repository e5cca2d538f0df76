"""Reading an experiment file's fields: typed values out of TOML tables, each bad one a single
``ExperimentError`` naming its field path (``algorithm.rounds``, ``checks[1].expression``).

TOML already types its values (integers, floats, strings, booleans, arrays, tables); these readers
only check that each value has the type its field needs, and never convert one type into another:
an integer field given ``5.0`` is an error, not 5. A float field takes a TOML integer as the number
it is (``tolerance = 1`` is 1.0), as every numeric field of fedbound's configs does. Numbers are
checked by the validators every layer uses (``problems.check_int``, ``problems.check_real``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from problems.validation import check_int, check_real

__all__ = ["ExperimentError", "check_keys", "is_number", "read_float", "read_int", "read_str", "read_table", "required"]


class ExperimentError(ValueError):
    """An experiment file that cannot be run; the message starts with the path of the bad field."""


def check_keys(table: Mapping[str, Any], allowed: Collection[str], path: str) -> None:
    """ExperimentError naming ``path.key`` for the first key of ``table`` not in ``allowed``."""
    for key in table:
        if key not in allowed:
            known = ", ".join(allowed) or "none"
            raise ExperimentError(f"{_join(path, key)}: unknown key (this table takes: {known})")


def required(table: Mapping[str, Any], key: str, path: str) -> Any:
    """``table[key]``; ExperimentError naming ``path.key`` when it is missing."""
    if key not in table:
        raise ExperimentError(f"{_join(path, key)}: missing")
    return table[key]


def read_table(value: Any, path: str) -> Mapping[str, Any]:
    """``value`` if it is a table (a mapping); ExperimentError naming ``path`` otherwise."""
    if not isinstance(value, Mapping):
        raise ExperimentError(f"{path}: expected a table, got {_shown(value)}")
    return value


def read_str(value: Any, path: str) -> str:
    """``value`` if it is a non-blank string; ExperimentError naming ``path`` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ExperimentError(f"{path}: expected a non-empty string, got {_shown(value)}")
    return value


def read_int(value: Any, path: str, minimum: int | None = None) -> int:
    """``value`` if it is an integer (not a bool or a float) >= ``minimum``: ``problems.check_int``,
    ExperimentError naming ``path``."""
    return check_int(path, value, minimum=minimum, error=ExperimentError)


def read_float(value: Any, path: str, minimum: float | None = None) -> float:
    """``value`` (a TOML integer or float, not a bool) as a finite float >= ``minimum``:
    ``problems.check_real``, ExperimentError naming ``path``."""
    return check_real(path, value, minimum, error=ExperimentError)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number: an int or a float, not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shown(value: Any) -> str:
    """A value and its TOML type, for messages."""
    kind = {bool: "boolean", int: "integer", float: "float", str: "string"}.get(type(value))
    if kind is None:
        kind = "table" if isinstance(value, Mapping) else ("array" if isinstance(value, list) else type(value).__name__)
    return f"{value!r} ({kind})"
