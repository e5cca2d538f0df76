"""The runs behind li2020.eq8 (choice of E) and li2020.k-effect (choice of K): FedAvg with Scheme I
and the experiments' per-round step decay, on the instances of Li et al.'s Appendix D.

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), App. D.1
and D.2: softmax regression with lambda = 1e-4, w_0 = 0, Scheme I (K clients drawn with replacement
by p_k, simple average; Assumption 5), eta_t = eta_0 / (1 + round) decayed at the end of every round
(the experiments' schedule, ``StepSize.per_round``; Theorems 1-3 decay eta per local iteration
instead: eq. 8 is read off Theorem 2's bound, the experiments use the per-round decay, and so do these
claims), minibatches of b rows drawn with replacement (b = 24 on the synthetic data, 64 on MNIST).
The global loss F(w_r) is recorded after every round r = 0..R; the paper "evaluate[s] the averaged
model after each global synchronization on the corresponding global objective".

Randomness is controlled as the paper does: client k's minibatch at local step t of seed s is the
same in every run of a sweep (``convergence._rng``: it depends on (seed, step, client) only), and
Scheme I's draws of round r depend on (seed, r, K), so runs that differ in E alone sample the same
clients in every round. Comparisons are paired over seeds.

An instance is data (``ChoiceInstance``: a problem family, its parameters, the batch size): the
plans name instances by label (``LI_CHOICE_INSTANCES``), and the number of
clients N is a plan parameter (the paper's N = 100 in ``--full``; fewer in the default and quick
plans, whose exact optimum, a damped Newton solve on every row, must fit the budget).

The image instance ("image unbalanced") is Li's MNIST recipe (``problems.li_images``: two labels
per device, power-law sizes, b = 64) on the plan's ``dataset`` ("auto": MNIST if present, else
Fashion-MNIST, else the bundled digits; resolved before any spec is made, so a run id never
depends on the machine). Unbalanced because the paper sees eq. 8's trade-off "on unbalanced
datasets in Figure 1a" and reports that it "does not appear in mnist balanced dataset". Its
features are averages of pool x pool source pixels (4 x 4 on 28 x 28 images; on the digits, 2 x 2
cells of the 8 x 8 grid, each cell itself the fraction of "on" pixels in a 4 x 4 block of a 32 x 32
NIST bitmap, scikit-learn's description of the data), and the step is scaled to match: with P
(f, m) the averaging matrix (each of the f features the mean of m / f of the m source pixels, P
P^T = (f / m) I), a linear model W on the features is the pixel model V = W P, and one SGD step W
<- W - s G_W, G_W = G_V P^T, moves V by -s G_V P^T P = -(s f / m) G_V Pi, Pi the projector onto
pixel weights constant over each window. So the paper's eta_0 on pixels is s = eta_0 m / f on
features (``ChoiceInstance.step_scale`` = m / f: 16 on pooled 28 x 28 images, 64 on the digits);
the bias column's step is scaled alike (it has no pixel counterpart to match). The l2 weight stays
Li's lambda = 1e-4 on W (on V it would be lambda f / m; it hardly moves the iterates in these
horizons, but it sets mu, hence kappa in eq. 8's constants).

The rule keeps the dimensionless step eta lambda_max(E[x x^T]) of the authors' code, which trains on
the 784 pixels / 255 with a bias (github.com/lx10077/fedavgpy; ``schemes``' docstring lists
what that code ran): measured on Fashion-MNIST with the bias column, lambda_max = 111.2 on the pixels
and 7.54 on the 4 x 4 averages, a ratio of 14.7 against m / f = 16 (the rule is exact when images are
constant over each window, P^T P = (f / m) Pi). It carries eta_0 across pooling, not across data
sets: Fashion-MNIST has more ink than the paper's MNIST (mean pixel 0.286 against the 0.1307 the
code's normalisation constant gives MNIST), so eta_0 = 0.1 is a larger dimensionless step on it, and
on the digits x64 gives eta lambda_max = 6.4 x 3.47 = 22.2 (their source pixels are binary).

What E means (``E_READING``, one reading for every Li experiment claim: li2020.eq8, li2020.k-effect,
li2020.schemes). The paper defines E as local SGD steps, never epochs: Sec. 2, "E be the number of
local iterations performed in a device between two communications", with footnote 1, "In original
paper (McMahan et al., 2017), E epochs of SGD are performed in parallel. For theoretical analyses, we
denote by E the times of updates rather than epochs"; App. D, "In each round, all selected devices run E
steps of SGD in parallel", the setting of every experiment (Fig. 1-4); and eq. 8, the prediction
Fig. 1a tests, is Theorem 2's bound, whose E is local iterations. So fedbound runs E local steps a round.
The authors' code (github.com/lx10077/fedavgpy; ``schemes``' docstring) counts ``num_epoch``, 10
minibatch steps each, and is not consistent with itself: Fig. 1a's axis is in steps (``plot/plot_E.py``
plots 10 x ``num_epoch`` as "Local steps (E)", so there both readings agree and eq. 8's E grid is in
steps either way), while App. D.2's "E = 5" of the K experiments ran 50 steps (``plot/plot_K.py`` reads
``ep5``) and App. D.3's E = 20 and 10 ran 200 and 100. ``steps_per_E`` = 10 (li2020.k-effect,
li2020.schemes) reproduces that code.

The plan constants every Li experiment claim shares are here too: ``LI_IMAGE_DATA`` (also the sampling
claims', ``sampling``), ``STEPS_PER_E_DOC`` and ``LI_CHOICE_INSTANCES``. The plans of li2020.eq8 and
li2020.k-effect (``eq8``, ``k_effect``): the default and quick plans run N = 20 clients so that the exact
optimum (a Newton solve on every row) fits the budget; ``--full`` runs the paper's N = 100 and K grid. The
default plans run synthetic(0,0), synthetic(1,1) and the unbalanced image recipe (Fashion-MNIST here, the
digits in CI); the quick plans synthetic(1,1) only.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems

from ...framework.evaluation import claim_optimum

if TYPE_CHECKING:
    from convergence import FedAvgExtras, RunResult
    from problems import FederatedProblem, Optimum, ProblemSpec

    from ...framework.settings import VerifySettings

__all__ = [
    "ChoiceInstance", "CHOICE_INSTANCES", "IMAGE_SOURCE_PIXELS", "choice_instances", "SchemeIRun", "LossCurves",
    "scheme_i_curves", "image_note", "source_step_scale", "step_note", "E_READING", "e_reading",
    "STEPS_PER_E_DOC", "LI_IMAGE_DATA", "LI_CHOICE_INSTANCES", "FIG1A_INSTANCES",
]

STEPS_PER_E_DOC = ("local SGD steps per unit of the paper's E: 1 as Li et al. define E, local iterations per round "
                   "(Sec. 2, App. D), 10 as the authors' code ran Fig. 1b-1d, 3 and 4 (fedavgpy's LrdWorker takes 10 "
                   "minibatch steps per 'epoch')")
"""The one meaning of ``steps_per_E`` in li2020.schemes and li2020.k-effect (``E_READING``)."""
LI_IMAGE_DATA = ("auto", "mnist", "fashion-mnist", "digits")
"""The image data of li2020.schemes, li2020.eq8 and li2020.k-effect (``problems.li_images``: "auto" is MNIST, else
Fashion-MNIST, else the digits)."""
LI_CHOICE_INSTANCES = ("synthetic(0,0)", "synthetic(1,1)", "image unbalanced")
"""The instances li2020.eq8 and li2020.k-effect run on, by label (``CHOICE_INSTANCES``,
below, holds each one's problem family and batch size; a new instance is one label here and one entry
there). "image unbalanced" is Li's unbalanced MNIST recipe on the plan's ``dataset``."""
FIG1A_INSTANCES = (*LI_CHOICE_INSTANCES, "image balanced")
"""The instances li2020.eq8 runs on: Fig. 1a's four data sets (the authors' ``plot/plot_E.py`` draws synthetic(0,0),
synthetic(1,1), mnist unbalanced and mnist balanced), "image balanced" being Li's balanced MNIST recipe on the plan's
``dataset``."""

E_READING = ("E counts local SGD steps per round, as Li et al. define it (Sec. 2: \"E be the number of local "
             "iterations performed in a device between two communications\", footnote 1: \"the times of updates "
             "rather than epochs\"; App. D: \"all selected devices run E steps of SGD\")")
"""The reading of E every Li experiment claim states on its card (module docstring)."""


def e_reading(steps_per_E: int) -> str:
    """The card's sentence on E (``E_READING``) for a run of ``steps_per_E`` local steps per unit of E."""
    if steps_per_E == 1:
        return f"{E_READING}; steps_per_E = 10 runs the authors' code's 10 steps per unit of E."
    return (f"{E_READING}; this run takes steps_per_E = {steps_per_E} local steps per unit of E "
            "(10: the authors' code, fedavgpy's 10 minibatch steps per 'epoch').")


