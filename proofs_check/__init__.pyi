"""Type stub of the proofs_check package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used. The
assumption estimators (``proofs_check.constants.assumptions``), the plot specs
(``proofs_check.framework.plot_specs``) and the constants not listed here are imported from their
modules: ``proofs_check.constants`` lists every constant."""

from .constants.bgd import BGDPair, bgd_curve, bgd_pair, bgd_threshold
from .framework.claim import Claim, ClaimResult, ClaimResults, PlantedVariant, UnknownClaimError
from .framework.evaluation import Uninformative, claim_optimum, combine_checks
from .framework.settings import VerifySettings
from .constants.ding2020 import DingConstants, ding_bound
from .framework.references import REFERENCES, Reference
from .falsifier.claims import FALSIFIABLE, FedAvgInstance, exact_moments
from .falsifier.search import FalsifiableClaim, FalsifyResult, falsify, reproduce
from .lemmas.fedavg_bounds import li_lemma1_bound, li_lemma2_bound, li_lemma3_bound, yu_drift_bound
from .lemmas.fedavg import check_lemmas, collect, lemma_table
from .constants.gradient_bounds import GradientBounds, stochastic_gradient_bounds
from .constants.li2020 import (
    LiConstants,
    li_sampling_C,
    li_theorem1_bound,
    li_theorem1_constants,
    li_transform_factors,
    li_transformed_constants,
)
from .constants.minibatch_moments import gradient_variance
from .framework.claim_text import param_text, parse_claim_text, variant_id
from .framework.parameters import (
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
from .constants.partition_heterogeneity import (
    DEFAULT_B_SQ_GRID,
    PartitionHeterogeneity,
    partition_heterogeneity,
    partition_report,
)
from .constants.regions import EVERYWHERE, Ball, Everywhere, Points, Region
from .claims.checks.constant_step_control import ConstantStepControlPlan
from .claims.li2020.eq8 import Li2020Eq8Plan
from .claims.li2020.eq8_shape import Eq8Constants, eq8_optimal_E, eq8_rounds_shape
from .claims.li2020.k_effect import Li2020KEffectPlan
from .claims.li2020.sampling import Li2020SamplingPlan
from .claims.li2020.schemes import Li2020SchemesPlan
from .claims.li2020.thm1 import Li2020Thm1Plan
from .claims.li2020.thm4 import Li2020Thm4Plan
from .claims.checks.constants import ConstantsPlan
from .claims.checks.lemmas import LemmasPlan
from .claims.yu2019.cnn import YuCNNPlan
from .claims.yu2019.cor2 import YuCorollary2Plan
from .claims.yu2019.sweep import YuSweepPlan
from .claims.yu2019.thm1 import YuTheorem1Plan
from .claims.ding2020.fig2 import DingFig2Plan
from .claims.ding2020.fig4 import DingFig4Plan
from .claims.ding2020.fig5 import DingFig5Plan
from .claims.ding2020.ordering import DingOrderingPlan
from .claims.ding2020.sec5_plans import Sec5DataPlans
from .claims.ding2020.speedup import DingSpeedupPlan
from .claims.ding2020.table1 import DingTable1Plan
from .claims.ding2020.theorems import DingTheoremPlan
from .framework.registry import CLAIMS, ClaimSelection, default_claims, get_claim, select_claim
from .constants.run_moments import IterateMoments, iterate_moments
from .constants.trajectory import power_smoothness, sample_minibatch_moments, secant_smoothness
