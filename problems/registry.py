"""The registry of problem families: build a problem from a JSON-able spec.

A spec is ``{"family": name, "params": {...}}``. Its canonical form lists every parameter of the
family's builder, with defaults filled in and values normalised by the builder's type hints
(int stays int, float becomes float), so ``json.dumps(spec, sort_keys=True)`` (and any hash of it)
is the same however the caller wrote it. ``build_problem(spec).spec`` equals the canonical spec.
Built problems are cached per process (``functools.lru_cache`` on the canonical JSON); they are
immutable (frozen dataclass, read-only arrays), so sharing them is safe.

Families: ``li_counterexample`` (Li et al. 2020, Appendix C), ``random_quadratic``,
``synthetic`` (Li et al. 2020, Appendix D.1 / FedProx).
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

from ._base import FederatedProblem, ProblemError
from ._params import as_float, as_int, make_spec
from .counterexample import li_counterexample
from .quadratic import random_quadratic
from .synthetic import synthetic

__all__ = ["build_problem", "problem_spec"]

_FAMILIES: dict[str, Callable[..., FederatedProblem]] = {
    "li_counterexample": li_counterexample,
    "random_quadratic": random_quadratic,
    "synthetic": synthetic,
}
_SPEC_KEYS = ("family", "params")
_CACHE_SIZE = 16  # built problems kept per process (the largest default, synthetic, is ~20 MB)


def _normalise(name: str, value: Any, kind: type) -> Any:
    """``value`` converted to the JSON type of the builder's annotation ``kind``."""
    if kind is int:
        return as_int(name, value)
    if kind is float:
        return as_float(name, value)
    if not isinstance(value, str):
        raise ProblemError(f"{name}: expected a string, got {value!r}")
    return value


def problem_spec(family: str, **params: Any) -> dict[str, Any]:
    """The canonical spec of ``family`` with ``params`` (unknown family / parameter: ProblemError)."""
    if not isinstance(family, str) or family not in _FAMILIES:
        raise ProblemError(f"family: unknown problem family {family!r} (known: {', '.join(sorted(_FAMILIES))})")
    builder = _FAMILIES[family]
    signature = inspect.signature(builder)
    unknown = sorted(set(params) - set(signature.parameters))
    if unknown:
        raise ProblemError(
            f"params: unknown parameter {unknown[0]!r} for family {family!r} "
            f"(known: {', '.join(signature.parameters)})"
        )
    hints = typing.get_type_hints(builder)
    filled = {
        name: _normalise(name, params.get(name, parameter.default), hints[name])
        for name, parameter in signature.parameters.items()
    }
    return make_spec(family, filled)


def build_problem(spec: Mapping[str, Any]) -> FederatedProblem:
    """The problem described by ``spec = {"family": name, "params": {...}}`` (cached per process)."""
    if not isinstance(spec, Mapping):
        raise ProblemError(f"spec: expected a mapping with keys {list(_SPEC_KEYS)}, got {type(spec).__name__}")
    extra = sorted(set(spec) - set(_SPEC_KEYS))
    if extra:
        raise ProblemError(f"spec: unknown key {extra[0]!r} (a spec has keys {list(_SPEC_KEYS)})")
    if "family" not in spec:
        raise ProblemError("family: the spec names no problem family")
    params = spec.get("params", {})
    if not isinstance(params, Mapping):
        raise ProblemError(f"params: expected a mapping of parameter names to values, got {params!r}")
    canonical = problem_spec(spec["family"], **params)
    return _build(json.dumps(canonical, sort_keys=True))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _build(canonical_json: str) -> FederatedProblem:
    """Build (once per process) the problem of a canonical spec given as sorted JSON."""
    canonical = json.loads(canonical_json)
    return _FAMILIES[canonical["family"]](**canonical["params"])
