"""The primitive choices behind one draw from a Hypothesis strategy, made by the falsifier itself.

A strategy builds its value from primitive choices (booleans, integers, floats, strings, bytes),
each under Hypothesis's constraints (the keyword arguments of ``PrimitiveProvider.draw_<kind>``).
``Chooser`` is a Hypothesis ``PrimitiveProvider`` that makes them, so that no choice comes from
Hypothesis's own generator (which adds numeric literals found in the source files of the local
modules imported, its "local constants"): all randomness comes from the ``random.Random`` and the
design points passed in.

Distributions (``Chooser`` with an rng: plain random sampling): every choice independently; a
boolean is True with the strategy's probability p, a bounded integer or float is uniform on its
range (Hypothesis's extra weight on boundaries is not used), a half-bounded or unbounded one is
the finite bound (or the shrink target) plus or minus a magnitude 2^u, u uniform on [0, 16] for
integers and on [-20, 20] for floats, strings and bytes have a uniform length in
[min_size, min_size + 10] and uniform characters.

Unit coordinates (the falsifier's space-filling design and its climbs). A boolean or a bounded
integer or float is the image of one number z in [0, 1] under the inverse distribution function
of the distribution above (``_unit_value``): True when z < p; lo + floor(z (hi - lo + 1)) for an
integer; lo + z (hi - lo) for a float. ``_unit_coordinate`` is the inverse (the middle of an
integer's cell). So a uniform z gives the plain random distribution, and a design point (one z per
choice) gives an input; other kinds have no unit coordinate and are drawn as above.

Mutation (``mutant``, a climb's move): a boolean flipped; a bounded integer or float moved by a
Gaussian step of a given width in its unit coordinate (clipped to [0, 1]; an integer moves by at
least 1); an unbounded integer moved by 1 or redrawn; an unbounded float moved by a Gaussian step
of width 10^(-3u) times max(1, |value|), u uniform on [0, 1], or redrawn; strings and bytes redrawn.

Order (``complexity``, shrinking): fewer choices first, then choice by choice: an integer nearer its
shrink target, a float with fewer significant digits then nearer the simplest value of its range,
False before True, shorter strings and bytes. ``simpler_values`` lists the candidate replacements of
one choice, each simpler than it: an integer nearer its shrink target by halving steps, a float
with fewer significant digits or nearer the simplest value, the simplest value, shorter strings.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis.internal.conjecture.providers import PrimitiveProvider

__all__ = ["Choice", "Chooser", "complexity", "identity_key", "mutant", "simpler_values"]


@dataclass(frozen=True)
class Choice:
    """One primitive choice a strategy made: kind ("boolean", "integer", "float", "string" or "bytes"),
    value, and Hypothesis's constraints on it (the keyword arguments of ``PrimitiveProvider.draw_<kind>``)."""

    kind: str
    value: Any
    constraints: Mapping[str, Any]


