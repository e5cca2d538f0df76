"""The table of problem families: shipped ones and those a user registers.

A family is a builder function ``(**params) -> FederatedProblem | BlockCyclicProblem`` named by
its import path ``"module:qualname"``, so that any process (a process-pool worker, a Dask worker,
a fresh interpreter reading a run store) can import it from the path alone. Its parameters are
the builder's own, each annotated ``bool``, ``int``, ``float`` or ``str`` (or one of them ``| None``);
``Family.canonical_params`` fills in the defaults and normalises every value by its annotation
(int stays int, an integral value given for a float becomes a float, a bool flag stays a bool), so
that the JSON of a spec, and every hash of it, does not depend on how a caller wrote the values.

Shipped families (``SHIPPED_FAMILIES``): ``li_counterexample`` (Li et al. 2020, Appendix C),
``random_quadratic``, ``identical_quadratic`` and ``identical_images`` (Yu et al. 2019; the latter a
CNN), ``sorted_images`` (a CNN on label-sorted clients of equal size: Yu, Jin, Yang 2019's non-iid FedAvg), ``synthetic`` (Li et al. 2020, Appendix D.1), ``li_images`` (Li et al.'s two-labels-per-device
MNIST recipe, App. D.1 / Table 2), the block-cyclic ``block_cyclic_quadratic`` and ``block_cyclic_softmax`` (Ding et al. 2020, Sec. 2),
``image_classification`` (a CNN on image data, issue 12), ``block_cyclic_images`` (a CNN on Ding et
al.'s Sec. 5 block-cyclic image data), ``two_curvature_quadratic`` (Yu, Jin, Yang 2019's drift at its
largest) and ``arrays`` (a user's arrays, ``problems.from_arrays``). ``register_family`` adds
a user's builder under a new name: a function declared with ``@problems.problem_builder``
(``problems.user_code``). The spec of such a family records the builder's path, ``module:qualname``
for an installed module or ``/absolute/FILE.py:qualname`` for a file, and ``find_family`` registers
it from that path in a process that has not registered it yet, through ``user_code.load_builder``:
a standard-library module or an undeclared function is refused before it is imported, so a spec
read from a store runs no code but a declared builder's (still: open only your own stores).

No builder module is imported here until a family is used, so this table costs nothing to load.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from .user_code import is_problem_builder, load_builder, loaded_file
from .validation import ProblemError, check_int, check_real

__all__ = ["Family", "FamilyParameter", "SHIPPED_FAMILIES", "families", "find_family", "register_family"]

Scalar = Union[bool, int, float, str, None]
"""The JSON value of one family parameter."""

SHIPPED_FAMILIES: Mapping[str, str] = types.MappingProxyType({
    "arrays": "problems.arrays:arrays_problem",
    "block_cyclic_images": "problems.block_cyclic_images:block_cyclic_images",
    "block_cyclic_quadratic": "problems.block_cyclic:block_cyclic_quadratic",
    "block_cyclic_softmax": "problems.block_cyclic:block_cyclic_softmax",
    "identical_images": "problems.identical:identical_images",
    "identical_quadratic": "problems.identical:identical_quadratic",
    "image_classification": "problems.image_classification:image_classification",
    "li_counterexample": "problems.counterexample:li_counterexample",
    "li_images": "problems.li_images:li_images",
    "random_quadratic": "problems.quadratic:random_quadratic",
    "sorted_images": "problems.identical:sorted_images",
    "synthetic": "problems.synthetic:synthetic",
    "two_curvature_quadratic": "problems.two_curvature:two_curvature_quadratic",
})
"""Shipped family name -> import path of its builder. Their specs name no builder (their JSON is
``{"family", "params"}``); a user family's spec adds ``"builder"``."""

_PARAMETER_TYPES = (bool, int, float, str)
_NO_DEFAULT = inspect.Parameter.empty
_REGISTERED: dict[str, Family] = {}
"""User-registered family name -> Family (this process only; a spec's builder path re-registers it elsewhere)."""


