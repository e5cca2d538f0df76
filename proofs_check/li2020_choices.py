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
plans name instances by label (``proofs_check.plans.LI_CHOICE_INSTANCES``), and the number of
clients N is a plan parameter (the paper's N = 100 in ``--full``; fewer in the default and quick
plans, whose exact optimum, a damped Newton solve on every row, must fit the budget).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence import FedAvgConfig, FedAvgExtras, RunConfig, RunRequest, RunResult, StepSize, execute
from problems import FederatedProblem, Optimum, ProblemSpec, build_problem, problem_spec

from .claim import VerifySettings, claim_optimum

__all__ = [
    "ChoiceInstance", "CHOICE_INSTANCES", "choice_instances", "SchemeIRun", "LossCurves", "scheme_i_curves",
    "rounds_to_target",
]


@dataclass(frozen=True)
class ChoiceInstance:
    """One problem of Li's App. D: ``family`` and its ``params`` (without ``n_clients``, which the
    plan gives), and the minibatch size b the paper uses on it."""

    label: str
    family: str
    params: tuple[tuple[str, float | int | str | bool], ...]
    batch_size: int

    def spec(self, n_clients: int) -> ProblemSpec:
        """The problem spec with N = ``n_clients`` clients."""
        return problem_spec(self.family, **dict(self.params), n_clients=n_clients)


CHOICE_INSTANCES = {
    "synthetic(0,0)": ChoiceInstance("synthetic(0,0)", "synthetic", (("alpha", 0.0), ("beta", 0.0), ("seed", 0)), 24),
    "synthetic(1,1)": ChoiceInstance("synthetic(1,1)", "synthetic", (("alpha", 1.0), ("beta", 1.0), ("seed", 0)), 24),
}
"""Label -> instance (App. D.1, Table 2: synthetic(alpha, beta), softmax, l2 = 1e-4, power-law-like
sizes, b = 24), one per label of ``LI_CHOICE_INSTANCES``."""


def choice_instances(label: str | None) -> tuple[ChoiceInstance, ...]:
    """The instance named ``label``, or every instance when None."""
    return tuple(CHOICE_INSTANCES.values()) if label is None else (CHOICE_INSTANCES[label],)


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
    ``F_star`` the exact optimum's value, ``initial_gap`` F(w_0) - F* (w_0 = 0); ``problem``,
    ``optimum`` and ``results`` (the runs' RunResults, tracked: their extras hold the largest
    ||w - w*||^2 and ||g||^2 over every local iterate) for the constants of eq. 8."""

    instance: ChoiceInstance
    runs: tuple[SchemeIRun, ...]
    rounds: np.ndarray
    gap: np.ndarray
    F_star: float
    initial_gap: float
    problem: FederatedProblem
    optimum: Optimum
    optimum_note: str
    results: tuple[RunResult[FedAvgExtras], ...]


def scheme_i_curves(
    instance: ChoiceInstance, n_clients: int, runs: tuple[SchemeIRun, ...], record_rounds: tuple[int, ...],
    eta0: float, seeds: int, settings: VerifySettings, description: str,
) -> LossCurves:
    """Every run of ``runs`` on ``instance`` with N = ``n_clients``: FedAvg, Scheme I, eta_0 / (1 +
    round), the instance's batch size, max(record_rounds) rounds recorded at ``record_rounds``
    (increasing; each record costs a pass over the data per seed), seeds 0..seeds-1, tracked,
    through ``settings``' executor and store."""
    spec = instance.spec(n_clients)
    problem = build_problem(spec)
    optimum, note = claim_optimum(problem)
    record, rounds = tuple(record_rounds), max(record_rounds)
    configs = [FedAvgConfig(run.local_steps, rounds, StepSize.per_round(eta0), instance.batch_size, 1.0, record,
                            tuple(range(seeds)), participation="scheme_i", participants=run.participants)
               for run in runs]
    results = execute([RunRequest(RunConfig(spec, config), optimum, track=True) for config in configs],
                      settings.sweep_options(), description=description)
    initial_gap = float(problem.objective(np.zeros(problem.dim)) - optimum.F_star)
    return LossCurves(instance, runs, np.asarray(record, dtype=np.int64), np.stack([result.gap for result in results]),
                      float(optimum.F_star),
                      initial_gap, problem, optimum, note, tuple(results))


def rounds_to_target(gap: np.ndarray, target_gap: float) -> tuple[np.ndarray, np.ndarray]:
    """The first round r with gap[..., r] <= target_gap, and whether it was reached.

    ``gap`` (..., R + 1) recorded after every round r = 0..R -> (rounds (...) int64, reached (...)
    bool); a curve that never reaches the target gets R + 1, a lower bound of its rounds to target
    (censored)."""
    gap = np.asarray(gap, dtype=np.float64)
    below = gap <= target_gap
    reached = below.any(axis=-1)
    first = np.where(reached, np.argmax(below, axis=-1), gap.shape[-1])
    return first.astype(np.int64), reached
