"""ding2020.ordering: Sec. 5's comparison (Fig. 2) on blocks far apart, as paired checks over seeds.

Source: Ding et al. 2020, Sec. 5 (``shared/papers/ding2020_block_cyclic.md``): MM-PSGD and
MC-PSGD reach the best accuracy, "FedAvg with block-cyclic data does not converge at all,
fluctuating" and FedAvg on shuffled data does not fluctuate. Sub-checks, on ``theorem_runs.instance``
(N = 4, M = 3, blocks far apart) with C = 2 cycles, the theorems' step sizes and their predictors (eq. 7's
uniform average, ``theorem_runs.THEOREM_PREDICTOR``: this claim tests Sec. 5's orderings in the theorems'
regime; the CNN claims ding2020.fig2 etc. run Sec. 5's exponential average). Every sub-check is a test with
its p-value (``Verdict.p_fail``: ``check_ordering``, ``check_upper_bound``, ``check_lower_bound``), so the
claim's verdict is Holm over the six at 0.05 (``combine_checks``):

* the predictors beat FedAvg's single model on their blocks: (1/M) sum_m F_m(p_m) - F_m(x_m*)
  against (1/M) sum_m F_m(x_bar) - F_m(x_m*), for MM-PSGD and MC-PSGD; MC-PSGD at least as good
  as MM-PSGD (``check_ordering``: paired Student-t interval of the difference over seeds);
* **FedAvg on block-cyclic data tracks the block just trained** (``block_tracking``). With
  g_{j,m} = F_m(x_bar_j) - F_m(x_m*) >= 0 at the end x_bar_j of block visit j = 1..C M, whose
  block is b_j = (j - 1) mod M, the tracking ratio of a seed is

      R = sum_j g_{j,b_j} / sum_j gbar_j,     gbar_j = (1/(M-1)) sum_{m != b_j} g_{j,m},

  the gap of the block just trained relative to the other blocks' mean gap. A model that does not
  follow the block order has R = 1: if x_bar_j = x for every j, each block is b_j once per cycle, so
  the numerator is C sum_m g_m and the denominator C (1/(M-1)) sum_m (sum_k g_k - g_m) = C sum_m g_m.
  Claim: E[R] <= 1/2 (the block just trained fits at least twice as well as the others), as
  ``check_upper_bound`` (one-sided Student-t test over seeds at level 0.95).
* **the swing persists** (the paper's "does not converge at all"): with swing_c the mean over the
  block ends of cycle c of gbar_j - g_{j,b_j}, E[swing_C] > ``persistence`` E[swing_1]
  (``check_ordering``, paired by seed): the last cycle's swing is not much smaller than the first's.
* **control, FedAvg on shuffled data**: the same R for FedAvg on ``instance().shuffled(0)`` (every
  row pooled and dealt to the N clients at random), run with the cyclic run's schedule (I, E, gamma,
  C M E rounds, seeds; the block-cyclic kernel with one block, i.e. ``PRSGDConfig``), its block ends
  the same rounds and its gaps those of the original blocks F_m. Claim: E[R] >= 1/2, no tracking
  (``check_lower_bound``). It FAILs if the statistic finds tracking where the data carry no block
  order, so a PASS of the tracking check is specific to the block-cyclic order.

Measured on the default settings (4 seeds, K = 1024): R about 6e-4 on cyclic data, 0.97 to 1.08 on
shuffled data, so the tracking check PASSes on cyclic data and FAILs on shuffled data (the planted
variant ``fedavg_data="shuffled"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
from convergence.verdict import Verdict

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import Curve, CurvesPlot
from ...framework.references import DING2020
from .theorem_runs import CYCLES, DingRun, instance, run_configs

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "DingOrderingPlan", "evaluate", "block_tracking", "BlockTracking", "tracking_plot",
           "TRACKING_RATIO", "PERSISTENCE", "SHUFFLE_SEED"]


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

    def workload(self) -> Workload:
        """MM-PSGD, MC-PSGD (two chains), FedAvg-cyclic and FedAvg on shuffled data at T = C M K, N = 4, M = 3."""
        from ...framework.plan_workloads import runs_workload

        return runs_workload(configs=5, seeds=self.seeds, rounds=CYCLES * 3 * self.K, clients=4)


TRACKING_RATIO = 0.5
"""Largest E[R] that counts as tracking: the block just trained fits at least twice as well as the
others (R = 1 without tracking, module docstring)."""
PERSISTENCE = DingOrderingPlan.persistence
"""The last cycle's swing must exceed this fraction (0.5, the plan's default) of the first cycle's:
an oscillation that does not die out keeps the ratio near 1 (measured: 0.636 and 0.641), one that
halves within C = 2 cycles is converging."""
SHUFFLE_SEED = 0
_ORDER_NOTES = (
    "(1/M) sum_m F_m(p_m) - F_m(x_m*) of the predictors x~_m vs (1/M) sum_m F_m(x_bar) - F_m(x_m*) of FedAvg's "
    "final model, paired by seed.",
    "as above for MC-PSGD's predictors u~_m.",
    "per-block gaps of the predictors averaged over blocks, paired by seed.",
)


@dataclass(frozen=True)
class BlockTracking:
    """Tracking statistics of S trajectories recorded at every block end (module docstring).

    own (S, C M): g_{j,b_j}, the gap of the block just trained at each block end; others (S, C M):
    gbar_j, the mean gap of the other blocks; ratio (S,): R = sum_j g_{j,b_j} / sum_j gbar_j over
    all C M block ends; swing (S, C): per cycle, the mean over its block ends of gbar_j - g_{j,b_j}.
    """

    own: np.ndarray
    others: np.ndarray
    ratio: np.ndarray
    swing: np.ndarray


def block_tracking(gaps: np.ndarray, n_blocks: int) -> BlockTracking:
    """Tracking ratio and per-cycle swing from gaps (S, C M, M): gaps[s, j, m] = F_m(x_j) - F_m(x_m*)
    at the j-th block end (0-based here: block end j closes a visit of block j mod M).

    Raises:
        ValueError: naming ``gaps`` (not 3-d, non-finite, blocks axis not M, block ends not a
            positive multiple of M) or ``n_blocks`` (< 2: no other block to compare with).
    """
    if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)) or n_blocks < 2:
        raise ValueError(f"n_blocks: need an integer M >= 2 (other blocks to compare with), got {n_blocks!r}")
    gaps = np.asarray(gaps, dtype=float)
    if gaps.ndim != 3 or gaps.shape[2] != n_blocks or gaps.shape[1] == 0 or gaps.shape[1] % n_blocks:
        raise ValueError(f"gaps: expected shape (seeds, C M block ends, M = {n_blocks}) with C >= 1, got {gaps.shape}")
    if not np.all(np.isfinite(gaps)):
        raise ValueError("gaps: values must be finite")
    S, P, M = gaps.shape
    current = np.arange(P) % M
    own = gaps[:, np.arange(P), current]  # (S, P)
    others = (gaps.sum(axis=2) - own) / (M - 1)  # (S, P)
    swing = (others - own).reshape(S, P // M, M).mean(axis=2)
    return BlockTracking(own, others, own.sum(axis=1) / others.sum(axis=1), swing)


def tracking_plot(cyclic: BlockTracking, shuffled: BlockTracking) -> CurvesPlot:
    """Seed 0's gap of the block just trained, g_(j,b_j), and the other blocks' mean gap against the
    block end j = 1..C M, the index the tracking ratio R sums over, for FedAvg on block-cyclic and on
    shuffled data (``block_tracking`` of each)."""
    ends = [float(j) for j in range(1, cyclic.own.shape[1] + 1)]
    return CurvesPlot(
        "ding2020_fedavg_tracking", "FedAvg at block ends: gap of the block just trained vs the others",
        "F_m(x_bar_j) - F_m(x_m*) at the end j of every block visit (seed 0): the block just trained (b_j) and the "
        "mean over the other blocks, for FedAvg on block-cyclic and on shuffled data; the tracking ratio R sums "
        "them over the block ends j.",
        curves=(
            Curve(ends, cyclic.own[0].tolist(), "cyclic, block just trained"),
            Curve(ends, cyclic.others[0].tolist(), "cyclic, other blocks (mean)"),
            Curve(ends, shuffled.own[0].tolist(), "shuffled, block of the slot"),
            Curve(ends, shuffled.others[0].tolist(), "shuffled, other blocks (mean)"),
        ),
        xlabel=r"block end $j$ (it closes a visit of block $b_j = (j - 1)$ mod $M$)",
        ylabel=r"$F_m(\bar x_j) - F_m(x_m^*)$", logx=False, logy=True,
    )


def _shuffled_control(settings: VerifySettings, fedavg: DingRun) -> np.ndarray:
    """Gaps (S, C M, M) of the original blocks for FedAvg on shuffled data with ``fedavg``'s schedule."""
    problem = fedavg.problem
    E, M = fedavg.K // fedavg.I, problem.n_blocks
    rounds = CYCLES * M * E
    config = convergence.PRSGDConfig(rounds=rounds, sync_interval=fedavg.I,
                                     step_size=convergence.StepSize.constant(fedavg.gamma), batch_size=1,
                                     record_rounds=tuple(range(E, rounds + 1, E)), seeds=fedavg.result.seeds)
    request = convergence.RunRequest(convergence.RunConfig(problem.shuffled(SHUFFLE_SEED).spec, config))
    (result,) = convergence.execute([request], settings.sweep_options(),
                                    description="Ding et al. FedAvg on shuffled data")
    return convergence.block_cyclic_gaps(problem, result).global_block_gap


