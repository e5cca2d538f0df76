"""Type stub of convergence.algorithms: its public API, loaded lazily by ``__init__.py``."""

from ._base import (
    COMMON_METRICS,
    ENGINES,
    Algorithm,
    AlgorithmConfig,
    DivergenceError,
    MetricUnavailable,
    RunPlan,
    SeedRun,
)
from .block_cyclic.extras import BlockCyclicExtras, Communication
from .block_cyclic.trace import BlockCyclicTrace
from .fedavg.config import FedAvgConfig
from .fedavg.engine import FedAvgExtras
from .participation import PARTICIPATION_SCHEMES, RoundSample, round_sample
from .fedavg.trace import FedAvgTrace
from .fedavg_cyclic import FedAvgCyclicConfig
from .fedprox.config import FedProxConfig
from .kernel_threads import THREADED_MIN_WORK, KernelPaths, check_threads, kernel_threads, using_kernel_threads
from .mc_psgd import MCPSGDConfig
from .mm_psgd import MMPSGDConfig
from .pr_sgd import PRSGDConfig
from .registry import ALGORITHM_NAMES, algorithm_for, config_type
from .run_config import RunConfig, RunResult
