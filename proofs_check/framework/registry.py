"""The registry of claims that `fedbound verify` and `fedbound list` know: found, not listed.

Each claim is a module that defines ``CLAIM`` (a ``Claim``): fedbound's own under
``proofs_check.claims`` (one package per source, one module per claim), and those of other installed
packages, named by an entry point of the group ``fedbound.claims`` (its value a module or package,
whose modules are searched the same way, or a ``Claim`` itself; README, "Write your own claim").
Installed packages' code runs here, when a claim is listed or verified: an entry point is something
its package's installer chose to register, never a file read from the working directory.

Claims are ordered by ``Claim.order``, then id; an id found twice is an error naming both places.
A claim module's top level imports no numerical library (``proofs_check.claims``), so listing claims
is instant. Statements use the notation of the cited papers (Li et al.: E local steps per round, T
total local steps, w* the optimum; Ding et al.: M blocks, C cycles, K = E I iterations per block,
T = C M K; Yu et al.: K the sync interval).

Each claim states its plan in each mode as data (``plan=ModePlans(quick=..., default=...,
full=...)`` of its plan dataclass, defined beside it): the grids of ``--quick``, the default and
``--full``, every other parameter at the paper's value. Any parameter can be changed by name
(``select_claim("li2020.thm1[E=10,seeds=16]")``, ``fedbound verify --claim ...``). Each claim lists
planted variants (``PlantedVariant(name, description, params, sub_check=...)``: plan parameters that
make it false, expected FAIL unless stated, and the sub-check the falsehood is planted in) for the
power self-test, ``fedbound verify --power``.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from .claim import Claim, UnknownClaimError
from .claim_text import parse_claim_text, variant_id
from .parameters import ParamValue, named_parameters

if TYPE_CHECKING:
    from .claim import ClaimResult
    from .settings import VerifySettings

__all__ = ["CLAIMS", "ENTRY_POINT_GROUP", "ClaimDiscoveryError", "get_claim", "default_claims", "ClaimSelection",
           "select_claim", "discover_claims"]

ENTRY_POINT_GROUP = "fedbound.claims"
"""The entry-point group through which another installed package ships claims."""

_OWN_CLAIMS = "proofs_check.claims"


class ClaimDiscoveryError(ValueError):
    """A claim module or entry point that cannot be loaded or defines a claim badly; names it."""


def _module_claims(module: types.ModuleType) -> Iterator[Claim]:
    """The ``CLAIM`` of ``module`` and, for a package, of every module below it (imported now)."""
    below = pkgutil.walk_packages(getattr(module, "__path__", ()), prefix=module.__name__ + ".")
    for each in (module, *(importlib.import_module(info.name) for info in below)):
        claim = getattr(each, "CLAIM", None)
        if claim is not None and not isinstance(claim, Claim):
            raise ClaimDiscoveryError(f"CLAIM: module {each.__name__} defines a {type(claim).__name__}, not a Claim")
        if claim is not None:
            yield claim


def _entry_point_claims(point: EntryPoint) -> Iterator[tuple[Claim, str]]:
    """The claims an entry point of ``fedbound.claims`` names: a Claim, or a module / package searched for
    ``CLAIM``s; ClaimDiscoveryError naming the entry point when it cannot be loaded."""
    where = f"entry point {point.name} = {point.value!r} (group {ENTRY_POINT_GROUP})"
    try:
        target = point.load()
    except Exception as error:  # an installed package's import error, reported as the entry point's
        raise ClaimDiscoveryError(f"{where}: cannot be loaded: {type(error).__name__}: {error}") from error
    if isinstance(target, Claim):
        yield target, where
    elif isinstance(target, types.ModuleType):
        yield from ((claim, where) for claim in _module_claims(target))
    else:
        raise ClaimDiscoveryError(f"{where}: names a {type(target).__name__}; expected a Claim or a module of claims")


def discover_claims() -> dict[str, Claim]:
    """Every claim: fedbound's own (``proofs_check.claims``) and those of the entry points of
    ``fedbound.claims``, by id, ordered by ``(order, id)``; ClaimDiscoveryError for an id found twice."""
    found: list[tuple[Claim, str]] = [(claim, _OWN_CLAIMS) for claim in _module_claims(importlib.import_module(_OWN_CLAIMS))]
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.extend(_entry_point_claims(point))
    by_id: dict[str, tuple[Claim, str]] = {}
    for claim, where in found:
        if claim.id in by_id:
            raise ClaimDiscoveryError(f"claim id {claim.id!r} is defined twice: in {by_id[claim.id][1]} and in {where}")
        by_id[claim.id] = (claim, where)
    return {c.id: c for c, _ in sorted(by_id.values(), key=lambda item: (item[0].order, item[0].id))}


CLAIMS: dict[str, Claim] = discover_claims()
"""Every claim by id, in the order `fedbound verify` runs and reports them (``discover_claims``)."""


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; UnknownClaimError lists the known ids otherwise."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(f"claim: unknown claim id {claim_id!r}; known ids: {', '.join(CLAIMS)}") from None


def default_claims() -> list[Claim]:
    """The claims `fedbound verify` runs when none is named."""
    return [c for c in CLAIMS.values() if c.default]


@dataclass(frozen=True)
class ClaimSelection:
    """A claim chosen for a verification, with the parameters it runs with (none: the claim as
    stated, with its mode's plan). ``id`` shows them: ``li2020.thm1[E=10,seeds=16]``. The params
    are checked against the claim's plan when the selection is made (names, types, ranges)."""

    claim: Claim
    params: Mapping[str, ParamValue] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.claim, Claim):
            raise ValueError(f"claim: expected a Claim, got {type(self.claim).__name__}")
        object.__setattr__(self, "params", types.MappingProxyType(self.claim.check_params(self.params)))

    @property
    def id(self) -> str:
        """The claim's id with the parameters, ``variant_id(claim.id, params)``."""
        return variant_id(self.claim.id, self.params)

    def evaluate(self, settings: VerifySettings) -> ClaimResult:
        """``claim.evaluate(settings, **params)``."""
        return self.claim.evaluate(settings, **self.params)


def select_claim(text: str | Claim | ClaimSelection) -> ClaimSelection:
    """A claim with parameters from its text ``ID`` or ``ID[name=value,...]`` (``parse_claim_text``;
    values as ``ParameterSpec.parse`` reads them: ``li2020.thm1[E=10,seeds=16]``,
    ``ding2020.thm1[K_grid=[32,128,512]]``), or from a Claim (no parameters) or a selection (itself).
    UnknownClaimError for an unknown id; ValueError naming the claim and the parameter otherwise."""
    if isinstance(text, ClaimSelection):
        return text
    if isinstance(text, Claim):
        return ClaimSelection(text)
    claim_id, pairs = parse_claim_text(text)
    claim = get_claim(claim_id)
    specs = named_parameters(claim.id, claim.plan, [name for name, _ in pairs])
    return ClaimSelection(claim, {spec.name: spec.parse(claim.id, value) for spec, (_, value) in zip(specs, pairs)})
