"""li2020.eq8: the rounds FedAvg needs to reach an accuracy first decrease, then increase in E.

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), Sec. 3.4
eq. 8 and App. D.2 ("The impact of E", Fig. 1a). From Theorem 2's bound, the rounds T_eps / E to an
eps accuracy are roughly

    T_eps / E  ∝  h(E) = (1 + 1/K) E G^2 + A / E + G^2,    A = sum_k p_k^2 sigma_k^2 + L Gamma + kappa G^2,   (8)

a function that first decreases, then increases, with its minimum at

    E*_theory = sqrt(A / ((1 + 1/K) G^2)).

Measured (Fig. 1a's experiment, runs of ``choices``): FedAvg with Scheme I, K clients per
round, eta_0 / (1 + round), on each instance over a grid of E, seeds 0..S-1; the target is
F(w) <= F* + target_fraction (F(w_0) - F*) (the paper picks a target a little above the smallest
loss its runs found: 0.95 against 0.7999 on synthetic(0,0); our instances differ, so the target is
stated relative to the initial gap), and R_s(E) is the first round whose global model reaches it
(a run that does not reach it within the plan's rounds counts as rounds + 1, a lower bound).

The check (``check_optimum_location``, paired over seeds): with C the grid points where the claim
puts E* (the interior: every E but the smallest and the largest) and O the others,
* PASS when the best claimed point c* (smallest mean rounds over C) needs significantly fewer rounds
  than every point of O: one-sided paired Student-t tests of R(o) - R(c*) > 0 at level
  alpha / |C| each (Bonferroni over the |C| candidates c* was chosen from, so choosing E* on the
  same seeds cannot make a flat curve look U-shaped; the intersection over O needs no correction);
* FAIL when the best point o* of O needs significantly fewer rounds than c*: R(c*) - R(o*) > 0 at
  level alpha / |O|, i.e. when ``p_fail`` = min(1, |O| p) <= alpha, p the one-sided paired Student-t
  p-value (Bonferroni over the |O| points o* was chosen from; p_fail = 1 when o* missed the target in
  some seed: its rounds are then only a lower bound);
* INCONCLUSIVE otherwise.
Each instance is one sub-check; the claim combines them with Holm over their ``p_fail``
(``combine_checks``: three on the default plan), so a FAIL that does not survive the correction
counts as INCONCLUSIVE and the notes say so.
A run that misses the target has censored rounds (a lower bound), which makes a comparison
conservative when it is the point claimed worse and not otherwise: a PASS needs every seed of c* to
reach the target, a FAIL every seed of o*.
alpha = 0.05. E counts local SGD steps (``choices.E_READING``); the authors' code plots Fig.
1a's axis in steps too, so its E grid is in steps under both readings of E. Planted false variants claim E* at the grid's smallest E ("local steps do not
help") or its largest ("rounds fall monotonically in E: no optimum").

Eq. 8 against the measurement (evidence, not counted: eq. 8 is a proportionality with an unknown
constant): L, mu (so kappa = L/mu), Gamma, sigma_k^2 and G^2 of ``constants.li2020`` (sigma_k^2
and G^2 are upper estimates: sups over the ball around w* that holds every local iterate of every
run, so G^2 is a loose bound), E*_theory against the measured E*, and the least-squares scale c of
the mean rounds against h(E) over the grid, c = sum_E R(E) h(E) / sum_E h(E)^2, with its relative
residual ||R - c h|| / ||R||.

The image instance (``choices``: Li's unbalanced MNIST recipe, "auto" data). Fig. 1a's
setting scaled to the budget: N = 20 devices (the paper: 100; the plan's N, shared with the
synthetic instances), K = 6 (K/N = 0.3 as 30 of 100), b = 64, eta_0 = 0.1 per source pixel (16 x
0.1 = 1.6 on 4 x 4-pooled 28 x 28 images, 64 x 0.1 = 6.4 on the digits' 16 features), the plan's
E grid {5, 20, 50, 200, 1000} and 35 rounds, target F* + 0.3 (F(w_0) - F*) (the paper's target on
unbalanced MNIST, 0.29 against a best loss 0.2591, is far tighter: hundreds of rounds). Measured
(default plan, 6 seeds; mean rounds at E = 5 / 20 / 50 / 200 / 1000, 36 = no seed reached):

* Fashion-MNIST (12,573 rows, 400-1,399 per device): 36 / 23.2 / 16 / 13.7 / 16, measured E* =
  200, eq. 8's E* = 161 (ratio 0.81), scaled shape's relative residual 0.45. INCONCLUSIVE: E =
  1000 needs 2.3 more rounds than E* = 200 on average, not significant at 0.05/3 with 6 seeds (the
  rounds at E >= 100 are set mostly by which clients Scheme I draws, the same in every run of a
  seed). With 16 seeds: 36 / 22.8 / 15.7 / 13.8 / 16.5, E = 1000 - E = 200 = 2.69 rounds, 96.7%
  interval [0.47, 4.91]: PASS (``li2020.eq8[seeds=16]``).
* The digits (320 rows, 10-34 per device): 36 / 24 / 19.7 / 16.5 / 25.2, E* = 200, eq. 8's E* =
  94 (ratio 0.47), relative residual 0.41: PASS.

The step rule matters and is not tuned: at eta_0 = 0.1 on Fashion-MNIST's pooled features (no
scaling) no E reaches the target in 35 rounds but E = 200 in 4 seeds of 6; on the digits at 0.4 (the
2 x 2 pooling alone) only E = 1000 reaches it (21.0 rounds), at 1.6 E = 200 and 1000 (21.2, 17.8):
rounds fall monotonically over the grid.

The balanced image instance (``choices``: Li's balanced MNIST recipe, every device the same number of
rows of two labels, b = 64, the same data, step rule, K, rounds and target as the unbalanced one).
Fig. 1a plots four curves, balanced MNIST among them (the authors' ``plot/plot_E.py``: ``FIG1A_BALANCED``,
120 rounds at E = 100 steps falling to 20 at 1,250 and 1,500, with the target 0.50 against a best
loss 0.3429, App. D.2), and the paper says the trade-off "does not appear in mnist balanced dataset.
The reason ... requires future investigations" (Sec. 3.4). Eq. 8 does not depend on balance, so the
claim checks eq. 8's prediction there too (claimed_optimum, an interior E*), and the paper's remark
is a variant (``balanced_optimum`` = "largest", on the balanced instance alone: the fewest rounds at
the grid's largest E, what Fig. 1a's balanced curve shows on its grid). Measured on the digits
(320 rows, 16 per device; default plan, 6 seeds): 36 / 24.8 / 17.3 / 17.0 / 28.3, E* = 200,
eq. 8's E* = 91 (ratio 0.46), relative residual 0.39: PASS, and the paper's remark FAILs (E = 200
needs 11.3 fewer rounds than E = 1000; p_fail = 0.004 before Holm): on the digits the trade-off
appears on balanced data too. On Fashion-MNIST (an earlier measurement, not re-run here): 36 /
23.5 / 16.7 / 12.3 / 14.7, E* = 200, INCONCLUSIVE at 6 seeds. No MNIST files were on the machines
this was measured on, so whether the remark holds on MNIST under these plans is not known; the
variant's card says so. Cost of the balanced instance on the digits, default plan: 5.1-7.1 s of CPU (two
evaluations in one process, warm Numba cache, load 7 on 2 cores), its problem and exact optimum included.

Cost (whole process, median of 3, machine at load 6-8 on 2 cores): the image instance alone on
Fashion-MNIST takes 31.9 CPU s (77 s wall under that load; estimated ~18 s on 2 quiet cores), of
which the problem (loading and pooling the images) about 2 s, the exact optimum at N = 20 about 3 s
and the E = 1000 runs 12.6 s (1.26M local steps and 216 evaluations of F). The full plan on Fashion-MNIST (N = 100, Table 2's
62,864 rows, K = 30, 8 values of E, 200 rounds, 6 seeds), not run: about 68M local steps at ~8.5
us and 9,648 evaluations of F at ~44 ms, about 1,000 CPU s (~8.5 min on 2 cores) for the image
instance alone, estimated from those per-step and per-row costs.

Eq. 8's shape h(E), its E* and the least-squares scale: ``eq8_shape``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
from convergence.verdict import Status, Verdict

from ... import constants
from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, PlanError, parameter
from ...framework.plot_specs import Curve, CurvesPlot
from ...framework.references import LI2020
from .choices import (
    E_READING, FIG1A_INSTANCES, LI_IMAGE_DATA, LossCurves, SchemeIRun, choice_instances, image_note,
    scheme_i_curves,
)
from .eq8_shape import Eq8Constants, eq8_optimal_E, eq8_rounds_shape, fit_scale

if TYPE_CHECKING:
    from convergence.budget import Workload

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "Li2020Eq8Plan", "EQ8_OPTIMUM_CLAIMS", "evaluate", "check_optimum_location", "ALPHA"]

CLAIM_ID = "li2020.eq8"
ALPHA = 0.05
"""The level of the paired tests (family-wise over the Bonferroni-corrected comparisons)."""


EQ8_OPTIMUM_CLAIMS = ("interior", "smallest", "largest")
"""Where li2020.eq8 says the rounds-minimising E* lies in the E grid: strictly inside it (eq. 8's
U-shape), or at its smallest or its largest E (planted false variants: no optimum, monotone rounds)."""


@dataclass(frozen=True)
class Li2020Eq8Plan:
    """li2020.eq8 (Fig. 1a): the E grid and rounds of the Scheme I runs, the instances' size and K,
    the target, the seeds, the image data, and where the optimum E* is claimed to lie."""

    E_grid: tuple[int, ...] = parameter(doc="local steps E of the sweep (at least 3 values: two ends and an "
                                            "interior)", minimum=1)
    rounds: int = parameter(doc="rounds of every run (a run that misses the target counts as rounds + 1: censored)",
                            minimum=1)
    n_clients: int = parameter(doc="clients N of every instance (the paper: 100)", minimum=2)
    participants: int = parameter(doc="K clients drawn per round by Scheme I (Fig. 1a: K = 30 of N = 100)", minimum=1)
    instance: str | None = parameter(doc="run only this instance (None: every one)", choices=FIG1A_INSTANCES)
    eta0: float = parameter(0.1, "eta_0 of the per-round decay eta_0 / (1 + round) (Fig. 1a: 0.1; on the image "
                                 "instance per source pixel, scaled to its pooled features)", above=0)
    dataset: str = parameter("auto", "image data of the image instance (auto: MNIST, else Fashion-MNIST, else the "
                                     "bundled digits)", choices=LI_IMAGE_DATA)
    target_fraction: float = parameter(0.3, "the target accuracy: F(w) <= F* + target_fraction (F(w_0) - F*)",
                                       above=0, maximum=1)
    seeds: int = parameter(6, "seeds of every run (at least 6: the paired tests are Bonferroni-corrected over the "
                              "interior candidates for E*)", minimum=6, from_settings="seeds")
    claimed_optimum: str = parameter("interior", "where E* is claimed to lie in the grid",
                                     choices=EQ8_OPTIMUM_CLAIMS)
    balanced_optimum: str | None = parameter(None, "where E* is claimed on the balanced image instance (None: "
                                                   "claimed_optimum; largest: the paper's remark that the trade-off "
                                                   "does not appear on balanced MNIST)", choices=EQ8_OPTIMUM_CLAIMS)

    def __post_init__(self) -> None:
        if len(self.E_grid) < 3:
            raise PlanError("E_grid", f"needs at least 3 values (two ends and an interior E), got {self.E_grid}")

    def claimed_at(self, label: str) -> str:
        """Where E* is claimed on the instance labelled ``label``: ``balanced_optimum`` on the balanced
        image instance when it is set, else ``claimed_optimum``."""
        if label == BALANCED_LABEL and self.balanced_optimum is not None:
            return self.balanced_optimum
        return self.claimed_optimum

    def workload(self) -> Workload:
        """Scheme I with K participants per E of the grid, every round recorded, on each instance."""
        from ...framework.plan_workloads import runs_workload

        instances = len(FIG1A_INSTANCES) if self.instance is None else 1
        return sum((runs_workload(configs=instances, seeds=self.seeds, rounds=self.rounds, E=E,
                                  clients=self.participants, records=self.rounds + 1) for E in self.E_grid),
                   convergence.Workload())


_CLAIMED_SETS = ("interior", "smallest", "largest")
BALANCED_LABEL = "image balanced"
"""The label of Fig. 1a's balanced MNIST instance (``choices.FIG1A_INSTANCES``)."""
FIG1A_BALANCED = ("Fig. 1a's balanced MNIST curve, the authors' plot/plot_E.py: 120, 50, 39, 28, 27, 22, 21, 20, 20 "
                  "rounds at E = 100, 200, 300, 500, 600, 800, 1000, 1250, 1500 local steps, the fewest at the largest E")