IMAGE_SOURCE_PIXELS = {"mnist": 28 * 28, "fashion-mnist": 28 * 28, "digits": 32 * 32}
"""Data set -> pixels of the source image behind an image instance's features (module docstring:
the digits' 8 x 8 cells are 4 x 4 blocks of 32 x 32 bitmaps)."""


def source_step_scale(source_pixels: int | None, problem: FederatedProblem) -> float:
    """The factor m / f from the paper's eta_0 on m = ``source_pixels`` source pixels to the step on
    ``problem``'s f features (module docstring; the last column of X is the bias); 1 when
    ``source_pixels`` is None (the features are the data)."""
    if source_pixels is None:
        return 1.0
    return source_pixels / (problem.X.shape[1] - 1)


def step_note(eta0: float, source_pixels: int, problem: FederatedProblem) -> str:
    """How ``eta0`` per source pixel becomes the step on ``problem``'s features, in words."""
    return (f"eta_0 = {eta0:g} per source pixel, {eta0 * source_step_scale(source_pixels, problem):g} on its features "
            f"({source_pixels} source pixels over {problem.X.shape[1] - 1} features)")


@dataclass(frozen=True)
class ChoiceInstance:
    """One problem of Li's App. D: ``family`` and its ``params`` (without ``n_clients``, which the
    plan gives), the minibatch size b the paper uses on it, and for an image instance the pixels m
    of the source image behind its features (None: the features are the data, no step scaling;
    set by ``with_dataset``)."""

    label: str
    family: str
    params: tuple[tuple[str, float | int | str | bool], ...]
    batch_size: int
    source_pixels: int | None = None

    @property
    def is_image(self) -> bool:
        """Whether this is Li's image recipe (its data set is the plan's)."""
        return self.family == "li_images"

    def with_dataset(self, dataset: str) -> ChoiceInstance:
        """An image instance on ``dataset`` ("auto" resolved here, so specs and run ids name the data
        used), with that data's source pixels; any other instance unchanged."""
        if not self.is_image:
            return self
        name = problems.resolve_li_dataset(dataset)
        params = tuple((key, value) for key, value in self.params if key != "dataset") + (("dataset", name),)
        return dataclasses.replace(self, params=params, source_pixels=IMAGE_SOURCE_PIXELS[name])

    def spec(self, n_clients: int) -> ProblemSpec:
        """The problem spec with N = ``n_clients`` clients."""
        if self.is_image and self.source_pixels is None:
            raise ValueError(f"{self.label}: an image instance needs its data set (ChoiceInstance.with_dataset)")
        return problems.problem_spec(self.family, **dict(self.params), n_clients=n_clients)

    def step_scale(self, problem: FederatedProblem) -> float:
        """``source_step_scale`` of this instance's source pixels on ``problem``: m / f, or 1
        without source pixels."""
        return source_step_scale(self.source_pixels, problem)

    @property
    def slug(self) -> str:
        """The label as a file-name fragment (plot names): brackets dropped, commas and spaces "_"."""
        return re.sub(r"[, ]", "_", re.sub(r"[()]", "", self.label))


