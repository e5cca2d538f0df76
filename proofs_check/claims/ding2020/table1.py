"""ding2020.table1: Sec. 5's Table 1 on block-cyclic image data: rounds to a target accuracy fall as I grows.

Source: Ding et al. 2020, Sec. 5, "Number of Local Iterations", Table 1 and Fig. 3
(``shared/papers/ding2020_block_cyclic.md``). On CIFAR-10 (tutorial CNN, N = 100, M = 5, C = 10,
E = 200, batch 2, gamma = eta = 0.01) MM-PSGD and MC-PSGD are run with I = 5, 10, 15, 20 local
iterations per round, and Table 1 lists "the number of rounds required to first achieve the test
accuracy of 60%": MM-PSGD 3210, 2010, 1610, 1610; MC-PSGD 3210, 2010, 1610, 1410. The accuracy is
the paper's metric (Sec. 5: each block's predictor on its block's test set, averaged over blocks;
predictors the exponentially weighted average of the block's global models) and a round is one
communication round of I local steps. Every entry is 10 more than a multiple of E = 200: the
average accuracy grows in stairs (a block's predictor changes only while its block is trained) and
is read every few rounds, so the target is first met a few rounds into a block visit. The paper
expects the rounds to fall like T/I (its O(1/sqrt(NT)) rate in the total iterations T) but not
"consistently ... inversely with I" (the local models drift further from the global one), and
reports ties (MM-PSGD: 1610 at I = 15 and 20).

Here the runs are ding2020.fig2's (``problems.block_cyclic_images``, the plan's data; MM-PSGD and
MC-PSGD with eta = gamma, both with Sec. 5's exponential predictor; C cycles of M blocks of E rounds, constant
gamma, batch 2) for every I of the plan's grid, seeds 0..S-1; the runs of one seed at different I
share the data, the initial model w0 and the clients' minibatch streams, so comparisons are paired
over seeds. With acc_m(r) block m's predictor at round r on block m's test images
(``BlockCyclicImageProblem.block_accuracy``), the average block accuracy

    A_{I,s}(r) = (1/M) sum_m acc_m(r)

is recorded at r = 0, k, 2k, .., C M E (k = ``record_every``; k = 1: every round). For each
algorithm, the target is stated by a rule on the runs' own curves (not tuned): with A0 the mean over
seeds of A(0) (the initialisation, the same for every I of a seed) and Abar_I(r) the mean over seeds,

    A_low = min_I max_r Abar_I(r),     target = A0 + f (A_low - A0),    f = ``target_fraction``,

so the target is a fraction f of the way to an accuracy every I's mean curve reaches; the rule
treats every I alike (a minimum over the grid), so it favours neither direction. f = 0.9 by
default: the paper's 60% is (60 - 10)/(65 - 10) = 0.91 of the way from chance (10%) to its best
accuracy (65%, Fig. 2). R_{I,s} is the first recorded round with A_{I,s}(r) >= target; a run that
never reaches it is censored and counts as C M E + 1, a lower bound of its rounds. If no I improves
on A0, the target is A0, every run meets it at round 0 and no difference can show (INCONCLUSIVE).

Checks, per algorithm, on the grid I_1 < .. < I_J in the claimed direction (``claimed_direction``
"fall": rounds non-increasing as I grows; the planted "rise" reverses the grid), each a paired
Student-t interval of per-seed differences (``check_ordering``) at confidence 1 - 2 alpha/n, so each
one-sided test is at level alpha/n, alpha = 0.05, n = (number of algorithms) x J (x 1 when J = 2), the
count of tests that can FAIL the claim (Bonferroni: a true claim FAILs with probability <= alpha; a PASS needs every
algorithm's (a) to pass, an intersection-union test at level <= alpha/n <= alpha):

* (a) fewer rounds at the last I than at the first: R_{I_1} - R_{I_J} > 0. PASS needs every seed of
  I_J to reach the target (its rounds are otherwise only lower bounds, which would overstate the
  difference) and at most half of the algorithm's runs censored; FAIL (the opposite order) needs
  every seed of I_1 to reach it. Censored rounds at I_1 only understate a fall: they stay.
* (b) no significant rise between neighbours, for j = 1..J-1 (when J > 2; with J = 2 (a) is the pair): FAIL when R_{I_{j+1}} - R_{I_j} > 0 is
  significant and every seed of I_j reached the target, PASS otherwise (ties are allowed, as in the
  paper). When some seed of I_j missed the target no rise can be shown: the check is uninformative
  (kept, not counted).

Rounds are whole numbers and the t-interval is exact only for normal differences; with 4 seeds a
PASS needs the differences to be consistent across seeds, not just one large one. The headline is
(a) for MM-PSGD: the mean over seeds of R_{I_1} - R_{I_J} (claimed > 0).

Measured on the bundled digits (default plan: all 1438 training and 359 test images, M = 2 blocks of
5 labels, N = 5, C = 6, E = 5, I = 5, 10, 15, 20, batch 2, gamma = 0.1, every round recorded, 4
seeds): targets 0.806 (MM-PSGD) and 0.810 (MC-PSGD); mean rounds MM-PSGD 45.5, 29.8, 25.8, 21.3
and MC-PSGD 46.5, 29.3, 26.0, 21.3 (no run censored): (a) PASSes for both (MM-PSGD 24.3 fewer rounds
at I = 20, in [6.2, 42.3]; MC-PSGD 25.3 in [4.3, 46.2]), no neighbour rises, so the claim PASSes
(Holm over the 8 sub-checks); the fall from I = 5 to 20 is about 2x, as the paper's 3210 -> 1610 / 1410.
(With eq. 7's average, before MC-PSGD ran Sec. 5's predictor, its target was 0.604 and its rounds 54.8,
32.8, 24.5, 18.3 with one seed at I = 5 censored; the verdict was the same.)
Cost: the whole ``fedbound verify --claim ding2020.table1 --jobs 2`` process took 16.6 s CPU and
33.7 s wall (medians of 3, load 5-8 on 2 cores), 1.58x the wall time of ding2020.fig2's default in
alternating pairs (1.87x its CPU), so about 11-13 s on a quiet machine. The full plan (Fashion-MNIST,
LeNet-5, M = 5 blocks of 3 labels, N = 10, 12000 images, C = 10, E = 20, every 2nd round recorded):
measured 9-11 s CPU per MM-PSGD run and 52-55 s per MC-PSGD run (its loss selection reads every
client's images each round) per seed and 100 rounds, so about 2.8 CPU-hours for 4 seeds and 1000
rounds (about 1.5 h on 2 cores).

The default plan's ``dataset`` is "auto" (``sec5_plans.SEC5_AUTO_ORDER``): on Fashion-MNIST, found here,
LeNet-5 on 1500 training and 300 test images, the digits' blocks and I grid but C = 2 (20 rounds),
accuracy recorded every 2nd round, gamma = 0.05 (the full plan's, not tuned on these runs). Measured (4
seeds; MC-PSGD then with eq. 7's average, not rerun since): the curves barely leave the initial accuracy,
so the targets are low (0.220 for MM-PSGD, 0.208 for MC-PSGD) and met early and noisily: mean rounds MM-PSGD 13.8, 9.5, 10, 13 and MC-PSGD 14, 10.5,
10.5, 9 at I = 5, 10, 15, 20 (one MM-PSGD and two MC-PSGD seeds at I = 5 censored); (a) is INCONCLUSIVE
for both (MM-PSGD 0.75 in [-17.6, 19.1], MC-PSGD 5.0 in [-9.8, 19.8]) and no neighbour rises, so the
claim is INCONCLUSIVE on Fashion-MNIST at this scale: Table 1's fall needs training long enough for the
accuracy to climb (the paper's targets are met after 1400-3200 rounds). At 3000 / 500 images and C = 3
the same (MM-PSGD 17.5, 20.5, 18.5, 19 rounds; INCONCLUSIVE). Cost: 70 s user + 6 s system CPU for the
whole process, one job, warm Numba cache (609 s wall under a load average of 11-13 on 2 cores, four such
processes at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
from convergence.verdict import Uninformative, Verdict

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, PlanError, parameter
from ...framework.plot_specs import Curve, CurvesPlot, RatePlot, RateSeries, ReferenceRate
from ...framework.references import DING2020
from .sec5_plans import (
    FIG2_DIGITS_BLOCKS, SEC5_CIFAR10, SEC5_DEFAULT, SEC5_LENET5, SEC5_QUICK, DingBlocksPlan, Sec5DataPlans,
)
from .sec5_runs import sec5_configs, sec5_problem, trained_scale
from .table1_rounds import RoundsToTarget, algorithm_test_count, check_rounds_fall, rounds_to_accuracy

if TYPE_CHECKING:
    from convergence import RunResult
    from convergence.budget import Workload
    from problems import BlockCyclicImageProblem

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "DingTable1Plan", "TABLE1_DIRECTIONS", "evaluate", "PAPER_TABLE1"]

TABLE1_DIRECTIONS = ("fall", "rise")
"""How ding2020.table1's rounds to target are claimed to move as I grows: fall (Table 1), or rise (planted false)."""