"""What Fig. 1a plots for balanced MNIST (module docstring), quoted on the balanced variant's card."""


def _claimed_points(n: int, claimed: str) -> np.ndarray:
    """Indices of the grid where the claim puts E*: the interior, the smallest or the largest."""
    if claimed == "interior":
        return np.arange(1, n - 1)
    return np.array([0 if claimed == "smallest" else n - 1])


def check_optimum_location(
    claim_id: str, E_grid: tuple[int, ...], rounds: np.ndarray, reached: np.ndarray, claimed: str = "interior",
    alpha: float = ALPHA,
) -> Verdict:
    """Where the rounds-minimising E lies, from rounds (n_E, S) paired over seeds and ``reached``
    (n_E, S) (module docstring): PASS when the best claimed point beats every other point, FAIL
    when some other point beats it, INCONCLUSIVE otherwise. measured = the measured E* (smallest
    mean rounds over the grid; the smallest E among ties), theoretical = NaN (eq. 8 fixes no E* without
    its constants; the claim sets eq. 8's E*); no interval (E* is an argmin over the grid: the intervals are
    those of the paired differences of rounds, in the evidence). evidence: E, mean rounds, reached fraction,
    E*, the claimed set, each comparison's verdict (measured: mean difference of rounds, interval, level)
    and the comparison that decided the verdict (``deciding_comparison``)."""
    rounds = np.asarray(rounds, dtype=np.float64)
    n = len(E_grid)
    if rounds.shape[0] != n or rounds.ndim != 2 or rounds.shape[1] < 2:
        raise ValueError(f"rounds: expected shape ({n}, S >= 2), got {rounds.shape}")
    if n < 3:
        raise ValueError(f"E_grid: needs at least 3 values, got {E_grid}")
    reached = np.asarray(reached)
    if reached.shape != rounds.shape or reached.dtype != bool:
        raise ValueError(f"reached: expected booleans of shape {rounds.shape}, got {reached.dtype} {reached.shape}")
    if claimed not in _CLAIMED_SETS:
        raise ValueError(f"claimed: expected one of {_CLAIMED_SETS}, got {claimed!r}")
    mean = rounds.mean(axis=1)
    inside = _claimed_points(n, claimed)
    outside = np.setdiff1d(np.arange(n), inside)
    best = int(inside[np.argmin(mean[inside])])
    rival = int(outside[np.argmin(mean[outside])])
    measured_star = int(E_grid[int(np.argmin(mean))])
    beats = [convergence.check_ordering(f"{claim_id}/E={E_grid[best]} < E={E_grid[o]}", rounds[best], rounds[o],
                            confidence=1 - 2 * alpha / inside.size) for o in outside]
    beaten = convergence.check_ordering(f"{claim_id}/E={E_grid[rival]} < E={E_grid[best]}", rounds[rival], rounds[best],
                            confidence=1 - 2 * alpha / outside.size)
    p_fail = min(1.0, outside.size * _one_sided_p(rounds[best] - rounds[rival])) if reached[rival].all() else 1.0
    where = {"interior": "strictly inside the grid", "smallest": "at the smallest E", "largest": "at the largest E"}
    summary = ", ".join(f"E = {E}: {m:.4g}" for E, m in zip(E_grid, mean))
    if all(v.status is Status.PASS for v in beats) and reached[best].all():
        status, decisive = Status.PASS, min(beats, key=lambda v: v.interval[0])
        finding = (f"the best claimed E = {E_grid[best]} needs fewer rounds than every other point of the claim's "
                   f"complement (one-sided paired t, level {alpha:g}/{inside.size} each)")
    elif p_fail <= alpha:
        status, decisive = Status.FAIL, beaten
        finding = (f"E = {E_grid[rival]}, outside the claimed set, needs fewer rounds than the best claimed "
                   f"E = {E_grid[best]} (one-sided paired t, level {alpha:g}/{outside.size})")
    else:
        status, decisive = Status.INCONCLUSIVE, beaten
        finding = ("neither the claimed location nor its complement is significantly better, or the point that "
                   "would decide it missed the target in some seed (its rounds are then only a lower bound)")
    notes = (f"E* claimed {where[claimed]}; mean rounds to target over {rounds.shape[1]} paired seeds: {summary}; "
             f"measured E* = {measured_star}. {finding}.")
    evidence = {
        "E": list(E_grid), "mean_rounds": mean.tolist(), "reached_fraction": reached.mean(axis=1).tolist(),
        "measured_E_star": measured_star, "claimed": claimed, "claimed_E": [int(E_grid[i]) for i in inside],
        "comparisons": [{"check": v.claim_id, "status": v.status.value, "mean_difference": v.measured,
                         "interval": list(v.interval), "confidence": v.evidence["confidence"]}
                        for v in (*beats, beaten)],
        "deciding_comparison": decisive.claim_id,
    }
    return Verdict(claim_id, status, float(measured_star), math.nan, None, notes=notes, evidence=evidence,
                   p_fail=p_fail)


