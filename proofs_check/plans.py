"""The plans of the shipped claims: one frozen dataclass per claim, every field a parameter.

A plan holds what a claim's evaluation takes (``proofs_check.framework.parameters``): the grid, whose
values per mode (``--quick``, default, ``--full``) the registry states next to the claim
(``ModePlans``), and the constants of the statement it checks, whose defaults are the paper's (a
planted variant of the power self-test changes one of them). Grid fields have no default here:
each mode's plan gives them in ``proofs_check.framework.registry``. ``seeds`` fields take ``--seeds``
unless given (raised to their minimum, which says how many seeds a check needs).

The evaluators read their plan and nothing else of the mode: ``evaluate(settings, plan)``, the
settings giving only where and how runs execute (jobs, store, progress). This module imports no
numerical library (``fedbound list`` shows these parameters with their defaults).
"""

from __future__ import annotations

from dataclasses import dataclass

from .claims.yu2019.cor2 import SPEEDUP_SEEDS
from .framework.parameters import PlanError, parameter
from .plans_sec5 import (
    FIG5_CLAIMS, SEC5_AUTO_ORDER, SEC5_CLASSES, SEC5_DATASETS, SEC5_MARGIN, TABLE1_DIRECTIONS, DingBlocksPlan, DingFig2Plan,
    DingFig4Plan, DingFig5Plan, DingSec5Plan, DingTable1Plan, Sec5DataPlans,
)

__all__ = [
    "DingFig2Plan", "SEC5_AUTO_ORDER", "SEC5_DATASETS", "Sec5DataPlans", "DingTable1Plan", "TABLE1_DIRECTIONS",
    "SEC5_CLASSES", "DingSec5Plan", "DingBlocksPlan", "SEC5_MARGIN", "DingFig4Plan", "FIG5_CLAIMS", "DingFig5Plan",
]

@dataclass(frozen=True)
class DingTheoremPlan:
    """ding2020.thm1 and ding2020.thm2: the K grid (T = C M K, C = 2), the instance's N and M, the
    seeds, and the claimed rate, the bound's scale and whether the identical-block instance runs."""

    K_grid: tuple[int, ...] = parameter(doc="iterations per block K = E I of the sweep (hypothesis: K > C M N)",
                                        minimum=1)
    N: int = parameter(4, "clients per block", minimum=1)
    M: int = parameter(3, "blocks", minimum=2)
    seeds: int = parameter(4, "seeds of every run", minimum=1, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (eq. 11, 19, 20)")
    bound_scale: float = parameter(1.0, "multiplies the explicit bound (eq. 16, 17, 33)", above=0)
    identical_instance: bool = parameter(True, "also run the identical-block instance, where the bound bites")


@dataclass(frozen=True)
class DingSpeedupPlan:
    """ding2020.speedup: the N sweep (at M = 3 and fixed T) and the M sweeps (at N = 4, fixed T and fixed K)
    on nested views of one instance, the seeds, and the claimed exponents and traffic factor."""

    N_grid: tuple[int, ...] = parameter(doc="clients of the N sweep at fixed T (N >= 2)", minimum=2)
    M_grid: tuple[int, ...] = parameter(doc="blocks of the M sweeps at fixed T and at fixed K (the first min M blocks "
                                            "are compared)", minimum=2)
    seeds: int = parameter(SPEEDUP_SEEDS, "seeds of the N and M sweeps (at least 8: rate intervals over seeds)",
                           minimum=SPEEDUP_SEEDS, from_settings="seeds")
    n_exponent: float = parameter(-0.5, "the claimed exponent in N at fixed T")
    m_exponent_fixed_T: float = parameter(0.0, "the claimed exponent in M at fixed T (the paper's sentence)")
    m_exponent: float = parameter(0.0, "the claimed exponent in M at fixed K (the re-posed form)")
    traffic_factor: float = parameter(2.0, "MC-PSGD / MM-PSGD traffic claimed as factor * M^(1/4)", above=0)


@dataclass(frozen=True)
class DingOrderingPlan:
    """ding2020.ordering: K of the three runs, the seeds, and the planted alternatives."""

    K: int = parameter(doc="iterations per block K = E I (T = C M K, C = 2)", minimum=1)
    seeds: int = parameter(4, "seeds of every run (at least 2: the checks are paired over seeds)", minimum=2,
                           from_settings="seeds")
    fedavg_data: str = parameter("cyclic", "data of the tracking claims (the control gets the other)",
                                 choices=("cyclic", "shuffled"))
    persistence: float = parameter(0.5, "the last cycle's swing must exceed this fraction of the first's")
    reverse_orders: bool = parameter(False, "claim the three orderings reversed")


