"""The registry of claims that `fedbound verify` and `fedbound list` know."""

from __future__ import annotations

from .claim import Claim, UnknownClaimError
from .controls import CONSTANT_STEP_CONTROL
from .ding2020 import ORDERING as DING2020_ORDERING
from .ding2020 import SPEEDUP as DING2020_SPEEDUP
from .ding2020 import THM1 as DING2020_THM1
from .ding2020 import THM2 as DING2020_THM2
from .li2020_thm1 import CLAIM as LI2020_THM1
from .li2020_thm4 import CLAIM as LI2020_THM4
from .report_items import ASSUMPTIONS, LEMMAS
from .yu2019 import COR2 as YU2019_COR2
from .yu2019 import THM1 as YU2019_THM1

__all__ = ["CLAIMS", "get_claim", "default_claims"]

CLAIMS: dict[str, Claim] = {
    c.id: c
    for c in (
        LI2020_THM4, LI2020_THM1, DING2020_THM1, DING2020_THM2, DING2020_SPEEDUP, DING2020_ORDERING, YU2019_THM1,
        YU2019_COR2, ASSUMPTIONS, LEMMAS, CONSTANT_STEP_CONTROL,
    )
}


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; UnknownClaimError lists the known ids otherwise."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(f"claim: unknown claim id {claim_id!r}; known ids: {', '.join(CLAIMS)}") from None


def default_claims() -> list[Claim]:
    """The claims `fedbound verify` runs when none is named."""
    return [c for c in CLAIMS.values() if c.default]