def _one_sided_p(differences: np.ndarray) -> float:
    """The one-sided paired Student-t p-value of "E[d] <= 0" against "E[d] > 0" from d (S,), S >= 2; with
    no spread, 0 when d > 0 and 1 otherwise (exact)."""
    n = differences.size
    se = float(differences.std(ddof=1)) / math.sqrt(n)
    mean = float(differences.mean())
    if se == 0.0:
        return 0.0 if mean > 0 else 1.0
    from scipy import stats

    return float(stats.t.sf(mean / se, n - 1))


def _instance_check(curves: LossCurves, plan: Li2020Eq8Plan) -> tuple[Verdict, CurvesPlot, dict]:
    """The location check, eq. 8's comparison and Fig. 1a's plot on one instance's sweep."""
    label = curves.instance.label
    target_gap = plan.target_fraction * curves.initial_gap
    rounds, reached = convergence.rounds_to_target(curves.gap, target_gap)
    verdict = check_optimum_location(f"{CLAIM_ID}/{label}", plan.E_grid, rounds, reached, plan.claimed_at(label))
    measured_star = int(verdict.measured)
    radius = math.sqrt(max(float(np.max(r.extras.max_radius_sq)) for r in curves.results))
    observed = max(float(np.max(r.extras.max_grad_sq)) for r in curves.results)
    li = constants.li_theorem1_constants(curves.problem, curves.optimum, measured_star, curves.instance.batch_size, radius,
                               observed)
    eq8 = Eq8Constants(plan.participants, float(curves.problem.weights**2 @ li.sigma_sq), li.L, li.Gamma,
                             li.kappa, li.G_sq)
    E = np.asarray(plan.E_grid, dtype=np.float64)
    mean_rounds = rounds.mean(axis=1).astype(np.float64)
    fit = fit_scale(mean_rounds, eq8_rounds_shape(E, eq8))
    theory_star = eq8_optimal_E(eq8)
    verdict = dataclasses.replace(verdict, theoretical=theory_star)
    target = curves.F_star + target_gap
    table = {
        "instance": label, "data": curves.problem.name, "N": curves.problem.n_clients, "K": plan.participants,
        "batch": curves.instance.batch_size, "eta_0": curves.eta0, "F*": curves.F_star, "target F": target,
        "mean rounds to target": dict(zip(map(str, plan.E_grid), mean_rounds.tolist())), "measured E*": measured_star,
        "eq. 8 E*": theory_star, "eq. 8 E* / measured E*": theory_star / measured_star, "scale c": fit.scale,
        "relative residual of c h(E)": fit.relative_residual, "L": li.L, "mu": li.mu, "kappa": li.kappa,
        "Gamma": li.Gamma, "sum_k p_k^2 sigma_k^2": eq8.sum_p2_sigma2, "G^2": li.G_sq,
        "R = max ||w - w*||": radius, "G^2 method": li.G_method,
    }
    dense = np.geomspace(E[0], E[-1], 64)
    plot = CurvesPlot(
        f"li2020_eq8_{curves.instance.slug}",
        f"Li et al. eq. 8 / Fig. 1a on {label}: rounds to F(w) <= {target:.4g} vs E",
        f"{curves.problem.name}. Mean rounds over {rounds.shape[1]} seeds for FedAvg (Scheme I, K = "
        f"{plan.participants}, eta_0 = {curves.eta0:g} / (1 + round), b = {curves.instance.batch_size}) to reach F* + "
        f"{plan.target_fraction:g} (F(w_0) - F*); measured E* = {measured_star}; eq. 8's shape scaled by least "
        f"squares (c = {fit.scale:.3g}, relative residual {fit.relative_residual:.2f}), its argmin E* = "
        f"{theory_star:.4g}. The paper: the required rounds first decrease and then increase in E. fedbound: "
        f"{verdict.status.value}.",
        curves=(
            Curve(tuple(E), tuple(mean_rounds), "measured rounds to target (mean over seeds)"),
            Curve(tuple(dense), tuple(fit.scale * eq8_rounds_shape(dense, eq8)), "eq. 8, scaled"),
            Curve((float(measured_star),) * 2, (float(mean_rounds.min()), float(mean_rounds.max())),
                  f"measured E* = {measured_star}"),
        ),
        xlabel="local steps per round E", ylabel="rounds to target", logx=True, logy=True,
    )
    return verdict, plot, table


