"""Type stub: the package's public names, loaded lazily (lazy_loader.attach_stub)."""

from .ding2020 import (
    DING_LEMMA_IDS,
    DingLemmaData,
    LEMMA8_BY_CONSTRUCTION,
    LEMMA8_TOLERANCE,
    collect_ding,
    ding_lemma2,
    ding_lemma3,
    ding_lemma6,
    ding_lemma6_constant,
    ding_lemma8,
    ding_lemma9,
)
from .ding2020_descent import DescentTerms, descent_terms, ding_lemma1, ding_lemma4, ding_lemma5, ding_lemma7, lemma1_steps
from .ding2020_table import check_ding_lemmas, ding_lemma_table, ding_rows
from .fedavg import LEMMA_IDS, LemmaData, check_lemmas, collect, lemma_table, li_lemma1, li_lemma2, li_lemma3, yu_drift
from .sampling import (
    BIAS_TOLERANCE,
    DRAW_SEED_BASE,
    SAMPLE_DRAWS,
    SamplingLemmaData,
    balanced_weights_hypothesis,
    collect_sampling,
    li_lemma4,
    li_lemma5,
    sample_deviations,
)
from .fedavg_bounds import li_lemma1_bound, li_lemma2_bound, li_lemma3_bound, yu_drift_bound
from .verdicts import LemmaRow, PLANTED_MARGIN, attained_offset, attained_scale, planted_factor, upper_bound_verdict
