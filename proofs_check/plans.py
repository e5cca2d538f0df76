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

from .framework.parameters import PlanError, parameter
from .plans_sec5 import (
    FIG5_CLAIMS, SEC5_AUTO_ORDER, SEC5_CLASSES, SEC5_DATASETS, SEC5_MARGIN, TABLE1_DIRECTIONS, DingBlocksPlan, DingFig2Plan,
    DingFig4Plan, DingFig5Plan, DingSec5Plan, DingTable1Plan, Sec5DataPlans,
)

__all__ = [
    "DingTheoremPlan", "DingSpeedupPlan", "DingOrderingPlan", "YuSweepPlan",
    "YuTheorem1Plan", "YuCorollary2Plan", "YuCNNPlan", "ConstantsPlan", "LemmasPlan",
    "PLANTABLE_CONSTANTS", "PLANTABLE_LEMMAS",
    "SPEEDUP_SEEDS",
    "DingFig2Plan", "SEC5_AUTO_ORDER", "SEC5_DATASETS", "Sec5DataPlans", "DingTable1Plan", "TABLE1_DIRECTIONS",
    "SEC5_CLASSES", "DingSec5Plan", "DingBlocksPlan", "SEC5_MARGIN", "DingFig4Plan", "FIG5_CLAIMS", "DingFig5Plan",
]

PLANTABLE_CONSTANTS = ("L", "mu", "sigma_k^2", "G^2", "sigma_G^2")
"""The constants assumptions.constants can report 10% off (its planted variants)."""
PLANTABLE_LEMMAS = ("li2020.lemma1", "li2020.lemma2", "li2020.lemma3", "yu2019.drift", "ding2020.lemma2",
                    "ding2020.lemma3", "ding2020.lemma6")
"""The lemmas of the lemma table that can be planted false (``proofs_check.report_items``)."""
SPEEDUP_SEEDS = 8
"""At least this many seeds for yu2019.cor2 and ding2020.speedup, whose exponents lie 0.05-0.2 inside
their thresholds: with 4 seeds the rate intervals (Student t on 3 df with the jackknife over seeds,
``convergence.rates``) straddle them (yu2019.cor2 about -0.50 +- 0.07 against -0.45, ding2020.speedup's
M sweep 0.04 +- 0.22 against 0.25); with 8 every one lies inside."""
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


def check_cubed_horizons(field: str, clients: tuple[int, ...], horizons: tuple[int, ...]) -> None:
    """PlanError naming ``field`` unless every N in ``clients`` has a horizon T >= N^3 in ``horizons``
    (Yu's Corollary 2: K = 1 <= T^(1/4)/N^(3/4) needs it)."""
    for N in clients:
        if N**3 > max(horizons):
            raise PlanError(field, f"N = {N} needs a horizon T >= N^3 = {N**3} (K = 1 <= T^(1/4)/N^(3/4)); "
                            f"the largest in horizons is {max(horizons)}")


@dataclass(frozen=True)
class YuSweepPlan:
    """The PR-SGD sweep of yu2019.thm1 and yu2019.cor2: one run per N in ``clients`` and T in
    ``horizons`` with T >= N^3 (Corollary 2's K = 1 <= T^(1/4)/N^(3/4) needs it)."""

    clients: tuple[int, ...] = parameter(doc="workers N of the sweep", minimum=1)
    horizons: tuple[int, ...] = parameter(doc="total steps T of the sweep (a run for each T >= N^3)", minimum=1)
    seeds: int = parameter(4, "seeds of every run", minimum=1, from_settings="seeds")

    def __post_init__(self) -> None:
        check_cubed_horizons("clients", self.clients, self.horizons)


@dataclass(frozen=True)
class YuTheorem1Plan(YuSweepPlan):
    """yu2019.thm1: the sweep and the scale of Theorem 1's bound."""

    bound_scale: float = parameter(1.0, "multiplies Theorem 1's right-hand side", above=0)


@dataclass(frozen=True)
class YuCorollary2Plan(YuSweepPlan):
    """yu2019.cor2: the sweep (at least SPEEDUP_SEEDS seeds) and the claimed rate."""

    seeds: int = parameter(SPEEDUP_SEEDS, "seeds of every run (at least 8: rate intervals over seeds)",
                           minimum=SPEEDUP_SEEDS, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (and in N)")


@dataclass(frozen=True)
class YuCNNPlan:
    """yu2019.cnn: PR-SGD on a CNN over identical image data: the N and T of the rate fits in N T, the
    N of the linear-speedup fit at the largest T, the instance's size and batch, the seeds and the
    claimed rate."""

    clients: tuple[int, ...] = parameter(doc="workers N of the rate fits in N T", minimum=1)
    horizons: tuple[int, ...] = parameter(doc="total steps T of the sweep (a run for each T >= N^3)", minimum=1)
    speedup_clients: tuple[int, ...] = parameter(doc="workers N of the linear-speedup fit at the largest T (fewer "
                                                     "than 3: no speedup check)", minimum=1)
    n_train: int = parameter(64, "training images every client holds (the same ones: identical data)", minimum=1)
    batch_size: int = parameter(4, "minibatch size b of every local step", minimum=1)
    seeds: int = parameter(4, "seeds of every run (at least 2: intervals over seeds)", minimum=2, from_settings="seeds")
    claimed_exponent: float = parameter(-0.5, "the claimed exponent in N T (and in N)")

    def __post_init__(self) -> None:
        check_cubed_horizons("clients", self.clients, self.horizons)
        check_cubed_horizons("speedup_clients", self.speedup_clients, self.horizons)


@dataclass(frozen=True)
class ConstantsPlan:
    """assumptions.constants: which constant (if any) is reported 10% off."""

    planted: str | None = parameter(None, "a constant reported 10% off (planted variant)", choices=PLANTABLE_CONSTANTS)


@dataclass(frozen=True)
class LemmasPlan:
    """lemmas: the rounds of the FedAvg runs, the seeds, and which lemma (if any) is planted false."""

    rounds: int = parameter(doc="rounds of the FedAvg runs of Li's lemmas and Yu's drift (E = 5)", minimum=1)
    seeds: int = parameter(16, "seeds of every run (at least 16: Li's Lemma 2 compares realised noise)", minimum=16,
                           from_settings="seeds")
    planted: str | None = parameter(None, "a lemma planted false", choices=PLANTABLE_LEMMAS)
