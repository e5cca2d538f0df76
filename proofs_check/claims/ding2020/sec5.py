"""What ding2020.fig4 and ding2020.fig5 share: the last-cycle accuracy of a block-cyclic run, the
paired threshold check with its family-wise levels, and the report of a sweep (notes, plot and result).

Source: Ding et al. 2020, Sec. 5 (``shared/papers/ding2020_block_cyclic.md``). Both claims sweep one
setting (M at fixed M E; the participation rate K/N) and compare, per algorithm, the paper's metric at
the two ends of the sweep. The metric is ding2020.fig2's (``sec5_runs.fig2_curves``): with acc_m(r) block m's
predictor (or a single model) on block m's test images at round r,

    Abar = (1/(M E)) sum over the last cycle's rounds r of (1/M) sum_m acc_m(r),     one value per seed.

The runs are recorded at every round of the last cycle and nowhere else (``last_cycle_rounds``).
The paper reports the best test accuracy reached (Sec. 5: "achieving the best test accuracies of 63% and
67%"), so the sub-checks compare

    Abest = max over the last cycle's rounds r of (1/M) sum_m acc_m(r),     one value per seed,

(``SweepAccuracy.best``; the best over the recorded rounds, which are the last cycle's: the run ids are
those of the Abar metric, which is kept as evidence in the notes, ``SweepAccuracy.last_cycle``).

A claim is a family of k sub-checks "E[v] > t" or "E[v] < t" on per-seed paired values v_s
(differences of Abar between the ends of the sweep, same seed, same data), each decided by
``check_paired_threshold`` from Student-t intervals on S - 1 degrees of freedom
(``convergence.check_ordering`` of v against the constant t):

* PASS when the two-sided 1 - FAMILY_ALPHA interval of E v lies on the claimed side of t (a one-sided
  test at level FAMILY_ALPHA / 2). The claim PASSes only when all k sub-checks do: an
  intersection-union test, so a false claim PASSes with probability at most FAMILY_ALPHA / 2 = 0.025,
  whatever the dependence between sub-checks, with no correction for k.
* FAIL when the two-sided 1 - FAMILY_ALPHA / k interval lies wholly on the other side (one-sided
  level FAMILY_ALPHA / (2k)). The claim FAILs when any sub-check does: by Bonferroni a true claim
  FAILs with probability at most k FAMILY_ALPHA / (2k) = 0.025.
* INCONCLUSIVE otherwise: the interval is too wide for the margin (too few seeds, or a difference near
  the threshold), so "does not degrade" is never a mere non-rejection.

Data: the four Sec. 5 claims' default plans take ``dataset`` "auto", resolved with the plan before any
spec is built (``sec5_plans.Sec5DataPlans``, ``problems.resolve_image_dataset``): CIFAR-10 with the paper's
tutorial net if its archive is found, else Fashion-MNIST, else MNIST with LeNet-5, else the bundled
digits with digits_net; on the digits the plans are those measured in each claim's docstring, on the
others 1500 training and 300 test images drawn at random, each claim's blocks and schedule with fewer
cycles, gamma = 0.05 on 28x28 images (the full plans') and the paper's 0.01 on CIFAR-10. The notes and
plots name the data set, the network and the scale. Measured on Fashion-MNIST (4 seeds, MC-PSGD then with
eq. 7's average instead of Sec. 5's exponential one: not rerun since, the data set being absent): ding2020.fig2
FAIL (the predictors below FedAvg on shuffled data), ding2020.table1, fig4 and fig5 INCONCLUSIVE (each
docstring has the numbers); ``fedbound verify`` of the four, two jobs, warm Numba cache: 277 s wall,
180 s user + 18 s system CPU under a load average of 6 falling to 4.5 on 2 cores (the digits defaults
of the four: about 45 s CPU), so about 75-90 s more wall time than the digits on a quiet machine; the
same verdicts, bit for bit, with one job.

The t intervals take the per-seed values as roughly normal (differences of means over hundreds of test
images and M E rounds). At the 4 seeds of the default plans no distribution-free test could decide: a
sign test's smallest one-sided p-value with 4 seeds is 1/16 > 0.025.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
from convergence.verdict import Status, Verdict

from ...framework.claim import ClaimResult
from ...framework.evaluation import combine_checks
from ...framework.plot_specs import Curve, CurvesPlot
from .sec5_plans import NETWORK_OF_DATASET
from .sec5_runs import fig2_curves

if TYPE_CHECKING:
    from convergence import RunResult

    from .sec5_plans import DingSec5Plan

__all__ = ["FAMILY_ALPHA", "SweepAccuracy", "last_cycle_rounds", "sweep_accuracy",
           "check_paired_threshold", "sweep_notes", "sweep_plot", "sweep_result"]

FAMILY_ALPHA = 0.05
"""Each claim's family-wise error rate for a false PASS plus a false FAIL (0.025 each; module docstring)."""


