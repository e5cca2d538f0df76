"""The instances, runs and constants of li2020.thm2 and li2020.thm3 (``thm2``, ``thm3``: the
claims; ``sampling_checks``: their sub-checks), Li, Huang, Yang, Wang, Zhang (ICLR 2020), Sec. 3.3, Theorems 2-3.

Instances (every constant computable; least squares, minibatch 1, E = 1 unless said, w_1 = 0):
* ``BALANCED``: identical least-squares clients, N = 10, kappa = 1.5 (Gamma = 0). Its gap is driven by
  the minibatch noise of the K sampled clients, about sigma^2/K, which C = (4/K) G^2 >= (4/K) sigma^2
  covers and B = sum_k p_k^2 sigma_k^2 = sigma^2/N alone does not at K = 1: here eq. 6 bites (the
  largest gap/bound is a few percent, and the bound without C is exceeded about twice).
* ``UNBALANCED``: least-squares clients with a common optimum and Dirichlet weights
  p = (0.144, 0.218, 0.476, 0.162), N = 4 (nu = 1.90, varsigma = 0.577). Scheme I (Theorem 2 needs no
  balance) and transformed Scheme II are checked on it; Scheme II runs on it too, but its hypothesis
  p_k = 1/N is unmet, so Theorem 3 says nothing: that run is reported as not applicable
  (INCONCLUSIVE, an uninformative sub-check with the failed hypothesis), never as a PASS, with the
  instability it shows (the largest ||w - w*|| it reached).
E = 1 keeps Lemma 3's drift term 8 (E-1)^2 G^2 at 0, so C is the term that matters, and makes every
stochastic gradient, the virtual ones of the clients not sampled included (App. B), a gradient at a
global model; under Scheme I, balanced Scheme II and transformed Scheme II the global model is a
convex combination of local iterates, so every such point lies in the ball of radius
R = max ||w_t^k - w*|| (measured by the kernel) over which sigma_k^2 and G^2 are taken (their sups,
exact for least squares: ``li_theorem1_constants``). Every synthetic run takes T = ``plan.horizon`` x 12 local
steps, 12 being Theorem 1's gamma = 8 kappa of both instances (transformed Scheme II's gamma~ = 8 nu
kappa / varsigma is 39.5, so its runs span horizon x 0.3 gamma~), with about ``sampling_checks.RECORD_POINTS``
record rounds spaced evenly in log T.

Runs with E > 1 (``plan.E``, 2, 5 and 10 by default): Scheme I (thm2) or Scheme II (thm3) on ``BALANCED`` at
K = the first of ``plan.participants``, eta_t = 2/(mu (gamma + t)) with gamma = max{8 kappa, E} (12 at every
default E) decayed per local iteration, T = ``plan.E_horizon`` x gamma local steps (eq. 6 with its E-terms falls
below the gap's ceiling L R^2/2 only after about 3,000 gamma at E = 10), ``plan.E_seeds`` seeds, bound only (E
changes eq. 6's constant, not its rate, which the E = 1 runs check). With E > 1 the devices not sampled run E
steps from the global model too (App. B); on ``BALANCED``'s identical clients their local iterates have the law
of a sampled device's (a device's minibatches do not depend on the sample), so the constants over the ball that
holds the sampled devices' iterates bound Assumptions 3-4's expectations for all of them. There the E-terms
8 (E-1)^2 G^2 + C carry over 99.6% of B + C, and the gap uses 0.008, 0.001 and 0.0002 of eq. 6: too little for
eq. 6 without the drift term or with C's E^2 written E to fail (``sampling_steps`` says why no instance comes
close), so those planted variants are checked on the proof steps that carry E, traced at the largest E
(``sampling_steps``).

Image instances (``image_instances``; Li's App. D.1 recipe, ``problems.li_images``: softmax regression with
bias, two labels per device, balanced p_k = 1/N and power-law unbalanced, on ``plan.dataset``, "auto" =
MNIST, else Fashion-MNIST, else the bundled 8x8 digits, resolved before the specs are made so a run id
never depends on the machine; the notes and every run's table name the data). The same runs as above,
with K = ``plan.image_participants``: Scheme I on both (Theorem 2), Scheme II on the balanced one and
transformed Scheme II on the unbalanced one (Theorem 3), Scheme II on the unbalanced one reported not
applicable. What differs from the synthetic instances, and why:
* lambda = ``plan.image_l2`` (1 by default, mu = 2 lambda = 2), not the paper's 1e-4. Eq. 6 holds for any
  mu > 0, but its step eta_t = 2/(mu (gamma + t)) starts at gamma = 8 kappa, and with lambda = 1e-4 kappa is
  about 1.0e4 (digits, 4x4 features) to 2.8e4 (Fashion-MNIST, 7x7 features), so gamma is 8e4-2.2e5 local
  steps; the rate needs T of 10-100 gamma (1e6-1e7 steps per seed) and the bound is above L R^2/2 (it could
  not fail) until T is several gamma. With lambda = 1: kappa = 2.0 (digits) and 3.8 (Fashion-MNIST), gamma =
  16 and 31, and both sub-checks can fail within the budget. The data and the labels per device are the
  paper's (heterogeneity Gamma = 0.30 on the digits, 0.52 on Fashion-MNIST); the curvature is mostly the ridge's;
* every image run takes T = ``plan.image_horizon`` x its own gamma (gamma~ = 8 nu kappa / varsigma for
  transformed Scheme II, 3.8 and 3.9 x gamma on the default instances), so eq. 6 falls below L R^2/2 on the
  transformed run too (0.6-0.8 x it at the last T of the default plan: the check can fail there);
  ``plan.image_seeds`` seeds (16 by default: each costs about four synthetic ones) and
  ``sampling_checks.IMAGE_RECORD_POINTS`` record rounds (each a pass over the rows per seed);
* N = ``plan.image_clients`` devices with ``plan.image_samples`` rows (default 10 devices of 100 rows, the
  paper's N = 100 with Table 2's rows and K = 10 in the full plan).
The constants are Theorem 1's machinery (``li_theorem1_constants``) on the softmax: mu = 2 lambda exact,
L = max_k L_k a certified upper bound (``problems.problem_constants``), Gamma from the exact optima (Newton,
certified by its gradient norm), sigma_k^2 and G^2 certified upper bounds of their sups over the ball of
radius R that holds every local iterate (``constants.assumptions``: from the centre's values and the
Lipschitz constants, not the exact sups as on least squares). Each is at least the constant it stands for
and eq. 6 increases in each (kappa/(gamma + T) (2(B + C)/mu + mu gamma/2 ||w*||^2) with gamma = 8 kappa
grows with L), so the bound stays a valid upper bound, only looser: the measured tightness is about 0.01
(digits) and 0.004 (Fashion-MNIST) on the balanced image runs against the synthetic 0.03-0.06, so the planted
"bound x 0.001" bites on both balanced instances, and dropping C alone (B + C to B, about a third) does not
on the image instances.

The plan both claims share is here too (``Li2020SamplingPlan``, its modes ``SAMPLING_PLANS`` and planted
variants ``SAMPLING_VARIANTS``), as both check eq. 6 on the same instances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from ... import constants
from ...framework.claim import PlantedVariant
from ...framework.parameters import ModePlans, PlanError, parameter
from .choices import LI_IMAGE_DATA

if TYPE_CHECKING:
    from convergence import StepSize
    from convergence.budget import Workload
    from problems import FederatedProblem, Optimum, ProblemSpec

    from ...constants.li2020 import LiConstants

__all__ = [
    "SamplingInstance", "SamplingRun", "BALANCED", "UNBALANCED", "LOCAL_STEPS", "BATCH_SIZE",
    "sampling_schedule", "sampling_constants", "image_instances",
    "SAMPLING_SEEDS", "Li2020SamplingPlan", "SAMPLING_PLANS", "SAMPLING_VARIANTS",
]

SAMPLING_SEEDS = 128
"""At least this many seeds for li2020.thm2 / thm3: their gaps are noise-driven (the exponent is -1
itself, not steeper), so the rate fit needs a narrow interval; 128 seeds give about +-0.03."""


@dataclass(frozen=True)
class Li2020SamplingPlan:
    """li2020.thm2 and li2020.thm3 (``thm2``, ``thm3``; one plan, as both check eq. 6 on the same
    instances): the horizon, the seeds, K on the balanced (N = 10) and the unbalanced (N = 4)
    synthetic instance; the image instances' data, size, ridge, K, horizon and seeds; and the constants
    of eq. 6 and of the rate."""

    horizon: float = parameter(doc="local steps T of every run, in units of Theorem 1's gamma = 12 of both instances (the "
                                    "rate is fitted over the last two decades of gamma + T)", above=0)
    participants: tuple[int, ...] = parameter(doc="K of the balanced instance (N = 10 clients)", minimum=1, maximum=10)
    unbalanced_participants: tuple[int, ...] = parameter(doc="K of the unbalanced instance (N = 4 clients)", minimum=1,
                                                         maximum=4)
    image_horizon: float = parameter(doc="local steps T of every image run, in units of that run's own gamma (Theorem "
                                         "1's, gamma~ for transformed Scheme II)", above=0)
    image_clients: int = parameter(doc="devices N of the image instances (a multiple of 10; the paper: 100)", minimum=10)
    image_samples: int = parameter(doc="rows of each image instance (0: the family's default, Table 2's per-device "
                                       "count on 28x28 data, 16 per device on the digits)", minimum=0)
    image_participants: int = parameter(doc="K of every image run", minimum=1)
    image_seeds: int = parameter(doc="seeds of every image run (each costs about four synthetic ones; the rate interval "
                                     "over 16 seeds is about +-0.05 on the digits and Fashion-MNIST)", minimum=8)
    seeds: int = parameter(SAMPLING_SEEDS, "seeds of every run (at least 128: the gap is noise-driven, its exponent -1 itself)",
                           minimum=SAMPLING_SEEDS, from_settings="seeds")
    image_l2: float = parameter(1.0, "l2 weight lambda of the image instances (mu = 2 lambda; the paper's 1e-4 gives "
                                     "gamma = 8 kappa of 1e5 steps and more, see li2020/sampling)", above=0)
    dataset: str = parameter("auto", "image data of the image instances (auto: MNIST, else Fashion-MNIST, else the "
                                     "bundled digits)", choices=LI_IMAGE_DATA)
    bound_scale: float = parameter(1.0, "multiplies the bound of eq. 6", above=0)
    C_scale: float = parameter(1.0, "multiplies C in eq. 6 (0: C dropped, Theorem 1's bound)", minimum=0)
    claimed_exponent: float = parameter(-1.0, "the claimed exponent of the gap in gamma + T")
    E: tuple[int, ...] = parameter((2, 5, 10), "E of the runs with E > 1 local steps a round (eq. 6 on the balanced "
                                               "instance at K = the first of participants; the proof steps at the "
                                               "largest E)", minimum=2)
    E_horizon: float = parameter(5000.0, "local steps T of the E > 1 runs, in units of their gamma (eq. 6 falls "
                                         "below the gap's ceiling L R^2/2 only after about 3,000 gamma at E = 10)",
                                 above=0)
    E_seeds: int = parameter(8, "seeds of the E > 1 runs (their bound is checked, not their rate: its tightness is "
                                "1e-4 to 1e-2)", minimum=8)
    drift_scale: float = parameter(1.0, "multiplies B's drift term 8 (E-1)^2 G^2, in eq. 6 and in its proof step "
                                        "(Lemma 3; 0: dropped)", minimum=0)
    C_E_power: int = parameter(2, "the power of E in C, in eq. 6 and in its proof step (Lemma 5; the paper: 2)",
                               minimum=0)

    def __post_init__(self) -> None:
        if self.image_clients % 10:
            raise PlanError("image_clients", f"Li's recipe puts each of the 10 labels on 2N/10 devices, so N must be a "
                                             f"multiple of 10; got {self.image_clients}")
        if self.image_samples % (2 * self.image_clients):
            raise PlanError("image_samples", f"the balanced image instance gives each of the N = {self.image_clients} "
                                             f"devices two equal label shares, so the rows must be a multiple of 2N = "
                                             f"{2 * self.image_clients} (or 0: the family's default); got "
                                             f"{self.image_samples}")
        if self.image_participants > self.image_clients:
            raise PlanError("image_participants", f"K <= N = {self.image_clients} (Scheme II samples without "
                                                  f"replacement); got {self.image_participants}")

    def workload(self) -> Workload:
        """E = 1, batch 1: horizon x 12 steps on K clients (N = 10 balanced, N = 4 unbalanced) per K of the plan,
        the two image instances at image_horizon x their gamma (>= 1) steps on image_participants clients, the
        E > 1 runs (E_horizon x gamma >= 12 steps) and the traced proof-step run (``sampling_steps``)."""
        from ...framework.plan_workloads import runs_workload
        from .sampling_steps import STEP_CLIENTS, STEP_ROUNDS, STEP_SEEDS

        synthetic = sum((runs_workload(seeds=self.seeds, rounds=12 * self.horizon, clients=K, records=60)
                         for K in self.participants + self.unbalanced_participants), convergence.Workload())
        images = runs_workload(configs=2, seeds=self.image_seeds, rounds=self.image_horizon,
                               clients=self.image_participants, records=30)
        local = sum((runs_workload(seeds=self.E_seeds, rounds=12 * self.E_horizon / E, E=E,
                                   clients=self.participants[0], records=60) for E in self.E), convergence.Workload())
        steps = runs_workload(seeds=STEP_SEEDS, rounds=STEP_ROUNDS, E=max(self.E), clients=STEP_CLIENTS,
                              reference=True)
        return synthetic + images + local + steps


SAMPLING_PLANS = ModePlans(
    quick=Li2020SamplingPlan(horizon=300.0, participants=(1, 5), unbalanced_participants=(1, 2), image_horizon=300.0,
                             image_clients=10, image_samples=1000, image_participants=2, image_seeds=8),
    default=Li2020SamplingPlan(horizon=1000.0, participants=(1, 5), unbalanced_participants=(1, 2), image_horizon=300.0,
                               image_clients=10, image_samples=1000, image_participants=2, image_seeds=16),
    full=Li2020SamplingPlan(horizon=3000.0, participants=(1, 2, 5, 10), unbalanced_participants=(1, 2, 3, 4),
                            image_horizon=300.0, image_clients=100, image_samples=0, image_participants=10,
                            image_seeds=32),
)
"""The plan shared by li2020.thm2 and li2020.thm3 (the same instances, one scheme each). The image instances
run N = 10 devices of 100 rows each by default (the paper: N = 100, Table 2's 542 rows per device, the full
plan's, with K = 10): their record points cost a pass over the rows per seed."""
SAMPLING_VARIANTS = (
    PlantedVariant("C dropped", "eq. 6 without C (Theorem 1's bound under sampling): at K = 1 on the balanced "
                   "instance the sampled client's noise alone exceeds it (gap/bound about 2)", {"C_scale": 0.0},
                   sub_check="explicit bound (eq. 6)"),
    PlantedVariant("bound x 0.001", "eq. 6 divided by 1000 (tightness 0.03-0.06 on the balanced synthetic instance, "
                   "0.004-0.016 on the balanced image ones: a bound this much smaller is false on each of them)",
                   {"bound_scale": 0.001}, sub_check="explicit bound (eq. 6)"),
    PlantedVariant("rate O(T^-2)", "claimed exponent -2 in gamma + T (measured about -1)", {"claimed_exponent": -2.0},
                   sub_check="rate exponent <="),
    PlantedVariant("drift term dropped", "B without 8 (E-1)^2 G^2: its proof step, Lemma 3's bound of the clients' "
                   "drift, becomes 0 while the drift is positive at E > 1 (eq. 6 itself still holds without it: "
                   "sampling_steps)", {"drift_scale": 0.0}, sub_check="proof step: Lemma 3"),
    PlantedVariant("C with E for E^2", "C = (4/K) E G^2: its proof step, Lemma 5 at E = 10, is exceeded about 1.5x "
                   "(Lemma 5 uses 0.15 of eta_t^2 C there; eq. 6 itself still holds: sampling_steps)",
                   {"C_E_power": 1}, sub_check="proof step: Lemma 5"),
)
"""The planted variants shared by li2020.thm2 and li2020.thm3."""


LOCAL_STEPS = 1
"""E of every run (module docstring: C is the term that matters, every gradient lies in the measured ball)."""
BATCH_SIZE = 1
"""Minibatch size of every run (sigma_k^2 > 0: the sampled clients' noise is what C covers)."""


@dataclass(frozen=True)
class SamplingInstance:
    """A problem the sampling theorems are checked on (module docstring); ``slug`` names its figure;
    ``image``: one of Li's image instances (``image_instances``: the plan's image horizon, seeds and
    record points)."""

    label: str
    slug: str
    spec: ProblemSpec
    image: bool = False


BALANCED = SamplingInstance(
    "balanced (identical quadratic, N = 10)", "balanced",
    problems.problem_spec("identical_quadratic", n_clients=10, dim=5, mu=1.0, L=1.5, samples_per_client=20, seed=0),
)
UNBALANCED = SamplingInstance(
    "unbalanced (quadratic, N = 4, p = Dirichlet)", "unbalanced",
    problems.problem_spec("random_quadratic", n_clients=4, dim=5, mu=1.0, L=1.5, heterogeneity=0.0, samples_per_client=20,
                 seed=4, weighting="dirichlet"),
)


def image_instances(plan: Li2020SamplingPlan) -> tuple[SamplingInstance, SamplingInstance]:
    """Li's two-labels-per-device recipe (``problems.li_images``), balanced (p_k = 1/N) and power-law
    unbalanced, on ``plan.dataset`` with "auto" resolved here (the specs, hence the run ids, name the data
    used, never "auto"), N = ``plan.image_clients``, lambda = ``plan.image_l2``, the plan's rows."""
    name = problems.resolve_li_dataset(plan.dataset)
    samples = None if plan.image_samples == 0 else plan.image_samples
    return tuple(
        SamplingInstance(f"image {kind} ({name}, N = {plan.image_clients}, lambda = {plan.image_l2:g})", f"image_{kind}",
                         problems.problem_spec("li_images", dataset=name, balanced=kind == "balanced",
                                      n_clients=plan.image_clients, l2=plan.image_l2, n_samples=samples), image=True)
        for kind in ("balanced", "unbalanced"))


@dataclass(frozen=True)
class SamplingRun:
    """One run of a claim: its instance, ``participation`` (``FedAvgConfig.participation``), K, whether
    its rate is checked, and E (``local_steps``: LOCAL_STEPS = 1, or one of the plan's E > 1, whose runs
    take the plan's ``E_horizon`` and ``E_seeds``)."""

    instance: SamplingInstance
    participation: str
    participants: int
    rate: bool
    local_steps: int = LOCAL_STEPS

    @property
    def theorem_scheme(self) -> str:
        """The scheme whose C applies: "scheme_i" (Theorem 2) or "scheme_ii" (Theorem 3, transformed too)."""
        return "scheme_i" if self.participation == "scheme_i" else "scheme_ii"

    @property
    def label(self) -> str:
        """E.g. ``scheme_i, K = 1, balanced (identical quadratic, N = 10)``; ``scheme_i, K = 1, E = 5, ...``
        for E > 1."""
        E = "" if self.local_steps == LOCAL_STEPS else f"E = {self.local_steps}, "
        return f"{self.participation}, K = {self.participants}, {E}{self.instance.label}"


def sampling_schedule(problem: FederatedProblem, participation: str, E: int = LOCAL_STEPS) -> convergence.StepSize:
    """Li's eta_t = 2/(mu (gamma + t)), gamma = max{8 L/mu, E}, decayed per local iteration, with E local
    steps a round; for transformed Scheme II with the transformed constants varsigma mu and nu L."""
    consts = problems.problem_constants(problem)
    L, mu = float(consts.L), float(consts.mu)
    if participation == "transformed_scheme_ii":
        nu, varsigma = constants.li_transform_factors(problem.weights)
        L, mu = nu * L, varsigma * mu
    return convergence.StepSize.li(mu, L, E)


def sampling_constants(
    problem: FederatedProblem, optimum: Optimum, participation: str, radius: float, observed_grad_sq: float,
    E: int = LOCAL_STEPS,
) -> LiConstants:
    """The constants of eq. 6 for a run with E local steps a round whose local iterates stay within
    ``radius`` of w* (its largest realised ||g||^2 ``observed_grad_sq`` is quoted beside G^2): Theorem 1's
    (``li_theorem1_constants``, minibatch BATCH_SIZE), transformed for transformed Scheme II."""
    c = constants.li_theorem1_constants(problem, optimum, E, BATCH_SIZE, radius, observed_grad_sq)
    return constants.li_transformed_constants(c, problem.weights) if participation == "transformed_scheme_ii" else c
