"""The engine shared by the block-cyclic algorithms (MM-PSGD, MC-PSGD, FedAvg on cyclic data,
parallel restarted SGD): one kernel (``kernel``) and one NumPy reference (``reference``) with a
mode flag, and one typed extras.

Sources: Ding et al., arXiv 2002.07454, Algorithms 1-2, eq. 7-8, Sec. 5
(``shared/papers/ding2020_block_cyclic.md``); the lecture note ``liu_lecture_fl_fedavg.md``
(parallel restarted SGD, Theorem 1 of Yu, Yang, Zhu 2019). Problems are
``problems.BlockCyclicProblem`` (N clients, M blocks), or a CNN's ``problems.BlockCyclicImageProblem``
(the kernel ``network_kernel``, the reference ``network_reference``: the same algorithms with the
network's step primitive, iterates in the problem's dtype, from the network's initialisation at
the run seed; extras add each block's test accuracy, scored in the run itself, so in a sweep's
worker). Schedule: C cycles x M blocks x E rounds x I local steps; round r (0-based) is in block
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
    BlockCyclicImageProblem, BlockCyclicProblem, FederatedProblem, ImageClassificationProblem, ProblemError, ProblemSpec,
    build_block_cyclic, check_problem,
)

from ...budget import Workload, config_drivers, model_flops_per_row, pass_workload, run_workload
from ...config import (
    ConfigError, ReseedableConfig, check_step_and_batch, config_int, config_json, set_records_and_seeds,
)
from ...resources import FLOAT_BYTES
from ...schedules import StepSize
from .extras import BlockCyclicExtras, Communication
from .kernel import (
    MODE_MC, MODE_MM, PREDICTOR_AVERAGE, PREDICTOR_EXPONENTIAL, CyclicRecords, Plan, SeedRecords, kernel_data, kernel_seed,
)
from .network_kernel import block_cyclic_network_kernel
from .network_reference import block_cyclic_network_reference
from .reference import block_cyclic_reference
from .trace import BlockCyclicTrace, BlockCyclicTraceArrays

__all__ = [
    "BLOCK_CYCLIC_PROBLEMS", "PREDICTORS", "BlockCyclicEngine", "CyclicSchedule", "block_plan", "participants_field",
]

PREDICTORS = {"average": PREDICTOR_AVERAGE, "exponential": PREDICTOR_EXPONENTIAL}
"""The predictors of Ding et al.: the average of a block's global models (eq. 7) or Sec. 5's
exponential average."""


NOT_STORED = np.zeros((0, 0))
"""The predictors and separate models of a CNN seed as a sweep keeps it (``BlockCyclicEngine.stored``):
empty, read-only."""
NOT_STORED.setflags(write=False)


BLOCK_CYCLIC_PROBLEMS = (BlockCyclicProblem, BlockCyclicImageProblem)
"""The problems the block-cyclic engine runs: linear models (the kernel ``kernel``, the reference
``reference``) and CNNs (``network_kernel``, ``network_reference``)."""
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
    if trace and isinstance(problem, BlockCyclicImageProblem):
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
    """Runs block-cyclic plans on a BlockCyclicProblem or a CNN's BlockCyclicImageProblem (dispatch
    on the problem type, as FedAvg's engine does); each algorithm's module subclasses it with
    its config type and its ``plan``. ``has_predictors``: whether the algorithm keeps Ding et al.'s
    per-block predictors (MM-PSGD, MC-PSGD)."""

    config_type: type
    seed_type = SeedRecords
    has_predictors = False

    def build_problem(self, spec: ProblemSpec) -> Problem:
        return build_block_cyclic(spec)

    def check_problem(self, problem: Any, spec: ProblemSpec | None) -> Problem:
        if not isinstance(problem, BLOCK_CYCLIC_PROBLEMS):
            raise ProblemError(f"problem: expected a BlockCyclicProblem or BlockCyclicImageProblem, "
                               f"got {type(problem).__name__}")
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
        if isinstance(problem, BlockCyclicImageProblem):
            return self._scored(problem, self._network_seed(problem, plan, seed, engine), engine)
        w0 = np.zeros(problem.dim)
        w_star = w0 if w_star is None else w_star  # without an exact optimum the run is anchored at w0
        if engine == "numpy":
            return block_cyclic_reference(problem, plan, seed, w0, w_star)
        return kernel_seed(problem, kernel_data(problem, plan), plan, seed, w0, w_star)

    @staticmethod
    def _network_seed(problem: BlockCyclicImageProblem, plan: Plan, seed: int, engine: str) -> SeedRecords:
        """One seed on a CNN problem from the network's initialisation at ``seed`` (no exact
        optimum: divergence anchored at w0); iterates in the problem's dtype, records in float64."""
        c = problem.combined
        w0 = c.initial_model(seed)
        if engine == "numpy":
            return block_cyclic_network_reference(problem, plan, seed, w0)
        M = problem.n_blocks
        out = CyclicRecords.allocate(plan, M, c.dim)
        rows = max(plan.batch, int(c.client_sizes.max()))  # exact steps, MC's losses and tracking read whole clients
        batch_images = np.empty((max(plan.batch, 1), *c.network.input_shape), dtype=c.float_type)
        batch_labels = np.empty(max(plan.batch, 1), dtype=np.int64)
        diverged = block_cyclic_network_kernel(
            plan.mode, plan.predictor, c.network.layout.table, c.images, c.labels, c.offsets, M, problem.n_clients,
            plan.gamma.code, *map(float, plan.gamma.params), plan.eta.code, *map(float, plan.eta.params),
            plan.local_steps, plan.rounds_per_block, plan.rounds, plan.batch, plan.participants, seed,
            np.asarray(plan.record_rounds, dtype=np.int64), w0, plan.track, *out, batch_images, batch_labels,
            *c.network.workspace(rows, c.float_type),
        )
        return SeedRecords(*out, int(diverged))

    def _scored(self, problem: BlockCyclicImageProblem, run: SeedRecords, engine: str) -> SeedRecords:
        """``run`` with its block_accuracy (P, M): block m's predictor (this algorithm's, or the global
        model for one without predictors) scored on block m's test images at every record point
        (``BlockCyclicImageProblem.block_accuracy``, the network in float64 through the run's engine).
        Scored here, in the run, so that a sweep's workers score their own runs; a diverged seed is
        not scored (its run raises DivergenceError)."""
        if run.diverged >= 0:
            return run
        M, d = problem.n_blocks, problem.dim
        accuracy = np.array([problem.block_accuracy(run.predictors[p] if self.has_predictors
                                                    else np.broadcast_to(model, (M, d)), engine).per_block
                             for p, model in enumerate(run.records)]).reshape(-1, M)
        return run._replace(block_accuracy=accuracy)

    def stored(self, problem: Problem, seed_run: SeedRecords) -> SeedRecords:
        """A sweep keeps a linear problem's seed whole; of a CNN problem's seed it keeps the records,
        selections, tracked metrics and the per-block accuracies scored in the run (``_scored``), and
        empties the predictors and separate models (P M d floats each per seed; the claims on CNNs
        read their accuracies only), so ``execute``'s extras of a CNN run have them as None."""
        if not isinstance(problem, BlockCyclicImageProblem):
            return seed_run
        return seed_run._replace(predictors=NOT_STORED, separate=NOT_STORED)

    @staticmethod
    def _block_accuracy(problem: BlockCyclicImageProblem, plan: Plan, seed_runs: Sequence[SeedRecords]) -> np.ndarray:
        """The seeds' block accuracies stacked, (S, P, M); ConfigError naming ``block_accuracy`` for
        a stored seed that has none (stored by a fedbound that scored after the run)."""
        shape = (len(plan.record_rounds), problem.n_blocks)
        if any(run.block_accuracy.shape != shape for run in seed_runs):
            raise ConfigError(f"block_accuracy: a seed of this CNN run has no per-block accuracies {shape} (a run "
                              "stored by an older fedbound); recompute it (fedbound verify --no-cache)")
        return np.stack([run.block_accuracy for run in seed_runs])

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
            block_accuracy=(self._block_accuracy(problem, plan, seed_runs)
                            if isinstance(problem, BlockCyclicImageProblem) else None),
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
        models, selections, tracked metrics), with P at least one record; plus the data: the
        reference path's padded rows (M N n_max (f + 2)), or the kernel's copy of the rows (n f)
        and, for exact least-squares steps, the Gram matrices (M N f^2); a traced run adds per seed
        its trace (``BlockCyclicTraceArrays.floats``, about (3 + 1_MC) (T+1) K d). On a CNN problem:
        the records, the 2 K local models and 2 M + 6 models of the kernel (predictors, w_bar_m,
        averages, buffers), and the network's activations and their gradients for the largest
        batch (2 b_max A, A the layout's activation size; the reference's im2col copies are of the
        same order)."""
        if isinstance(problem, BlockCyclicImageProblem):
            c, M, d = problem.combined, problem.n_blocks, problem.dim
            P = max(len(config.record_rounds), 1)
            K = self.plan(problem, config).participants
            rows = max(config.batch_size, int(c.client_sizes.max()))
            work = (2 * K + 2 * M + 6) * d + 2 * rows * c.network.layout.activation_size
            return FLOAT_BYTES * (len(config.seeds) * P * (d + 2 * M * d + M + 4) + work)
        c = problem.combined
        M, d, f = problem.n_blocks, c.dim, c.n_features
        P = max(len(config.record_rounds), 1)
        records = len(config.seeds) * P * (d + 2 * M * d + M + 4)
        if engine == "numpy":
            work = c.n_clients * int(c.client_sizes.max()) * (f + 2)
        else:
            work = c.X.size + (c.n_clients * f * f if c.model.quadratic and config.batch_size == 0 else 0)
        traces = len(config.seeds) * BlockCyclicTraceArrays.floats(self.plan(problem, config), M, d) if trace else 0
        return FLOAT_BYTES * (records + work + traces)
