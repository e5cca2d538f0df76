"""Type stub: the package's public names, loaded lazily (lazy_loader.attach_stub). PEPit and cvxpy are
imported only when a program is built or solved."""

from .block_cyclic import MMPSGDPEP, BlockCyclicProgram, mm_psgd_program, reduced_clients
from .block_cyclic_direct import block_cyclic_direct_worst_case
from .block_cyclic_instance import (
    BlockCyclicEngineCheck, BlockCyclicInstance, block_cyclic_engine_check, block_cyclic_instance,
)
from .checks import VALUE_TOLERANCE, check_against_worst_case
from .direct import DirectSolution, direct_worst_case
from .drift import drift_closed_form, drift_program
from .instance import ENGINE_TOLERANCE, EngineCheck, QuadraticInstance, engine_check, quadratic_instance
from .program import Program, fedavg_program, limit_program
from .sdp import ACCURACY_TOLERANCE, SOLVER, SOLVER_TOLERANCE, SDPSolution, solve_program
from .quadratic import quadratic_conditions
from .setting import (
    BGD, DRIFT_METRICS, FUNCTION_CLASSES, METRICS, DriftPEP, FedAvgLimitPEP, FedAvgPEP, PEPError, PEPSetting, constant_steps,
    unit_length,
)
from .worst_case import (
    STATUSES, WorstCase, build_program, cache_key, fedavg_limit_worst_case, fedavg_worst_case, mm_psgd_worst_case,
    worst_case,
)
from .weighted import weighted_program
from .workload import programs_workload