@dataclass(frozen=True)
class FamilyParameter:
    """One parameter of a family's builder: its name, JSON type, whether None is allowed, its default."""

    name: str
    kind: type
    optional: bool
    default: Any = _NO_DEFAULT

    def normalise(self, value: Any) -> Scalar:
        """``value`` as this parameter's canonical JSON value; ProblemError naming the parameter otherwise."""
        if value is None and self.optional:
            return None
        if self.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise ProblemError(f"{self.name}: expected True or False, got {value!r}")
            return bool(value)
        if self.kind is int:
            return check_int(self.name, value)
        if self.kind is float:
            return check_real(self.name, value)
        if not isinstance(value, str):
            raise ProblemError(f"{self.name}: expected a string, got {value!r}")
        return value


@dataclass(frozen=True)
class Family:
    """A problem family: its name, the import path ``module:qualname`` of its builder, shipped or not."""

    name: str
    builder: str
    shipped: bool

    def load(self) -> Callable[..., Any]:
        """The builder function (imported on first use)."""
        return _resolve(self.builder)

    def parameters(self) -> tuple[FamilyParameter, ...]:
        """The builder's parameters in signature order (ProblemError naming an unsupported one)."""
        return _parameters(self.builder)

    def canonical_params(self, params: Mapping[str, Any]) -> dict[str, Scalar]:
        """Every parameter of the family, defaults filled in and values normalised, sorted by name.

        ProblemError naming ``params`` for an unknown parameter, or the parameter whose value is
        missing (no default) or of the wrong type.
        """
        parameters = self.parameters()
        names = [parameter.name for parameter in parameters]
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ProblemError(
                f"params: unknown parameter {unknown[0]!r} for family {self.name!r} (known: {', '.join(names)})"
            )
        out: dict[str, Scalar] = {}
        for parameter in parameters:
            if parameter.name in params:
                out[parameter.name] = parameter.normalise(params[parameter.name])
            elif parameter.default is _NO_DEFAULT:
                raise ProblemError(f"{parameter.name}: family {self.name!r} needs this parameter (it has no default)")
            else:
                out[parameter.name] = parameter.normalise(parameter.default)
        return {name: out[name] for name in sorted(out)}


def families() -> tuple[Family, ...]:
    """Every family known to this process, shipped and registered, sorted by name."""
    known = [Family(name, path, True) for name, path in SHIPPED_FAMILIES.items()] + list(_REGISTERED.values())
    return tuple(sorted(known, key=lambda family: family.name))


def register_family(name: str, builder: Callable[..., Any]) -> Family:
    """Register ``builder`` as the problem family ``name`` and return it.

    ``builder`` is a top-level function ``(**params) -> FederatedProblem`` (or
    ``BlockCyclicProblem``) declared with ``@problems.problem_builder``, whose parameters are
    annotated ``bool``, ``int``, ``float`` or ``str`` (or ``... | None``) and take keywords; it may
    return a problem without a spec (``build_problem`` attaches the family spec) or with exactly its
    family spec. Registering the same builder twice is a no-op. ProblemError naming ``name`` for a
    shipped family's name or a name registered with another builder, naming ``builder`` for an
    undeclared function (another process checks the declaration before it imports the builder), a
    function that another process could not import by its path (a lambda, a nested function, a
    function of ``__main__``) or one with an unsupported parameter.
    """
    if not isinstance(name, str) or not name.strip():
        raise ProblemError(f"name: expected a non-empty family name, got {name!r}")
    if name in SHIPPED_FAMILIES:
        raise ProblemError(f"name: {name!r} is a shipped problem family; register yours under another name")
    if inspect.isfunction(builder) and not is_problem_builder(builder):
        raise ProblemError(f"builder: {builder.__module__}:{builder.__qualname__} is not declared a problem builder "
                           "(decorate it with @problems.problem_builder)")
    path = _import_path(builder)
    _parameters(path)
    registered = _REGISTERED.get(name)
    if registered is not None and registered.builder != path:
        raise ProblemError(f"name: family {name!r} is already registered with builder {registered.builder!r}")
    family = Family(name, path, False)
    _REGISTERED[name] = family
    return family