def evaluate(settings: VerifySettings, plan: DingOrderingPlan) -> ClaimResult:
    """Sec. 5's comparison (module docstring) with ``plan.K`` iterations per block and ``plan.seeds`` seeds.

    The plan's other fields plant false variants (defaults: the paper's claim): ``fedavg_data``
    "shuffled" swaps the data of the tracking claims and of the control (tracking and persistence
    claimed for FedAvg on shuffled data, no tracking claimed on cyclic data); ``persistence`` the
    fraction of the first cycle's swing the last cycle's must exceed; ``reverse_orders`` claims
    the three orderings reversed (FedAvg's model beats the predictors, MM-PSGD beats MC-PSGD).
    """
    fedavg_data, persistence, reverse_orders = plan.fedavg_data, plan.persistence, plan.reverse_orders
    seeds = tuple(range(plan.seeds))
    problem = instance()
    K = plan.K
    mm, mc, fedavg = run_configs(settings, [("mm", problem, K, seeds, ()), ("mc", problem, K, seeds, ()),
                                            ("fedavg", problem, K, seeds, ())])
    M = problem.n_blocks
    mm_gap = convergence.block_cyclic_gaps(problem, mm.result).block_gap[:, -1, :].mean(axis=1)
    mc_gap = convergence.block_cyclic_gaps(problem, mc.result).block_gap[:, -1, :].mean(axis=1)
    cyclic_gaps = convergence.block_cyclic_gaps(problem, fedavg.result).global_block_gap  # (S, C M, M): block ends
    fed_gap = cyclic_gaps[:, -1, :].mean(axis=1)
    shuffled_gaps = _shuffled_control(settings, fedavg)
    cyclic, shuffled = block_tracking(cyclic_gaps, M), block_tracking(shuffled_gaps, M)
    tracked, control = (cyclic, shuffled) if fedavg_data == "cyclic" else (shuffled, cyclic)
    control_data = "shuffled" if fedavg_data == "cyclic" else "cyclic"
    ends = np.array([float(CYCLES * M)])
    orders = [("MM-PSGD predictors", "mm", mm_gap, fed_gap, "FedAvg on cyclic data", "fedavg", "beat"),
              ("MC-PSGD predictors", "mc", mc_gap, fed_gap, "FedAvg on cyclic data", "fedavg", "beat"),
              ("MC-PSGD", "mc", mc_gap, mm_gap, "MM-PSGD", "mm", "at least as good per block as")]
    checks: list[tuple[str, Verdict]] = []
    for (name, key, gap, other, other_name, other_key, relation), note in zip(orders, _ORDER_NOTES):
        if reverse_orders:  # the claim with the roles swapped: the other side wins
            name, key, gap, other_name, other_key, other = other_name, other_key, other, name, key, gap
        if relation == "beat":
            verb = "beat" if name.endswith("predictors") else "beats"
            checks.append((f"{name} {verb} {other_name}", convergence.check_ordering(
                f"ding2020.ordering/{key}<{other_key}", gap, other, notes=note)))
        else:  # 'at least as good': a slack of 1e-12 counts equal gaps as the claimed order
            checks.append((f"{name} {relation} {other_name}", convergence.check_ordering(
                f"ding2020.ordering/{key}<={other_key}", gap, other + 1e-12, notes=note)))
    checks += [
        (f"FedAvg on {fedavg_data} data tracks the block just trained", convergence.check_upper_bound(
            "ding2020.ordering/tracking", ends, tracked.ratio[:, None], np.array([TRACKING_RATIO]),
            notes=f"tracking ratio R = sum_j g_(j,b_j) / sum_j mean_(m != b_j) g_(j,m) over the {CYCLES * M} block ends "
            f"of FedAvg on {fedavg_data} data, g_(j,m) = F_m(x_bar_j) - F_m(x_m*) (R = 1 for a model that ignores "
            f"the block order); claimed E[R] <= {TRACKING_RATIO:g}.")),
        (f"the swing of FedAvg on {fedavg_data} data persists", convergence.check_ordering(
            "ding2020.ordering/persistence", persistence * tracked.swing[:, 0], tracked.swing[:, -1],
            notes=f"swing = mean over a cycle's block ends of mean_(m != b_j) g_(j,m) - g_(j,b_j); claimed: the last "
            f"cycle's swing > {persistence:g} x the first's (first cycle {tracked.swing[:, 0].mean():.4g}, last "
            f"{tracked.swing[:, -1].mean():.4g}, means over seeds).")),
        (f"control: FedAvg on {control_data} data does not track", convergence.check_lower_bound(
            "ding2020.ordering/control", ends, control.ratio[:, None], np.array([TRACKING_RATIO]),
            notes=f"the tracking ratio R of FedAvg on {control_data} data (shuffled: the rows pooled and dealt at "
            f"random, shuffle seed {SHUFFLE_SEED}, same schedule, gaps of the original blocks); claimed E[R] >= "
            f"{TRACKING_RATIO:g}: the statistic finds no tracking without a block order.")),
    ]
    verdict = combine_checks("ding2020.ordering", checks, headline=checks[0][1],
                             notes=f"N = {problem.n_clients}, M = {M}, C = {CYCLES}, K = {mm.K}, blocks far apart "
                             "(block_spread = 1), the theorems' step sizes and predictors (eq. 7's uniform average, "
                             "not Sec. 5's exponential one). Headline: mean gap difference FedAvg - MM-PSGD. Tracking ratio R: "
                             f"cyclic {cyclic.ratio.mean():.3g}, shuffled {shuffled.ratio.mean():.3g} (means over seeds).")
    plot = tracking_plot(cyclic, shuffled)
    return ClaimResult(verdict, (plot,))


