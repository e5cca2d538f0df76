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

__all__ = [
    "Li2020Thm4Plan", "Li2020Thm1Plan", "YuSweepPlan",
    "YuTheorem1Plan", "YuCorollary2Plan", "YuCNNPlan", "ConstantsPlan", "LemmasPlan",
    "PLANTABLE_CONSTANTS", "PLANTABLE_LEMMAS", "RECURSION_SEEDS", "Li2020SchemesPlan",
    "LI_IMAGE_DATA", "STEPS_PER_E_DOC", "Li2020SamplingPlan", "SAMPLING_SEEDS", "SPEEDUP_SEEDS",
    "LI_CHOICE_INSTANCES", "EQ8_OPTIMUM_CLAIMS", "Li2020Eq8Plan", "Li2020KEffectPlan",
]

PLANTABLE_CONSTANTS = ("L", "mu", "sigma_k^2", "G^2", "sigma_G^2")
"""The constants assumptions.constants can report 10% off (its planted variants)."""
PLANTABLE_LEMMAS = ("li2020.lemma1", "li2020.lemma2", "li2020.lemma3", "yu2019.drift", "ding2020.lemma2",
                    "ding2020.lemma3", "ding2020.lemma6")
"""The lemmas of the lemma table that can be planted false (``proofs_check.report_items``)."""
RECURSION_SEEDS = 32
"""At least this many seeds for li2020.thm1's eq. 13 sub-check: its per-step noise is of the order of
the slack; with 32 seeds the one-sided limits clear the bound at every step."""
SPEEDUP_SEEDS = 8
"""At least this many seeds for yu2019.cor2 and ding2020.speedup, whose exponents lie 0.05-0.2 inside
their thresholds: with 4 seeds the rate intervals (Student t on 3 df with the jackknife over seeds,
``convergence.rates``) straddle them (yu2019.cor2 about -0.50 +- 0.07 against -0.45, ding2020.speedup's
M sweep 0.04 +- 0.22 against 0.25); with 8 every one lies inside."""
SAMPLING_SEEDS = 128
"""At least this many seeds for li2020.thm2 / thm3: their gaps are noise-driven (the exponent is -1
itself, not steeper), so the rate fit needs a narrow interval; 128 seeds give about +-0.03."""


@dataclass(frozen=True)
class Li2020Thm4Plan:
    """li2020.thm4: the (E, eta) grid of the exact limits, the horizons of the three simulated runs
    (constant step E = 5, eta = 0.05; gradient descent E = 1, eta = 0.2; the decaying step of App.
    C.2, E = 5), the Appendix C problem (N, p, mu) and the constants of eq. 33-34."""

    E_grid: tuple[int, ...] = parameter(doc="local steps E of the bias grid (E >= 2: Theorem 4 is about E > 1)",
                                        minimum=2)
    eta_grid: tuple[float, ...] = parameter(doc="constant steps eta of the bias grid (hypothesis: eta < 1/(4 + mu))",
                                            above=0)
    simulated_rounds: int = parameter(doc="rounds of the simulated constant-step run (E = 5, eta = 0.05)", minimum=1)
    gd_rounds: int = parameter(doc="rounds of simulated gradient descent (E = 1, eta = 0.2)", minimum=1)
    decay_rounds: int = parameter(doc="rounds of the decaying-step run (E = 5, App. C.2)", minimum=1)
    N: int = parameter(5, "clients of the Appendix C problem", minimum=2)
    p: int = parameter(4, "block size of the Appendix C problem (d = N p + 1)", minimum=2)
    mu: float = parameter(2e-4, "l2 regularisation mu of the Appendix C problem", above=0)
    lower_bound_constant: float = parameter(1 / 16, "the constant of eq. 34 (1/16)", above=0)
    coefficient_scale: float = parameter(1.0, "multiplies the first-order coefficient ||c|| of eq. 33", above=0)


