"""The engine shared by the block-cyclic algorithms (MM-PSGD, MC-PSGD, FedAvg on cyclic data,
parallel restarted SGD): one kernel (``kernel``) and one NumPy reference (``reference``) with a
mode flag, for linear models and CNNs, and one typed extras.

Sources: Ding et al., arXiv 2002.07454, Algorithms 1-2, eq. 7-8, Sec. 5
(``shared/papers/ding2020_block_cyclic.md``); the lecture note ``liu_lecture_fl_fedavg.md``
(parallel restarted SGD, Theorem 1 of Yu, Yang, Zhu 2019). Problems are
``problems.BlockCyclicProblem`` (N clients, M blocks), or a CNN's ``problems.BlockCyclicImageProblem``
(the same kernel and reference with the network's pieces, iterates in the problem's dtype, from the
network's initialisation at the run seed; extras add each block's test accuracy, scored in the run
itself, so in a sweep's worker). The model is chosen once from the problem's type
(``models.cyclic_model``); everything model-specific is there and in the pieces it names.
Schedule: C cycles x M blocks x E rounds x I local steps; round r (0-based) is in block
m = (r // E) % M; T = C M E I local steps, R = C M E rounds. Each algorithm's module (``mm_psgd``,
``mc_psgd``, ``fedavg_cyclic``, ``pr_sgd``) holds its config and turns it into a ``Plan``; this module runs plans.

Partial participation (MM, MC, PR-SGD): each round a uniform K-subset of the N clients without
replacement (counter-based, reproducible), averaged with weight 1/K.

Communication (counted per round for the K participants, in floats; MC's loss values apart):
MM / FedAvg-cyclic / PR-SGD: down K d (the global model), up K d (the local models).
MC: down 2 K d (x_bar and y_bar, Algorithm 2 line 8) plus K d in every round that is followed by a
round of a new block (the reset broadcast of line 15), up 2 K d (x^i and y^i) and 2 K losses
(line 9). With K = N these are the paper's messages; the initial model is not counted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from problems import (
    BlockCyclicImageProblem, BlockCyclicProblem, FederatedProblem, ImageClassificationProblem, ProblemSpec,
    build_block_cyclic, check_problem,
)

from ...budget import Workload, config_drivers, model_flops_per_row, pass_workload, run_workload
from ...config import (
    ConfigError, ReseedableConfig, check_step_and_batch, config_int, config_json, set_records_and_seeds,
)
from ...resources import FLOAT_BYTES
from ...schedules import StepSize
from .extras import BlockCyclicExtras, Communication
from .kernel import MODE_MC, MODE_MM, PREDICTOR_AVERAGE, PREDICTOR_EXPONENTIAL, Plan, SeedRecords
from .models import cyclic_model
from .trace import BlockCyclicTrace, BlockCyclicTraceArrays

__all__ = [
    "PREDICTORS", "BlockCyclicEngine", "CyclicSchedule", "block_plan", "participants_field",
]

PREDICTORS = {"average": PREDICTOR_AVERAGE, "exponential": PREDICTOR_EXPONENTIAL}
"""The predictors of Ding et al.: the average of a block's global models (eq. 7) or Sec. 5's
exponential average."""

Problem = BlockCyclicProblem | BlockCyclicImageProblem


def participants_field(value: Any) -> int | None:
    """None (all clients) or an integer K >= 1 (checked against N when the run is planned)."""
    return None if value is None else config_int("participants", value)


@dataclass(frozen=True, kw_only=True)
class CyclicSchedule(ReseedableConfig):
    """Fields shared by the block-cyclic configs: C cycles, E rounds per block, I local steps,
    the x-chain step size gamma_t (t = global 0-based step), the minibatch size (0 = exact
    gradients), record rounds in [0, C M E] (empty: the algorithm's default) and seeds."""

    cycles: int
    rounds_per_block: int
    local_steps: int
    step_size: StepSize
    batch_size: int = 0
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cycles", config_int("cycles", self.cycles))
        object.__setattr__(self, "rounds_per_block", config_int("rounds_per_block", self.rounds_per_block))
        object.__setattr__(self, "local_steps", config_int("local_steps", self.local_steps))
        check_step_and_batch(self)
        set_records_and_seeds(self)

    @property
    def steps_per_round(self) -> int:
        """I local steps between two communications."""
        return self.local_steps

    def total_rounds(self, n_blocks: int) -> int:
        """R = C M E."""
        return self.cycles * n_blocks * self.rounds_per_block

    def total_steps(self, n_blocks: int) -> int:
        """T = C M E I."""
        return self.total_rounds(n_blocks) * self.local_steps

    def schedule_json(self) -> dict[str, Any]:
        """The schedule's fields as JSON (each config adds its own and its name)."""
        return config_json(self, ("cycles", "rounds_per_block", "local_steps", "step_size", "batch_size", "record_rounds",
                                  "seeds"))


def block_plan(
    problem: Problem,
    mode: int,
    predictor: int,
    gamma: StepSize,
    eta: StepSize,
    local_steps: int,
    rounds_per_block: int,
    rounds: int,
    batch: int,
    participants: int | None,
    record_rounds: tuple[int, ...],
    track: bool,
    trace: bool = False,
) -> Plan:
    """The kernel plan, checking the config against the problem (K <= N, record rounds <= R; a CNN
    run keeps no per-step trace)."""
    N = problem.n_clients
    if trace and not cyclic_model(problem).traces:
        raise ConfigError(f"trace: a CNN run keeps no per-step trace ({problem.dim} parameters per local iterate; the "
                          "lemma checks that read traces are about linear models); run it with trace=False")
    if participants is not None and participants > N:
        raise ConfigError(f"participants: K = {participants} exceeds the number of clients N = {N}")
    record = record_rounds or (rounds,)
    if record[-1] > rounds:
        raise ConfigError(f"record_rounds: every record round must lie in [0, {rounds}] (the rounds of the run)")
    return Plan(mode, predictor, gamma, eta, local_steps, rounds_per_block, rounds, batch,
                N if participants is None else participants, tuple(record), track, trace)


class BlockCyclicEngine(ABC):
    """Runs block-cyclic plans on a BlockCyclicProblem or a CNN's BlockCyclicImageProblem (the model
    chosen from the problem's type: ``models.cyclic_model``); each algorithm's module subclasses it with
    its config type and its ``plan``. ``has_predictors``: whether the algorithm keeps Ding et al.'s
    per-block predictors (MM-PSGD, MC-PSGD)."""

    config_type: type
    seed_type = SeedRecords
    has_predictors = False

    def build_problem(self, spec: ProblemSpec) -> Problem:
        return build_block_cyclic(spec)

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> Problem:
        cyclic_model(problem)  # ProblemError naming ``problem`` for another type
        check_problem(problem.combined, spec)
        return problem

    def objective(self, problem: Problem) -> FederatedProblem | ImageClassificationProblem:
        """F = (1/M) sum_m F_m, the combined problem (Ding et al. eq. 3)."""
        return problem.combined

    @abstractmethod
    def plan(self, problem: Problem, config: Any, track: bool = False, trace: bool = False) -> Plan:
        """The algorithm's config as a kernel plan (``block_plan``), checked against the problem."""

    def run_seed(
        self, problem: Problem, plan: Plan, seed: int, w_star: np.ndarray | None, engine: str
    ) -> SeedRecords:
        return cyclic_model(problem).run_seed(problem, plan, seed, w_star, engine, self.has_predictors)

    def stored(self, problem: Problem, seed_run: SeedRecords) -> SeedRecords:
        """What a sweep keeps of a seed (``models.CyclicModel.stored``): a linear problem's whole; of a
        CNN problem's the records, selections, tracked metrics and per-block accuracies, so
        ``execute``'s extras of a CNN run have the predictors and separate models as None."""
        return cyclic_model(problem).stored(seed_run)

    def extras(self, problem: Problem, plan: Plan, seed_runs: Sequence[SeedRecords]) -> BlockCyclicExtras:
        rounds = np.asarray(plan.record_rounds, dtype=np.int64)
        E, M = plan.rounds_per_block, problem.n_blocks
        completed = np.arange(plan.rounds)
        block_rounds = np.array([np.bincount((completed[:r] // E) % M, minlength=M) for r in rounds]).reshape(-1, M)
        steps = rounds * plan.local_steps

        def stack(name: str) -> np.ndarray:
            return np.stack([np.asarray(getattr(run, name)) for run in seed_runs])

        track = stack("track") if plan.track else None
        with np.errstate(invalid="ignore", divide="ignore"):
            grad_sq_mean = None if track is None else np.where(steps > 0, track[:, :, 0] / steps, np.nan)
        mc = plan.mode == MODE_MC
        models = all(np.asarray(run.predictors).size for run in seed_runs)  # none in a CNN seed a sweep kept
        return BlockCyclicExtras(
            blocks=np.where(rounds > 0, ((rounds - 1) // E) % M, -1),
            block_rounds=block_rounds,
            predictors=stack("predictors") if self.has_predictors and models else None,
            separate_models=stack("separate") if mc and models else None,
            selected_separate=stack("selected") if mc else None,
            grad_sq_mean=grad_sq_mean,
            max_mean_drift=None if track is None else track[:, :, 1],
            max_drift=None if track is None else track[:, :, 2],
            max_norm_sq=None if track is None else track[:, :, 3],
            communication=self.communication(plan, problem),
            traces=None if not plan.trace else tuple(
                BlockCyclicTrace.of(BlockCyclicTraceArrays(
                    run.trace_participants, run.trace_local_models, run.trace_stochastic_gradients,
                    run.trace_local_gradients, run.trace_separate_local_models, run.trace_separate_models,
                    run.trace_chose_separate, run.trace_losses, run.trace_predictors), plan, M)
                for run in seed_runs),
            block_accuracy=cyclic_model(problem).block_accuracy(problem, plan, seed_runs),
        )

    @staticmethod
    def communication(plan: Plan, problem: Problem) -> Communication:
        """Totals of the module docstring's per-round counts."""
        R, K, d, E, M = plan.rounds, plan.participants, problem.dim, plan.rounds_per_block, problem.n_blocks
        if plan.mode == MODE_MM:
            return Communication(R, R * K * d, R * K * d, 0)
        resets = sum(1 for r in range(R - 1) if (r // E) % M != ((r + 1) // E) % M)
        return Communication(R, 2 * R * K * d + resets * K * d, 2 * R * K * d, 2 * R * K)

    def workload(self, problem: Problem, config: Any, engine: str, track: bool = False,
                 trace: bool = False) -> Workload:
        """R rounds of I steps on K clients per seed (two chains, 2 K, for MC-PSGD), each on the
        minibatch (or the client's rows on average), and a pass over the rows per record point
        (``convergence.budget``); a tracked run (PR-SGD always) adds at every step the gradient of
        the current block's F_m at the average, a pass over that block's rows."""
        plan = self.plan(problem, config, track)
        c = problem.combined
        sizes = c.client_sizes
        chains = 2 if plan.mode == MODE_MC else 1
        flops, network = model_flops_per_row(c)
        reference = engine == "numpy" or trace
        work = run_workload(
            seeds=len(config.seeds), rounds=plan.rounds, steps_per_round=plan.local_steps,
            clients=chains * plan.participants, rows=plan.batch if plan.batch > 0 else float(sizes.mean()),
            flops_per_row=flops, records=len(plan.record_rounds), data_rows=int(sizes.sum()),
            dim=(2 * problem.n_blocks + 1) * c.dim, network=network, reference=reference,
        ).with_drivers(*config_drivers(config))
        if not plan.track:
            return work
        return work + pass_workload(passes=len(config.seeds) * plan.rounds * plan.local_steps,
                                    rows=float(sizes.sum()) / problem.n_blocks, flops_per_row=flops, network=network,
                                    reference=reference)

    def memory_bytes(self, problem: Problem, config: Any, engine: str, trace: bool = False) -> int:
        """Records per seed: P (d + 2 M d + M + 4) floats (global model, predictors, separate
        models, selections, tracked metrics), with P at least one record; plus the model's data,
        workspace and traces (``models.CyclicModel.work_floats``)."""
        P = max(len(config.record_rounds), 1)
        M, d = problem.n_blocks, problem.dim
        work = cyclic_model(problem).work_floats(problem, self.plan(problem, config), len(config.seeds), engine, trace)
        return FLOAT_BYTES * (len(config.seeds) * P * (d + 2 * M * d + M + 4) + work)