def evaluate(settings: VerifySettings, plan: Li2020Eq8Plan) -> ClaimResult:
    """The location check on every instance of the plan (headline: the first), with eq. 8's constants,
    E*_theory and scale fit in the evidence; ``plan.claimed_optimum`` other than "interior" plants a
    false variant."""
    runs = tuple(SchemeIRun(E, plan.participants) for E in plan.E_grid)
    checks, plots, tables, data = [], [], [], ""
    for instance in choice_instances(plan.instance, plan.dataset, FIG1A_INSTANCES):
        curves = scheme_i_curves(instance, plan.n_clients, runs, tuple(range(plan.rounds + 1)), plan.eta0,
                                 plan.seeds, settings, f"eq8 {instance.label}")
        verdict, plot, table = _instance_check(curves, plan)
        checks.append((f"E* {plan.claimed_at(instance.label)} ({instance.label})", verdict))
        plots.append(plot)
        tables.append(table)
        data += image_note(curves, plan.eta0)
    comparison = "; ".join(
        f"{t['instance']} ({t['data']}): measured E* = {t['measured E*']}, eq. 8's E* = {t['eq. 8 E*']:.4g} "
        f"(ratio {t['eq. 8 E* / measured E*']:.3g}), scaled shape's relative residual "
        f"{t['relative residual of c h(E)']:.2f}" for t in tables)
    planted = "" if plan.claimed_optimum == "interior" else (
        f"PLANTED FALSE VARIANT (claimed_optimum = {plan.claimed_optimum}); ")
    if plan.balanced_optimum not in (None, plan.claimed_optimum):
        planted += (f"VARIANT on the balanced image instance (balanced_optimum = {plan.balanced_optimum}; "
                    f"largest: the paper's remark on balanced MNIST, {FIG1A_BALANCED}); ")
    verdict = combine_checks(
        CLAIM_ID, checks,
        notes=f"{planted}Headline: the measured E* on {tables[0]['instance']} (the grid value with the fewest mean "
        "rounds to target), against eq. 8's E* with the instance's constants (theoretical). Sub-check per instance: "
        "E* lies where claimed, paired over seeds. Eq. 8 against the "
        f"measurement (evidence, not counted: a proportionality; G^2 and sigma_k^2 are upper estimates): {comparison}. "
        f"Runs use the experiments' per-round decay eta_0 / (1 + round), not Theorem 2's per-step schedule. "
        f"{E_READING}; the authors' code plots Fig. 1a's axis in steps too, so both readings of E agree here.{data}",
    )
    return ClaimResult(verdict.with_evidence(eq8=tables), tuple(plots))