def find_family(name: Any, builder: Any = None) -> Family:
    """The family ``name``; a user family not registered in this process is registered from ``builder``.

    ``builder`` (the path recorded in a user family's spec: ``module:qualname`` or
    ``/absolute/FILE.py:qualname``, loaded by ``user_code.load_builder``) must be None for a shipped
    family and, for a registered one, its registered path. ProblemError naming ``family`` or
    ``builder`` otherwise.
    """
    if not isinstance(name, str):
        raise ProblemError(f"family: expected a family name (a string), got {name!r}")
    if builder is not None and not isinstance(builder, str):
        raise ProblemError(f"builder: expected a path 'module:qualname' or 'FILE.py:qualname', got {builder!r}")
    if name in SHIPPED_FAMILIES:
        if builder is not None:
            raise ProblemError(f"builder: {name!r} is a shipped family; its spec names no builder (got {builder!r})")
        return Family(name, SHIPPED_FAMILIES[name], True)
    if name not in _REGISTERED:
        if builder is None:
            known = ", ".join(family.name for family in families())
            raise ProblemError(f"family: unknown problem family {name!r} (known: {known})")
        return register_family(name, _resolve(builder))
    family = _REGISTERED[name]
    if builder is not None and builder != family.builder:
        raise ProblemError(f"builder: family {name!r} is registered with builder {family.builder!r}, not {builder!r}")
    return family


def _import_path(builder: Any) -> str:
    """``module:qualname`` (``/absolute/FILE.py:qualname`` for a function of a file loaded by its
    path) of a top-level function that loads back as itself; ProblemError naming ``builder``."""
    if not inspect.isfunction(builder):
        raise ProblemError(f"builder: expected a function, got {builder!r}")
    module, qualname = builder.__module__, builder.__qualname__
    file = loaded_file(module)
    if module == "__main__":
        raise ProblemError(
            f"builder: {qualname!r} is defined in __main__, which another process cannot import; "
            "define it in a module"
        )
    if "<" in qualname:
        raise ProblemError(
            f"builder: {module}:{qualname} is not a top-level function, so another process cannot import it by path"
        )
    path = f"{module if file is None else file}:{qualname}"
    if _resolve(path) is not builder:
        raise ProblemError(f"builder: {path} does not import as this function")
    return path


@functools.lru_cache(maxsize=None)
def _resolve(path: str) -> Callable[..., Any]:
    """The builder at ``path``: a shipped family's by its import path ``module:qualname``, any
    other through ``user_code.load_builder`` (declared, never from the standard library);
    ProblemError naming ``builder`` otherwise."""
    if path not in SHIPPED_FAMILIES.values():
        return load_builder(path)
    module_name, _, qualname = path.partition(":")
    return getattr(importlib.import_module(module_name), qualname)


@functools.lru_cache(maxsize=None)
def _parameters(path: str) -> tuple[FamilyParameter, ...]:
    """The parameters of the builder at ``path``, from its signature and type hints."""
    builder = _resolve(path)
    try:
        hints = typing.get_type_hints(builder)
    except (NameError, TypeError) as exc:
        raise ProblemError(f"builder: cannot read the annotations of {path} ({exc})") from None
    out = []
    for parameter in inspect.signature(builder).parameters.values():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise ProblemError(f"builder: parameter {parameter.name!r} of {path} must be a named parameter")
        kind, optional = _parameter_type(hints.get(parameter.name))
        if kind is None:
            raise ProblemError(
                f"builder: parameter {parameter.name!r} of {path} is annotated {hints.get(parameter.name)!r}; "
                "a family parameter is bool, int, float or str, or one of them | None"
            )
        spec_parameter = FamilyParameter(parameter.name, kind, optional, parameter.default)
        if parameter.default is not _NO_DEFAULT:
            spec_parameter.normalise(parameter.default)
        out.append(spec_parameter)
    return tuple(out)


def _parameter_type(annotation: Any) -> tuple[type | None, bool]:
    """(JSON type, None allowed) of a supported annotation; (None, False) for an unsupported one."""
    if annotation in _PARAMETER_TYPES:
        return annotation, False
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = typing.get_args(annotation)
        others = [arg for arg in args if arg is not type(None)]
        if len(args) == 2 and len(others) == 1 and others[0] in _PARAMETER_TYPES:
            return others[0], True
    return None, False