class Chooser(PrimitiveProvider):
    """Makes the primitive choices of one draw from a strategy. Choice i is ``overrides[i]`` when given
    and permitted, else ``template[i]`` when of the same kind and permitted, else a fresh value: the
    ``_unit_value`` of ``units[i]`` when given and the choice has a unit coordinate (a design point),
    else drawn by ``rng`` (the distributions of the module docstring) or, without one, the simplest
    permitted value."""

    def __init__(self, template: tuple[Choice, ...] = (), overrides: Mapping[int, Any] | None = None,
                 rng: random.Random | None = None, units: Sequence[float] = ()) -> None:
        super().__init__(None)
        self.template, self.overrides, self.rng, self.units = template, dict(overrides or {}), rng, units
        self.made: list[Choice] = []
        self.spans: list[tuple[int, int]] = []  # [start, end) of the choices of each strategy draw
        self._open: list[int] = []

    def span_start(self, label: int) -> None:
        self._open.append(len(self.made))

    def span_end(self, discard: bool) -> None:
        start = self._open.pop()
        if len(self.made) > start:
            self.spans.append((start, len(self.made)))

    def _choose(self, kind: str, constraints: dict[str, Any]) -> Any:
        i = len(self.made)
        candidates = []
        if i in self.overrides:
            candidates.append(self.overrides[i])
        if i < len(self.template) and self.template[i].kind == kind:
            candidates.append(self.template[i].value)
        value = next((v for v in candidates if _permitted(kind, v, constraints)), _MISSING)
        if value is _MISSING and i < len(self.units) and _has_unit(kind, constraints):
            value = _unit_value(kind, constraints, float(self.units[i]))
        if value is _MISSING:
            value = _simplest(kind, constraints) if self.rng is None else _random_value(kind, constraints, self.rng)
        self.made.append(Choice(kind, value, constraints))
        return value

    def draw_boolean(self, p: float = 0.5) -> bool:
        return self._choose("boolean", {"p": p})

    def draw_integer(self, min_value: int | None = None, max_value: int | None = None, *,
                     weights: dict[int, float] | None = None, shrink_towards: int = 0) -> int:
        # weights (Hypothesis's extra mass on the ends of wide ranges) are left out: plain uniform sampling
        return self._choose("integer", {"min_value": min_value, "max_value": max_value, "shrink_towards": shrink_towards})

    def draw_float(self, *, min_value: float = -math.inf, max_value: float = math.inf, allow_nan: bool = True,
                   smallest_nonzero_magnitude: float = 5e-324) -> float:
        return self._choose("float", {"min_value": min_value, "max_value": max_value, "allow_nan": allow_nan,
                                      "smallest_nonzero_magnitude": smallest_nonzero_magnitude})

    def draw_string(self, intervals: Any, *, min_size: int = 0, max_size: int = 10**9) -> str:
        return self._choose("string", {"intervals": intervals, "min_size": min_size, "max_size": max_size})

    def draw_bytes(self, min_size: int = 0, max_size: int = 10**9) -> bytes:
        return self._choose("bytes", {"min_size": min_size, "max_size": max_size})



_MISSING = object()


def _lte(x: float, y: float) -> bool:
    """x <= y with -0.0 < 0.0 (Hypothesis's float bounds are sign-aware)."""
    return math.copysign(1.0, x) <= math.copysign(1.0, y) if x == 0.0 == y else x <= y


def _permitted(kind: str, value: Any, c: Mapping[str, Any]) -> bool:
    """Whether ``value`` is a choice of ``kind`` that the constraints ``c`` allow."""
    if kind == "boolean":
        return isinstance(value, bool) and (c["p"] > 0 or not value) and (c["p"] < 1 or value)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)
                and (c["min_value"] is None or value >= c["min_value"])
                and (c["max_value"] is None or value <= c["max_value"]))
    if kind == "float":
        if not isinstance(value, float):
            return False
        if math.isnan(value):
            return bool(c["allow_nan"])
        return (not 0 < abs(value) < c["smallest_nonzero_magnitude"]
                and _lte(c["min_value"], value) and _lte(value, c["max_value"]))
    if kind == "string":
        return (isinstance(value, str) and c["min_size"] <= len(value) <= c["max_size"]
                and all(ord(ch) in c["intervals"] for ch in value))
    return isinstance(value, bytes) and c["min_size"] <= len(value) <= c["max_size"]


def _integer_towards(c: Mapping[str, Any]) -> int:
    """The simplest integer allowed: the shrink target clipped to [min_value, max_value]."""
    t = c["shrink_towards"]
    if c["min_value"] is not None:
        t = max(t, c["min_value"])
    return t if c["max_value"] is None else min(t, c["max_value"])