CLAIM = Claim(
    "li2020.eq8", (LI2020,), "Sec. 3.4 eq. 8 and App. D.2 (Fig. 1a)",
    "Rounds to an ε accuracy T_ε/E ∝ (1 + 1/K) E G² + (Σ p_k² σ_k² + LΓ + κG²)/E + G²: they first decrease, "
    "then increase in E, so an optimal E* = √((Σ p_k² σ_k² + LΓ + κG²)/((1 + 1/K) G²)) exists (E local SGD "
    "steps a round, Scheme I, K = 30 of N = 100, η_t = η₀/(1 + round), η₀ = 0.1, b = 24 on synthetic(α, β), b = 64 on both MNIST "
    "sets; Fig. 1a's four data sets: synthetic(0,0), (1,1), unbalanced and balanced MNIST; the paper sees the trade-off "
    "on its unbalanced data sets, not on balanced MNIST: that remark is the variant \"no trade-off on balanced data\").",
    "the measured E* on the first instance (theoretical: eq. 8's E*): the grid value with the fewest mean "
    "rounds to F ≤ F* + "
    "0.3 (F(w₀) − F*); the check: E* strictly inside the grid, paired over seeds",
    evaluate,
    plan=ModePlans(
        quick=Li2020Eq8Plan(E_grid=(5, 50, 1000), rounds=30, n_clients=20, participants=6,
                            instance="synthetic(1,1)"),
        default=Li2020Eq8Plan(E_grid=(5, 20, 50, 200, 1000), rounds=35, n_clients=20, participants=6,
                              instance=None),
        full=Li2020Eq8Plan(E_grid=(5, 10, 20, 50, 100, 200, 500, 1000), rounds=200, n_clients=100,
                           participants=30, instance=None),
    ),
    variants=(
        PlantedVariant("E* = smallest E", "local steps do not help: the fewest rounds at the grid's smallest E "
                       "(measured on the default plan: E = 5 needs 3.1 and 1.7 times the rounds of E* = 200 on "
                       "synthetic(0,0) and (1,1), or misses the target, as on the image instance)",
                       {"claimed_optimum": "smallest"}, sub_check="E* smallest"),
        PlantedVariant("rounds fall monotonically in E", "no optimum: the fewest rounds at the grid's largest E "
                       "(measured: E = 1000 needs 47% and 29% more rounds than E* = 200 on synthetic(0,0) and "
                       "(1,1), 53% on the digits' image instance, 17% on Fashion-MNIST's)",
                       {"claimed_optimum": "largest"}, sub_check="E* largest"),
        PlantedVariant("no trade-off on balanced data", "the paper's remark on balanced MNIST (Sec. 3.4: the "
                       "trade-off \"does not appear in mnist balanced dataset\"; Fig. 1a's balanced curve falls "
                       "monotonically), checked on the balanced image instance alone: the fewest rounds at the grid's "
                       "largest E. False on the digits (measured: E = 1000 needs 28.3 rounds against 17.0 at E* = "
                       "200 on the default grid, 27.2 against 17.3 at E* = 50 on the quick grid); on MNIST files the "
                       "paper's data say it may hold",
                       {"balanced_optimum": "largest", "instance": "image balanced"},
                       sub_check="E* largest (image balanced)"),
    ),
    order=200,
)
