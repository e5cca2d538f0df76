"""What ding2020.thm1 and ding2020.thm2 share (Ding et al., "Distributed Optimization over Block-Cyclic
Data", arXiv 2002.07454): their plan, planted variants, checks and plots.

ding2020.thm1 (MM-PSGD) and ding2020.thm2 (MC-PSGD): with gamma = sqrt(N)/(L sqrt(T)),
I <= T^{1/4}/N^{3/4} (MC: eta = sqrt(NM)/(L sqrt(T)), I <= (T/M)^{1/4}/N^{3/4}) and K > C M N,
    (1/M) sum_m E F_m(predictor_m) - F(x*) <= O(1/sqrt(NT))          (eq. 11, 19),
and for MC-PSGD, for every block m, E F_m(u~_m) - F_m(x_m*) <= O(sqrt(M)/sqrt(NT))   (eq. 20).
The explicit form (THEOREMS.md, from Lemmas 4-6, eq. 16, 17, 33) is evaluated with every
constant computed for the instance (``DingConstants``): L = max, mu = min over the (block, client)
objectives F_m^i; B^2 of Assumption 5 = the largest of ||x_t^i||^2 over every local iterate
(tracked by the kernel), ||x*||^2 and ||x_m*||^2 (the proof uses ||x*||, ||x_m*|| <= B too); sigma^2,
G^2 bounded over the ball ||x|| <= B (``constants.assumptions``: exact sups for least squares). The same
explicit form bounds MC-PSGD's mini-max gap: by Lemma 8 (eq. 48-49) the selected model's average
loss at each communication iteration is at most the block-mixed chain's, which is MM-PSGD's
chain with the same gamma, so eq. 18's chain of inequalities carries over to u~_m.

What each instance can show. The mini-max gap G = (1/M) sum_m F_m(x~_m) - F(x*) is bounded
below by the floor (1/M) sum_m F_m* - F* <= 0 (F_m* = F_m(x_m*)), with equality of floor and 0
exactly when every x_m* = x*. On blocks far apart (``instance()``) the floor is negative and so
is G in the theorem's regime (gamma K = sqrt(NT)/(L C M) grows with T, so each block's models
settle near that block's optimum). Where G <= 0, "G <= bound" and "G <= c/sqrt(NT)" hold
trivially: such sub-checks cannot fail and are reported as uninformative (INCONCLUSIVE with the
reason, not counted in the claim's verdict), never PASS; a claim left with only those is
INCONCLUSIVE. The informative quantity there is the excess over
the floor, G - floor = (1/M) sum_m [F_m(x~_m) - F_m(x_m*)] >= 0, the mean of the per-block gaps.
Does the theorem give it a rate? Theorem 1 only says excess <= -floor + O(1/sqrt(NT)), which
does not vanish when floor < 0: for MM-PSGD neither the excess nor a per-block gap has a claimed
rate, so they are reported as measured evidence (fitted exponents, no verdict). Theorem 2's
eq. 20 does bound every per-block gap of MC-PSGD by O(sqrt(M/(NT))) -- exponent -1/2 in N T at
fixed M -- and their mean, the excess, with it: those are rate checks. On identical blocks
(``instance(identical_blocks=True)``: every block holds the same rows, F_m = F, x_m* = x*) the
floor is 0, G >= 0 equals the mean per-block gap, and the explicit bound and the O(1/sqrt(NT))
rate are checks that can FAIL; a planted smaller bound (``bound_scale``) or steeper exponent
(``claimed_exponent``) does. Both are loose there: G / bound is about 1e-3, and G decays like
(NT)^(-0.93) rather than (NT)^(-1/2) (averaged constant-step SGD on a quadratic reaches about
1/(NT)), so a planted exponent -1 is not rejected (INCONCLUSIVE) and -1.5 is (FAIL).
Identical blocks are not heterogeneous; ``theorem_runs.shared_minimiser_instance`` (plan parameter
``shared_minimiser``) is: every (block, client) draws its own rows (the F_m differ, in their curvature
too) but every F_m^i is minimised at the same theta_0 (no noise, no spread, mu = 0), so x_m* = x*, the
floor is 0 and G = the mean per-block gap >= 0 with different blocks. Bound and rate are checks that
can FAIL there too (sub-checks ``ding2020.mm/shared-minimiser/bound`` and ``/rate``; ``mc`` for Theorem 2);
at quick settings G / bound is about 2e-4 (MM-PSGD) and G decays like (NT)^(-0.9), so the planted bound
x 1e-5 and exponent -1.5 FAIL there as well.

ding2020.speedup and ding2020.ordering are evaluated in ``speedup`` and ``ordering`` on the runs of
``theorem_runs.run_configs``.

Instances: ``block_cyclic_quadratic`` (least squares: every constant exact), blocks far apart and
identical blocks, C = 2 cycles, single row minibatches. The sweep runs T = C M K with K over the
plan's grid (``DingTheoremPlan``: K_grid, N clients, M blocks, seeds, and the
constants the planted variants change), I the largest integer the theorem allows, E = K / I rounds
per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis, Status, Uninformative, Verdict

from ... import constants
from ...framework.claim import ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import Curve, CurvesPlot, PlotSpec, ReferenceRate, rate_plot
from .hypotheses import PAPER_SETTING, ding_hypotheses, paper_hypotheses, paper_setting_note
from .theorem_runs import CYCLES, DingRun, instance, run_configs, shared_minimiser_instance

if TYPE_CHECKING:
    from convergence.budget import Workload
    from problems import BlockCyclicProblem

    from ...constants.ding2020 import DingConstants
    from ...framework.settings import VerifySettings

__all__ = ["DingTheoremPlan", "THEOREM_PLANS", "THEOREM_VARIANTS", "RATE_TOLERANCE", "evaluate_theorem"]

RATE_TOLERANCE = 0.05
SHARED_LABEL = "shared minimiser"
"""The label of the heterogeneous blocks sharing their minimiser (``theorem_runs.shared_minimiser_instance``)."""


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
    shared_minimiser: bool = parameter(True, "also run different blocks sharing their minimiser, where the bound "
                                       "bites on heterogeneous blocks")

    def workload(self) -> Workload:
        """T = C M K steps per client on the N clients of the current block, per K, on one or two instances."""
        from convergence.budget import Workload

        from ...framework.plan_workloads import runs_workload

        instances = 1 + self.identical_instance + self.shared_minimiser
        return sum((runs_workload(configs=instances, seeds=self.seeds, rounds=CYCLES * self.M * K, clients=self.N)
                    for K in self.K_grid), Workload())


THEOREM_PLANS = ModePlans(
    quick=DingTheoremPlan(K_grid=(32, 64, 128, 512)),
    default=DingTheoremPlan(K_grid=(32, 64, 128, 256, 512, 1024, 2048)),
    full=DingTheoremPlan(K_grid=(32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)),
)
"""The plan shared by ding2020.thm1 and ding2020.thm2 (one sweep shape, one algorithm each)."""

THEOREM_VARIANTS = (
    PlantedVariant("rate (NT)^-1.5", "claimed exponent -1.5 in N T instead of -1/2 (the data give about -0.93 on "
                   "identical blocks)", {"claimed_exponent": -1.5}, sub_check="rate O(1/sqrt(NT))"),
    PlantedVariant("bound x 1e-5", "the explicit bound of eq. 16, 17, 33 shrunk 10^5 times, below the measured "
                   "gap on identical blocks (tightness about 1e-3)", {"bound_scale": 1e-5}, sub_check="explicit bound"),
)
"""The planted variants shared by ding2020.thm1 and ding2020.thm2 (their evaluators take the same parameters)."""


@dataclass(frozen=True)
class _GapSweep:
    """One algorithm's sweep over the K grid on one instance: S seeds, P configurations, M blocks.

    nt (P,) = N T; minimax (S, P) = G = (1/M) sum_m F_m(predictor_m) - F(x*) at the end of each
    run; block (S, P, M) = F_m(predictor_m) - F_m(x_m*); floor = (1/M) sum_m F_m* - F* <= 0;
    bounds (P,) the explicit form; constants per configuration; hypotheses of every configuration.
    """

    algorithm: str
    problem: BlockCyclicProblem
    runs: tuple[DingRun, ...]
    nt: np.ndarray
    minimax: np.ndarray
    block: np.ndarray
    floor: float
    bounds: np.ndarray
    constants: tuple[DingConstants, ...]
    hypotheses: tuple[Hypothesis, ...]

    @property
    def excess(self) -> np.ndarray:
        """(S, P) G - floor = (1/M) sum_m [F_m(predictor_m) - F_m(x_m*)] >= 0, the mean per-block gap."""
        return self.block.mean(axis=-1)


def _sweeps(algorithm: str, instances: Sequence[BlockCyclicProblem], settings: VerifySettings,
            plan: DingTheoremPlan) -> list[_GapSweep]:
    """The plan's K grid on every problem, run as one sweep, and each problem's gaps, bounds and hypotheses."""
    seeds, grid = tuple(range(plan.seeds)), list(plan.K_grid)
    runs = run_configs(settings, [(algorithm, problem, K, seeds, ()) for problem in instances for K in grid])
    sweeps = []
    for i, problem in enumerate(instances):
        mine = tuple(runs[i * len(grid): (i + 1) * len(grid)])
        gaps = [convergence.block_cyclic_gaps(problem, r.result) for r in mine]
        F_star = problems.exact_optimum(problem.combined, crosscheck=False).F_star
        block_star = [problems.exact_optimum(problem.block(m), crosscheck=False).F_star
                      for m in range(problem.n_blocks)]
        bounds, instance_constants = zip(*(constants.ding_bound(r) for r in mine))
        sweeps.append(_GapSweep(
            algorithm, problem, mine, np.array([r.N * r.T for r in mine], dtype=float),
            np.stack([g.minimax_gap[:, -1] for g in gaps], axis=1),
            np.stack([g.block_gap[:, -1, :] for g in gaps], axis=1),
            float(np.mean(block_star) - F_star), np.array(bounds), tuple(instance_constants),
            tuple(h for r in mine for h in ding_hypotheses(algorithm, r.N, r.M, r.T, r.K, r.I, f"T={r.T}", C=r.C)),
        ))
    return sweeps


def _name(algorithm: str) -> str:
    return "MM-PSGD" if algorithm == "mm" else "MC-PSGD"


def _scaled(bound_scale: float) -> str:
    return "" if bound_scale == 1.0 else f"{bound_scale:g} x "


def _minimax_checks(sweep: _GapSweep, label: str, claimed_exponent: float,
                    bound_scale: float) -> tuple[list[tuple[str, Verdict]], list[Uninformative]]:
    """Explicit bound and O(1/sqrt(NT)) rate of G = (1/M) sum_m F_m(predictor_m) - F(x*) on one
    instance, split into (informative, uninformative) sub-checks.

    G >= floor = (1/M) sum_m F_m* - F*. At a point where the mean of G is <= 0 the bound (> 0)
    holds whatever the algorithm does, so the bound check can fail only if the mean is > 0
    somewhere. A power law of G in N T needs G > 0 for every seed at every point; where G <= 0
    somewhere, "G <= c (NT)^(-1/2)" holds trivially there and no exponent can be fitted, so the
    rate sub-check is uninformative. On identical blocks (floor 0, G >= 0) both are informative;
    on blocks far apart (floor < 0, G < 0 in the theorem's regime) neither is.
    """
    a, name, p = sweep.algorithm, _name(sweep.algorithm), sweep.problem
    tag = label.replace(" ", "-")
    mean = sweep.minimax.mean(axis=0)
    setting = (f"{name} on {label}, N = {p.n_clients}, M = {p.n_blocks}, C = {sweep.runs[0].C}; floor "
               f"(1/M) sum_m F_m* - F* = {sweep.floor:.4g}")
    bound_name, rate_name = f"explicit bound, {label}, {name}", f"rate O(1/sqrt(NT)), {label}, {name}"
    bound = convergence.check_upper_bound(
        f"ding2020.{a}/{tag}/bound", sweep.nt, sweep.minimax, bound_scale * sweep.bounds, hypotheses=sweep.hypotheses,
        notes=f"{setting}: (1/M) sum_m F_m(predictor_m) - F(x*) at the end of each run against "
        f"{_scaled(bound_scale)}the explicit form",
    )
    informative, uninformative = [], []
    if np.any(mean > 0):
        informative.append((bound_name, bound))
    else:
        uninformative.append(Uninformative.of(bound_name, bound, (
            f"the mean mini-max gap is <= 0 at all {mean.size} points (largest {mean.max():.4g}), so it stays below "
            "any positive bound whatever the algorithm does")))
    nonpositive = int(np.any(sweep.minimax <= 0, axis=0).sum())
    if nonpositive == 0:
        informative.append((rate_name, convergence.check_rate_exponent(
            f"ding2020.{a}/{tag}/rate", sweep.nt, sweep.minimax, claimed_exponent=claimed_exponent,
            tolerance=RATE_TOLERANCE,  # 0.05 = 10% of the claimed -1/2: slower than (NT)^-0.45 is not O(1/sqrt(NT))
            hypotheses=sweep.hypotheses, notes=f"{setting}: exponent in N T of the mini-max gap")))
    else:
        reason = (f"the mini-max gap is <= 0 for some seed at {nonpositive} of {mean.size} points (largest mean "
                  f"{mean.max():.4g}): an O(1/sqrt(NT)) upper bound holds trivially there and no power law can be "
                  "fitted")
        uninformative.append(Uninformative(rate_name, reason, f"no fit: {setting}", Verdict(
            f"ding2020.{a}/{tag}/rate", Status.INCONCLUSIVE, math.nan, claimed_exponent, None, sweep.hypotheses,
            f"uninformative: {reason}. {setting}", {"x": sweep.nt.tolist(), "mean": mean.tolist()})))
    return informative, uninformative


def _mc_block_checks(sweep: _GapSweep, claimed_exponent: float) -> list[tuple[str, Verdict]]:
    """Thm 2, eq. 20 on blocks far apart: F_m(u~_m) - F_m(x_m*) <= O(sqrt(M/(NT))) for every m, an
    exponent -1/2 in N T at fixed M, and so for their mean, the excess over the floor."""
    p = sweep.problem
    checks = [("excess over the floor, blocks apart, MC-PSGD", convergence.check_rate_exponent(
        "ding2020.mc/apart/excess", sweep.nt, np.maximum(sweep.excess, 0.0), claimed_exponent=claimed_exponent,
        tolerance=RATE_TOLERANCE,  # 10% of the claimed -1/2, as the mini-max rate
        hypotheses=sweep.hypotheses,
        notes=f"G - floor = (1/M) sum_m F_m(u~_m) - F_m(x_m*) on blocks far apart (N = {p.n_clients}, "
        f"M = {p.n_blocks}) "
        "against N T: the mean of eq. 20's per-block gaps (the clip at 0 removes rounding only)",
    ))]
    for m in range(p.n_blocks):
        checks.append((f"per-block rate, block {m + 1}", convergence.check_rate_exponent(
            f"ding2020.mc/block{m + 1}", sweep.nt, np.maximum(sweep.block[:, :, m], 0.0),
            claimed_exponent=claimed_exponent, tolerance=RATE_TOLERANCE,  # 10% of the claimed -1/2, as above
            hypotheses=sweep.hypotheses,
            notes=f"F_m(u~_m) - F_m(x_m*) for block m = {m + 1} against N T (eq. 20: O(sqrt(M/(NT))))",
        )))
    return checks


def _measured_rates(sweep: _GapSweep) -> list[dict[str, Any]]:
    """MM-PSGD on blocks far apart: fitted exponents in N T of the excess and the per-block gaps.

    Measured evidence, not checks: Theorem 1 gives them no rate (module docstring)."""
    series = [("excess over the floor", sweep.excess)] + [
        (f"block {m + 1}: F_m(x~_m) - F_m(x_m*)", sweep.block[:, :, m]) for m in range(sweep.problem.n_blocks)]
    rows = []
    for label, values in series:
        fit = convergence.fit_rate(sweep.nt, np.maximum(values, 0.0))
        rows.append({"quantity": label, "exponent": fit.exponent, "lo": fit.interval[0], "hi": fit.interval[1],
                     "mean at the largest N T": float(values.mean(axis=0)[-1]), "interval": fit.method})
    return rows


def evaluate_theorem(algorithm: str, settings: VerifySettings, plan: DingTheoremPlan) -> ClaimResult:
    claimed_exponent, bound_scale, identical_instance = plan.claimed_exponent, plan.bound_scale, plan.identical_instance
    instances = ([instance(plan.N, plan.M)] + [instance(plan.N, plan.M, identical_blocks=True)] * identical_instance
                 + [shared_minimiser_instance(plan.N, plan.M)] * plan.shared_minimiser)
    apart, *rest = _sweeps(algorithm, instances, settings, plan)
    identical, shared = rest[:identical_instance], rest[identical_instance:]
    checks, uninformative = [], []
    for sweep, label in ([(s, "identical blocks") for s in identical] + [(s, SHARED_LABEL) for s in shared]
                         + [(apart, "blocks apart")]):
        informative, skipped = _minimax_checks(sweep, label, claimed_exponent, bound_scale)
        checks += informative
        uninformative += skipped
    if algorithm == "mc":
        checks += _mc_block_checks(apart, claimed_exponent)
    claim_id = "ding2020.thm1" if algorithm == "mm" else "ding2020.thm2"  # with parameters: Claim.evaluate's variant_id
    paper = paper_setting_note(algorithm)
    verdict = combine_checks(claim_id, checks, notes=f"Headline: {checks[0][0]}. {paper}" if checks else paper,
                             uninformative=uninformative)
    labelled = [("blocks apart", apart)] + [("identical blocks", s) for s in identical] + [(SHARED_LABEL, s) for s in shared]
    verdict = verdict.with_evidence(
        constants=[dict(instance=label, **c.to_json()) for label, sweep in labelled for c in sweep.constants],
        floor={label: sweep.floor for label, sweep in labelled},
        excess_over_floor={"x": apart.nt.tolist(), "mean": apart.excess.mean(axis=0).tolist(),
                           "minimax_mean": apart.minimax.mean(axis=0).tolist()},
    )
    if algorithm == "mm":
        verdict = verdict.with_evidence(measured_rates_blocks_apart=_measured_rates(apart))
    on_paper = paper_hypotheses(algorithm)
    verdict = verdict.with_evidence(
        paper_setting=dict(PAPER_SETTING, hypothesis_met=all(h.met for h in on_paper),
                           hypotheses=[{"name": h.name, "met": h.met, "detail": h.detail} for h in on_paper]),
        planted={"claimed_exponent": claimed_exponent, "bound_scale": bound_scale,
                 "identical_instance": identical_instance, "shared_minimiser": plan.shared_minimiser},
    )
    return ClaimResult(verdict, _plots(apart, checks, claimed_exponent))


def _plots(apart: _GapSweep, checks: list[tuple[str, Verdict]], claimed_exponent: float) -> tuple[PlotSpec, ...]:
    """Identical blocks (when their rate sub-check ran): the mini-max gap with its fit, the bound
    and the claimed rate. Blocks apart: the excess over the floor and the per-block gaps against
    -floor (G < 0 while excess < -floor)."""
    a, name = apart.algorithm, _name(apart.algorithm)
    plots = []
    by_name = dict(checks)
    rate_check = by_name.get(f"rate O(1/sqrt(NT)), identical blocks, {name}")
    if rate_check is not None:
        bound_check = by_name[f"explicit bound, identical blocks, {name}"]
        plots.append(rate_plot(
            f"ding2020_{a}_identical", f"Ding et al. {name} on identical blocks: mini-max gap vs N T",
            "(1/M) sum_m F_m(predictor_m) - F(x*) >= 0 (mean over seeds, interval) with the fitted slope, the explicit "
            "bound and the claimed power law through the first point.",
            rate_check, xlabel=r"$NT$", ylabel=r"$\frac{1}{M}\sum_m F_m(\tilde x_m) - F(x^*)$",
            bound=bound_check.evidence["bound"],
            reference=ReferenceRate(claimed_exponent, f"claimed (NT)^{claimed_exponent:g}"),
        ))
    x = apart.nt.tolist()
    curves = [Curve(x, apart.excess.mean(axis=0).tolist(), "excess over the floor, G - floor")]
    curves += [Curve(x, apart.block[:, :, m].mean(axis=0).tolist(), f"block {m + 1}: F_m - F_m*")
               for m in range(apart.problem.n_blocks)]
    curves.append(Curve(x, [-apart.floor] * len(x), "-floor = F* - (1/M) sum_m F_m*"))
    plots.append(CurvesPlot(
        f"ding2020_{a}_apart", f"Ding et al. {name} on blocks far apart: excess over the floor and per-block gaps",
        "Means over seeds. The mini-max gap G = excess + floor is negative while the excess is below -floor, so "
        "G's bound and rate are not tested here; the excess and the per-block gaps are.",
        curves=tuple(curves), xlabel=r"$NT$", ylabel=r"gap (mean over seeds)", logx=True, logy=True,
    ))
    return tuple(plots)