CLAIM = Claim(
    "ding2020.ordering", (DING2020,), "Sec. 5 (Fig. 2)",
    "On blocks far apart, with the theorems' step sizes and predictors (eq. 7's uniform average): MM-/MC-PSGD's "
    "block predictors beat FedAvg's single model on their blocks; "
    "MC-PSGD is at least as good as MM-PSGD per block; FedAvg on block-cyclic data tracks the block just "
    "trained: the tracking ratio R = Σ_j g_(j,b_j) / Σ_j mean_(m≠b_j) g_(j,m) of its block-end gaps "
    "g_(j,m) = F_m(x̄_j) − F_m(x_m*) is ≤ 1/2 (R = 1 without tracking), and its swing persists to the last "
    "cycle; control: on shuffled data R ≥ 1/2.",
    "the mean over seeds of FedAvg's per-block gap minus MM-PSGD's (claimed > 0)",
    evaluate,
    plan=ModePlans(quick=DingOrderingPlan(K=256), default=DingOrderingPlan(K=1024)),
    variants=(
        PlantedVariant("tracking on shuffled data", "tracking claimed for FedAvg on shuffled data and the no-tracking "
                       "control claimed on block-cyclic data", {"fedavg_data": "shuffled"},
                       sub_check="tracks the block just trained"),
        PlantedVariant("swing doubles", "the last cycle's swing at least twice the first cycle's (measured about "
                       "equal)", {"persistence": 2.0}, sub_check="persists"),
        PlantedVariant("orders reversed", "FedAvg's single model beats the block predictors; MM-PSGD beats MC-PSGD",
                       {"reverse_orders": True}, sub_check=" beat"),
    ),
    order=80,
)