def last_cycle_rounds(total_rounds: int, cycle_rounds: int) -> tuple[int, ...]:
    """Every round of the last cycle, R - M E + 1 .. R (R = ``total_rounds``, M E = ``cycle_rounds``)."""
    return tuple(range(total_rounds - cycle_rounds + 1, total_rounds + 1))


@dataclass(frozen=True)
class SweepAccuracy:
    """Both metrics of a sweep, per algorithm name, each (points, S): ``best`` Abest, the largest A(r) over
    the recorded rounds (the last cycle), the paper's "best test accuracy", which the claims check; and
    ``last_cycle`` Abar, the last cycle's mean, kept as evidence (module docstring)."""

    best: dict[str, np.ndarray]
    last_cycle: dict[str, np.ndarray]


def sweep_accuracy(per_run: Mapping[str, Sequence[tuple[np.ndarray, RunResult]]], cycle_rounds: int) -> SweepAccuracy:
    """``SweepAccuracy`` from, per algorithm, the (per-block accuracies (S, P, M), run) of each point of the
    sweep, each recorded at every round of its last cycle of ``cycle_rounds`` = M E rounds."""
    curves = {name: [fig2_curves(acc, run.rounds, cycle_rounds) for acc, run in runs] for name, runs in per_run.items()}
    return SweepAccuracy({name: np.array([c.best for c in cs]) for name, cs in curves.items()},
                         {name: np.array([c.last_cycle_average for c in cs]) for name, cs in curves.items()})


def check_paired_threshold(claim_id: str, values: np.ndarray, threshold: float, *, above: bool, family_size: int,
                           what: str) -> Verdict:
    """"E[v] > threshold" (``above``) or "E[v] < threshold" from per-seed values v (S,), as one of the
    ``family_size`` = k sub-checks of a claim (module docstring: PASS on the 1 - FAMILY_ALPHA interval,
    FAIL on the Bonferroni 1 - FAMILY_ALPHA / k interval). ``what`` names v in the notes.

    measured = mean v, theoretical = threshold, interval = the 1 - FAMILY_ALPHA Student-t interval of
    E v; evidence: v, the threshold, the side, both levels and the Bonferroni interval.

    Raises:
        ValueError: naming ``family_size`` (not a positive integer) or ``values`` (empty, non-finite,
            through ``check_ordering``).
    """
    if isinstance(family_size, bool) or not isinstance(family_size, int) or family_size < 1:
        raise ValueError(f"family_size: need a positive integer k, got {family_size!r}")
    v = np.asarray(values, dtype=float).reshape(-1)
    level = np.full(v.shape, float(threshold))
    smaller, larger = (level, v) if above else (v, level)
    confidence, corrected = 1 - FAMILY_ALPHA, 1 - FAMILY_ALPHA / family_size
    passing = convergence.check_ordering(claim_id, smaller, larger, confidence=confidence)
    failing = convergence.check_ordering(claim_id, smaller, larger, confidence=corrected)

    def of_v(interval: tuple[float, float]) -> tuple[float, float]:
        """The interval of E v from check_ordering's interval of E[larger - smaller]."""
        lo, hi = interval
        return (threshold + lo, threshold + hi) if above else (threshold - hi, threshold - lo)

    (lo, hi), (lo_k, hi_k) = of_v(passing.interval), of_v(failing.interval)
    side = ">" if above else "<"
    summary = (f"{what}: mean {v.mean():.4g} over {v.size} paired seeds, {confidence:.0%} Student-t interval "
               f"[{lo:.4g}, {hi:.4g}], Bonferroni ({family_size} sub-checks) {corrected:.2%} interval "
               f"[{lo_k:.4g}, {hi_k:.4g}]; claimed {side} {threshold:.4g}")
    if passing.status is Status.PASS:
        status, finding = Status.PASS, f"{summary}: the {confidence:.0%} interval is {side} {threshold:.4g}, holds"
    elif failing.status is Status.FAIL:
        status, finding = Status.FAIL, f"{summary}: even the Bonferroni interval is on the other side, fails"
    else:
        reason = passing.notes if v.size < 2 else "the intervals straddle the threshold: the data cannot tell"
        status, finding = Status.INCONCLUSIVE, f"{summary}: {reason}"
    evidence = {"values": v.tolist(), "threshold": float(threshold), "above": above, "confidence": confidence,
                "bonferroni_confidence": corrected, "bonferroni_interval": [lo_k, hi_k], "family_size": family_size}
    return dataclasses.replace(passing, status=status, measured=float(v.mean()), theoretical=float(threshold),
                               interval=(lo, hi), notes=finding, evidence=evidence)


