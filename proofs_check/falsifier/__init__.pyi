"""Type stub: the package's public names, loaded lazily (lazy_loader.attach_stub)."""

from .choices import Choice, Chooser, complexity, identity_key, mutant, simpler_values
from .claims import FALSIFIABLE, FedAvgInstance, exact_moments, instances
from .proposals import (
    Climb,
    DESIGN_DIMENSIONS,
    FAILED_WEIGHT,
    FIRST_WIDTH,
    IGNORED_WEIGHT,
    MAX_WIDTH,
    MIN_WEIGHT,
    SobolDesign,
    stall_after,
)
from .search import (
    EXAMPLE_BYTES,
    EXAMPLE_SECONDS,
    FalsifiableClaim,
    FalsifyResult,
    falsify,
    falsify_workload,
    reproduce,
)
from .strategies import (
    SCHEDULES,
    block_cyclic_problems,
    build_drawn_problem,
    fedavg_configs,
    logistic_problems,
    logistic_teacher,
    quadratic_problems,
    softmax_problems,
    softmax_teacher,
)
