"""The runs of yu2019.cnn (``cnn``): the identical-data problem on a network, Cor. 2's hypotheses on a run
and "f L-smooth" read off the layers, PR-SGD at each (N, T) with Cor. 2's K and step, the estimates along
each run (``cnn_estimates``), and the L of the step from a pilot run (``schedule_smoothness``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis

from .cnn_estimates import RunConstants, ScheduleL, initial_smoothness, round_up, run_constants
from .sweep import yu_sync_interval

if TYPE_CHECKING:
    from convergence import RunResult
    from problems import ImageClassificationProblem, ProblemSpec
    from problems.models.cnn import ConvNet

    from ...framework.settings import VerifySettings

__all__ = ["CNNRun", "DATASET", "NETWORK", "RECORD_POINTS", "SMOOTH_NETWORK", "describe", "execute_runs", "objective",
           "rate_hypotheses", "schedule_smoothness", "smoothness_hypothesis", "spec"]

DATASET, NETWORK, SMOOTH_NETWORK = "digits", "digits_net", "digits_tanh_mlp"
"""The data, the ReLU / max-pool CNN and the smooth two-layer tanh network (``cnn_smooth``)."""
RECORD_POINTS = 6
"""Log-spaced record rounds per run besides round 0 (the bound's points and the constants' points)."""


class RunsPlan(Protocol):
    """What the runs read of the claim's plan (``cnn.YuCNNPlan``, which satisfies it; a protocol, so that
    this module does not import the claim's)."""

    clients: tuple[int, ...]
    horizons: tuple[int, ...]
    n_train: int
    batch_size: int
    seeds: int


def objective(plan: RunsPlan, network: str) -> ImageClassificationProblem:
    """f: the identical-data problem with one client (every N's clients hold these same images)."""
    return problems.build_problem(spec(plan, 1, network))


def spec(plan: RunsPlan, N: int, network: str) -> ProblemSpec:
    return problems.problem_spec("identical_images", dataset=DATASET, network=network, n_clients=N,
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
class CNNRun:
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


def execute_runs(settings: VerifySettings, plan: RunsPlan, f: ImageClassificationProblem, L: float, L_init: float,
             pairs: list[tuple[int, int]], description: str) -> list[CNNRun]:
    """PR-SGD at each (N, T) of ``pairs`` with Cor. 2's K (``yu_sync_interval``) and s = sqrt(N) / (L
    sqrt(T)), recorded at round 0 and RECORD_POINTS log-spaced rounds, with the estimates along each."""
    seeds = tuple(range(plan.seeds))
    planned = []
    for N, T in pairs:
        K = yu_sync_interval(T, N)
        rounds = T // K
        config = convergence.PRSGDConfig.yu(N, L, rounds, K, batch_size=plan.batch_size, seeds=seeds,
                                            record_rounds=(0, *convergence.log_spaced_rounds(rounds, RECORD_POINTS)))
        planned.append((N, T, K, convergence.RunConfig(spec(plan, N, f.network_name), config)))
    results = convergence.execute([convergence.RunRequest(config) for *_, config in planned], settings.sweep_options(),
                                  description=description)
    return [CNNRun(N, T, config.algorithm.rounds * K, K, config.algorithm.step_size.eta0, result,
                 run_constants(f, result.iterates, plan.batch_size, L_init))
            for (N, T, K, config), result in zip(planned, results)]


def schedule_smoothness(settings: VerifySettings, plan: RunsPlan, f: ImageClassificationProblem) -> ScheduleL:
    """The L of Cor. 2's step (module docstring, "The step"): the initial models' estimate, then the
    estimate along a pilot run with it at the smallest N and the largest T, rounded up."""
    L_init = initial_smoothness(f, tuple(range(plan.seeds)))
    pilot = execute_runs(settings, plan, f, round_up(L_init), L_init, [(min(plan.clients), max(plan.horizons))],
                     f"PR-SGD on {describe(f)}: pilot run for L")[0]
    return ScheduleL(L_init, pilot.constants.L, round_up(pilot.constants.L))


def describe(f: ImageClassificationProblem) -> str:
    """How the progress line names the network of ``f``."""
    return "a CNN" if f.network_name == NETWORK else f.network_name