CHOICE_INSTANCES = {
    "synthetic(0,0)": ChoiceInstance("synthetic(0,0)", "synthetic", (("alpha", 0.0), ("beta", 0.0), ("seed", 0)), 24),
    "synthetic(1,1)": ChoiceInstance("synthetic(1,1)", "synthetic", (("alpha", 1.0), ("beta", 1.0), ("seed", 0)), 24),
    "image unbalanced": ChoiceInstance("image unbalanced", "li_images", (("balanced", False),), 64),
    "image balanced": ChoiceInstance("image balanced", "li_images", (("balanced", True),), 64),
}
"""Label -> instance, one per label of ``FIG1A_INSTANCES``: App. D.1, Table 2's synthetic(alpha,
beta) (softmax, l2 = 1e-4, power-law-like sizes, b = 24) and the unbalanced and balanced MNIST recipes
(b = 64 on both, App. D.2; their data set given by ``choice_instances``)."""


def choice_instances(
    label: str | None, dataset: str, labels: tuple[str, ...] = LI_CHOICE_INSTANCES,
) -> tuple[ChoiceInstance, ...]:
    """The instance named ``label``, or every instance of ``labels`` when None, an image instance on
    ``dataset`` (one of ``problems.LI_IMAGE_DATASETS``)."""
    chosen = tuple(CHOICE_INSTANCES[name] for name in labels) if label is None else (CHOICE_INSTANCES[label],)
    return tuple(instance.with_dataset(dataset) for instance in chosen)


