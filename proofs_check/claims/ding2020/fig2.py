"""ding2020.fig2: Sec. 5's experiment (Fig. 2) on block-cyclic image data, as paired checks over seeds.

Source: Ding et al. 2020, Sec. 5 (``shared/papers/ding2020_block_cyclic.md``), on CIFAR-10 with the
PyTorch-tutorial CNN, N = 100, M = 5, C = 10, E = 200, I = 10, batch 2, gamma = eta = 0.01: MM-PSGD
and MC-PSGD reach 65% average block test accuracy, FedAvg on block-cyclic data oscillates between
56% and 59%, FedAvg on shuffled data reaches 62%.

Here the four runs share the data (``problems.block_cyclic_images``: M label-based blocks of N
clients, the plan's data set) and the schedule (C cycles, E rounds of I local steps per block visit,
constant gamma, batch 2): MM-PSGD and MC-PSGD (eta = gamma), both with Sec. 5's exponential
predictor (``sec5_runs.SEC5_PREDICTOR``; eq. 7's uniform average is the theorems'), FedAvg-cyclic (the global model, scored on every block), and FedAvg on ``shuffled(0)`` (the same
images pooled and dealt to N clients at random) with C M E rounds of I steps. Every run is recorded
at every block end r = 0, E, 2E, .., C M E (the plot) and at every round of the last cycle (the
checks). The metric is the paper's: with acc_m(r) the accuracy of block m's
model at round r on block m's test images (``BlockCyclicImageProblem.block_accuracy``),

    A(r) = (1/M) sum_m acc_m(r),     Abar = mean of A(r) over the last cycle's rounds r in (C-1) M E + 1 .. C M E,

and the paper reports the best test accuracy reached ("MM-PSGD and MC-PSGD achieve the best test accuracy
of 65%"), so (a) and (c) compare Abest = max of A(r) over the recorded rounds (every block end and the
whole last cycle) and Abar is kept as evidence in the notes;

and the oscillation of a run is the mean over blocks of the range of its per-block accuracy over the
last cycle,

    W = (1/M) sum_m [max_r acc_m(r) - min_r acc_m(r)],   r over the last cycle's rounds.

A model that does not follow the block order keeps each acc_m about level (W near its noise);
FedAvg-cyclic forgets the labels of the block it is not trained on, so its acc_m swings each visit.

Sub-checks (``check_ordering``: paired two-sided Student-t interval of the per-seed differences at
level 0.95, PASS if its lower end is above 0, so a one-sided test at level 0.975):

* (a) Abest of MM-PSGD's predictors > Abest of FedAvg-cyclic; the same for MC-PSGD's predictors;
* (b) W of FedAvg-cyclic > W of FedAvg on shuffled data (the same algorithm without block order);
* (c) FedAvg on shuffled data lies between: its Abest > FedAvg-cyclic's, and MM-PSGD's and
  MC-PSGD's Abest > its Abest.

Every sub-check is a test with its p-value (``Verdict.p_fail``), and the claim's verdict is Holm over
the six at family-wise level 0.05 (``combine_checks``).

Measured on the bundled digits (default plan: all 1438 training and 359 test images, M = 2 blocks of
5 labels, N = 5, C = 12, E = 5, I = 10, batch 2, gamma = 0.1; 4 seeds, about 7 s with a warm Numba cache): Abar 0.955
(MM), 0.964 (MC), 0.855 (FedAvg-cyclic), 0.966 (shuffled); W 0.305 (cyclic) against 0.032
(shuffled). (a), (b) and shuffled-above-cyclic PASS, but FedAvg on shuffled data ties both
predictors (MM-PSGD -0.010 in [-0.021, 0.001], MC-PSGD -0.001 in [-0.008, 0.005]: INCONCLUSIVE), so
the claim is INCONCLUSIVE on the digits: the small net nearly saturates them, and shuffled data were at
least as good in every setting tried (M = 2 or 5, 2 to 5 labels per block, 400 to 1438 images, C = 3 to
12). That is the result, not tuned away. On the paper's metric, Abest (the numbers above are Abar), the same runs
give 0.964 (MM), 0.973 (MC), 0.921 (FedAvg-cyclic), 0.976 (shuffled): (a), (b) and shuffled-above-cyclic
PASS, MM-PSGD above shuffled FAILs on its own (-0.012 in [-0.022, -0.002]) but not after Holm (adjusted
p = 0.21), MC-PSGD -0.003 in [-0.013, 0.006]: INCONCLUSIVE still. (Before MC-PSGD ran Sec. 5's predictor, its eq. 7 average
reached 0.929 and lay below shuffled data, -0.036 in [-0.046, -0.026]: a FAIL that came from the wrong
predictor.) The full plan runs the same checks on Fashion-MNIST (M = 5 blocks of 3 overlapping labels,
LeNet-5).

The default plan's ``dataset`` is "auto" (``sec5_plans.SEC5_AUTO_ORDER``): where Fashion-MNIST is found
(here: Debian's package) it runs LeNet-5 on 1500 training and 300 test images, the digits' blocks and
schedule but C = 4, gamma = 0.05 (the full plan's, not tuned on these runs). Measured (4 seeds; MC-PSGD
then with eq. 7's average, not rerun since: Fashion-MNIST is not on the machine of the predictor fix):
Abar 0.296 (MM), 0.313 (MC), 0.171 (FedAvg-cyclic), 0.486 (shuffled). (a), (b) and
shuffled-above-cyclic PASS; both predictors lie below FedAvg on shuffled data (MM -0.190 in [-0.277,
-0.104], MC -0.173 in [-0.270, -0.076]: FAIL), so the claim FAILs on Fashion-MNIST too: 40 rounds of
10 steps leave LeNet-5 far from trained (the paper: 10,000 rounds), and a block predictor that has seen
only its block's 5 labels for a few visits is no match for a model trained on all 10 every round. At
3000 / 500 images the same (MM 0.336, MC 0.305, cyclic 0.167, shuffled 0.513; FAIL). Cost: 41 s user +
4 s system CPU for the whole process, one job, warm Numba cache (480 s wall under a load average of
11-13 on 2 cores, four such processes at once).
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
from .sec5_plans import (
    FIG2_DIGITS_BLOCKS, SEC5_CIFAR10, SEC5_DEFAULT, SEC5_LENET5, SEC5_QUICK, DingBlocksPlan, Sec5DataPlans,
    local_steps_parameter,
)
from .sec5_runs import SHUFFLE_SEED, fig2_curves, sec5_configs, sec5_problem, single_model_per_block, trained_scale

if TYPE_CHECKING:
    from convergence import RunResult
    from convergence.budget import Workload
    from problems import BlockCyclicImageProblem

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "DingFig2Plan", "evaluate", "PAPER_FIG2"]

PAPER_FIG2 = ("Ding et al. Fig. 2 (CIFAR-10, tutorial CNN, N = 100, M = 5, C = 10, E = 200, I = 10, batch 2, "
              "gamma = 0.01): MM-PSGD and MC-PSGD 65%, FedAvg on block-cyclic data 56-59% (oscillating), "
              "FedAvg on shuffled data 62%.")


@dataclass(frozen=True, kw_only=True)
class DingFig2Plan(DingBlocksPlan):
    """ding2020.fig2: Ding et al.'s Sec. 5 comparison (Fig. 2) on block-cyclic image data: the data
    (data set, images used, M blocks of N clients, labels per block) and the schedule (C cycles, E
    rounds per block, gamma) per mode; I, the batch, the seeds and the planted alternative."""

    local_steps: int = local_steps_parameter()
    claimed_winner: str = parameter("predictors", "who is claimed more accurate: the block predictors, or "
                                    "FedAvg on block-cyclic data (a planted variant)",
                                    choices=("predictors", "fedavg_cyclic"))

    def workload(self) -> Workload:
        """MM-PSGD, MC-PSGD (two chains), FedAvg-cyclic: 4 N clients a round; FedAvg on shuffled data: all M N."""
        R, N = self.cycles * self.n_blocks * self.rounds_per_block, self.clients_per_block
        return self.sec5_workload(R, self.local_steps, 4 * N + self.n_blocks * N,
                                  records=self.n_blocks * self.rounds_per_block)


def _runs(settings: VerifySettings, plan: DingFig2Plan,
          problem: BlockCyclicImageProblem) -> tuple[RunResult, RunResult, RunResult, RunResult]:
    """MM-PSGD, MC-PSGD, FedAvg-cyclic and FedAvg on shuffled data, recorded at the block ends and at
    every round of the last cycle."""
    rounds = plan.cycles * plan.n_blocks * plan.rounds_per_block
    gamma = convergence.StepSize.constant(plan.step_size)
    seeds = tuple(range(plan.seeds))
    last_cycle = rounds - plan.n_blocks * plan.rounds_per_block
    records = tuple(sorted(set(range(0, rounds + 1, plan.rounds_per_block)) | set(range(last_cycle + 1, rounds + 1))))
    schedule = dict(cycles=plan.cycles, rounds_per_block=plan.rounds_per_block, local_steps=plan.local_steps,
                    step_size=gamma, batch_size=plan.batch_size, record_rounds=records, seeds=seeds)
    shuffled = problem.shuffled(SHUFFLE_SEED)
    configs = [
        *(convergence.RunConfig(problem.spec, config) for config in sec5_configs(**schedule)),
        convergence.RunConfig(problem.spec, convergence.FedAvgCyclicConfig(**schedule)),
        convergence.RunConfig(shuffled.spec, convergence.FedAvgConfig(plan.local_steps, rounds, gamma, plan.batch_size,
                                                                      1.0, records, seeds=seeds)),
    ]
    mm, mc, cyclic, fedavg = convergence.execute([convergence.RunRequest(config) for config in configs],
                                                 settings.sweep_options(),
                                                 description="Ding et al. Fig. 2 on block-cyclic images")
    return mm, mc, cyclic, fedavg


def evaluate(settings: VerifySettings, plan: DingFig2Plan) -> ClaimResult:
    """Sec. 5's comparison (module docstring) on the plan's data and schedule.

    ``plan.claimed_winner`` "fedavg_cyclic" plants the false claim that FedAvg on block-cyclic data
    beats the predictors (the (a) checks with the roles swapped)."""
    problem = sec5_problem(plan.dataset, plan.n_blocks, plan.clients_per_block, plan.labels_per_block, plan.n_train,
                           plan.n_test)
    mm, mc, cyclic, fedavg = _runs(settings, plan, problem)
    cycle_rounds = plan.n_blocks * plan.rounds_per_block
    curves = {name: fig2_curves(per_block, mm.rounds, cycle_rounds) for name, per_block in (
        ("MM-PSGD predictors", mm.extras.block_accuracy), ("MC-PSGD predictors", mc.extras.block_accuracy),
        ("FedAvg on block-cyclic data", cyclic.extras.block_accuracy),
        ("FedAvg on shuffled data", single_model_per_block(problem, fedavg)))}
    mm_c, mc_c, cyc_c, shu_c = curves.values()
    metric = ("Abest = the best average block test accuracy (1/M) sum_m acc_m(r) over the recorded rounds (every E "
              "rounds and the whole last cycle), the paper's best test accuracy, paired by seed")
    checks: list[tuple[str, Verdict]] = []
    for key, name, c in (("mm", "MM-PSGD predictors", mm_c), ("mc", "MC-PSGD predictors", mc_c)):
        if plan.claimed_winner == "predictors":
            checks.append((f"(a) {name} above FedAvg on block-cyclic data", convergence.check_ordering(
                f"ding2020.fig2/fedavg_cyclic<{key}", cyc_c.best, c.best, notes=metric)))
        else:
            checks.append((f"(a) FedAvg on block-cyclic data above the {name}", convergence.check_ordering(
                f"ding2020.fig2/{key}<fedavg_cyclic", c.best, cyc_c.best, notes=metric)))
    checks.append(("(b) FedAvg on block-cyclic data oscillates with the block", convergence.check_ordering(
        "ding2020.fig2/oscillation", shu_c.oscillation, cyc_c.oscillation,
        notes=f"W = (1/M) sum_m (max - min of acc_m(r) over the last cycle's {cycle_rounds} rounds); claimed: W of "
        f"FedAvg on block-cyclic data ({cyc_c.oscillation.mean():.3g}) > W of FedAvg on shuffled data "
        f"({shu_c.oscillation.mean():.3g}), paired by seed (means over seeds; MM-PSGD's predictors "
        f"{mm_c.oscillation.mean():.3g}, MC-PSGD's {mc_c.oscillation.mean():.3g}).")))
    checks.append(("(c) FedAvg on shuffled data above FedAvg on block-cyclic data", convergence.check_ordering(
        "ding2020.fig2/fedavg_cyclic<shuffled", cyc_c.best, shu_c.best, notes=metric)))
    for key, name, c in (("mm", "MM-PSGD predictors", mm_c), ("mc", "MC-PSGD predictors", mc_c)):
        checks.append((f"(c) {name} above FedAvg on shuffled data", convergence.check_ordering(
            f"ding2020.fig2/shuffled<{key}", shu_c.best, c.best, notes=metric)))
    best = ", ".join(f"{name} {c.best.mean():.3f}" for name, c in curves.items())
    last = ", ".join(f"{name} {c.last_cycle_average.mean():.3f}" for name, c in curves.items())
    scale = (f"{trained_scale(problem, plan, str(plan.local_steps))}, {plan.seeds} seeds): Abest (checked; means over "
             f"seeds) {best}; Abar (last-cycle mean, evidence) {last}.")
    verdict = combine_checks("ding2020.fig2", checks, headline=checks[0][1],
                             notes=f"{PAPER_FIG2} {scale} Headline: mean Abest difference MM-PSGD - FedAvg-cyclic.")
    plotted = np.isin(mm.rounds, np.arange(0, mm.rounds[-1] + 1, plan.rounds_per_block))  # the block ends
    rounds = mm.rounds[plotted].astype(float).tolist()
    plot = CurvesPlot(
        "ding2020_fig2", "Ding et al. Fig. 2: average block test accuracy vs round",
        f"(1/M) sum_m acc_m(r) at every block end, block m's model on block m's test images, mean over "
        f"{plan.seeds} seeds, on "
        f"{plan.dataset} (M = {plan.n_blocks}, N = {plan.clients_per_block}, E = {plan.rounds_per_block}, "
        f"I = {plan.local_steps}).",
        curves=tuple(Curve(rounds, c.average.mean(axis=0)[plotted].tolist(), name) for name, c in curves.items()),
        xlabel="round r", ylabel="average block test accuracy", logx=False, logy=False,
    )
    return ClaimResult(verdict, (plot,))


CLAIM = Claim(
    "ding2020.fig2", (DING2020,), "Sec. 5 (Fig. 2)",
    "On block-cyclic image data (a CNN; Ding et al.'s label-based blocks): MM-PSGD's and MC-PSGD's block "
    "predictors (both Sec. 5's exponential average of the block's global models, base 0.5) reach a higher average "
    "block test accuracy than FedAvg on block-cyclic data, whose per-block "
    "accuracy oscillates with the block; FedAvg on shuffled data lies between (paper, CIFAR-10: 65%, 56-59%, 62%).",
    "the mean over seeds of MM-PSGD's best average block accuracy (over the recorded rounds, as the paper reports "
    "the best) minus FedAvg-cyclic's (claimed > 0); the last-cycle mean is kept as evidence",
    evaluate,
    plan=ModePlans(
        quick=DingFig2Plan(**SEC5_QUICK, **FIG2_DIGITS_BLOCKS, cycles=4, rounds_per_block=5),
        default=DingFig2Plan(**SEC5_DEFAULT, **FIG2_DIGITS_BLOCKS, cycles=12, rounds_per_block=5),
        full=DingFig2Plan(dataset="fashion-mnist", n_train=12000, n_test=2000, n_blocks=5, clients_per_block=10,
                          labels_per_block=3, cycles=10, rounds_per_block=20, step_size=0.05),
        by_data=Sec5DataPlans(
            lenet5=DingFig2Plan(**SEC5_LENET5, **FIG2_DIGITS_BLOCKS, cycles=4, rounds_per_block=5),
            cifar10=DingFig2Plan(**SEC5_CIFAR10, **FIG2_DIGITS_BLOCKS, cycles=4, rounds_per_block=5)),
    ),
    variants=(
        PlantedVariant("FedAvg-cyclic beats the predictors", "FedAvg on block-cyclic data claimed more accurate "
                       "than the MM-PSGD and MC-PSGD predictors", {"claimed_winner": "fedavg_cyclic"},
                       sub_check="(a) FedAvg on block-cyclic data above the"),
    ),
    order=90,
)