@dataclass(frozen=True)
class Li2020Thm1Plan:
    """li2020.thm1: E and the horizons of the two rate instances, the eq. 13 run, the seeds, and the
    constants of eq. 4, the claimed rate and eq. 13's B."""

    horizon_scale: float = parameter(doc="multiplies each rate instance's horizon (60 gamma and 30 gamma local "
                                         "steps)", above=0)
    recursion_steps: int = parameter(doc="local steps of the eq. 13 run (E = 1, where eq. 13 bites)", minimum=1)
    E: int = parameter(5, "local steps per round on both rate instances (hypotheses: gamma = max{8 kappa, E}, "
                          "eta_1 <= 1/(4L))", minimum=1)
    seeds: int = parameter(4, "seeds of the synthetic(1,1) instance (the counterexample is deterministic)", minimum=1,
                           from_settings="seeds")
    recursion_seeds: int = parameter(RECURSION_SEEDS, "seeds of the eq. 13 run (at least 32: its noise is of the "
                                                      "order of the slack)", minimum=RECURSION_SEEDS,
                                     from_settings="seeds")
    bound_scale: float = parameter(1.0, "multiplies the bound of eq. 4", above=0)
    claimed_exponent: float = parameter(-1.0, "the claimed exponent of the gap in gamma + T")
    recursion_B_scale: float = parameter(1.0, "multiplies B in eq. 13", above=0)


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


STEPS_PER_E_DOC = ("local SGD steps per unit of the paper's E: 1 as Li et al. define E, local iterations per round "
                   "(Sec. 2, App. D), 10 as the authors' code ran Fig. 1b-1d, 3 and 4 (fedavgpy's LrdWorker takes 10 "
                   "minibatch steps per 'epoch')")
"""The one meaning of ``steps_per_E`` in li2020.schemes and li2020.k-effect (``li2020_choices.E_READING``)."""
LI_IMAGE_DATA = ("auto", "mnist", "fashion-mnist", "digits")
"""The image data of li2020.schemes, li2020.eq8 and li2020.k-effect (``problems.li_images``: "auto" is MNIST, else
Fashion-MNIST, else the digits)."""


@dataclass(frozen=True)
class Li2020SchemesPlan:
    """li2020.schemes: the rounds of the image (Fig. 1c/1d) and synthetic (Fig. 4) instances, the
    original scheme's step grid, the image data and size, the seeds, the paper's hyper-parameters,
    and the planted alternatives."""

    image_rounds: int = parameter(doc="rounds on the balanced and unbalanced image instances (E = 20)", minimum=4)
    synthetic_rounds: int = parameter(doc="rounds on synthetic(0,0) and synthetic(1,1) (E = 10)", minimum=4)
    original_steps: tuple[float, ...] = parameter(doc="eta_0 grid of the original scheme, the best final loss kept "
                                                      "(the paper tuned it in 0.1, 0.5, 0.9, 1.1; per source pixel on "
                                                      "the image instances, like eta0)", above=0)
    synthetic: bool = parameter(doc="also run the synthetic(0,0) and synthetic(1,1) instances of Fig. 4")
    dataset: str = parameter("auto", "image data of the Fig. 1c/1d instances (auto: MNIST, else Fashion-MNIST, "
                                     "else the bundled digits)", choices=LI_IMAGE_DATA)
    image_samples: int = parameter(0, "rows of each image instance (0: the family's default, Table 2's count on "
                                      "28x28 data, 16 per device on the digits)", minimum=0)
    seeds: int = parameter(4, "seeds of every run (at least 2: the checks are paired over seeds)", minimum=2,
                           from_settings="seeds")
    participants: int = parameter(10, "K devices per round (Fig. 1c/1d, Fig. 4: K = 10)", minimum=1)
    steps_per_E: int = parameter(1, STEPS_PER_E_DOC, minimum=1)
    eta0: float = parameter(0.1, "eta_0 of the step eta_0 / (1 + round) of Schemes I, II and transformed II (on the "
                                 "image instances per source pixel: x m/f on their f pooled features of m pixels)",
                            above=0)
    scheme_ii_stable: bool = parameter(False, "claim Scheme II more stable than Scheme I on unbalanced data")
    original_faster: bool = parameter(False, "claim the original scheme reaches the target loss before Scheme I")
    equality_data: str = parameter("balanced", "image data on which transformed Scheme II is claimed to equal "
                                               "Scheme II", choices=("balanced", "unbalanced"))