@dataclass(frozen=True)
class SchemeIRun:
    """One run of a sweep: E local steps and K clients drawn per round by Scheme I."""

    local_steps: int
    participants: int


@dataclass(frozen=True, eq=False)
class LossCurves:
    """The global loss of the runs of a sweep on one instance at its record rounds.

    ``rounds`` (P,) the record rounds (increasing, 0 = the initial point w_0); ``gap`` (n_runs, S, P):
    F(w_r) - F* per run (in the sweep's order), seed and record round;
    ``F_star`` the exact optimum's value, ``initial_gap`` F(w_0) - F* (w_0 = 0); ``eta0`` the
    step's eta_0 on the features (the plan's times ``ChoiceInstance.step_scale``); ``problem``,
    ``optimum`` and ``results`` (the runs' RunResults, tracked: their extras hold the largest
    ||w - w*||^2 and ||g||^2 over every local iterate) for the constants of eq. 8."""

    instance: ChoiceInstance
    runs: tuple[SchemeIRun, ...]
    rounds: np.ndarray
    gap: np.ndarray
    F_star: float
    initial_gap: float
    eta0: float
    problem: FederatedProblem
    optimum: Optimum
    optimum_note: str
    results: tuple[RunResult[FedAvgExtras], ...]


def scheme_i_curves(
    instance: ChoiceInstance, n_clients: int, runs: tuple[SchemeIRun, ...], record_rounds: tuple[int, ...],
    eta0: float, seeds: int, settings: VerifySettings, description: str,
) -> LossCurves:
    """Every run of ``runs`` on ``instance`` with N = ``n_clients``: FedAvg, Scheme I, eta / (1 +
    round) with eta = ``eta0`` (the paper's, on source pixels for an image instance) times the
    instance's step scale, the instance's batch size, max(record_rounds) rounds recorded at
    ``record_rounds`` (increasing; each record costs a pass over the data per seed), seeds
    0..seeds-1, tracked, through ``settings``' executor and store."""
    spec = instance.spec(n_clients)
    problem = problems.build_problem(spec)
    optimum, note = claim_optimum(problem)
    step = eta0 * instance.step_scale(problem)
    record, rounds = tuple(record_rounds), max(record_rounds)
    configs = [convergence.FedAvgConfig(run.local_steps, rounds, convergence.StepSize.per_round(step), instance.batch_size, 1.0, record,
                            tuple(range(seeds)), participation="scheme_i", participants=run.participants)
               for run in runs]
    results = convergence.execute([convergence.RunRequest(convergence.RunConfig(spec, config), optimum, track=True) for config in configs],
                      settings.sweep_options(), description=description)
    initial_gap = float(problem.objective(np.zeros(problem.dim)) - optimum.F_star)
    return LossCurves(instance, runs, np.asarray(record, dtype=np.int64), np.stack([result.gap for result in results]),
                      float(optimum.F_star), initial_gap, step, problem, optimum, note, tuple(results))


def image_note(curves: LossCurves, eta0: float) -> str:
    """The sentence a claim's notes give an image instance's sweep: the data it ran on and its step
    (``eta0`` per source pixel, scaled to the features); empty for any other instance."""
    if not curves.instance.is_image:
        return ""
    return f" {curves.instance.label}: {curves.problem.notes} {step_note(eta0, curves.instance.source_pixels, curves.problem)}."