@dataclass(frozen=True, kw_only=True)
class DingTable1Plan(DingBlocksPlan):
    """ding2020.table1: Ding et al.'s Table 1 (rounds to a target accuracy against I) on block-cyclic
    image data: the data and the schedule as ding2020.fig2's, the I grid, how often the accuracy is
    recorded, the target rule and the claimed direction."""

    local_steps_grid: tuple[int, ...] = parameter(doc="local steps I per round of the sweep (the paper: 5, 10, 15, "
                                                      "20; at least 2 values)", minimum=1)
    record_every: int = parameter(doc="rounds between two accuracy records (1: every round; the resolution of the "
                                      "rounds to target)", minimum=1)
    target_fraction: float = parameter(0.9, "the target accuracy is this fraction of the way from the initial "
                                            "accuracy to the best mean accuracy every I reaches (the paper's 60% is "
                                            "0.91 of the way from chance, 10%, to its best, 65%)", above=0,
                                       maximum=1)
    seeds: int = parameter(4, "seeds of every run (at least 3: the checks are Bonferroni-corrected paired t-tests "
                              "over seeds)", minimum=3, from_settings="seeds")
    claimed_direction: str = parameter("fall", "how the rounds to target are claimed to move as I grows (rise: a "
                                               "planted variant)", choices=TABLE1_DIRECTIONS)

    def __post_init__(self) -> None:
        if len(self.local_steps_grid) < 2:
            raise PlanError("local_steps_grid", f"needs at least 2 values of I, got {self.local_steps_grid}")

    def workload(self) -> Workload:
        """MM-PSGD and MC-PSGD (two chains) at every I of the grid, recorded every record_every rounds."""
        from convergence.budget import Workload

        R, N = self.cycles * self.n_blocks * self.rounds_per_block, self.clients_per_block
        return sum((self.sec5_workload(R, I, 3 * N, records=R // self.record_every + 1)
                    for I in self.local_steps_grid), Workload())


CLAIM_ID = "ding2020.table1"
PAPER_TABLE1 = {"MM-PSGD": {5: 3210, 10: 2010, 15: 1610, 20: 1610}, "MC-PSGD": {5: 3210, 10: 2010, 15: 1610, 20: 1410}}
"""Ding et al.'s Table 1: rounds to 60% average block test accuracy on CIFAR-10, per algorithm and I."""
ALGORITHMS = (("mm", "MM-PSGD"), ("mc", "MC-PSGD"))
"""The algorithms of Table 1: key (in sub-check ids) and name."""


def _record_rounds(plan: DingTable1Plan) -> tuple[int, ...]:
    """0, k, 2k, .. and the horizon C M E (k = record_every)."""
    horizon = plan.cycles * plan.n_blocks * plan.rounds_per_block
    return tuple(sorted(set(range(0, horizon + 1, plan.record_every)) | {horizon}))


def _runs(settings: VerifySettings, plan: DingTable1Plan,
          problem: BlockCyclicImageProblem) -> dict[str, tuple[RunResult, ...]]:
    """MM-PSGD and MC-PSGD (``sec5_configs``: Sec. 5's predictor, eta = gamma) at every I of the grid: key -> runs (J,)."""
    gamma = convergence.StepSize.constant(plan.step_size)
    common = dict(cycles=plan.cycles, rounds_per_block=plan.rounds_per_block, step_size=gamma,
                  batch_size=plan.batch_size, record_rounds=_record_rounds(plan), seeds=tuple(range(plan.seeds)))
    configs = [convergence.RunConfig(problem.spec, config) for I in plan.local_steps_grid
               for config in sec5_configs(local_steps=I, **common)]
    results = convergence.execute([convergence.RunRequest(config) for config in configs], settings.sweep_options(),
                      description="Ding et al. Table 1 on block-cyclic images")
    return {key: tuple(results[a::len(ALGORITHMS)]) for a, (key, _) in enumerate(ALGORITHMS)}


def _interval(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds of ``values`` (J, S) and its 95% Student-t interval (S - 1 df), each (J,)."""
    mean = values.mean(axis=1)
    from scipy import stats

    half = stats.t.ppf(0.975, values.shape[1] - 1) * values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
    return mean, mean - half, mean + half


def _paper_text() -> str:
    return "; ".join(f"{name} " + ", ".join(f"I = {i}: {r}" for i, r in table.items())
                     for name, table in PAPER_TABLE1.items())


def evaluate(settings: VerifySettings, plan: DingTable1Plan) -> ClaimResult:
    """Table 1's checks (module docstring) on the plan's data, schedule and I grid; ``plan.claimed_direction``
    "rise" plants the false claim that the rounds to target rise with I."""
    problem = sec5_problem(plan.dataset, plan.n_blocks, plan.clients_per_block, plan.labels_per_block,
                           plan.n_train, plan.n_test)
    runs = _runs(settings, plan, problem)
    records = np.asarray(_record_rounds(plan), dtype=np.int64)
    grid = plan.local_steps_grid
    n_tests = len(ALGORITHMS) * algorithm_test_count(len(grid))
    measured: dict[str, RoundsToTarget] = {}
    checks: list[tuple[str, Verdict]] = []
    uninformative: list[Uninformative] = []
    curves: dict[str, np.ndarray] = {}
    for key, name in ALGORITHMS:
        average = np.stack([run.extras.block_accuracy.mean(axis=2) for run in runs[key]])  # (J, S, P)
        curves[key] = average.mean(axis=1)
        measured[key] = rounds_to_accuracy(average, records, grid, plan.target_fraction)
        found = check_rounds_fall(CLAIM_ID, name, measured[key], plan.claimed_direction, n_tests)
        checks.extend(found.checks)
        uninformative.extend(found.uninformative)
    ours = "; ".join(f"{name} " + ", ".join(f"I = {i}: {r:.4g}" for i, r in zip(grid, measured[key].rounds.mean(axis=1)))
                     for key, name in ALGORITHMS)
    scale = (f"{trained_scale(problem, plan, ', '.join(map(str, grid)))}, accuracy recorded every {plan.record_every} "
             f"round(s), {plan.seeds} seeds): mean rounds to "
             f"{plan.target_fraction:g} of the way from the initial to the lowest best accuracy ("
             + ", ".join(f"{name} {measured[key].target:.3f}" for key, name in ALGORITHMS) + f"): {ours}.")
    planted = "" if plan.claimed_direction == "fall" else "PLANTED FALSE VARIANT (rounds claimed to rise with I); "
    slow, fast = (grid[0], grid[-1]) if plan.claimed_direction == "fall" else (grid[-1], grid[0])
    verdict = combine_checks(
        CLAIM_ID, checks, headline=checks[0][1], uninformative=uninformative,
        notes=f"{planted}Ding et al. Table 1 (CIFAR-10, rounds to 60%): {_paper_text()}. {scale} Headline: (a) for MM-PSGD, its "
        f"mean rounds at I = {slow} minus at I = {fast} (claimed > 0).")
    verdict = verdict.with_evidence(rounds_to_target={
        name: {"I": list(grid), "rounds": measured[key].rounds.tolist(), "reached": measured[key].reached.tolist(),
               "target": measured[key].target, "initial": measured[key].initial,
               "lowest_best": measured[key].lowest_best, "paper": [PAPER_TABLE1[name].get(i) for i in grid]}
        for key, name in ALGORITHMS})
    return ClaimResult(verdict, (_rounds_plot(plan, measured), *(_curves_plot(plan, records, curves[key],
                                                                              measured[key], key, name)
                                                                 for key, name in ALGORITHMS)))


def _rounds_plot(plan: DingTable1Plan, measured: dict[str, RoundsToTarget]) -> RatePlot:
    """Rounds to target vs I per algorithm (mean, 95% t-interval over seeds), the paper's Table 1 beside them."""
    grid = [float(i) for i in plan.local_steps_grid]
    series = []
    for key, name in ALGORITHMS:
        mean, lo, hi = _interval(measured[key].rounds.astype(np.float64))
        series.append(RateSeries(grid, mean.tolist(), lo.tolist(), hi.tolist(), f"{name} (fedbound, mean and 95% t)"))
    for name, table in PAPER_TABLE1.items():
        series.append(RateSeries(tuple(map(float, table)), tuple(map(float, table.values())), label=f"{name} (paper, "
                                 "CIFAR-10, rounds to 60%)"))
    return RatePlot(
        "ding2020_table1", "Ding et al. Table 1: rounds to a target accuracy vs local iterations I",
        f"Rounds to the target average block test accuracy ({plan.target_fraction:g} of the way from the initial to "
        f"the lowest best mean accuracy over I) on {plan.dataset}, per algorithm, mean over {plan.seeds} seeds with "
        f"95% Student-t intervals (censored runs counted at C M E + 1); the paper's CIFAR-10 rounds to 60% beside "
        "them; the reference line is rounds proportional to 1/I (a fixed total of local iterations T).",
        tuple(series), "local iterations per round I", "rounds to target",
        reference=ReferenceRate(-1.0, "rounds ∝ 1/I"),
    )


def _curves_plot(plan: DingTable1Plan, records: np.ndarray, mean: np.ndarray, measured: RoundsToTarget, key: str,
                 name: str) -> CurvesPlot:
    """Mean average block accuracy vs round for every I (Fig. 3), with the target."""
    x = records.astype(float).tolist()
    curves = [Curve(x, row.tolist(), f"I = {i}") for i, row in zip(plan.local_steps_grid, mean)]
    curves.append(Curve((0.0, x[-1]), (measured.target,) * 2, f"target {measured.target:.3f}"))
    return CurvesPlot(
        f"ding2020_table1_{key}", f"Ding et al. Fig. 3 / Table 1: {name}'s average block test accuracy vs round",
        f"(1/M) sum_m acc_m(r), block m's predictor on block m's test images, mean over {plan.seeds} seeds, on "
        f"{plan.dataset} (M = {plan.n_blocks}, N = {plan.clients_per_block}, E = {plan.rounds_per_block}), one "
        "curve per I; the horizontal line is the target of the rounds to target.",
        tuple(curves), "round r", "average block test accuracy", logx=False, logy=False,
    )


CLAIM = Claim(
    "ding2020.table1", (DING2020,), "Sec. 5 (Table 1, Fig. 3)",
    "On block-cyclic image data (a CNN; Ding et al.'s label-based blocks): MM-PSGD and MC-PSGD (predictors: "
    "Sec. 5's exponential average, base 0.5) need fewer communication rounds to first reach a target average block test accuracy as the local iterations I per "
    "round grow (paper, CIFAR-10, rounds to 60% at I = 5, 10, 15, 20: MM-PSGD 3210, 2010, 1610, 1610; MC-PSGD "
    "3210, 2010, 1610, 1410).",
    "the mean over seeds of MM-PSGD's rounds to target at the smallest I minus at the largest (claimed > 0)",
    evaluate,
    plan=ModePlans(
        quick=DingTable1Plan(**SEC5_QUICK, **FIG2_DIGITS_BLOCKS, cycles=3, rounds_per_block=5,
                             local_steps_grid=(5, 20), record_every=1),
        default=DingTable1Plan(**SEC5_DEFAULT, **FIG2_DIGITS_BLOCKS, cycles=6, rounds_per_block=5,
                               local_steps_grid=(5, 10, 15, 20), record_every=1),
        full=DingTable1Plan(dataset="fashion-mnist", n_train=12000, n_test=2000, n_blocks=5, clients_per_block=10,
                            labels_per_block=3, cycles=10, rounds_per_block=20, step_size=0.05,
                            local_steps_grid=(5, 10, 15, 20), record_every=2),
        by_data=Sec5DataPlans(*(DingTable1Plan(**scale, **FIG2_DIGITS_BLOCKS, cycles=2, rounds_per_block=5,
                                               local_steps_grid=(5, 10, 15, 20), record_every=2)
                                for scale in (SEC5_LENET5, SEC5_CIFAR10))),
    ),
    variants=(
        PlantedVariant("rounds rise with I", "the rounds to target claimed to rise as I grows (the opposite of "
                       "Table 1)", {"claimed_direction": "rise"}, sub_check="(b) "),
    ),
    order=100,
)
