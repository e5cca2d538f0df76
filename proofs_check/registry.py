"""The registry of claims that `fedbound verify` and `fedbound list` know (the claims themselves are
data in one module per source: ``registry_li2020``, ``registry_ding2020``, ``registry_yu2019`` and
``registry_checks``).

Claims are data here; each names its evaluator by import path, so ``fedbound list`` and
``fedbound --help`` load no numerical library. Statements use the notation of the cited papers
(Li et al.: E local steps per round, T total local steps, w* the optimum; Ding et al.: M blocks,
C cycles, K = E I iterations per block, T = C M K; Yu et al.: K the sync interval).

Each claim states its plan in each mode as data (``plan=ModePlans(quick=..., default=...,
full=...)`` of its plan class, ``proofs_check.plans``): the grids of ``--quick``, the default and
``--full``, every other parameter at the paper's value. Any parameter can be changed by name
(``select_claim("li2020.thm1[E=10,seeds=16]")``, ``fedbound verify --claim ...``). Each claim may
list planted variants (``PlantedVariant(name, description, params, sub_check=...)``: plan parameters
that make it false, expected FAIL unless stated, and the sub-check the falsehood is planted in) for the
power self-test, ``fedbound verify --power``. Adding one is one line in the claim's ``variants`` tuple.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .claim import Claim, UnknownClaimError
from .claim_text import parse_claim_text, variant_id
from .parameters import ParamValue, named_parameters
from .registry_checks import CROSS_CLAIMS
from .registry_ding2020 import DING2020_CLAIMS
from .registry_li2020 import LI2020_EXPERIMENT_CLAIMS, LI2020_THEOREM_CLAIMS
from .registry_yu2019 import YU2019_CLAIMS

if TYPE_CHECKING:
    from .claim import ClaimResult, VerifySettings

__all__ = ["CLAIMS", "get_claim", "default_claims", "ClaimSelection", "select_claim"]

CLAIMS: dict[str, Claim] = {c.id: c for c in (*LI2020_THEOREM_CLAIMS, *DING2020_CLAIMS, *YU2019_CLAIMS, *CROSS_CLAIMS,
                                              *LI2020_EXPERIMENT_CLAIMS)}
"""Every claim by id, in the order `fedbound verify` runs and reports them (the per-paper modules
``registry_li2020``, ``registry_ding2020``, ``registry_yu2019`` and ``registry_checks`` hold them)."""


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
