"""Type stub of the proofs_check package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .assumptions import (
    BGDPair,
    Ball,
    ClientEstimate,
    Estimate,
    IterateMoments,
    Points,
    bgd_curve,
    bgd_pair,
    gradient_dissimilarity,
    gradient_variance,
    heterogeneity,
    iterate_moments,
    parameter_bound,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)
from .claim import (
    Claim,
    ClaimResult,
    ParamValue,
    PlantedVariant,
    UnknownClaimError,
    Uninformative,
    VerifySettings,
    claim_float,
    combine_checks,
    variant_id,
)
from .plot_specs import (
    PLOT_SPECS,
    BiasPlot,
    Curve,
    CurvesPlot,
    FittedPowerLaw,
    PlotSpec,
    RatePlot,
    RateSeries,
    ReferenceRate,
    plot_spec_from_json,
    rate_plot,
)
from .ding2020 import DingConstants, ding_bound
from .references import REFERENCES, Reference
from .falsify import FALSIFIABLE, FalsifiableClaim, FalsifyResult, exact_moments, falsify, reproduce
from .gradient_bounds import GradientBounds, stochastic_gradient_bounds
from .lemmas import check_lemmas, collect, lemma_table
from .li2020_constants import LiConstants, li_theorem1_bound, li_theorem1_constants
from .registry import CLAIMS, default_claims, get_claim
