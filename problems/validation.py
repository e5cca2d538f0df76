"""The one validator of fedbound's scalar inputs and sizes, used by every layer.

Problems, problem families, algorithm configs, step-size schedules and the CLI all pass their
integer and real fields through these functions, so that every bad value is refused the same
way: one error of the caller's own type (``error``: ProblemError here, ConfigError or
ScheduleError in ``convergence``) whose message starts with the field's name. Nothing is coerced:

* an integer field takes a Python or NumPy integer and nothing else (``1.5``, ``2.0``, ``'2'`` and
  ``True`` are refused); the value is returned as a Python ``int``;
* a real field takes a finite Python or NumPy real (not ``bool``, not a string) and returns it as
  a Python ``float`` (the canonical JSON type, so config hashes do not depend on ``1`` vs ``1.0``).

Memory bounds: ``check_memory`` refuses an allocation larger than ``MEMORY_FRACTION`` of the
memory available now (``MemAvailable`` of ``/proc/meminfo``, else the physical pages of
``os.sysconf``), naming the fields whose sizes drive the estimate, before anything is allocated.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "ProblemError",
    "MEMORY_FRACTION",
    "available_memory",
    "check_array",
    "check_int",
    "check_ints",
    "check_memory",
    "check_problem_size",
    "check_real",
    "format_bytes",
]

MEMORY_FRACTION = 0.5
"""Largest share of the available memory one estimated allocation may take: the rest is left to
the interpreter, the arrays derived from the data (packing, optima) and other processes."""

_MEMINFO = "/proc/meminfo"


class ProblemError(ValueError):
    """Invalid problem data; the message names the offending field."""


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[Exception] = ProblemError,
) -> int:
    """``value`` as a Python int in [minimum, maximum]; ``error`` naming ``name`` otherwise.

    Only Python and NumPy integers are integers here (not bool, not integral floats, not strings).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise error(f"{name}: expected an integer, got {value!r} ({type(value).__name__})")
    out = int(value)
    if minimum is not None and out < minimum:
        raise error(f"{name}: must be >= {minimum}, got {out}")
    if maximum is not None and out > maximum:
        raise error(f"{name}: must be <= {maximum}, got {out}")
    return out


def check_ints(
    name: str,
    values: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[Exception] = ProblemError,
) -> tuple[int, ...]:
    """A sequence of integers (each as in ``check_int``) as a tuple of Python ints.

    A string, a mapping or a non-iterable is refused, as is a multi-dimensional array.
    """
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable):
        raise error(f"{name}: expected a sequence of integers, got {values!r}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise error(f"{name}: expected a 1-d sequence of integers, got an array of shape {values.shape}")
    items = tuple(values)
    for i, item in enumerate(items):
        check_int(f"{name}[{i}]", item, minimum=minimum, maximum=maximum, error=error)
    return tuple(int(item) for item in items)


def check_array(name: str, value: Any, kinds: str, expected: str) -> np.ndarray:
    """``np.asarray(value)`` when its dtype kind is one of ``kinds`` (e.g. "iu" integers, "iuf" real
    numbers: bool, complex, strings and objects are refused); ProblemError naming ``name`` for ragged or
    unconvertible data, or "expected ``expected``" with the dtype found."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ProblemError(f"{name}: cannot be read as an array ({exc})") from None
    if array.dtype.kind not in kinds:
        raise ProblemError(f"{name}: expected {expected}, got an array of dtype {array.dtype}")
    return array


def check_real(
    name: str,
    value: Any,
    minimum: float | None = None,
    *,
    strict: bool = False,
    error: type[Exception] = ProblemError,
) -> float:
    """``value`` as a finite Python float, >= ``minimum`` (> when ``strict``); ``error`` naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise error(f"{name}: expected a real number, got {value!r} ({type(value).__name__})")
    out = float(value)
    if not np.isfinite(out):
        raise error(f"{name}: must be finite, got {value!r}")
    if minimum is not None and (out <= minimum if strict else out < minimum):
        raise error(f"{name}: must be {'>' if strict else '>='} {minimum:g}, got {out:g}")
    return out


def available_memory() -> int:
    """Bytes of memory available to a new allocation now (MemAvailable, else physical memory)."""
    try:
        with open(_MEMINFO, encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def format_bytes(nbytes: float) -> str:
    """A byte count for people: '3.2 GiB'."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"


def check_memory(fields: str, nbytes: int, what: str, *, error: type[Exception] = ProblemError) -> None:
    """Refuse (``error`` naming ``fields``) an estimated allocation of ``nbytes`` for ``what`` that
    exceeds MEMORY_FRACTION of the available memory."""
    limit = MEMORY_FRACTION * available_memory()
    if nbytes > limit:
        raise error(
            f"{fields}: {what} would need about {format_bytes(nbytes)}, more than {MEMORY_FRACTION:.0%} of the "
            f"{format_bytes(limit / MEMORY_FRACTION)} of memory available; choose smaller sizes"
        )


def check_problem_size(fields: str, rows: int, features: int, dim: int) -> None:
    """Refuse (ProblemError naming ``fields``) a problem family whose data cannot fit in memory.

    Estimate, in float64 entries: the rows and targets twice (the per-client parts and the packed
    copy), rows * (features + 1) * 2, plus the dim x dim Hessian of its exact optimum.
    """
    nbytes = 8 * (2 * rows * (features + 1) + dim * dim)
    check_memory(fields, nbytes, f"a problem of {rows} rows x {features} features (d = {dim})")
