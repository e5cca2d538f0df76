"""yu2019.cnn: Yu et al.'s non-convex Theorem 1 and Corollary 2 for parallel restarted SGD on a CNN.

Source: Yu, Yang, Zhu (AAAI 2019) as restated in the lecture note ``liu_lecture_fl_fedavg.md``
("Convergence Results: FedAvg with I.I.D. Datasets"). For L-smooth, possibly non-convex f, identical
data, step s in (0, 1/L] and a sync every K steps, with xbar_t the average of the local models at
every step,

    (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2
        <= 2/(s T) (f(xbar_0) - f*) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2                        (Thm 1),

and s = sqrt(N) / (L sqrt(T)), K <= T^{1/4} / N^{3/4} make it O(1/sqrt(N T)) (Cor. 2: linear speedup).

Instance (``problems.identical_images``): N clients holding the same ``n_train`` bundled 8x8 digits,
``digits_net`` in float64, f = the mean cross-entropy over those images (so every worker's minibatch
gradient is unbiased for f, Yu's setting; f does not depend on N), minibatches of b images drawn with
replacement, runs from the network's initialisation at each run seed. For each N and T of the plan with
T >= N^3: K = the largest sync interval Cor. 2 allows (``sweep.yu_sync_interval``; T is then rounds K)
and s = sqrt(N) / (L sqrt(T)). The engine tracks (1/t) sum_{tau <= t} ||grad f(xbar_{tau-1})||^2 at
every record point (``PRSGDConfig``: the full-data gradient at the averaged model, float64).

The step's L (``schedule_smoothness``): Cor. 2 needs L before the runs. The estimate at the initial
models (``initial_smoothness``: Hessian power iteration at each seed's initialisation) is far below the
curvature the runs meet (it grows along training, about 1 to 5 over the default horizons), and a step
from it breaks s <= 1/L along the longer runs; so a pilot run (the smallest N, the largest T, with the
initial estimate) is estimated along (``run_constants``) and its L, rounded up to two significant digits
(so the step, hence the run ids, do not hang on the estimate's last bits), sets every run's step.

Constants, ESTIMATES along each run, never certified: a ReLU / max-pool network's loss is only
piecewise smooth (its gradient jumps across kinks), so no finite global L exists and G^2, sigma^2 "for
all x" are not computable. ``trajectory_constants`` gives lower estimates at the points the run
recorded (its averaged models xbar at the record rounds, every seed): L = the largest of the secant
ratios between consecutive recorded models, the Hessian power iteration at the last recorded model of
every seed (radius FD_RADIUS: an effective curvature at the scale of a step) and the initial models'
estimate; G^2 and sigma^2 = the largest exact minibatch moments E||g_b||^2 and
E||g_b - grad f||^2 at the recorded models; f* >= 0 (cross-entropy is non-negative), so f(xbar_0) - 0
(mean over seeds) stands for f(xbar_0) - f*, and the lowest training loss recorded is reported as the
evidence that f* is at most that.

Hypothesis "f L-smooth" (``smoothness_hypothesis``, read off the network's layers): Theorem 1 and
Cor. 2 assume it, and a ReLU or max-pool layer makes the loss only piecewise smooth (its gradient
jumps across the kinks: no finite global L). ``digits_net`` has both, so the hypothesis is UNMET and,
by fedbound's rule for unmet hypotheses, every counted sub-check and the claim are INCONCLUSIVE,
whatever the data say: an O(1/sqrt(NT)) promise made for smooth f is neither confirmed nor refuted
by a non-smooth net. What the data alone give (the pre-asymptotic finding below) stays in each
sub-check's notes and the fitted exponents in the claim's notes. No planted variant: a claim whose
hypothesis is unmet cannot FAIL, so it cannot show power.

Checks (claimed exponent ``plan.claimed_exponent`` = -1/2):

* rate in N T, one per N of ``plan.clients`` (counted): the final (1/T) sum_t ||grad f(xbar_{t-1})||^2
  against N T over the plan's horizons, ``check_rate_exponent`` (95% Student-t interval of the fitted
  slope with the delete-one jackknife over seeds, and the tail fit), threshold -1/2 + 0.05 (``sweep``'s
  RATE_TOLERANCE: slower than (NT)^-0.45 is not O(1/sqrt(NT))). Hypotheses: f L-smooth (above), and
  per run K <= T^{1/4} / N^{3/4} (exact) and s <= 1/L with L the run's estimate (a lower estimate of
  L, so "unmet" is certain and "met" as far as the estimate can tell).
* linear speedup (counted, when ``plan.speedup_clients`` has >= 3 values): the exponent in N of the
  final average at the largest T, the same test.
* Theorem 1's bound (NOT counted: ``Uninformative``) at every record point of the largest-T run of each
  N, ``check_upper_bound`` with the estimated constants. It can neither certify the bound (the loss has
  no finite global L, so the bound with the true constants is not a finite number to hold) nor refute
  it (the constants are lower estimates of the suprema Theorem 1 needs, and larger true constants
  raise the bound): its data-alone verdict, tightness and the L that would restore it with the
  estimated G^2, sigma^2 (``restoring_L``, beside 1/s, the largest L the hypothesis s <= 1/L admits)
  are evidence.

Measured (default plan: N = 1, 2 over T = 32 .. 256, the speedup at T = 256 over N = 1, 2, 4; 64
images, b = 4, 4 seeds): L = 5.5 (pilot estimate 5.44, from 1.1 at the initial models), s L <= 0.5 on
every run (the hypothesis holds as far as the estimates tell); the net barely leaves its initialisation
(f from 2.32 to 2.14-2.20), the average squared gradient norm stays near ||grad f(xbar_0)||^2, about
0.04-0.05, and its exponent in N T is -0.09 in [-0.16, -0.03] (N = 1) and -0.05 in [-0.13, 0.03] (N = 2):
the data alone FAIL both (slower than -0.45), the speedup in N is undecided (0.17 in [-0.94, 1.28]);
Theorem 1's bound with the estimated constants holds with tightness 0.02-0.03. The pre-asymptotic
regime of an O(.) statement (the bound's first term 2 L f0 / sqrt(NT) reaches the measured level only
near N T ~ 10^5 - 10^6), reported, not tuned away; the claim is INCONCLUSIVE (f L-smooth unmet). Cost: about 5 s of CPU with a
warm Numba cache (``farm-bench``, whole process 6.9 s CPU including ~2 s of start-up; 14 s wall at a load
of 7 on 2 cores).

Full plan (N = 1, 2, 4 over T = 64 .. 16384, the speedup over N = 1, 2, 4, 8 at T = 16384; 4 seeds):
933 s wall with jobs = 1 at a load of 7 to 12 on 2 cores. The pilot's L is 15 (3.7 at the initial
models), s L <= 0.04 on every run; the training loss falls to 1.3 (N = 1) and 0.21 (N = 4) at the
largest T, and the average squared gradient norm first dips (0.05 to 0.04) then RISES with N T (0.087
at N T = 16384 for N = 1, 0.128 at 65536 for N = 4) as the net leaves the flat region of its
initialisation: exponents 0.07 in [-0.18, 0.31], 0.15 in [-0.14, 0.44], 0.21 in [-0.03, 0.44] (N = 1, 2,
4), all FAIL by the data alone; the speedup is undecided (0.06 in [-0.55, 0.67]); the estimated bound holds with
tightness 0.09-0.11 (estimated L 19-33, G^2 7-13, sigma^2 7-13). Even N T = 65536 is pre-asymptotic
under Cor. 2's step with this L.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis, Uninformative, Verdict

from ...framework.claim import Claim, ClaimResult
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.plot_specs import rate_plot
from ...framework.references import LIU2022_NOTE, YU2019
from .cnn_estimates import RunConstants, ScheduleL, initial_smoothness, restoring_L, round_up, run_constants
from .sweep import RATE_TOLERANCE, check_cubed_horizons, sweep_pairs, yu_sync_interval, yu_theorem1_bound

if TYPE_CHECKING:
    from convergence import RunResult
    from convergence.budget import Workload
    from problems import ImageClassificationProblem, ProblemSpec
    from problems.models.cnn import ConvNet

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "RECORD_POINTS", "YuCNNPlan", "rate_hypotheses", "schedule_smoothness", "smoothness_hypothesis"]

DATASET, NETWORK = "digits", "digits_net"
RECORD_POINTS = 6
"""Log-spaced record rounds per run besides round 0 (the bound's points and the constants' points)."""


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

    def workload(self) -> Workload:
        """The sweep, the speed-up runs at the largest T and the pilot run (smallest N, largest T), minibatch
        images; PR-SGD tracks the gradient of f (n_train images) at the average at every one of the T steps."""
        from convergence.budget import Workload, pass_workload

        from ...framework.plan_workloads import network_flops_per_image, runs_workload

        T_max = max(self.horizons)
        pairs = set(sweep_pairs(self.clients, self.horizons)) | {(N, T_max) for N in self.speedup_clients}
        pairs = sorted(pairs) + [(min(self.clients), T_max)]
        flops = network_flops_per_image(NETWORK)
        return sum((runs_workload(seeds=self.seeds, rounds=T, clients=N, records=7, rows=self.batch_size,
                                  network_flops=flops)
                    + pass_workload(passes=self.seeds * T, rows=self.n_train, flops_per_row=flops, network=True)
                    for N, T in pairs), Workload())


def _objective(plan: YuCNNPlan) -> ImageClassificationProblem:
    """f: the identical-data problem with one client (every N's clients hold these same images)."""
    return problems.build_problem(_spec(plan, 1))


def _spec(plan: YuCNNPlan, N: int) -> ProblemSpec:
    return problems.problem_spec("identical_images", dataset=DATASET, network=NETWORK, n_clients=N,
                                 n_train=plan.n_train, dtype="float64")


def rate_hypotheses(N: int, T: int, K: int, s: float, L: float) -> tuple[Hypothesis, ...]:
    """Cor. 2's hypotheses on a run of T steps with N workers, sync interval K and step s, with L the
    estimate along the run: K <= T^(1/4)/N^(3/4), and s <= 1/L (L a lower estimate, so "unmet" is
    certain and "met" as far as the estimate can tell)."""
    limit = T**0.25 / N**0.75
    return (
        Hypothesis(f"[N={N}, T={T}] K <= T^(1/4)/N^(3/4)", K <= limit + 1e-12,
                   f"K = {K}, T^(1/4)/N^(3/4) = {limit:.4g}"),
        Hypothesis(f"[N={N}, T={T}] s <= 1/L (L estimated along the run)", s * L <= 1.0,
                   f"s = {s:.4g}, 1/L = {1 / L:.4g} (L = {L:.4g}, a lower estimate)"),
    )


def smoothness_hypothesis(network: ConvNet) -> Hypothesis:
    """Theorem 1's and Cor. 2's "f is L-smooth" for the mean cross-entropy of ``network``: conv and dense
    layers and the cross-entropy are smooth; a ReLU or a max-pool layer makes the loss only piecewise
    smooth (its gradient jumps across their kinks), so no finite global L exists and the hypothesis is
    unmet when the network has one (module docstring)."""
    from problems.models.cnn import MaxPool2d, ReLU

    kinks = sorted({type(layer).__name__ for layer in network.layout.layers if isinstance(layer, (ReLU, MaxPool2d))})
    detail = (f"{network.name} has {' and '.join(kinks)} layers: the loss is only piecewise smooth, its gradient "
              "jumps across their kinks, so no finite global L exists (the L of the step is a local estimate)"
              if kinks else f"every layer of {network.name} is smooth (conv, dense, cross-entropy)")
    return Hypothesis("f L-smooth (Theorem 1, Corollary 2)", not kinks, detail)


@dataclass(frozen=True)
class _Run:
    """One run of the sweep: N, the plan's horizon T_plan, the steps T = rounds K it ran, K, s."""

    N: int
    T_plan: int
    T: int
    K: int
    s: float
    result: RunResult
    constants: RunConstants

    def hypotheses(self) -> tuple[Hypothesis, ...]:
        return rate_hypotheses(self.N, self.T, self.K, self.s, self.constants.L)

    @property
    def final(self) -> np.ndarray:
        """(1/T) sum_t ||grad f(xbar_{t-1})||^2 at the end of the run, per seed (S,)."""
        return self.result.extras.grad_sq_mean[:, -1]


def _execute(settings: VerifySettings, plan: YuCNNPlan, f: ImageClassificationProblem, L: float, L_init: float,
             pairs: list[tuple[int, int]], description: str) -> list[_Run]:
    """PR-SGD at each (N, T) of ``pairs`` with Cor. 2's K (``yu_sync_interval``) and s = sqrt(N) / (L
    sqrt(T)), recorded at round 0 and RECORD_POINTS log-spaced rounds, with the estimates along each."""
    seeds = tuple(range(plan.seeds))
    planned = []
    for N, T in pairs:
        K = yu_sync_interval(T, N)
        rounds = T // K
        config = convergence.PRSGDConfig.yu(N, L, rounds, K, batch_size=plan.batch_size, seeds=seeds,
                                            record_rounds=(0, *convergence.log_spaced_rounds(rounds, RECORD_POINTS)))
        planned.append((N, T, K, convergence.RunConfig(_spec(plan, N), config)))
    results = convergence.execute([convergence.RunRequest(config) for *_, config in planned], settings.sweep_options(),
                                  description=description)
    return [_Run(N, T, config.algorithm.rounds * K, K, config.algorithm.step_size.eta0, result,
                 run_constants(f, result.iterates, plan.batch_size, L_init))
            for (N, T, K, config), result in zip(planned, results)]


def schedule_smoothness(settings: VerifySettings, plan: YuCNNPlan, f: ImageClassificationProblem) -> ScheduleL:
    """The L of Cor. 2's step (module docstring, "The step"): the initial models' estimate, then the
    estimate along a pilot run with it at the smallest N and the largest T, rounded up."""
    L_init = initial_smoothness(f, tuple(range(plan.seeds)))
    pilot = _execute(settings, plan, f, round_up(L_init), L_init, [(min(plan.clients), max(plan.horizons))],
                     "PR-SGD on a CNN: pilot run for L")[0]
    return ScheduleL(L_init, pilot.constants.L, round_up(pilot.constants.L))


def _bound_check(run: _Run, bound_name: str) -> tuple[Uninformative, np.ndarray, dict]:
    """Theorem 1 with the run's estimated constants at its record points, as uncounted evidence."""
    result, c = run.result, run.constants
    keep = result.steps > 0
    steps = result.steps[keep].astype(float)
    terms = dict(s=run.s, K=run.K, N=run.N, G_sq=c.G_sq, sigma_sq=c.sigma_sq, f0=c.f0)
    rhs = yu_theorem1_bound(steps, L=c.L, **terms)
    values = result.extras.grad_sq_mean[:, keep]
    verdict = convergence.check_upper_bound(
        f"yu2019.cnn/bound/N={run.N}", steps, values, rhs,
        notes=f"(1/t) sum ||grad f(xbar_(tau-1))||^2 against Theorem 1 with ESTIMATED constants at every record "
        f"point t, N = {run.N}, T = {run.T}, K = {run.K}, s = {run.s:.4g}",
    )
    hi = np.asarray(verdict.evidence["hi"])
    needed = max(restoring_L(h, steps=t, **terms) for h, t in zip(hi, steps))
    reason = ("Theorem 1 takes an L-smooth f and G^2, sigma^2 over all x; the network's loss is only piecewise smooth "
              "(no finite global L: the bound with the true constants is not a finite number to certify) and the "
              "constants here are lower estimates along the run (larger true ones raise the bound, so a violation "
              "cannot refute it). Evidence only: with the estimated G^2 and sigma^2 the bound's one-sided limits hold "
              f"from L = {needed:.4g} (estimate {c.L:.4g}; the hypothesis s <= 1/L admits L up to 1/s = "
              f"{1 / run.s:.4g})")
    evidence = {"N": run.N, "T": run.T, "K": run.K, "s": run.s, "1/s": 1 / run.s, **c.to_json(),
                "L restoring the bound": needed}
    return Uninformative.of(bound_name, verdict, reason), rhs, evidence


def evaluate(settings: VerifySettings, plan: YuCNNPlan) -> ClaimResult:
    """The sweep, the estimates and the checks of the module docstring."""
    f = _objective(plan)
    L = schedule_smoothness(settings, plan, f)
    T_max = max(plan.horizons)
    pairs = sorted({(N, T) for N in plan.clients for T in plan.horizons if T >= N**3}
                   | {(N, T_max) for N in plan.speedup_clients})
    runs = _execute(settings, plan, f, L.value, L.initial, pairs, "PR-SGD on a CNN (identical data)")
    claimed = plan.claimed_exponent
    planted = "" if claimed == -0.5 else f" Planted variant: claimed exponent {claimed:g}."
    smooth = smoothness_hypothesis(f.network)
    checks: list[tuple[str, Verdict]] = []
    for N in plan.clients:
        group = sorted((r for r in runs if r.N == N and r.T_plan in plan.horizons), key=lambda r: r.T)
        checks.append((f"rate in N T, N = {N}", convergence.check_rate_exponent(
            f"yu2019.cnn/N={N}", np.array([N * r.T for r in group], dtype=float), np.stack([r.final for r in group], 1),
            claimed_exponent=claimed, hypotheses=(smooth, *(h for r in group for h in r.hypotheses())),
            tolerance=RATE_TOLERANCE,  # 10% of the claimed -1/2, as yu2019.cor2
            notes=f"final (1/T) sum_t ||grad f(xbar_(t-1))||^2 against N T for T in {[r.T for r in group]}, N = {N}, "
            f"s = sqrt(N)/(L sqrt(T)) with L = {L.value:g}.{planted}",
        )))
    top = sorted((r for r in runs if r.T_plan == T_max and r.N in plan.speedup_clients), key=lambda r: r.N)
    if len(top) >= 3:
        checks.append((f"linear speedup in N at T = {T_max}", convergence.check_rate_exponent(
            "yu2019.cnn/speedup", np.array([r.N for r in top], dtype=float), np.stack([r.final for r in top], 1),
            claimed_exponent=claimed, min_points=len(top), tolerance=RATE_TOLERANCE,
            hypotheses=(smooth, *(h for r in top for h in r.hypotheses())),
            notes=f"linear speedup: exponent in N of the final average at T = {T_max}.{planted}",
        )))
    uninformative, plots, constants = [], [], []
    for N in plan.clients:
        run = max((r for r in runs if r.N == N), key=lambda r: r.T)
        bound, rhs, evidence = _bound_check(run, f"Theorem 1 with estimated constants, N = {N}, T = {run.T}")
        uninformative.append(bound)
        constants.append(evidence)
        plots.append(rate_plot(
            f"yu2019_cnn_bound_N{N}", f"Yu et al. Thm 1 on a CNN, PR-SGD, N = {N}: average squared gradient norm",
            f"(1/t) sum ||grad f(xbar)||^2 (mean over seeds) with Thm 1's bound from ESTIMATED constants (dashed), "
            f"N = {N}, T = {run.T}, K = {run.K}.",
            bound.verdict, xlabel=r"$t$ (local steps)",
            ylabel=r"$\frac{1}{t}\sum_\tau \|\nabla f(\bar x_{\tau-1})\|^2$", bound=rhs.tolist()))
    plots.insert(0, rate_plot(
        "yu2019_cnn_rate", "Yu et al. Cor. 2 on a CNN: average squared gradient norm vs N T",
        f"Final (1/T) sum ||grad f(xbar)||^2 (mean over seeds) against N T, N = {plan.clients[0]}, with the fitted "
        "slope.", checks[0][1], xlabel=r"$NT$", ylabel=r"$\frac{1}{T}\sum_t \|\nabla f(\bar x_{t-1})\|^2$"))
    instance = (f"Instance: {NETWORK} in float64 on N copies of the same {plan.n_train} bundled {DATASET} images, "
                f"batch {plan.batch_size}, {plan.seeds} seeds. Cor. 2's step with L = {L.value:g}: the ESTIMATE along "
                f"a pilot run (N = {min(plan.clients)}, T = {T_max}) from L = {round_up(L.initial):g} (estimated "
                f"at the initial models: {L.initial:.4g}) was {L.pilot:.4g}, rounded up. Every constant is an "
                "ESTIMATE along the runs (a lower estimate, not certified).")
    fitted = "; ".join(f"{name}: {v.measured:.3g} in [{v.interval[0]:.3g}, {v.interval[1]:.3g}]" if v.interval
                       else f"{name}: {v.measured:.3g}" for name, v in checks)
    finding = ("" if smooth.met else f" Hypothesis unmet: {smooth.name} ({smooth.detail}), so the claim is not tested "
               "on this net and every counted sub-check is INCONCLUSIVE; what the data alone give is kept in each "
               f"sub-check's notes. Fitted exponents (claimed <= {claimed:g} + {RATE_TOLERANCE:g}): {fitted}.")
    verdict = combine_checks("yu2019.cnn", checks, headline=checks[0][1],
                             notes=f"{instance} Headline: the exponent in N T at N = {plan.clients[0]}. Claimed: at "
                             f"most {claimed:g}.{planted}{finding}", uninformative=uninformative)
    schedule = {"L at the initial models (estimate)": L.initial, "L along the pilot run (estimate)": L.pilot,
                "L of the step": L.value}
    return ClaimResult(verdict.with_evidence(constants_estimated=constants, step_L=schedule), tuple(plots))


CLAIM = Claim(
    "yu2019.cnn", (YU2019, LIU2022_NOTE), "Theorem 1 and Corollary 2 (as restated in Liu's lecture note), on a CNN",
    "Parallel restarted SGD on a CNN (the digits net on N copies of the same bundled 8x8 digits: identical data), "
    "s = √N/(L√T) with L estimated along a pilot run, K ≤ T^(1/4)/N^(3/4): (1/T) Σ_t E‖∇f(x̄_{t−1})‖² = "
    "O(1/√(NT)), and linear speedup in N; Theorem 1's bound 2/(sT)(f(x̄₀) − f*) + 4 s² K² G² L² + (L/N) s σ² "
    "with L, G², σ² ESTIMATED along each run and f* ≥ 0 reported as evidence, not counted (the loss is only "
    "piecewise smooth and the constants are not certified). Hypothesis: f L-smooth, unmet on the ReLU / max-pool "
    "net, so the claim is INCONCLUSIVE with what the data alone give in its notes.",
    "the fitted exponent of the final average squared gradient norm in N T at the smallest N (claimed ≤ −1/2)",
    evaluate,
    plan=ModePlans(
        quick=YuCNNPlan(clients=(1, 2), horizons=(8, 16, 32, 64), speedup_clients=(1, 2, 4)),
        default=YuCNNPlan(clients=(1, 2), horizons=(32, 64, 128, 256), speedup_clients=(1, 2, 4)),
        full=YuCNNPlan(clients=(1, 2, 4), horizons=(64, 256, 1024, 4096, 16384), speedup_clients=(1, 2, 4, 8)),
    ),
    order=150,
    no_variant="its hypothesis 'f L-smooth' is unmet on the ReLU / max-pool net, so no sub-check can FAIL; a planted "
               "variant needs a smooth network",
)