def sweep_notes(plan: DingSec5Plan, setting: str, points: Sequence[str], accuracy: SweepAccuracy) -> str:
    """fedbound's scale in a sweep's notes: the plan's data and training, ``setting`` (the blocks and
    what is swept), and Abest (checked) and Abar (evidence) per algorithm at each of the sweep's
    ``points``, means over seeds."""
    def table(values: Mapping[str, np.ndarray]) -> str:
        return "; ".join(f"{name}: " + ", ".join(f"{point} {a:.3f}" for point, a in zip(points, acc.mean(axis=1)))
                         for name, acc in values.items())
    return (f"fedbound ({plan.dataset}; {NETWORK_OF_DATASET[plan.dataset]}, {plan.n_train or 'all'} training images, "
            f"{setting}, C = {plan.cycles}, I = {plan.local_steps}, batch {plan.batch_size}, gamma = eta = "
            f"{plan.step_size:g}, Sec. 5's exponential predictor for MM-PSGD and MC-PSGD, {plan.seeds} seeds): Abest "
            f"(best A(r) over the last cycle, checked; means over seeds) {table(accuracy.best)}. Abar (last-cycle mean, "
            f"evidence) {table(accuracy.last_cycle)}.")


def sweep_plot(name: str, title: str, caption: str, x: Sequence[float], accuracy: Mapping[str, np.ndarray],
               xlabel: str, seeds: int) -> CurvesPlot:
    """Abest against the swept setting ``x``, one curve per algorithm (``accuracy``: name -> (len(x), S)),
    means over the ``seeds``; ``caption`` follows the metric's definition."""
    return CurvesPlot(
        name, title, f"Abest (the largest (1/M) sum_m acc_m(r) over the last cycle's rounds), mean over {seeds} seeds, "
        f"{caption}",
        curves=tuple(Curve(tuple(float(v) for v in x), tuple(acc.mean(axis=1)), label) for label, acc in accuracy.items()),
        xlabel=xlabel, ylabel="best average block test accuracy (last cycle)", logx=False, logy=False,
    )


def sweep_result(claim_id: str, checks: Sequence[tuple[str, Verdict]], notes: str, plot: CurvesPlot) -> ClaimResult:
    """A sweep claim's result: its verdict from the named sub-checks (``combine_checks``: Holm, the
    first sub-check the headline) with ``notes``, and its one ``plot`` (``sweep_plot``)."""
    return ClaimResult(combine_checks(claim_id, checks, headline=checks[0][1], notes=notes), (plot,))
