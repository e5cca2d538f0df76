"""Claims of the papers, their hypotheses and constants, evaluated into verdicts (public API)."""

from .claim import Claim, ClaimResult, PlotSpec, UnknownClaimError, VerifySettings, combine_checks
from .li2020_constants import LiConstants, li_theorem1_bound, li_theorem1_constants
from .registry import CLAIMS, default_claims, get_claim

__all__ = [
    "CLAIMS",
    "Claim",
    "ClaimResult",
    "LiConstants",
    "PlotSpec",
    "UnknownClaimError",
    "VerifySettings",
    "combine_checks",
    "default_claims",
    "get_claim",
    "li_theorem1_bound",
    "li_theorem1_constants",
]
