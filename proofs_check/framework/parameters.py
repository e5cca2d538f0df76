"""Claim parameters: a claim's plan as a typed frozen dataclass, one per mode, and the text form
``ID[name=value,...]`` of a claim run with other parameters.

A claim's **plan** is one frozen dataclass whose fields are every parameter of its evaluation:
the grid (the values of E, T, N, rounds, seeds ... that differ between ``--quick``, the default
and ``--full``) and the constants of the statement it checks (a bound's scale, a claimed
exponent: their defaults are the paper's, and a planted variant changes one). Every field is
declared with ``parameter(default, doc, ...)``: its type is the annotation (int, float, bool,
str, ``str | None``, ``tuple[int, ...]`` or ``tuple[float, ...]``) and its range is stated beside
it (``minimum``, ``above``, ``maximum``, ``choices``). A field with ``from_settings="seeds"``
takes its value from ``VerifySettings.seeds`` (``--seeds``), raised to the field's minimum.

``ModePlans(quick=..., default=..., full=...)`` states the plan of each mode as data next to the
claim (``proofs_check.framework.registry``); ``ModePlans.select(mode)`` is the one place the mode chooses a
plan, and ``resolve_plan`` then applies the settings and the parameters given by name, and, for a
claim whose plan depends on the data present (``ModePlans.by_data``, a ``DataPlans``: e.g. a
``dataset`` "auto" with a scale per data set), swaps in the plan of the data found, each value
given by name or by the settings kept; every value is checked: an unknown name, a wrong type or a value out of range is one ValueError that names the
field and the claim. The same parameters make planted variants (``PlantedVariant.params``) and
parameterised runs (``fedbound verify --claim 'li2020.thm1[E=10,seeds=16]'``); the verdict's id
shows them, ``variant_id``.

Text form: ``ID`` or ``ID[name=value,...]``; a tuple value is written in brackets,
``ding2020.thm1[K_grid=[32,128,512]]``; booleans are ``True``/``False``; floats in Python's
shortest round-trip form (``1e-05``). This module imports no numerical library, so ``fedbound
list`` and argument parsing stay instant.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Union

from .claim_text import ParamValue, param_text

if TYPE_CHECKING:
    from .settings import VerifySettings

__all__ = [
    "ParamValue", "PlanError", "ParameterSpec", "ModePlans", "DataPlans", "MODES", "parameter", "fixed", "plan_parameters",
    "named_parameters",
    "resolve_plan", "describe_parameters",
]


MODES = ("quick", "default", "full")
"""The modes of a verification: ``--quick``, none, ``--full``."""

_METADATA_KEY = "fedbound.parameter"
_FIXED_KEY = "fedbound.fixed"
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_MAX_DIGITS = 19  # the digits of 2**63 - 1: no claim parameter needs a larger integer than a 64-bit one


class PlanError(ValueError):
    """A plan whose fields do not fit together (raised by a plan's ``__post_init__``): ``field`` names
    the field to change, ``problem`` says why; ``resolve_plan`` adds the claim's id."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class _Rule:
    """What ``parameter`` records on a field (``ParameterSpec`` adds its name and type)."""

    doc: str
    minimum: float | None
    above: float | None
    maximum: float | None
    choices: tuple[str, ...]
    from_settings: str | None


def parameter(default: Any = dataclasses.MISSING, doc: str = "", *, minimum: float | None = None,
              above: float | None = None, maximum: float | None = None, choices: Sequence[str] = (),
              from_settings: str | None = None) -> Any:
    """A plan field: ``default`` (none: every mode's plan must give it), a one-line ``doc`` shown by
    ``fedbound list``, and its range: ``minimum`` (>=), ``above`` (>), ``maximum`` (<=) for numbers and
    every item of a tuple, ``choices`` for strings; ``from_settings`` names the ``VerifySettings``
    attribute the value comes from unless given (``"seeds"``)."""
    if not doc.strip():
        raise ValueError("doc: a plan parameter needs a one-line description")
    rule = _Rule(doc, minimum, above, maximum, tuple(choices), from_settings)
    return dataclasses.field(default=default, metadata={_METADATA_KEY: rule})


def fixed(doc: str) -> Any:
    """A plan field that is not a parameter: its value is set when the plan is made (a compiled
    experiment's parsed file and run requests, ``proofs_check.experiments.compile``), never by name;
    ``plan_parameters`` leaves it out, so ``fedbound list`` does not show it and ``ID[name=value]``
    cannot set it. ``doc`` says in one line what it holds."""
    if not doc.strip():
        raise ValueError("doc: a fixed plan field needs a one-line description")
    return dataclasses.field(metadata={_FIXED_KEY: doc})


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of a claim: its name, type (``kind``: int, float, bool, str, or tuple with
    ``item`` int or float), whether None is allowed, its one-line ``doc``, its range (``minimum`` >=,
    ``above`` >, ``maximum`` <=; ``choices`` for a string) and the ``VerifySettings`` attribute it
    comes from unless given (``from_settings``). Its value in each mode is the mode's plan's
    (``ModePlans``)."""

    name: str
    kind: type
    item: type | None
    optional: bool
    doc: str
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    from_settings: str | None = None

    def expected(self) -> str:
        """What a valid value is, in words: ``an integer >= 1``, ``a tuple of numbers > 0``."""
        words = {int: "an integer", float: "a finite number", bool: "True or False", str: "a string"}
        if self.kind is tuple:
            text = f"a strictly increasing tuple of {'integers' if self.item is int else 'finite numbers'}"
        else:
            text = words[self.kind]
        bounds = [f">= {self.minimum:g}" if self.minimum is not None else "",
                  f"> {self.above:g}" if self.above is not None else "",
                  f"<= {self.maximum:g}" if self.maximum is not None else ""]
        text += " " + " and ".join(b for b in bounds if b) if any(bounds) else ""
        if self.choices:
            text = "one of " + ", ".join(self.choices)
        return text + (" (or None)" if self.optional else "")

    def check(self, claim_id: str, value: Any) -> ParamValue:
        """``value`` as this parameter's type (an int for a float field becomes a float), or ValueError
        naming the field and the claim: a wrong type (bools are not numbers), a non-finite number, a
        value out of range, an empty or unsorted grid."""
        if value is None and self.optional:
            return None
        if self.kind is tuple:
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
                raise self._error(claim_id, value)
            items = tuple(self._scalar(claim_id, item, self.item, value) for item in value)
            if any(b <= a for a, b in zip(items, items[1:])):
                raise self._error(claim_id, value)
            return items
        return self._scalar(claim_id, value, self.kind, value)

    def _scalar(self, claim_id: str, value: Any, kind: type | None, whole: Any) -> Any:
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
        else:
            ok = isinstance(value, str) and (not self.choices or value in self.choices)
        if ok and kind in (int, float):
            value = kind(value)
            ok = ((self.minimum is None or value >= self.minimum) and (self.above is None or value > self.above)
                  and (self.maximum is None or value <= self.maximum))
        if not ok:
            raise self._error(claim_id, whole)
        return value

    def _error(self, claim_id: str, value: Any) -> ValueError:
        return ValueError(f"{self.name}: claim {claim_id!r} needs {self.expected()}, got {value!r}")

    def parse(self, claim_id: str, text: str) -> ParamValue:
        """The value written ``text`` in ``ID[name=text]`` (``10``, ``0.2``, ``True``, ``li``, ``[32,64]``),
        checked as ``check`` does; ValueError naming the field and the claim otherwise."""
        if self.kind is tuple:
            if not (text.startswith("[") and text.endswith("]")) or not text[1:-1].strip():
                raise self._error(claim_id, text)
            return self.check(claim_id, tuple(self._parse_scalar(claim_id, part.strip(), self.item, text)
                                              for part in text[1:-1].split(",")))
        if self.optional and text == "None":
            return None
        return self.check(claim_id, self._parse_scalar(claim_id, text, self.kind, text))

    def _parse_scalar(self, claim_id: str, text: str, kind: type | None, whole: str) -> Any:
        if kind is bool:
            if text not in ("True", "False"):
                raise self._error(claim_id, whole)
            return text == "True"
        if kind is int:
            if not _INTEGER.match(text):
                raise self._error(claim_id, whole)
            if len(text.lstrip("+-")) > _MAX_DIGITS:
                raise ValueError(f"{self.name}: claim {claim_id!r} needs {self.expected()}, got an integer of "
                                 f"{len(text.lstrip('+-'))} digits (a parameter has at most {_MAX_DIGITS})")
            return int(text)
        if kind is float:
            try:
                return float(text)
            except ValueError:
                raise self._error(claim_id, whole) from None
        return text


@functools.lru_cache(maxsize=None)
def plan_parameters(plan_type: type) -> tuple[ParameterSpec, ...]:
    """The parameters of a plan class, in field order (its ``fixed`` fields left out); TypeError when a
    field was not declared with ``parameter`` or ``fixed``, or has a type a claim parameter cannot have."""
    if not (isinstance(plan_type, type) and dataclasses.is_dataclass(plan_type)):
        raise TypeError(f"plan: expected a dataclass type, got {plan_type!r}")
    declared = [f for f in dataclasses.fields(plan_type) if _FIXED_KEY not in f.metadata]
    hints = typing.get_type_hints(plan_type) if declared else {}  # fixed fields only: their types may be lazy
    specs = []
    for f in declared:
        rule = f.metadata.get(_METADATA_KEY)
        if rule is None:
            raise TypeError(f"{plan_type.__name__}.{f.name}: declare plan fields with proofs_check.framework.parameters.parameter")
        kind, item, optional = _kind(hints[f.name])
        if kind is None:
            raise TypeError(f"{plan_type.__name__}.{f.name}: a plan parameter is an int, float, bool, str, str | None "
                            f"or a tuple of ints or floats, not {hints[f.name]!r}")
        specs.append(ParameterSpec(f.name, kind, item, optional, rule.doc, rule.minimum, rule.above, rule.maximum,
                                   rule.choices, rule.from_settings))
    return tuple(specs)


def named_parameters(claim_id: str, plans: ModePlans, names: Iterable[str]) -> list[ParameterSpec]:
    """The specs of ``names`` in their order; ValueError ``params: claim 'X' has no parameter 'n' (it
    takes ...)`` for a name the claim's plan does not have."""
    specs = {spec.name: spec for spec in plans.parameters()}
    for name in names:
        if name not in specs:
            raise ValueError(f"params: claim {claim_id!r} has no parameter {name!r} (it takes {', '.join(specs)})")
    return [specs[name] for name in names]


def _kind(hint: Any) -> tuple[type | None, type | None, bool]:
    """(kind, tuple item type, None allowed) of an annotation; kind None when unsupported."""
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        return (str, None, True) if inner is str else (None, None, False)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and args[0] in (int, float):
        return tuple, args[0], False
    if hint in (int, float, bool, str):
        return hint, None, False
    return None, None, False


class DataPlans(Protocol):
    """Plans that depend on the data present on this machine (``ModePlans.by_data``)."""

    def resolve(self, plan: Any, given: frozenset[str]) -> Any:
        """``plan`` with its data resolved (e.g. ``dataset`` "auto" -> the data set found and that data
        set's plan), the fields named in ``given`` (set by name or by the settings) kept as in ``plan``."""
        ...

    def alternatives(self) -> tuple[Any, ...]:
        """The plans ``resolve`` may swap in (checked with the modes' plans)."""
        ...

    def describe(self, default: Any) -> list[str]:
        """Lines for ``fedbound list``: which plan runs on which data (as changes to the ``default`` plan)."""
        ...


@dataclass(frozen=True)
class ModePlans:
    """A claim's plan in each mode: ``default``, and ``quick`` / ``full`` where their grids differ
    (None: the default's), and optionally ``by_data``, the plans swapped in for the data present
    (``DataPlans``). All are instances of one plan class; every field value is checked against its
    declaration when the registry is built."""

    default: Any
    quick: Any = None
    full: Any = None
    by_data: DataPlans | None = None

    def __post_init__(self) -> None:
        plan_type = type(self.default)
        plan_parameters(plan_type)
        for mode in MODES:
            plan = getattr(self, mode)
            if plan is not None and type(plan) is not plan_type:
                raise TypeError(f"{mode}: every mode's plan must be a {plan_type.__name__}, got {type(plan).__name__}")
        for plan in () if self.by_data is None else self.by_data.alternatives():
            if type(plan) is not plan_type:
                raise TypeError(f"by_data: every plan must be a {plan_type.__name__}, got {type(plan).__name__}")

    @property
    def plan_type(self) -> type:
        return type(self.default)

    def select(self, mode: str) -> Any:
        """The plan of ``mode`` (one of MODES)."""
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        plan = getattr(self, mode)
        return self.default if plan is None else plan

    def parameters(self) -> tuple[ParameterSpec, ...]:
        return plan_parameters(self.plan_type)

    def check(self, claim_id: str) -> None:
        """Every mode's plan (and ``by_data``'s) checked against the declarations (ValueError naming the
        mode, field and claim)."""
        named = [(mode, getattr(self, mode)) for mode in MODES]
        named += [("by_data", plan) for plan in (() if self.by_data is None else self.by_data.alternatives())]
        for mode, plan in named:
            if plan is None:
                continue
            for spec in self.parameters():
                try:
                    spec.check(claim_id, getattr(plan, spec.name))
                except ValueError as exc:
                    raise ValueError(f"{mode} plan: {exc}") from None


def resolve_plan(claim_id: str, plans: ModePlans, settings: VerifySettings,
                 params: Mapping[str, Any]) -> Any:
    """The plan a claim runs with: the plan of ``settings.mode``, its ``from_settings`` fields taken
    from ``settings`` (raised to their minimum), then ``params`` by name, each checked, then the
    data resolved by ``plans.by_data`` (keeping those values).

    ValueError naming the claim and the field: ``params: claim 'X' has no parameter 'n' (it takes
    ...)`` for an unknown name, ``n: claim 'X' needs ..., got ...`` for a wrong type or a value out
    of range, and the plan's own ``PlanError`` (fields that do not fit together) with the claim added.
    """
    values = {spec.name: spec.check(claim_id, params[spec.name])
              for spec in named_parameters(claim_id, plans, params)}
    for spec in plans.parameters():
        if spec.from_settings is not None and spec.name not in values:
            value = getattr(settings, spec.from_settings)
            minimum = spec.minimum
            values[spec.name] = spec.check(claim_id, value if minimum is None else max(value, type(value)(minimum)))
    try:
        plan = dataclasses.replace(plans.select(settings.mode), **values)
        return plan if plans.by_data is None else plans.by_data.resolve(plan, frozenset(values))
    except PlanError as exc:
        raise ValueError(f"{exc.field}: claim {claim_id!r}: {exc.problem}") from None


def describe_parameters(plans: ModePlans) -> list[str]:
    """One line per parameter for ``fedbound list``: ``name = default; quick: ...; full: ...  (doc)``,
    the quick and full values where they differ from the default's, ``--seeds`` (and its minimum) for
    a parameter taken from the settings."""
    default = plans.select("default")
    lines = []
    for spec in plans.parameters():
        if spec.from_settings is not None:
            value = f"--{spec.from_settings}" + (f", at least {spec.minimum:g}" if (spec.minimum or 1) > 1 else "")
            modes = ""
        else:
            value = param_text(getattr(default, spec.name))
            modes = "".join(f"; {mode}: {param_text(getattr(plans.select(mode), spec.name))}" for mode in ("quick", "full")
                            if getattr(plans.select(mode), spec.name) != getattr(default, spec.name))
        lines.append(f"{spec.name} = {value}{modes}  ({spec.doc})")
    return lines + ([] if plans.by_data is None else plans.by_data.describe(default))