@dataclass(frozen=True)
class Li2020SamplingPlan:
    """li2020.thm2 and li2020.thm3 (``proofs_check.li2020_partial``; one plan, as both check eq. 6 on the
    same instances): the horizon, the seeds, K on the balanced (N = 10) and the unbalanced (N = 4)
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
                                     "gamma = 8 kappa of 1e5 steps and more, see li2020_partial)", above=0)
    dataset: str = parameter("auto", "image data of the image instances (auto: MNIST, else Fashion-MNIST, else the "
                                     "bundled digits)", choices=LI_IMAGE_DATA)
    bound_scale: float = parameter(1.0, "multiplies the bound of eq. 6", above=0)
    C_scale: float = parameter(1.0, "multiplies C in eq. 6 (0: C dropped, Theorem 1's bound)", minimum=0)
    claimed_exponent: float = parameter(-1.0, "the claimed exponent of the gap in gamma + T")

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


LI_CHOICE_INSTANCES = ("synthetic(0,0)", "synthetic(1,1)", "image unbalanced")
"""The instances li2020.eq8 and li2020.k-effect run on, by label (``proofs_check.li2020_choices.
CHOICE_INSTANCES`` holds each one's problem family and batch size; a new instance is one label here
and one entry there). "image unbalanced" is Li's unbalanced MNIST recipe on the plan's ``dataset``."""
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
    instance: str | None = parameter(doc="run only this instance (None: every one)", choices=LI_CHOICE_INSTANCES)
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

    def __post_init__(self) -> None:
        if len(self.E_grid) < 3:
            raise PlanError("E_grid", f"needs at least 3 values (two ends and an interior E), got {self.E_grid}")


@dataclass(frozen=True)
class Li2020KEffectPlan:
    """li2020.k-effect (Fig. 1b, Fig. 3): the K grid and rounds of the Scheme I runs, the instances'
    size, E, the final-loss window, the seeds, the image data, and the claimed dependence on K."""

    K_grid: tuple[int, ...] = parameter(doc="clients K drawn per round by Scheme I (Fig. 3: 5 ... 100 of N = 100)",
                                        minimum=1)
    rounds: int = parameter(doc="rounds of every run", minimum=1)
    n_clients: int = parameter(doc="clients N of every instance (the paper: 100)", minimum=2)
    instance: str | None = parameter(doc="run only this instance (None: every one)", choices=LI_CHOICE_INSTANCES)
    E: int = parameter(5, "the paper's E (Fig. 3: 5): E x steps_per_E local steps per round", minimum=1)
    steps_per_E: int = parameter(1, STEPS_PER_E_DOC, minimum=1)
    eta0: float = parameter(0.1, "eta_0 of the per-round decay eta_0 / (1 + round) (Fig. 3: 0.1; on the image "
                                 "instance per source pixel, scaled to its pooled features)", above=0)
    dataset: str = parameter("auto", "image data of the image instance (auto: MNIST, else Fashion-MNIST, else the "
                                     "bundled digits)", choices=LI_IMAGE_DATA)
    tail_rounds: int = parameter(10, "the final loss is the mean gap over the last tail_rounds rounds", minimum=1)
    seeds: int = parameter(6, "seeds of every run (at least 6: the order check is paired over seeds and the "
                              "largest and smallest K differ by a few percent)", minimum=6, from_settings="seeds")
    tolerance: float = parameter(0.25, "weak effect: each gap(K)/gap(K_max) within a factor 1 + tolerance of "
                                       "(K_max/K)^claimed_K_exponent", above=0)
    claimed_K_exponent: float = parameter(0.0, "the claimed final gap is proportional to K^-claimed_K_exponent "
                                               "(0: weak effect; 1: the iid linear speedup)")
    larger_K_better: bool = parameter(True, "the claimed order: the largest K's final gap below the smallest K's")

    def __post_init__(self) -> None:
        if len(self.K_grid) < 2:
            raise PlanError("K_grid", f"needs at least 2 values, got {self.K_grid}")
        if self.tail_rounds > self.rounds:
            raise PlanError("tail_rounds", f"{self.tail_rounds} exceeds rounds = {self.rounds}")
