"""Validation of the arguments that the rate fit and the checkers share (``convergence.rates``,
``convergence.checks``, ``convergence.fixed_point``): record points x (P,), measurements over seeds
(S, P), finite reals, counts, confidence levels and floors. Each bad value raises one ValueError whose
message starts with the argument's name; nothing is coerced beyond the stated dtype (float64 arrays,
Python int / float scalars), and bools are never numbers here.
"""

from __future__ import annotations

import math

import numpy as np

from problems import check_int

__all__ = ["is_real", "as_count", "as_confidence", "as_floor", "as_record_points", "as_values"]


def as_floor(floor: float | None) -> float:
    """The floor as a float (None means 0); must be finite and >= 0."""
    if floor is None:
        return 0.0
    if not (is_real(floor) and floor >= 0):
        raise ValueError(f"floor: must be a finite number >= 0 or None, got {floor!r}")
    return float(floor)


def as_record_points(x: np.ndarray, *, increasing: bool = True) -> np.ndarray:
    """x as a float64 (P,) array, P >= 1, finite and positive (and strictly increasing if asked)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"x: expected a non-empty 1-d array of record points, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError("x: record points must be finite and positive")
    if increasing and np.any(np.diff(arr) <= 0):
        raise ValueError("x: record points must be strictly increasing")
    return arr


def as_values(values: np.ndarray, n_points: int, *, nonnegative: bool) -> np.ndarray:
    """values as a float64 (S, P) array matching x; a (P,) array is one seed."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != n_points:
        raise ValueError(f"values: expected shape (seeds, {n_points}) matching x, got {np.shape(values)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values: measurements contain NaN or infinite values")
    if nonnegative and np.any(arr < 0):
        raise ValueError("values: measurements must be nonnegative")
    return arr


def is_real(value: object) -> bool:
    """True for a finite int or float (numpy scalars included); False for bools and anything else."""
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
    )


def as_count(value: int, name: str, *, minimum: int) -> int:
    """An integer argument >= minimum (bools rejected): ``problems.check_int``, the one integer
    validator of configs, problems and checkers, raising ValueError."""
    return check_int(name, value, minimum=minimum, error=ValueError)


def as_confidence(confidence: float) -> float:
    """A confidence level strictly between 0 and 1."""
    if not (is_real(confidence) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence: must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)
