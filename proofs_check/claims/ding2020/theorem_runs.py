"""The runs of Ding et al.'s theorem claims (ding2020.thm1, thm2, speedup, ordering; the lemma table's
MC-PSGD run too): the least-squares block-cyclic instance, C = 2 cycles, and the sweep of MM-PSGD,
MC-PSGD and FedAvg-cyclic with the theorems' step sizes.

With T = C M K, K = E I, Theorem 1 (MM-PSGD) takes gamma = sqrt(N)/(L sqrt(T)) and I <= T^{1/4}/N^{3/4};
Theorem 2 (MC-PSGD) adds eta = sqrt(NM)/(L sqrt(T)) and takes I <= (T/M)^{1/4}/N^{3/4} (Ding et al.
2020, ``shared/papers/ding2020_block_cyclic.md``; THEOREMS.md). ``run_configs`` runs each (algorithm,
problem, K) with the largest I the theorem allows (``hypotheses.largest_local_steps``), E = K / I
rounds per block (K rounded down to a multiple of I) and single-row minibatches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

import convergence
import problems

from .hypotheses import largest_local_steps

if TYPE_CHECKING:
    from convergence import BlockCyclicExtras, RunResult
    from problems import BlockCyclicProblem

    from ...framework.settings import VerifySettings

__all__ = ["CYCLES", "THEOREM_PREDICTOR", "DingRun", "instance", "shared_minimiser_instance", "run_configs"]

CYCLES = 2
THEOREM_PREDICTOR = "average"
"""The predictor of every run of ``run_configs`` (the theorem claims thm1, thm2, speedup, ordering): eq. 7-8's
uniform average of a block's models, the one Theorems 1-2 and their proofs use (eq. 50 applies Jensen's
inequality to it). The Sec. 5 claims run the paper's exponential average instead (``sec5_runs.SEC5_PREDICTOR``)."""


def instance(n_clients: int = 4, n_blocks: int = 3, block_spread: float = 1.0,
             identical_blocks: bool = False) -> BlockCyclicProblem:
    """The least-squares block-cyclic instance of the Ding claims (blocks far apart by default).

    ``identical_blocks=True``: every block holds block 0's rows, so F_m = F and x_m* = x*
    (``block_cyclic_quadratic``), the instance on which Theorem 1's bound is not met trivially.
    """
    return problems.build_block_cyclic(problems.problem_spec(
        "block_cyclic_quadratic", n_clients=n_clients, n_blocks=n_blocks, dim=8, samples_per_client=20,
        block_spread=block_spread, client_spread=0.3, mu=0.2, noise=0.1, seed=0, identical_blocks=identical_blocks,
    ))


def shared_minimiser_instance(n_clients: int = 4, n_blocks: int = 3) -> BlockCyclicProblem:
    """Heterogeneous blocks with one minimiser: ``block_cyclic_quadratic`` with block_spread = client_spread =
    mu = noise = 0 gives every (block, client) its own rows (so the F_m differ, in curvature X_m'X_m/n
    among others) and targets y = X theta_0, so every F_m^i, hence every F_m and F, is minimised at
    theta_0: x_m* = x* and F_m* = F_m(x*). Then Ding et al.'s mini-max gap (1/M) sum_m F_m(x~_m) - F(x*)
    = (1/M) sum_m [F_m(x~_m) - F_m(x*)] >= 0 with different blocks, so Theorem 1's bound can be failed.
    Strong convexity comes from the rows (20 rows in d = 8: mu = min lambda_min(X_mi'X_mi/n) > 0)."""
    return problems.build_block_cyclic(problems.problem_spec(
        "block_cyclic_quadratic", n_clients=n_clients, n_blocks=n_blocks, dim=8, samples_per_client=20,
        block_spread=0.0, client_spread=0.0, mu=0.0, noise=0.0, seed=0,
    ))


@dataclass(frozen=True)
class DingRun:
    """One configuration of the sweep and its result (T = C M K, K = E I)."""

    algorithm: str
    N: int
    M: int
    T: int
    K: int
    I: int
    gamma: float
    result: RunResult[BlockCyclicExtras]
    problem: BlockCyclicProblem

    @property
    def C(self) -> int:
        """The number of cycles of this configuration, T / (M K)."""
        return self.T // (self.M * self.K)


def run_configs(settings: VerifySettings, plans: Sequence[tuple]) -> list[DingRun]:
    """Run (algorithm, problem, K, seeds, record_rounds) plans through the sweep layer, each with
    the theorem's step sizes, the largest allowed I (K rounded down to a multiple of I) and, for MM-PSGD
    and MC-PSGD, eq. 7's predictor (``THEOREM_PREDICTOR``)."""
    requests, shapes = [], []
    for algorithm, problem, K, seeds, record_rounds in plans:
        N, M = problem.n_clients, problem.n_blocks
        L = problems.problem_constants(problem.combined).L
        I = largest_local_steps("mc" if algorithm == "mc" else "mm", N, M, CYCLES * M * K)
        E = max(1, K // I)
        K, T = E * I, CYCLES * M * E * I
        gamma = np.sqrt(N) / (L * np.sqrt(T))
        common = dict(cycles=CYCLES, rounds_per_block=E, local_steps=I, step_size=convergence.StepSize.constant(gamma),
                      batch_size=1, seeds=seeds, record_rounds=record_rounds)
        if algorithm == "mc":
            eta = convergence.StepSize.constant(np.sqrt(N * M) / (L * np.sqrt(T)))
            config = convergence.MCPSGDConfig(**common, predictor=THEOREM_PREDICTOR, block_step_size=eta)
        elif algorithm == "mm":
            config = convergence.MMPSGDConfig(**common, predictor=THEOREM_PREDICTOR)
        else:
            config = convergence.FedAvgCyclicConfig(**common)
        run = convergence.RunConfig(problem.spec, config)
        requests.append(convergence.RunRequest(run, track=algorithm != "fedavg"))
        shapes.append((algorithm, N, M, T, K, I, gamma, problem))
    results = convergence.execute(requests, settings.sweep_options(), description="Ding et al. runs")
    return [DingRun(a, N, M, T, K, I, g, result, problem)
            for (a, N, M, T, K, I, g, problem), result in zip(shapes, results)]
