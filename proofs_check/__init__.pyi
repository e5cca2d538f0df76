"""Type stub of the proofs_check package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .assumption_constants import (
    ClientEstimate,
    Estimate,
    gradient_dissimilarity,
    heterogeneity,
    parameter_bound,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)
from .bgd_constants import BGDPair, bgd_curve, bgd_pair, bgd_threshold
from .claim import (
    Claim,
    ClaimResult,
    PlantedVariant,
    UnknownClaimError,
    Uninformative,
    VerifySettings,
    combine_checks,
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
from .ding2020_constants import DingConstants, ding_bound
from .references import REFERENCES, Reference
from .falsifiable_claims import FALSIFIABLE, FedAvgInstance, exact_moments
from .falsify_search import FalsifiableClaim, FalsifyResult, falsify, reproduce
from .fedavg_lemma_bounds import li_lemma1_bound, li_lemma2_bound, li_lemma3_bound, yu_drift_bound
from .fedavg_lemmas import check_lemmas, collect, lemma_table
from .gradient_bounds import GradientBounds, stochastic_gradient_bounds
from .li2020_constants import (
    LiConstants,
    li_sampling_C,
    li_theorem1_B,
    li_theorem1_bound,
    li_theorem1_constants,
    li_theorem1_rate_bound,
    li_transform_factors,
    li_transformed_constants,
)
from .li2020_eq8 import Eq8Constants, eq8_optimal_E, eq8_rounds_shape
from .minibatch_moments import gradient_variance
from .claim_text import param_text, parse_claim_text, variant_id
from .parameters import (
    MODES,
    DataPlans,
    ModePlans,
    ParameterSpec,
    ParamValue,
    PlanError,
    describe_parameters,
    named_parameters,
    parameter,
    plan_parameters,
    resolve_plan,
)
from .partition_heterogeneity import (
    DEFAULT_B_SQ_GRID,
    PartitionHeterogeneity,
    partition_heterogeneity,
    partition_report,
)
from .plans import (
    ConstantsPlan,
    ConstantStepControlPlan,
    DingFig2Plan,
    DingFig4Plan,
    DingFig5Plan,
    DingOrderingPlan,
    DingSpeedupPlan,
    DingTable1Plan,
    DingTheoremPlan,
    LemmasPlan,
    Li2020Eq8Plan,
    Li2020KEffectPlan,
    Li2020SchemesPlan,
    Li2020SamplingPlan,
    Li2020Thm1Plan,
    Li2020Thm4Plan,
    YuCNNPlan,
    YuCorollary2Plan,
    YuSweepPlan,
    YuTheorem1Plan,
    Sec5DataPlans,
)
from .regions import EVERYWHERE, Ball, Everywhere, Points, Region
from .registry import CLAIMS, ClaimSelection, default_claims, get_claim, select_claim
from .run_moments import IterateMoments, iterate_moments
from .trajectory_constants import power_smoothness, sample_minibatch_moments, secant_smoothness
