"""Claims of the papers, their hypotheses and constants, evaluated into verdicts (public API)."""

from .assumptions import (
    BGDPair,
    Ball,
    ClientEstimate,
    Estimate,
    Points,
    bgd_curve,
    bgd_pair,
    gradient_dissimilarity,
    gradient_variance,
    heterogeneity,
    parameter_bound,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)
from .claim import Claim, ClaimResult, PlotSpec, UnknownClaimError, VerifySettings, combine_checks
from .falsify import FALSIFIABLE, FalsifiableClaim, FalsifyResult, falsify, reproduce
from .gradient_bounds import GradientBounds, stochastic_gradient_bounds
from .lemmas import check_lemmas, collect, lemma_table
from .li2020_constants import LiConstants, li_theorem1_bound, li_theorem1_constants
from .registry import CLAIMS, default_claims, get_claim

__all__ = [
    "BGDPair",
    "Ball",
    "CLAIMS",
    "ClientEstimate",
    "Estimate",
    "FALSIFIABLE",
    "FalsifiableClaim",
    "FalsifyResult",
    "GradientBounds",
    "Points",
    "bgd_curve",
    "bgd_pair",
    "check_lemmas",
    "collect",
    "falsify",
    "gradient_dissimilarity",
    "gradient_variance",
    "heterogeneity",
    "lemma_table",
    "parameter_bound",
    "reproduce",
    "second_moment_bound",
    "smoothness",
    "stochastic_gradient_bounds",
    "strong_convexity",
    "variance_bound",
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