def _simplest(kind: str, c: Mapping[str, Any]) -> Any:
    """The simplest permitted value: False, the integer shrink target, the float nearest 0, the shortest
    string of the first allowed character, zero bytes."""
    if kind == "boolean":
        return c["p"] >= 1
    if kind == "integer":
        return _integer_towards(c)
    if kind == "float":
        lo, hi = c["min_value"], c["max_value"]
        value = 0.0 if _permitted("float", 0.0, c) else -0.0 if _permitted("float", -0.0, c) else lo if lo > 0 else hi
        return max(value, c["smallest_nonzero_magnitude"]) if value > 0 else value
    if kind == "string":
        return chr(c["intervals"][0]) * c["min_size"] if len(c["intervals"]) else ""
    return bytes(c["min_size"])


def _has_unit(kind: str, c: Mapping[str, Any]) -> bool:
    """Whether a choice has a unit coordinate: a boolean, or an integer or float with both bounds finite."""
    if kind == "boolean":
        return True
    if kind == "integer":
        return c["min_value"] is not None and c["max_value"] is not None
    return kind == "float" and math.isfinite(c["min_value"]) and math.isfinite(c["max_value"])


def _unit_value(kind: str, c: Mapping[str, Any], z: float) -> Any:
    """The value at unit coordinate ``z`` in [0, 1] of a boolean or a bounded integer or float of
    ``kind`` under constraints ``c``: the inverse distribution function of its plain random
    distribution (module docstring)."""
    if kind == "boolean":
        return z < c["p"]
    lo, hi = c["min_value"], c["max_value"]
    if kind == "integer":
        return lo + min(int(z * (hi - lo + 1)), hi - lo)
    value = min(max(lo + (hi - lo) * z if math.isfinite(hi - lo) else lo * (1 - z) + hi * z, lo), hi)
    if 0 < abs(value) < c["smallest_nonzero_magnitude"]:
        value = math.copysign(c["smallest_nonzero_magnitude"], value)
    return value if _permitted("float", value, c) else _simplest("float", c)


def _unit_coordinate(choice: Choice) -> float | None:
    """The unit coordinate of a bounded integer or a finite bounded float (the inverse of ``_unit_value``;
    an integer at the middle of its cell); None for other choices."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "boolean" or not _has_unit(kind, c) or (kind == "float" and not math.isfinite(value)):
        return None
    lo, hi = c["min_value"], c["max_value"]
    if kind == "integer":
        return (value - lo + 0.5) / (hi - lo + 1)
    if hi == lo:
        return 0.5
    z = (value - lo) / (hi - lo) if math.isfinite(hi - lo) else (value / 2 - lo / 2) / (hi / 2 - lo / 2)
    return min(max(z, 0.0), 1.0)


def _random_value(kind: str, c: Mapping[str, Any], rng: random.Random) -> Any:
    """A value drawn at random for one choice (the distributions of the module docstring)."""
    if _has_unit(kind, c):
        return _unit_value(kind, c, rng.random())
    if kind == "integer":
        lo, hi = c["min_value"], c["max_value"]
        offset = int(2.0 ** (16 * rng.random())) - 1
        if lo is not None:
            return lo + offset
        if hi is not None:
            return hi - offset
        return c["shrink_towards"] + (offset if rng.random() < 0.5 else -offset)
    if kind == "float":
        lo, hi = c["min_value"], c["max_value"]
        magnitude = 2.0 ** (40 * rng.random() - 20)
        if math.isfinite(lo):
            value = lo + magnitude
        elif math.isfinite(hi):
            value = hi - magnitude
        else:
            value = magnitude if rng.random() < 0.5 else -magnitude
        value = min(max(value, lo), hi)
        if 0 < abs(value) < c["smallest_nonzero_magnitude"]:
            value = math.copysign(c["smallest_nonzero_magnitude"], value)
        return value if _permitted("float", value, c) else _simplest("float", c)
    size = c["min_size"] + rng.randrange(min(c["max_size"], c["min_size"] + 10) - c["min_size"] + 1)
    if kind == "string":
        n = len(c["intervals"])
        return "".join(chr(c["intervals"][rng.randrange(n)]) for _ in range(size)) if n else ""
    return bytes(rng.randrange(256) for _ in range(size))


def mutant(choice: Choice, width: float, rng: random.Random) -> Any:
    """A random neighbour of one choice (module docstring, "Mutation"); ``width``: the standard deviation
    of the Gaussian step in the unit coordinate of a bounded integer or float."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "boolean":
        return not value
    z = _unit_coordinate(choice)
    if z is not None:
        moved = _unit_value(kind, c, min(max(z + width * rng.gauss(0.0, 1.0), 0.0), 1.0))
        if kind == "integer" and moved == value:
            step = 1 if rng.random() < 0.5 else -1
            moved = value + (step if _permitted(kind, value + step, c) else -step)
        return moved
    if kind == "integer" and rng.random() < 0.5:
        step = 1 if rng.random() < 0.5 else -1
        return value + (step if _permitted(kind, value + step, c) else -step)
    if kind == "float" and rng.random() < 0.5 and math.isfinite(value):
        return min(max(value + max(1.0, abs(value)) * 10.0 ** (-3 * rng.random()) * rng.gauss(0.0, 1.0),
                       c["min_value"]), c["max_value"])
    return _random_value(kind, c, rng)


