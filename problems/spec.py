"""Problem specs: immutable, hashable descriptions that rebuild a problem, owning their canonical JSON.

A spec is what a run config records about its problem and what a worker process rebuilds the
problem from (``registry.build_problem``). Two kinds:

* ``FamilySpec(family, params)``: the problem a family's builder makes from ``params``. Its
  params are canonical from construction on (every parameter of the builder, defaults filled in,
  values normalised by the builder's annotations: ``families.Family.canonical_params``), so two
  specs of one problem are equal and have the same JSON, digest and run ids. JSON:
  ``{"family": name, "params": {...}}`` (params sorted by name), plus ``"builder":
  "module:qualname"`` for a user-registered family.
* ``ViewSpec(view, params, of)``: a view of the block-cyclic problem ``of`` builds (Ding et al.
  2020): ``"nested"`` (``n_clients``, ``n_blocks``: ``BlockCyclicProblem.nested``), ``"shuffled"``
  (``shuffle_seed``: ``BlockCyclicProblem.shuffled``) or ``"block"`` (``block``:
  ``BlockCyclicProblem.block``). JSON: ``{"view": name, <params>, "of": <JSON of of>}``.

``ProblemSpec`` is their common type: ``to_json()``, ``canonical_json`` (sorted, compact),
``digest`` (SHA-256 of the canonical JSON) and ``ProblemSpec.from_json(data)``, which validates a
JSON spec (a run store's, a user's) with a ProblemError naming the bad field. A spec pickles as its
JSON, so a worker process re-validates it (and registers a user family from its builder path).
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .digest import canonical_json, json_digest
from .families import Scalar, find_family
from .validation import ProblemError, check_int

__all__ = ["FamilySpec", "ProblemSpec", "SpecParams", "ViewSpec", "VIEWS", "problem_spec"]

VIEWS: Mapping[str, tuple[tuple[str, int], ...]] = {
    "nested": (("n_clients", 1), ("n_blocks", 1)),
    "shuffled": (("shuffle_seed", 0),),
    "block": (("block", 0),),
}
"""View name -> its integer parameters with their minima (``BlockCyclicProblem.nested`` / ``shuffled`` / ``block``)."""

_FAMILY_KEYS = ("family", "params", "builder")


@dataclass(frozen=True, eq=False)
class SpecParams(Mapping[str, Scalar]):
    """An immutable, hashable mapping of parameter names to JSON scalars, kept sorted by name."""

    entries: tuple[tuple[str, Scalar], ...] = ()

    def __post_init__(self) -> None:
        for name, value in self.entries:
            if not isinstance(name, str):
                raise ProblemError(f"params: parameter names are strings, got {name!r}")
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise ProblemError(f"{name}: expected a JSON scalar (bool, int, float, str or None), got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ProblemError(f"{name}: must be finite, got {value!r}")
        object.__setattr__(self, "entries", tuple(sorted(self.entries, key=lambda entry: entry[0])))

    @classmethod
    def of(cls, params: Mapping[str, Scalar]) -> SpecParams:
        """The SpecParams holding ``params``."""
        return params if isinstance(params, SpecParams) else cls(tuple(params.items()))

    def __getitem__(self, name: str) -> Scalar:
        for key, value in self.entries:
            if key == name:
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __hash__(self) -> int:
        return hash(self.entries)

    def __repr__(self) -> str:
        return repr(dict(self.entries))


@dataclass(frozen=True)
class ProblemSpec(abc.ABC):
    """How to rebuild a problem: a ``FamilySpec`` or a ``ViewSpec`` (module docstring)."""

    @abc.abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The spec as a JSON-able dict (its canonical form)."""

    @functools.cached_property
    def canonical_json(self) -> str:
        """``to_json()`` as compact JSON with sorted keys (what run ids hash)."""
        return canonical_json(self.to_json())

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the canonical JSON."""
        return json_digest(self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> ProblemSpec:
        """The spec whose JSON is ``data``; ProblemError naming the malformed field.

        A dict with a ``"view"`` key is a ViewSpec, any other a FamilySpec; called on a subclass,
        the result must be of that subclass.
        """
        if not isinstance(data, Mapping):
            raise ProblemError(
                f"spec: expected a mapping with keys {list(_FAMILY_KEYS[:2])} (or a view), got {type(data).__name__}"
            )
        spec = ViewSpec.parse(data) if "view" in data else FamilySpec.parse(data)
        if not isinstance(spec, cls):
            raise ProblemError(f"spec: expected a {cls.__name__}, got the JSON of a {type(spec).__name__}")
        return spec

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return ProblemSpec.from_json, (self.to_json(),)


@dataclass(frozen=True)
class FamilySpec(ProblemSpec):
    """The problem ``family``'s builder makes from ``params`` (canonicalised at construction).

    ``builder`` is the import path of a user family's builder (filled in from the registry when
    None); a shipped family has none. ProblemError naming ``family``, ``builder``, ``params`` or
    the bad parameter.
    """

    family: str
    params: Mapping[str, Scalar] = field(default_factory=SpecParams)
    builder: str | None = None

    def __post_init__(self) -> None:
        family = find_family(self.family, self.builder)
        if not isinstance(self.params, Mapping):
            raise ProblemError(f"params: expected a mapping of parameter names to values, got {self.params!r}")
        object.__setattr__(self, "params", SpecParams.of(family.canonical_params(self.params)))
        object.__setattr__(self, "builder", None if family.shipped else family.builder)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"family": self.family, "params": dict(self.params)}
        if self.builder is not None:
            out["builder"] = self.builder
        return out

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> FamilySpec:
        """The FamilySpec of a JSON dict (keys checked here, values by the constructor)."""
        extra = sorted(set(data) - set(_FAMILY_KEYS))
        if extra:
            raise ProblemError(f"spec: unknown key {extra[0]!r} (a spec has keys {list(_FAMILY_KEYS)})")
        if "family" not in data:
            raise ProblemError("family: the spec names no problem family")
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise ProblemError(f"params: expected a mapping of parameter names to values, got {params!r}")
        return cls(data["family"], params, data.get("builder"))


@dataclass(frozen=True)
class ViewSpec(ProblemSpec):
    """A view (``VIEWS``) with integer ``params`` of the block-cyclic problem ``of`` describes."""

    view: str
    params: Mapping[str, Scalar]
    of: ProblemSpec

    def __post_init__(self) -> None:
        if not isinstance(self.view, str) or self.view not in VIEWS:
            raise ProblemError(f"view: unknown view {self.view!r} (known: {', '.join(sorted(VIEWS))})")
        if not isinstance(self.params, Mapping):
            raise ProblemError(f"params: expected a mapping of the {self.view} view's parameters, got {self.params!r}")
        names = [name for name, _ in VIEWS[self.view]]
        extra = sorted(set(self.params) - set(names))
        if extra:
            raise ProblemError(f"spec: unknown key {extra[0]!r} for view {self.view!r} (it has {names})")
        missing = [name for name in names if name not in self.params]
        if missing:
            raise ProblemError(f"{missing[0]}: the {self.view} view spec has no {missing[0]!r}")
        params = {name: check_int(name, self.params[name], minimum=minimum) for name, minimum in VIEWS[self.view]}
        if not isinstance(self.of, ProblemSpec):
            raise ProblemError(f"of: expected the ProblemSpec of a block-cyclic problem, got {self.of!r}")
        object.__setattr__(self, "params", SpecParams.of(params))

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view, **self.params, "of": self.of.to_json()}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> ViewSpec:
        """The ViewSpec of a JSON dict; ProblemError naming the malformed field."""
        view = data["view"]
        if not isinstance(view, str) or view not in VIEWS:
            raise ProblemError(f"view: unknown view {view!r} (known: {', '.join(sorted(VIEWS))})")
        keys = ("view", "of", *(name for name, _ in VIEWS[view]))
        extra = sorted(set(data) - set(keys))
        if extra:
            raise ProblemError(f"spec: unknown key {extra[0]!r} for view {view!r} (a {view} view has keys {list(keys)})")
        missing = [key for key in keys if key not in data]
        if missing:
            raise ProblemError(f"{missing[0]}: the {view} view spec has no {missing[0]!r}")
        params = {name: data[name] for name, _ in VIEWS[view]}
        return cls(view, params, ProblemSpec.from_json(data["of"]))


def problem_spec(family: str, **params: Any) -> FamilySpec:
    """The canonical spec of ``family`` with ``params`` (unknown family or parameter: ProblemError)."""
    return FamilySpec(family, params)
