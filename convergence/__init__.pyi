"""Type stub of the convergence package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .algorithms import (
    ALGORITHM_NAMES, COMMON_METRICS, BlockCyclicExtras, BlockCyclicTrace, Communication, DivergenceError, FedAvgConfig,
    FedAvgCyclicConfig, FedAvgExtras, FedAvgTrace, FedProxConfig, MCPSGDConfig, MetricUnavailable, MMPSGDConfig,
    PARTICIPATION_SCHEMES,
    PRSGDConfig, RoundSample, RunConfig, RunResult, round_sample,
)
from .block_gaps import BlockCyclicGaps, block_cyclic_gaps
from .bound_checks import Ceiling, check_lower_bound, check_upper_bound
from .checks import check_ordering, check_rate_exponent
from .config import ConfigError, config_int, log_spaced_rounds
from .fixed_point import FixedPoint, fedavg_fixed_point, fedavg_limit_offset
from .rates import RateFit, fit_rate
from .budget import BudgetError, Workload, check_workload, max_cpu_hours
from .resources import check_jobs, check_sweep_memory
from .run import run
from .schedules import ScheduleError, StepSize
from .run_metrics import METRIC_NAMES, MetricRow
from .store import CorruptRunError, CorruptRunWarning, RunStore, StoreError, StoredRun
from .store_table import TableSummary, export_table
from .sweep import (
    MissingRunError, SweepError, SweepMonitor, SweepOptions, SweepResults, SweepTask, check_scheduler, local_process_pool,
    run_sweep,
)
from .sweep_runs import RunRequest, check_requests, execute
from .verdict import Hypothesis, Status, SubCheck, Tightness, Uninformative, Verdict
from .targets import rounds_to_target
