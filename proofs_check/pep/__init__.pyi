"""Type stub: the package's public names, loaded lazily (lazy_loader.attach_stub). PEPit and cvxpy are
imported only when a program is built or solved."""

from .checks import VALUE_TOLERANCE, check_against_worst_case
from .direct import DirectSolution, direct_worst_case
from .program import Program, build_program, fedavg_program, limit_program
from .sdp import ACCURACY_TOLERANCE, SOLVER, SOLVER_TOLERANCE, SDPSolution, solve_program
from .setting import METRICS, FedAvgLimitPEP, FedAvgPEP, PEPError, constant_steps
from .worst_case import STATUSES, WorstCase, cache_key, fedavg_limit_worst_case, fedavg_worst_case, worst_case
from .workload import programs_workload
