"""The sub-checks of li2020.thm2 and li2020.thm3 (``thm2``, ``thm3``): FedAvg with partial participation
(Schemes I and II) converges as O(1/T).

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), Sec. 3.3,
Theorems 2 and 3 (proofs in App. B). With Theorem 1's kappa, gamma = max{8 kappa, E}, the step
eta_t = 2/(mu (gamma + t)) decayed per local iteration (``StepSize.li``, the theory's schedule, not the
experiments' per-round decay) and B = sum_k p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2, both state

    E F(w_T) - F* <= kappa / (gamma + T - 1) * (2 (B + C)/mu + mu gamma/2 ||w_1 - w*||^2),      (6)

* Theorem 2, Scheme I (K clients drawn with replacement by p_k, simple average): C = (4/K) E^2 G^2;
* Theorem 3, Scheme II (K clients uniformly without replacement, w <- (N/K) sum_{k in S} p_k w_k,
  balanced data p_k = 1/N assumed): C = (N-K)/(N-1) (4/K) E^2 G^2; for unbalanced data, transformed
  Scheme II (F~_k = N p_k F_k, simple average) with L, mu, sigma_k, G replaced by nu L, varsigma mu,
  sqrt(nu) sigma_k, sqrt(nu) G, nu = N max p_k, varsigma = N min p_k (checked as printed; a direct
  substitution would scale sigma_k^2 and G^2 by up to nu^2, see ``constants.li2020``).

C, eq. 6 and the transformed constants are stated once in ``proofs_check.constants.li2020``
(``li_sampling_C``, ``li_theorem1_bound(c, steps, C)``, ``li_transformed_constants``), beside
Theorem 1's; the hypotheses are Theorem 1's (``hypotheses.li_hypotheses``, on the transformed
constants for transformed Scheme II) plus, for Scheme II, Assumption 6's p_k = 1/N
(``sampling.balanced_weights_hypothesis``).

Instances, their runs and their constants, and the plan: ``sampling``.

Sub-checks of every run (``convergence.check_upper_bound``, ``check_rate_exponent``):
* explicit bound: the expectation E F(w_T) - F* over the sampling and the minibatches is estimated by
  the mean over seeds, and eq. 6 is tested at every record point T by ``check_upper_bound`` (FAIL at
  family-wise level 5% over the T, PASS when every one-sided 95% upper limit is below the bound). Its tightness (mean gap / bound) is
  reported at every T (the sub-check's evidence ``ratio``; a summary in the claim's ``constants``).
  The check takes the gap's ceiling L R^2/2 (``bound_ceilings.gap_ceiling``: minibatch SGD can raise
  F, so F(w_0) - F* is none), the largest gap in the ball that holds w_0 and every iterate: a bound
  at or above it at every T could not fail on the run and is listed as uninformative, never counted;
* rate (balanced instances): the exponent of the mean gap in gamma + T, fitted over the last two
  decades, is <= claimed + RATE_TOLERANCE with its jackknife interval over seeds.
  The gap here is noise-driven, so its exponent is -1 itself (not steeper, as on Theorem 1's
  instances): the tolerance 0.1 is the room the fit's interval needs with 128 seeds (about +-0.03;
  over one decade alone it is about +-0.09, too wide to tell -0.98 from -0.88, so the tail check of
  ``check_rate_exponent`` reads the same two decades), a rate slower than T^-0.9 is not O(1/T). The image
  runs' intervals are about +-0.05 with their 16 seeds (their gap is less noisy relative to its mean).

Measured (default plan, K = 2 on the image instances; tightness = largest mean gap / eq. 6 over T; rate = the
fitted exponent with its 95% interval over seeds, measured with the earlier hull of an OLS and a seed-bootstrap
interval; the jackknife interval rebuilt from the same runs is within 0.001 of it at 128 seeds and about 0.01 wider
on the digits, with the same verdicts; every counted sub-check PASSes):
* synthetic (128 seeds, T = 12,000, gamma = 12): tightness 0.034 / 0.048 (Scheme I, K = 1 / 5), 0.034 / 0.056
  (Scheme II), 0.033 / 0.053 (Scheme I unbalanced, K = 1 / 2), 0.009 / 0.027 (transformed II, gamma~ = 39.5);
  rate -0.98 [-1.01, -0.94], -1.01 [-1.04, -0.98] (Scheme I), -1.00 [-1.04, -0.97], -0.99 [-1.02, -0.96] (II);
* digits (16 seeds, N = 10, 1,000 rows, gamma = 15.6, T = 4,688; transformed gamma~ = 59.6, T = 17,878):
  tightness 0.012 / 0.016 (Scheme I balanced / unbalanced), 0.015 (II), 0.0019 (transformed II, its bound
  down to 0.57 L R^2/2); rate -0.99 [-1.02, -0.95] (I), -0.99 [-1.04, -0.93] (II); Scheme II on the
  unbalanced data (not applicable) reaches ||w - w*|| = 15.8 against 0.2-0.3 for the others;
* Fashion-MNIST (16 seeds, N = 10, 1,000 rows, gamma = 30.7, T = 9,210; gamma~ = 116, T = 34,845):
  tightness 0.0039 / 0.0045 (I), 0.0042 (II), 0.0011 (transformed II, bound down to 0.80 L R^2/2); rate
  -1.00 [-1.05, -0.94] (I), -1.00 [-1.05, -0.95] (II); Scheme II unbalanced reaches ||w - w*|| = 29.
With C dropped (C_scale = 0) the image bounds still hold (tightness 0.05 on the digits' quick plan): C bites
on the synthetic balanced instance only. CPU (user + sys, both claims, default mode, 2 loaded cores): 29.7 s
without the image instances, 35.9 s with the digits, 43.6 s with Fashion-MNIST (quick: 17.7, 24.2 and 27.8 s).
The full plan (the paper's N = 100, K = 10, 32 image seeds; Table 2's rows on Fashion-MNIST, 16 per device on
the digits) PASSes on both. Fashion-MNIST (gamma = 32, T = 9,666; gamma~ = 226, T = 67,802): tightness 0.0056
(I balanced and unbalanced), 0.0058 (II), 0.0009 (transformed II), rate -1.00 [-1.03, -0.96] (I) and -0.99
[-1.02, -0.95] (II); Scheme II unbalanced reaches ||w - w*|| = 4.8e4; 386 s CPU for both claims' full plans,
synthetic grid included (with 16 image seeds II's rate was undecided, -0.96 [-1.01, -0.898], hence 32).
The digits (gamma = 16, T = 4,893; gamma~ = 84, T = 25,219): tightness 0.006 (I, II), 0.0009 (transformed II),
rate -0.99 [-1.03, -0.96] (I) and -0.99 [-1.02, -0.95] (II); 203 s CPU.

Runs with E > 1 (``sampling``'s docstring; default and quick plans, balanced instance, K = 1, 8 seeds, T = 60,000 =
5,000 gamma): eq. 6 PASSes with tightness 0.0084 / 0.0011 / 0.00025 (Scheme I, E = 2 / 5 / 10) and 0.0081 / 0.0010
/ 0.0002 (Scheme II); its smallest value is 0.012-0.015 / 0.13-0.14 / 0.67 x L R^2/2, so every one can fail. The
E-terms carry 0.9968-0.9970 / 0.99967 / 0.99992 of B + C (the drift term 0.33 / 0.56 / 0.62, C 0.66 / 0.44 /
0.38): without the drift term the tightness would be 0.013 / 0.0026 / 0.00065, with C's E^2 written E 0.013 /
0.0018 / 0.00038 (Scheme I; Scheme II 0.012 / 0.0024 / 0.00053 and 0.012 / 0.0016 / 0.00031), far below 1, so
those variants cannot fail eq. 6 (``sampling_steps``). Each run's table gives these shares and tightnesses. The
proof steps at E = 10 (``sampling_steps``: Lemma 3 for B's drift term, Lemma 5 for C, 16 traced seeds): Lemma 3
uses 0.153, Lemma 5 0.150 (Scheme I) and 0.154 (Scheme II) of their bounds; planted, the zero drift term and
eta_t^2 C / 10 FAIL there (``verify --power``).

Planted false variants change the plan's constants (``sampling.Li2020SamplingPlan``):
``C_scale`` multiplies C (0: C dropped, Theorem 1's bound, false at K = 1 on the balanced instance),
``bound_scale`` multiplies eq. 6, ``claimed_exponent`` replaces -1, ``drift_scale`` multiplies B's drift term
8 (E-1)^2 G^2 and ``C_E_power`` replaces C's power of E (both in eq. 6 and in their proof steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis, Uninformative, Verdict

from ... import constants, lemmas
from ...framework.claim import ClaimResult
from ...framework.evaluation import PlantedParameters, claim_optimum, combine_checks
from ...framework.plot_specs import Curve, CurvesPlot
from .hypotheses import li_hypotheses
from .sampling import (
    BATCH_SIZE, LOCAL_STEPS, Li2020SamplingPlan, SamplingRun, sampling_constants, sampling_schedule,
)
from .sampling_steps import C_TIGHTNESS, DRIFT_TIGHTNESS, step_checks

if TYPE_CHECKING:
    from convergence import FedAvgExtras, RunResult, StepSize
    from problems import FederatedProblem, Optimum

    from ...constants.li2020 import LiConstants
    from ...framework.settings import VerifySettings

__all__ = ["evaluate_sampling", "RATE_TOLERANCE", "RECORD_POINTS", "IMAGE_RECORD_POINTS", "SHARE"]

RATE_TOLERANCE = 0.1
"""Room above the claimed exponent (module docstring: the noise-driven gap's exponent is -1 itself)."""
RECORD_POINTS = 60
"""About this many log-spaced record rounds per run (the rate fit's two decades hold about 25)."""
RATE_DECADES = 2.0
"""The rate is fitted over the last RATE_DECADES decades of gamma + T."""
IMAGE_RECORD_POINTS = 30
"""About this many record rounds per image run: each costs a pass over the instance's rows per seed (on
Fashion-MNIST the largest cost beside the kernel); the rate fit's two decades still hold about 20."""


@dataclass(frozen=True)
class _Checked:
    """What one run gives its claim: the counted checks, the uninformative ones, its table row and curves."""

    checks: list[tuple[str, Verdict]]
    uninformative: list[Uninformative]
    table: dict
    curves: tuple[Curve, Curve]


SHARE = "E-terms' share of B + C ((8 (E-1)^2 G^2 + C) / (B + C))"
"""The table key of the share of eq. 6 that its E-terms carry on a run with E > 1."""


def _eq6_bound(c: LiConstants, steps: np.ndarray, C: float, drift_scale: float) -> np.ndarray:
    """Eq. 6 with C and B's drift term 8 (E-1)^2 G^2 times ``drift_scale`` (1 in the paper)."""
    drift = 8 * (c.local_steps - 1) ** 2 * c.G_sq
    return constants.li_theorem1_rate_bound(c.kappa, c.mu, c.gamma, c.B - (1.0 - drift_scale) * drift + C,
                                            c.init_dist_sq, c.gamma + steps)


def _local_steps_row(c: LiConstants, C: float, gap: np.ndarray, steps: np.ndarray) -> dict:
    """What a run with E > 1 shows of eq. 6's E-terms (``sampling_steps``' docstring): their share of
    B + C, and the tightness eq. 6 would have without the drift term or with C's E^2 written E."""
    E, drift = c.local_steps, 8 * (c.local_steps - 1) ** 2 * c.G_sq
    mean = gap.mean(axis=0)
    return {SHARE: (drift + C) / (c.B + C),
            "drift term's share (8 (E-1)^2 G^2 / (B + C))": drift / (c.B + C), "C's share (C / (B + C))": C / (c.B + C),
            "tightness without the drift term (planted, holds)": float(np.max(mean / _eq6_bound(c, steps, C, 0.0))),
            "tightness with C's E^2 written E (planted, holds)": float(np.max(mean / _eq6_bound(c, steps, C / E, 1.0)))}


def _check_run(
    claim_id: str, run: SamplingRun, traj: RunResult[FedAvgExtras], problem: FederatedProblem, optimum: Optimum,
    optimum_note: str, schedule: StepSize, plan: Li2020SamplingPlan,
) -> _Checked:
    E = run.local_steps
    radius = float(np.sqrt(np.max(traj.extras.max_radius_sq)))
    c = sampling_constants(problem, optimum, run.participation, radius, float(np.max(traj.extras.max_grad_sq)), E)
    N, K = problem.n_clients, run.participants
    C_true = constants.li_sampling_C(run.theorem_scheme, K, N, E, c.G_sq)
    C = plan.C_scale * C_true * float(E) ** (plan.C_E_power - 2)
    steps = traj.steps.astype(float)
    bound = plan.bound_scale * _eq6_bound(c, steps, C, plan.drift_scale)
    hypotheses = li_hypotheses(c, schedule, int(steps[-1]), run.label)
    if run.participation == "scheme_ii":
        h = lemmas.balanced_weights_hypothesis(problem.weights)
        hypotheses += (Hypothesis(f"[{run.label}] {h.name}", h.met, h.detail),)
    ceiling = constants.gap_ceiling(float(problems.problem_constants(problem).L_global), radius, f"FedAvg ({run.participation}) with "
                          f"minibatch-{BATCH_SIZE} SGD steps")
    top = float(ceiling.value)
    planted = "" if plan.bound_scale == 1.0 else f" x {plan.bound_scale:g} (planted)"
    planted_C = "" if plan.C_scale == 1.0 else f" (C x {plan.C_scale:g}: planted)"
    planted_E = "".join(text for text, on in (
        (f"; planted: B's drift term x {plan.drift_scale:g}", plan.drift_scale != 1.0 and E > 1),
        (f"; planted: E^{plan.C_E_power} in C", plan.C_E_power != 2 and E > 1)) if on)
    where = (f"{run.label}, E = {E}, batch {BATCH_SIZE}, {traj.gap.shape[0]} seeds, T up to {int(steps[-1])}, "
             f"eta_t = 2/(mu (gamma + t)) per local iteration (mu = {schedule.mu:.4g}, gamma = {schedule.gamma:.4g})")
    name = f"explicit bound (eq. 6), {run.label}"
    upper = convergence.check_upper_bound(
        f"{claim_id}/{run.label}/bound", steps, traj.gap, bound, hypotheses=hypotheses, ceiling=ceiling,
        notes=f"{where}; E F(w_T) - F* estimated by the mean over seeds, tested against eq. 6{planted} with B = "
        f"{c.B:.6g} and C = {C:.6g}{planted_C}{planted_E} at every record point. The bound's smallest value is "
        f"{np.min(bound) / top:.3g} x the gap's ceiling L R^2/2 = {top:.4g}. The gap is measured against the "
        f"{optimum_note}.",
    )
    checks: list[tuple[str, Verdict]] = []
    uninformative: list[Uninformative] = []
    applicable = all(h.met for h in hypotheses)
    if not applicable:
        unmet = "; ".join(f"{h.name} ({h.detail})" for h in hypotheses if not h.met)
        uninformative.append(Uninformative.of(name, upper, f"not applicable: unmet hypothesis {unmet}; largest "
                                              f"||w_t^k - w*|| = {radius:.4g}"))
    else:  # combine_checks lists it as uninformative if it lies beyond the ceiling at every T
        checks.append((name, upper))
    table = {
        "run": run.label, **c.as_dict(), "K": K, "N": N, "C": C, "T": int(steps[-1]), "seeds": traj.gap.shape[0],
        "bound tightness (max gap/bound)": upper.measured,
        "gap/bound at T": {str(int(T)): float(r) for T, r in list(zip(steps, upper.evidence["ratio"]))[::10]},
        "min bound / (L R^2/2)": float(np.min(bound) / top), "applicable": applicable,
        "final mean gap": float(np.mean(traj.gap[:, -1])), "data": problem.name,
    }
    if E > 1:
        table.update(_local_steps_row(c, C_true, traj.gap, steps))
    if run.participation == "transformed_scheme_ii":
        nu, varsigma = constants.li_transform_factors(problem.weights)
        table.update({"nu = N max p_k": nu, "varsigma = N min p_k": varsigma,
                      "nu^2 (direct substitution's factor on sigma_k^2, G^2)": nu**2})
    if run.rate:
        horizon = c.gamma + steps
        rate = convergence.check_rate_exponent(
            f"{claim_id}/{run.label}/rate", horizon, traj.gap, claimed_exponent=plan.claimed_exponent,
            tolerance=RATE_TOLERANCE, fit_from=float(horizon[-1]) / 10**RATE_DECADES, tail_decades=RATE_DECADES,
            hypotheses=hypotheses,
            notes=f"{where}; exponent of the mean gap in gamma + T over the last {RATE_DECADES:g} decades, jackknife "
            "interval over seeds.",
        )
        checks.append((f"rate exponent <= {plan.claimed_exponent:g}, {run.label}", rate))
        table["rate exponent"] = rate.measured
    unmet_note = "" if applicable else " (hypothesis unmet: not applicable)"
    along = tuple(c.gamma + steps)  # each run against its own gamma (gamma~ for transformed Scheme II)
    short = f"{run.participation}, K = {K}" + ("" if E == LOCAL_STEPS else f", E = {E}")
    curves = (Curve(along, tuple(traj.gap.mean(axis=0)), f"{short}: mean gap"),
              Curve(along, tuple(bound), f"{short}: eq. 6{planted}{unmet_note}"))
    return _Checked(checks, uninformative, table, curves)


def evaluate_sampling(
    claim_id: str, theorem: str, runs: tuple[SamplingRun, ...], settings: VerifySettings, plan: Li2020SamplingPlan,
    step_scheme: str,
) -> ClaimResult:
    """Every run of ``runs`` with its sub-checks (module docstring), one sweep, and the proof steps of
    ``step_scheme`` at the plan's largest E (``sampling_steps``); the headline is the first counted bound
    check (the balanced instance at the first K of the plan, unless uninformative)."""
    instances = tuple(dict.fromkeys(r.instance for r in runs))
    built = {inst.label: problems.build_problem(inst.spec) for inst in instances}
    optima = {label: claim_optimum(problem) for label, problem in built.items()}
    schedules = [sampling_schedule(built[r.instance.label], r.participation, r.local_steps) for r in runs]
    requests = []
    for run, schedule in zip(runs, schedules):
        if run.instance.image:  # the run's own gamma (sampling's docstring)
            rounds, seeds, records = int(np.ceil(plan.image_horizon * schedule.gamma / LOCAL_STEPS)), plan.image_seeds, \
                IMAGE_RECORD_POINTS
        elif run.local_steps != LOCAL_STEPS:  # E > 1: long enough for eq. 6 to fall below the ceiling
            rounds = int(np.ceil(plan.E_horizon * schedule.gamma / run.local_steps))
            seeds, records = plan.E_seeds, RECORD_POINTS
        else:
            base_gamma = sampling_schedule(built[run.instance.label], "scheme_i").gamma  # Theorem 1's, untransformed
            rounds, seeds, records = int(np.ceil(plan.horizon * base_gamma / LOCAL_STEPS)), plan.seeds, RECORD_POINTS
        algorithm = convergence.FedAvgConfig(run.local_steps, rounds, schedule, BATCH_SIZE, 1.0, convergence.log_spaced_rounds(rounds, records),
                                 tuple(range(seeds)), participation=run.participation, participants=run.participants)
        requests.append(convergence.RunRequest(convergence.RunConfig(run.instance.spec, algorithm), optima[run.instance.label][0], track=True))
    results = convergence.execute(requests, settings.sweep_options(), description=claim_id)
    checks, uninformative, tables, plots = [], [], [], []
    curves: dict[str, list[Curve]] = {}
    for run, schedule, traj in zip(runs, schedules, results):
        problem = built[run.instance.label]
        optimum, note = optima[run.instance.label]
        checked = _check_run(claim_id, run, traj, problem, optimum, note, schedule, plan)
        checks += checked.checks
        uninformative += checked.uninformative
        tables.append(checked.table)
        curves.setdefault(run.instance.label, []).extend(checked.curves)
    for inst in instances:
        label = inst.label
        plots.append(CurvesPlot(
            f"{claim_id.replace('.', '_')}_{inst.slug}",
            f"Li et al. {theorem} on the {label} instance: gap vs gamma + T with eq. 6",
            f"Mean gap E F(w_T) - F* over {plan.image_seeds if inst.image else plan.seeds} seeds ({plan.E_seeds} for "
            "E > 1) against gamma + T (T local steps, gamma the run's own: gamma~ for transformed Scheme II, max{8 "
            "kappa, E} for E > 1), with the explicit bound of eq. 6 for each scheme, K and E "
            f"({label}; E = {LOCAL_STEPS} unless named, batch {BATCH_SIZE}, eta_t = 2/(mu (gamma + t))).",
            curves=tuple(curves[label]), xlabel=r"$\gamma + T$ (local steps)", ylabel=r"$F(w_T) - F^*$", logx=True,
            logy=True,
        ))
    steps_checks, steps_table = step_checks(step_scheme, max(plan.E), settings, plan.drift_scale, plan.C_E_power)
    checks += steps_checks
    planted = PlantedParameters.of(("bound_scale", plan.bound_scale, 1.0), ("C_scale", plan.C_scale, 1.0),
                                   ("claimed_exponent", plan.claimed_exponent, -1.0),
                                   ("drift_scale", plan.drift_scale, 1.0), ("C_E_power", plan.C_E_power, 2))
    tightness = ", ".join(f"{t['run']}: {t['bound tightness (max gap/bound)']:.3g}" for t in tables)
    shares = ", ".join(f"E = {t['E']}: {t[SHARE]:.4f} (tightness {t['bound tightness (max gap/bound)']:.2g})"
                       for t in tables if SHARE in t)
    image_note = "".join(
        f" {inst.label}: {built[inst.label].notes} Its lambda = {plan.image_l2:g} is not the paper's 1e-4 (eq. 6 "
        "holds for any mu > 0; with 1e-4, gamma = 8 kappa is 1e5 steps and more, beyond any affordable horizon); its "
        f"runs take {plan.image_seeds} seeds and T = {plan.image_horizon:g} x the run's own gamma."
        for inst in instances if inst.image)
    counted = [(name, v) for name, v in checks if not v.cannot_fail]
    headline = next(((name, v) for name, v in counted if name.startswith("explicit bound")),
                    counted[0] if counted else None)
    headline_note = "" if headline is None else f"Headline: {headline[0]} (the largest mean gap / bound over T). "
    verdict = combine_checks(
        claim_id, checks, headline=None if headline is None else headline[1], uninformative=uninformative,
        notes=f"{planted.note()}{headline_note}"
        f"E F(w_T) - F* is the mean over seeds, compared with eq. 6 by one-sided 95% limits (FAIL at family-wise 5% "
        f"over T). Bound tightness (max gap/bound) per run: {tightness}. Share of B + C that the E-terms "
        f"(8 (E-1)^2 G^2 + C) carry on the runs with E > 1: {shares}; eq. 6 without the drift term or with C's E^2 "
        "written E still holds there (their tightness is in the table; why: sampling_steps), so those variants are "
        f"planted on the proof steps that carry E, traced at E = {max(plan.E)}: Lemma 3 (B's drift term) uses "
        f"{steps_table[DRIFT_TIGHTNESS]:.3g} of its bound, Lemma 5 (C) {steps_table[C_TIGHTNESS]:.3g}.{image_note}",
    )
    return ClaimResult(planted.mark(verdict.with_evidence(constants=tables, proof_steps=steps_table)), tuple(plots))
