"""Type stub: the package's public names, loaded lazily (lazy_loader.attach_stub)."""

from .assumptions import (
    ClientEstimate,
    Estimate,
    Scope,
    Weighting,
    dissimilarity_weights,
    gradient_dissimilarity,
    heterogeneity,
    parameter_bound,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)
from .bgd import BGDPair, bgd_curve, bgd_pair, bgd_threshold
from .bound_ceilings import gap_ceiling, gradient_ceiling
from .ding2020 import DingConstants, ding_bound, lemma6_constant, lemma9_ceiling, lemma9_constant
from .gradient_bounds import (
    CentreTerms,
    GradientBounds,
    centre_terms,
    dissimilarity_bounds,
    gradient_norm_bounds,
    sample_curvature,
    stochastic_gradient_bounds,
    variance_bounds,
)
from .least_squares_moments import LeastSquaresMoments
from .li2020 import (
    LiConstants,
    SAMPLING_SCHEMES,
    li_sampling_C,
    li_theorem1_B,
    li_theorem1_bound,
    li_theorem1_constants,
    li_theorem1_rate_bound,
    li_transform_factors,
    li_transformed_constants,
)
from .minibatch_moments import all_client_terms, as_batch_size, client_terms, gradient_variance
from .partition_heterogeneity import (
    DEFAULT_B_SQ_GRID,
    PartitionHeterogeneity,
    partition_heterogeneity,
    partition_report,
)
from .regions import Ball, EVERYWHERE, Everywhere, N_SAMPLES, Points, Region, ball_samples, check_region
from .run_moments import ExactExpectations, IterateMoments, exact_expectations, iterate_moments
from .trajectory import power_smoothness, sample_minibatch_moments, secant_smoothness
from .trust_region import EXACT_RTOL, Quadratic, exact_gap
