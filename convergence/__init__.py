"""Algorithms, kernels, runs, rate fits, bounds and checks (public API)."""

from .checks import check_lower_bound, check_ordering, check_rate_exponent, check_upper_bound
from .config import ConfigError, FedAvgConfig, RunConfig, config_int, log_spaced_rounds
from .executor import RunRequest, execute
from .fixed_point import FixedPoint, fedavg_fixed_point
from .rates import RateFit, fit_rate
from .resources import check_jobs, check_run_memory, check_sweep_memory
from .run import DivergenceError, Trajectory, run
from .schedules import ScheduleError, StepSize
from .store import RunStore, StoreError
from .sweep import SweepError, SweepResults, SweepTask, check_scheduler, run_sweep
from .verdict import Hypothesis, Status, Verdict

__all__ = [
    "ConfigError",
    "DivergenceError",
    "FedAvgConfig",
    "FixedPoint",
    "Hypothesis",
    "RateFit",
    "RunConfig",
    "RunRequest",
    "RunStore",
    "ScheduleError",
    "Status",
    "StepSize",
    "StoreError",
    "SweepError",
    "SweepResults",
    "SweepTask",
    "Trajectory",
    "Verdict",
    "check_jobs",
    "check_lower_bound",
    "check_ordering",
    "check_rate_exponent",
    "check_run_memory",
    "check_scheduler",
    "check_sweep_memory",
    "check_upper_bound",
    "config_int",
    "execute",
    "fedavg_fixed_point",
    "fit_rate",
    "log_spaced_rounds",
    "run",
    "run_sweep",
]
