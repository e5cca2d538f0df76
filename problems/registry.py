"""The registry of problem families: build a problem from a JSON-able spec.

A spec is ``{"family": name, "params": {...}}``. Its canonical form lists every parameter of the
family's builder, with defaults filled in and values normalised by the builder's type hints
(int stays int, float becomes float, a bool flag stays a bool), so ``json.dumps(spec,
sort_keys=True)`` (and any hash of it) is the same however the caller wrote it.
``build_problem(spec).spec`` equals the canonical spec.
Built problems are cached per process (``functools.lru_cache`` on the canonical JSON); they are
immutable (frozen dataclass, read-only arrays), so sharing them is safe.

Families: ``li_counterexample`` (Li et al. 2020, Appendix C), ``random_quadratic``,
``synthetic`` (Li et al. 2020, Appendix D.1 / FedProx), and the block-cyclic families
``block_cyclic_quadratic``, ``block_cyclic_softmax`` (Ding et al. 2020, Sec. 2). A block-cyclic
family builds a ``BlockCyclicProblem``: ``build_block_cyclic(spec)`` returns it and
``build_problem(spec)`` its combined problem (F over the M*N pseudo-clients), from one cache.

Views. A spec ``{"view": name, <view parameters>, "of": spec}`` describes a view of the
block-cyclic problem ``spec`` builds, and rebuilds it: ``"nested"`` (parameters ``n_clients``,
``n_blocks``: ``BlockCyclicProblem.nested``, a block-cyclic problem) and ``"shuffled"``
(``shuffle_seed``: ``BlockCyclicProblem.shuffled``, a federated problem). These are the specs the
views record, so runs on a view go through the sweep layer (which rebuilds problems from their
spec in the worker) like runs on a family.
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ._base import FederatedProblem, ProblemError
from ._params import make_spec
from .validation import check_int, check_real
from .block_cyclic import BlockCyclicProblem, block_cyclic_quadratic, block_cyclic_softmax
from .counterexample import li_counterexample
from .identical import identical_quadratic
from .quadratic import random_quadratic
from .synthetic import synthetic

__all__ = ["build_problem", "build_block_cyclic", "check_problem", "problem_spec"]

_FAMILIES: dict[str, Callable[..., FederatedProblem | BlockCyclicProblem]] = {
    "li_counterexample": li_counterexample,
    "random_quadratic": random_quadratic,
    "synthetic": synthetic,
    "block_cyclic_quadratic": block_cyclic_quadratic,
    "block_cyclic_softmax": block_cyclic_softmax,
    "identical_quadratic": identical_quadratic,
}
_SPEC_KEYS = ("family", "params")
_VIEWS: dict[str, tuple[tuple[str, int], ...]] = {
    "nested": (("n_clients", 1), ("n_blocks", 1)),
    "shuffled": (("shuffle_seed", 0),),
}
"""View name -> its integer parameters with their minima (``BlockCyclicProblem.nested`` / ``shuffled``)."""
_CACHE_SIZE = 16  # built problems kept per process (the largest default, synthetic, is ~20 MB)
_FINGERPRINTS: dict[str, str] = {}
"""canonical spec JSON -> fingerprint of the problem it builds (kept after the problem leaves the cache)."""


def _normalise(name: str, value: Any, kind: type) -> Any:
    """``value`` converted to the JSON type of the builder's annotation ``kind``."""
    if kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ProblemError(f"{name}: expected True or False, got {value!r}")
        return bool(value)
    if kind is int:
        return check_int(name, value)
    if kind is float:
        return check_real(name, value)
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
    """The problem described by ``spec = {"family": name, "params": {...}}`` (cached per process).

    For a block-cyclic family this is ``BlockCyclicProblem.combined``.
    """
    built = _build(_canonical_json(spec))
    return built.combined if isinstance(built, BlockCyclicProblem) else built


def build_block_cyclic(spec: Mapping[str, Any]) -> BlockCyclicProblem:
    """The BlockCyclicProblem of a block-cyclic family's ``spec`` (cached per process)."""
    built = _build(_canonical_json(spec))
    if not isinstance(built, BlockCyclicProblem):
        field = "view" if "view" in spec else "family"
        raise ProblemError(f"{field}: {spec[field]!r} is not a block-cyclic problem {field}")
    return built