def _digits(value: float) -> int:
    """Significant decimal digits of the shortest repr of a finite float (0 for 0.0)."""
    mantissa = repr(abs(value)).split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return len(mantissa)


def _choice_key(choice: Choice) -> tuple[float, ...]:
    """How complex a choice is (smaller is simpler): distance from the integer shrink target; for a float
    its significant digits, then distance from the simplest value; True after False; length, then
    characters or bytes."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "boolean":
        return (float(value),)
    if kind == "integer":
        t = _integer_towards(c)
        return (float(abs(value - t)), float(value < t))
    if kind == "float":
        if not math.isfinite(value):
            return (math.inf, 0.0 if math.isinf(value) else 1.0)
        return (float(_digits(value)), abs(value - _simplest("float", c)), math.copysign(1.0, value))
    return (float(len(value)), *(float(ord(ch)) for ch in value)) if kind == "string" else (float(len(value)), *map(float, value))


def complexity(choices: tuple[Choice, ...]) -> tuple[int, tuple[tuple[float, ...], ...]]:
    """Shortlex order of inputs: fewer choices first, then the choices' keys in order."""
    return len(choices), tuple(_choice_key(choice) for choice in choices)


def simpler_values(choice: Choice) -> list[Any]:
    """Candidate replacements of one choice, simplest first, each simpler than it (shrinking)."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "integer":
        t = _integer_towards(c)
        distance, sign = abs(value - t), (1 if value > t else -1)
        values = [value - sign * (distance >> k) for k in range(distance.bit_length())]  # t, halfway, ..., value -+ 1
    elif kind == "float" and math.isfinite(value):
        s, digits = _simplest("float", c), max(1, _digits(value))
        values = [s, *(float(f"{value:.{k}g}") for k in range(1, digits)),  # fewer significant digits
                  *(float(f"{s + (value - s) * (1 - 0.5**j):.{digits}g}") for j in range(1, 8)),  # nearer s
                  float(f"{value - math.copysign(10.0 ** (math.floor(math.log10(abs(value))) - digits + 1), value - s):.{digits}g}")
                  if value != 0 else s]  # one unit of the last digit nearer s
    elif kind in ("string", "bytes"):
        values = [_simplest(kind, c), value[: len(value) // 2], value[:-1],
                  _simplest(kind, {**c, "min_size": len(value)})]
    else:
        values = [_simplest(kind, c)]
    key = _choice_key(choice)
    candidates = {_choice_key(Choice(kind, v, c)): v for v in values if _permitted(kind, v, c)}
    return [candidates[k] for k in sorted(candidates) if k < key]


def identity_key(choices: tuple[Choice, ...]) -> tuple[Any, ...]:
    """A hashable key of the choice values (floats by bit pattern, so -0.0 and 0.0 differ)."""
    return tuple((c.kind, c.value.hex() if c.kind == "float" else c.value) for c in choices)