def _canonical_json(spec: Mapping[str, Any]) -> str:
    """The canonical spec of ``spec`` as sorted JSON (ProblemError naming a malformed field)."""
    if not isinstance(spec, Mapping):
        raise ProblemError(f"spec: expected a mapping with keys {list(_SPEC_KEYS)}, got {type(spec).__name__}")
    if "view" in spec:
        return json.dumps(_canonical_view(spec), sort_keys=True)
    extra = sorted(set(spec) - set(_SPEC_KEYS))
    if extra:
        raise ProblemError(f"spec: unknown key {extra[0]!r} (a spec has keys {list(_SPEC_KEYS)})")
    if "family" not in spec:
        raise ProblemError("family: the spec names no problem family")
    params = spec.get("params", {})
    if not isinstance(params, Mapping):
        raise ProblemError(f"params: expected a mapping of parameter names to values, got {params!r}")
    canonical = problem_spec(spec["family"], **params)
    return json.dumps(canonical, sort_keys=True)


def _canonical_view(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical form of a view spec (module docstring); ProblemError naming a malformed field."""
    view = spec["view"]
    if not isinstance(view, str) or view not in _VIEWS:
        raise ProblemError(f"view: unknown view {view!r} (known: {', '.join(sorted(_VIEWS))})")
    keys = ("view", "of", *(name for name, _ in _VIEWS[view]))
    extra = sorted(set(spec) - set(keys))
    if extra:
        raise ProblemError(f"spec: unknown key {extra[0]!r} for view {view!r} (a {view} view has keys {list(keys)})")
    missing = [key for key in keys if key not in spec]
    if missing:
        raise ProblemError(f"{missing[0]}: the {view} view spec has no {missing[0]!r}")
    params = {name: check_int(name, spec[name], minimum=minimum) for name, minimum in _VIEWS[view]}
    return {"view": view, **params, "of": json.loads(_canonical_json(spec["of"]))}


def check_problem(problem: Any, spec: Mapping[str, Any]) -> FederatedProblem:
    """``problem`` if it is the problem ``spec`` describes; ProblemError naming ``problem`` otherwise.

    The spec recorded in the problem must be the same spec (compared canonically). When ``spec``
    names a registered family, the problem's data must also be those the family builds, compared
    by ``FederatedProblem.fingerprint`` with the fingerprint recorded when this process built that
    spec (built once if it never was); so does a view of such a spec. A spec nothing rebuilds (a
    provenance spec such as a ``block(m)`` view) can only be compared as it stands.
    """
    if not isinstance(problem, FederatedProblem):
        raise ProblemError(f"problem: expected a FederatedProblem, got {type(problem).__name__}")
    canonical = _canonical_or_none(spec)
    if problem.spec != spec and (canonical is None or _canonical_or_none(problem.spec) != canonical):
        raise ProblemError(f"problem: {problem.name!r} has spec {problem.spec}, not the config's spec {dict(spec)}")
    if canonical is not None and problem.fingerprint != _fingerprint(canonical):
        raise ProblemError(
            f"problem: the data of {problem.name!r} are not those its spec builds "
            f"(fingerprint {problem.fingerprint[:12]}, expected {_fingerprint(canonical)[:12]})"
        )
    return problem


def _canonical_or_none(spec: Any) -> str | None:
    """The canonical JSON of ``spec``, or None when it names no registered family."""
    try:
        return _canonical_json(spec)
    except ProblemError:
        return None


def _fingerprint(canonical_json: str) -> str:
    """Fingerprint of the (combined) problem a canonical spec builds, building it only if never built."""
    if canonical_json not in _FINGERPRINTS:
        _build(canonical_json)
    return _FINGERPRINTS[canonical_json]


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _build(canonical_json: str) -> FederatedProblem | BlockCyclicProblem:
    """Build (once per process) the problem of a canonical spec given as sorted JSON."""
    canonical = json.loads(canonical_json)
    if "view" in canonical:
        parent = _build(json.dumps(canonical["of"], sort_keys=True))
        if not isinstance(parent, BlockCyclicProblem):
            raise ProblemError(f"of: a {canonical['view']} view needs a block-cyclic problem, got {parent.name!r}")
        if canonical["view"] == "nested":
            built = parent.nested(canonical["n_clients"], canonical["n_blocks"])
        else:
            built = parent.shuffled(canonical["shuffle_seed"])
    else:
        built = _FAMILIES[canonical["family"]](**canonical["params"])
    _FINGERPRINTS[canonical_json] = (built.combined if isinstance(built, BlockCyclicProblem) else built).fingerprint
    return built
