"""Block-cyclic track: MM-PSGD, MC-PSGD and their baselines (Ding et al. 2020), and parallel
restarted SGD with the per-step metrics of Yu et al. (AAAI 2019, as in the lecture note).

Sources: Ding et al., arXiv 2002.07454, Algorithms 1-2, eq. 7-8, Sec. 5
(``shared/papers/ding2020_block_cyclic.md``); the lecture note ``liu_lecture_fl_fedavg.md``
(parallel restarted SGD, Theorem 1 of Yu, Yang, Zhu 2019). Problems are
``problems.BlockCyclicProblem`` (N clients, M blocks). Schedule: C cycles x M blocks x E rounds x
I local steps; round r (0-based) is in block m = (r // E) % M; T = C M E I local steps, R = C M E
rounds. The algorithms are stated in ``_block_cyclic_kernel``; in short:

* ``MMPSGDConfig``: Algorithm 1. One block-mixed model; predictor of block m = the average of the
  global models of block m's rounds (eq. 7) or the exponential average of Sec. 5.
* ``MCPSGDConfig``: Algorithm 2. Adds the block-separate chains (step eta, restarted from w_bar_m);
  per round the model with the smaller average local loss feeds the predictor (eq. 8).
* ``FedAvgCyclicConfig``: FedAvg on block-cyclic data, the paper's first baseline. Its single
  global model is, step for step, MM-PSGD's block-mixed chain (same seed, same numbers); it is
  recorded at the end of every block visit by default, to show the oscillation over blocks.
* FedAvg on shuffled data (second baseline): ``run_fedavg_shuffled`` runs the existing FedAvg
  kernel (``convergence.run``) on ``BlockCyclicProblem.shuffled(seed)``.
* ``PRSGDConfig``: parallel restarted SGD (= FedAvg with simple averaging, sync every K steps) on
  any problem with uniform weights, run by the block-cyclic kernel with M = 1 and per-step
  tracking: (1/t) sum_{tau <= t} ||grad f(x_bar_{tau-1})||^2 with x_bar the average of the local
  models at every step (Yu Thm 1), and the drift maxima of ||x_bar_t - x_t^i||^2.

Partial participation (MM, MC, PR-SGD): each round a uniform K-subset of the N clients without
replacement (counter-based, reproducible), averaged with weight 1/K.

Communication (counted per round for the K participants, in floats; MC's loss values apart):
MM / FedAvg-cyclic / PR-SGD: down K d (the global model), up K d (the local models).
MC: down 2 K d (x_bar and y_bar, Algorithm 2 line 8) plus K d in every round that is followed by a
round of a new block (the reset broadcast of line 15), up 2 K d (x^i and y^i) and 2 K losses
(line 9). With K = N these are the paper's messages; the initial model is not counted.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from problems import (
    BlockCyclicProblem, FederatedProblem, Optimum, ProblemError, ProblemSpec, check_optimum, check_real, exact_optimum,
)

from ._block_cyclic_kernel import (
    MODE_MC,
    MODE_MM,
    PREDICTOR_AVERAGE,
    PREDICTOR_EXPONENTIAL,
    Plan,
    SeedRecords,
    kernel_data,
    kernel_seed,
)
from ._block_cyclic_reference import block_cyclic_reference
from .config import ConfigError, FedAvgConfig, RunConfig, config_digest, config_int, config_record_rounds, config_seeds
from .run import ENGINES, DivergenceError, Trajectory, run
from .schedules import StepSize

__all__ = [
    "MMPSGDConfig",
    "MCPSGDConfig",
    "FedAvgCyclicConfig",
    "PRSGDConfig",
    "Communication",
    "BlockCyclicResult",
    "BlockCyclicGaps",
    "run_block_cyclic",
    "run_pr_sgd",
    "run_fedavg_shuffled",
    "block_cyclic_gaps",
    "block_run_id",
]

_PREDICTORS = {"average": PREDICTOR_AVERAGE, "exponential": PREDICTOR_EXPONENTIAL}


def _check_step_and_batch(config: Any) -> None:
    """Validate ``config.step_size`` (a StepSize) and normalise ``config.batch_size`` (int >= 0)."""
    if not isinstance(config.step_size, StepSize):
        raise ConfigError(f"step_size: must be a StepSize, got {config.step_size!r}")
    object.__setattr__(config, "batch_size", config_int("batch_size", config.batch_size, minimum=0))


def _participants(value: Any) -> int | None:
    """None (all clients) or an integer K >= 1 (checked against N at run time)."""
    return None if value is None else config_int("participants", value)


@dataclass(frozen=True, kw_only=True)
class _CyclicSchedule:
    """Fields shared by the block-cyclic configs: C cycles, E rounds per block, I local steps,
    the x-chain step size gamma_t (t = global 0-based step), the minibatch size (0 = exact
    gradients), record rounds in [0, C M E] (empty: the last round) and seeds."""

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
        _check_step_and_batch(self)
        object.__setattr__(self, "record_rounds", config_record_rounds(self.record_rounds))
        object.__setattr__(self, "seeds", config_seeds(self.seeds))

    def total_rounds(self, n_blocks: int) -> int:
        """R = C M E."""
        return self.cycles * n_blocks * self.rounds_per_block

    def total_steps(self, n_blocks: int) -> int:
        """T = C M E I."""
        return self.total_rounds(n_blocks) * self.local_steps

    def _schedule_json(self) -> dict[str, Any]:
        return {
            "cycles": self.cycles,
            "rounds_per_block": self.rounds_per_block,
            "local_steps": self.local_steps,
            "step_size": self.step_size.to_json(),
            "batch_size": self.batch_size,
            "record_rounds": list(self.record_rounds),
            "seeds": list(self.seeds),
        }


@dataclass(frozen=True, kw_only=True)
class MMPSGDConfig(_CyclicSchedule):
    """MM-PSGD (Ding et al., Algorithm 1): step gamma = ``step_size``; ``participants`` K per round
    (None: all N); ``predictor`` "average" (eq. 7) or "exponential" (Sec. 5)."""

    participants: int | None = None
    predictor: str = "average"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "participants", _participants(self.participants))
        if not isinstance(self.predictor, str) or self.predictor not in _PREDICTORS:
            raise ConfigError(f"predictor: expected one of {sorted(_PREDICTORS)}, got {self.predictor!r}")

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": "mm_psgd", **self._schedule_json(), "participants": self.participants,
                "predictor": self.predictor}


@dataclass(frozen=True, kw_only=True)
class MCPSGDConfig(MMPSGDConfig):
    """MC-PSGD (Ding et al., Algorithm 2): block-mixed step gamma = ``step_size``, block-separate
    step eta = ``block_step_size``; participants and predictor as in MMPSGDConfig (eq. 8)."""

    block_step_size: StepSize

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.block_step_size, StepSize):
            raise ConfigError(f"block_step_size: must be a StepSize, got {self.block_step_size!r}")

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "algorithm": "mc_psgd", "block_step_size": self.block_step_size.to_json()}


@dataclass(frozen=True, kw_only=True)
class FedAvgCyclicConfig(_CyclicSchedule):
    """FedAvg on block-cyclic data (Ding et al. Sec. 5 baseline), full participation, one global
    model. Empty ``record_rounds`` records the end of every block visit (rounds E, 2E, ..., C M E)."""

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": "fedavg_cyclic", **self._schedule_json()}


@dataclass(frozen=True, kw_only=True)
class PRSGDConfig:
    """Parallel restarted SGD (Yu et al. 2019 as in the lecture note): ``rounds`` rounds of
    ``sync_interval`` (K) local steps, T = rounds K, step ``step_size`` (Yu: constant s in (0, 1/L]),
    simple averaging over ``participants`` (None: all N) at every sync. Record rounds in
    [0, rounds] (empty: the last)."""

    rounds: int
    sync_interval: int
    step_size: StepSize
    batch_size: int = 0
    participants: int | None = None
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rounds", config_int("rounds", self.rounds))
        object.__setattr__(self, "sync_interval", config_int("sync_interval", self.sync_interval))
        _check_step_and_batch(self)
        object.__setattr__(self, "participants", _participants(self.participants))
        object.__setattr__(self, "record_rounds", config_record_rounds(self.record_rounds, self.rounds) or (self.rounds,))
        object.__setattr__(self, "seeds", config_seeds(self.seeds))

    @classmethod
    def yu(cls, n_clients: int, L: float, rounds: int, sync_interval: int, **kwargs: Any) -> "PRSGDConfig":
        """Corollary 2's constant step s = sqrt(N) / (L sqrt(T)), T = rounds * sync_interval."""
        L = check_real("L", L, 0.0, strict=True, error=ConfigError)
        T = config_int("rounds", rounds) * config_int("sync_interval", sync_interval)
        step = math.sqrt(config_int("n_clients", n_clients)) / (L * math.sqrt(T))
        return cls(rounds=rounds, sync_interval=sync_interval, step_size=StepSize.constant(step), **kwargs)

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": "pr_sgd",
            "rounds": self.rounds,
            "sync_interval": self.sync_interval,
            "step_size": self.step_size.to_json(),
            "batch_size": self.batch_size,
            "participants": self.participants,
            "record_rounds": list(self.record_rounds),
            "seeds": list(self.seeds),
        }


@dataclass(frozen=True)
class Communication:
    """Floats exchanged over a run (module docstring): server -> clients, clients -> server, and
    the loss values clients report (MC-PSGD)."""

    rounds: int
    down_params: int
    up_params: int
    up_losses: int

    @property
    def total_params(self) -> int:
        """down_params + up_params."""
        return self.down_params + self.up_params


@dataclass(frozen=True, eq=False)
class BlockCyclicResult:
    """One run for all its seeds. S seeds, P record points, M blocks, d parameters.

    rounds (P,) record rounds; steps (P,) = rounds * I; blocks (P,) block of the last completed
    round (-1 at round 0); block_rounds (P, M) rounds of each block completed by then;
    global_models (S, P, d) the block-mixed global model x_bar; predictors (S, P, M, d) the x~_m
    (MM) or u~_m (MC), None for FedAvg-cyclic and PR-SGD; separate_models (S, P, M, d) the w_bar_m
    and selected_separate (S, P, M) the rounds of block m in which y_bar was selected (MC only,
    else None). Tracked runs (PR-SGD, or ``track=True``): grad_sq_mean (S, P) =
    (1/t) sum_{tau=1}^{t} ||grad F_m(x_bar_{tau-1})||^2 at t = steps (NaN at t = 0; F_m = f for one
    block), max_mean_drift and max_drift (S, P) = running maxima over steps of
    mean_i / max_i ||x_bar_t - x_t^i||^2, and max_norm_sq (S, P) = running max of ||x_t^i||^2 over
    every local iterate of both chains (B^2 of Ding et al. Assumption 5 on the visited region);
    None when not tracked.
    """

    run_id: str
    algorithm: str
    config: MMPSGDConfig | MCPSGDConfig | FedAvgCyclicConfig | PRSGDConfig
    problem_spec: ProblemSpec | None
    seeds: tuple[int, ...]
    rounds: np.ndarray
    steps: np.ndarray
    blocks: np.ndarray
    block_rounds: np.ndarray
    global_models: np.ndarray
    predictors: np.ndarray | None
    separate_models: np.ndarray | None
    selected_separate: np.ndarray | None
    grad_sq_mean: np.ndarray | None
    max_mean_drift: np.ndarray | None
    max_drift: np.ndarray | None
    max_norm_sq: np.ndarray | None
    communication: Communication
    engine: str
    seconds: float


def block_run_id(problem_spec: ProblemSpec | None, config_json: dict[str, Any]) -> str:
    """The run id of a block-cyclic config on a problem spec: ``config_digest`` of both, as
    ``RunConfig.run_id`` makes FedAvg's."""
    problem_json = None if problem_spec is None else problem_spec.to_json()
    return config_digest({"problem": problem_json, "algorithm": config_json})


def _plan(
    problem: BlockCyclicProblem,
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
) -> Plan:
    """The kernel plan, checking the config against the problem (K <= N, record rounds <= R)."""
    N = problem.n_clients
    if participants is not None and participants > N:
        raise ConfigError(f"participants: K = {participants} exceeds the number of clients N = {N}")
    record = record_rounds or (rounds,)
    if record[-1] > rounds:
        raise ConfigError(f"record_rounds: every record round must lie in [0, {rounds}] (the rounds of the run)")
    return Plan(mode, predictor, gamma, eta, local_steps, rounds_per_block, rounds, batch,
                N if participants is None else participants, tuple(record), track)


def _communication(plan: Plan, problem: BlockCyclicProblem) -> Communication:
    """Totals of the module docstring's per-round counts."""
    R, K, d, E, M = plan.rounds, plan.participants, problem.dim, plan.rounds_per_block, problem.n_blocks
    if plan.mode == MODE_MM:
        return Communication(R, R * K * d, R * K * d, 0)
    resets = sum(1 for r in range(R - 1) if (r // E) % M != ((r + 1) // E) % M)
    return Communication(R, 2 * R * K * d + resets * K * d, 2 * R * K * d, 2 * R * K)


def _execute(
    problem: BlockCyclicProblem,
    plan: Plan,
    seeds: tuple[int, ...],
    run_id: str,
    engine: str,
    optimum: Optimum | None,
) -> list[SeedRecords]:
    """Every seed through the kernel or the reference (BLAS single-threaded, as in ``run_seed``)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: unknown engine {engine!r}; choose one of {ENGINES}")
    combined = problem.combined
    optimum = exact_optimum(combined, crosscheck=False) if optimum is None else check_optimum(optimum, combined)
    w0 = np.zeros(problem.dim)
    records = []
    with threadpool_limits(limits=1, user_api="blas"):
        data = kernel_data(problem, plan) if engine == "numba" else None
        for seed in seeds:
            out = (
                kernel_seed(problem, data, plan, seed, w0, optimum.w_star)
                if engine == "numba"
                else block_cyclic_reference(problem, plan, seed, w0, optimum.w_star)
            )
            if out.diverged >= 0:
                raise DivergenceError(run_id, seed, out.diverged, plan.local_steps)
            records.append(out)
    return records


def _result(
    algorithm: str,
    config: MMPSGDConfig | MCPSGDConfig | FedAvgCyclicConfig | PRSGDConfig,
    problem: BlockCyclicProblem,
    plan: Plan,
    records: list[SeedRecords],
    run_id: str,
    engine: str,
    seconds: float,
) -> BlockCyclicResult:
    """Stack per-seed records into a BlockCyclicResult (shapes in its docstring)."""
    rounds = np.asarray(plan.record_rounds, dtype=np.int64)
    E, M = plan.rounds_per_block, problem.n_blocks
    completed = np.arange(plan.rounds)
    block_rounds = np.array([np.bincount((completed[:r] // E) % M, minlength=M) for r in rounds]).reshape(-1, M)
    steps = rounds * plan.local_steps

    def stack(field: str) -> np.ndarray:
        return np.stack([getattr(rec, field) for rec in records])

    track = stack("track") if plan.track else None
    with np.errstate(invalid="ignore", divide="ignore"):
        grad_sq_mean = None if track is None else np.where(steps > 0, track[:, :, 0] / steps, np.nan)
    mc = plan.mode == MODE_MC
    return BlockCyclicResult(
        run_id=run_id,
        algorithm=algorithm,
        config=config,
        problem_spec=problem.spec,
        seeds=tuple(config.seeds),
        rounds=rounds,
        steps=steps,
        blocks=np.where(rounds > 0, ((rounds - 1) // E) % M, -1),
        block_rounds=block_rounds,
        global_models=stack("global_models"),
        predictors=stack("predictors") if algorithm in ("mm_psgd", "mc_psgd") else None,
        separate_models=stack("separate") if mc else None,
        selected_separate=stack("selected") if mc else None,
        grad_sq_mean=grad_sq_mean,
        max_mean_drift=None if track is None else track[:, :, 1],
        max_drift=None if track is None else track[:, :, 2],
        max_norm_sq=None if track is None else track[:, :, 3],
        communication=_communication(plan, problem),
        engine=engine,
        seconds=seconds,
    )


def run_block_cyclic(
    problem: BlockCyclicProblem,
    config: MMPSGDConfig | MCPSGDConfig | FedAvgCyclicConfig,
    *,
    engine: str = "numba",
    optimum: Optimum | None = None,
    track: bool = False,
) -> BlockCyclicResult:
    """Run MM-PSGD, MC-PSGD or FedAvg-cyclic on ``problem`` for all seeds, from w0 = 0.

    ``optimum`` (of ``problem.combined``; computed without cross-check when None) anchors the
    divergence test. ``track`` adds the per-step metrics (gradient of the current block's F_m at
    the every-step average, drift). Raises ConfigError (config does not fit the problem) or
    DivergenceError naming seed and round.
    """
    if not isinstance(problem, BlockCyclicProblem):
        raise ProblemError("problem: expected a BlockCyclicProblem")
    start = time.perf_counter()
    R = config.total_rounds(problem.n_blocks)
    E = config.rounds_per_block
    if isinstance(config, MCPSGDConfig):
        algorithm, mode, eta = "mc_psgd", MODE_MC, config.block_step_size
    elif isinstance(config, MMPSGDConfig):
        algorithm, mode, eta = "mm_psgd", MODE_MM, config.step_size
    elif isinstance(config, FedAvgCyclicConfig):
        algorithm, mode, eta = "fedavg_cyclic", MODE_MM, config.step_size
    else:
        raise ConfigError(f"config: expected an MM-PSGD, MC-PSGD or FedAvg-cyclic config, got {type(config).__name__}")
    if algorithm == "fedavg_cyclic":
        record, participants, predictor = config.record_rounds or tuple(range(E, R + 1, E)), None, PREDICTOR_AVERAGE
    else:
        record, participants, predictor = config.record_rounds, config.participants, _PREDICTORS[config.predictor]
    plan = _plan(problem, mode, predictor, config.step_size, eta, config.local_steps, E, R, config.batch_size,
                 participants, record, track)
    run_id = block_run_id(problem.spec, config.to_json())
    records = _execute(problem, plan, config.seeds, run_id, engine, optimum)
    return _result(algorithm, config, problem, plan, records, run_id, engine, time.perf_counter() - start)


def run_pr_sgd(
    problem: FederatedProblem,
    config: PRSGDConfig,
    *,
    engine: str = "numba",
    optimum: Optimum | None = None,
) -> BlockCyclicResult:
    """Parallel restarted SGD on ``problem`` (uniform weights 1/N) with Yu's per-step metrics.

    Runs the block-cyclic kernel with one block (so the trajectory is FedAvg's with simple
    averaging) and tracking on: grad_sq_mean, max_mean_drift, max_drift are filled in.
    """
    if not isinstance(problem, FederatedProblem):
        raise ProblemError("problem: expected a FederatedProblem")
    N = problem.n_clients
    if not np.allclose(problem.weights, 1.0 / N, rtol=1e-12, atol=0.0):
        raise ProblemError("weights: parallel restarted SGD averages with weight 1/N; these weights are not uniform")
    start = time.perf_counter()
    one_block = BlockCyclicProblem(problem, 1, N, problem.spec)
    plan = _plan(one_block, MODE_MM, PREDICTOR_AVERAGE, config.step_size, config.step_size, config.sync_interval,
                 config.rounds, config.rounds, config.batch_size, config.participants, config.record_rounds, True)
    run_id = block_run_id(problem.spec, config.to_json())
    records = _execute(one_block, plan, config.seeds, run_id, engine, optimum)
    return _result("pr_sgd", config, one_block, plan, records, run_id, engine, time.perf_counter() - start)


def run_fedavg_shuffled(
    problem: BlockCyclicProblem,
    config: FedAvgConfig,
    shuffle_seed: int = 0,
    *,
    engine: str = "numba",
    track: bool = False,
) -> Trajectory:
    """FedAvg (the existing kernel, ``convergence.run``) on ``problem.shuffled(shuffle_seed)``.

    The trajectory's gap is measured against the shuffled problem's own optimum; its run config
    carries the shuffled problem's view spec (``build_problem`` rebuilds it).
    """
    shuffled = problem.shuffled(shuffle_seed)
    optimum = exact_optimum(shuffled, crosscheck=False)
    return run(RunConfig(shuffled.spec, config), problem=shuffled, optimum=optimum, engine=engine, track=track)


@dataclass(frozen=True, eq=False)
class BlockCyclicGaps:
    """Optimality gaps of a result (S seeds, P record points, M blocks).

    global_gap (S, P) = F(x_bar) - F(x*); global_block_gap (S, P, M) = F_m(x_bar) - F_m(x_m*);
    minimax_gap (S, P) = (1/M) sum_m F_m(p_m) - F(x*) (Thm 1, 2: the predictors' "mini-max
    optimal error") and block_gap (S, P, M) = F_m(p_m) - F_m(x_m*) (Thm 2, eq. 20), both None
    without predictors. Gaps are not clipped at 0 (the predictors' can be negative).
    """

    global_gap: np.ndarray
    global_block_gap: np.ndarray
    minimax_gap: np.ndarray | None
    block_gap: np.ndarray | None


def block_cyclic_gaps(problem: BlockCyclicProblem, result: BlockCyclicResult) -> BlockCyclicGaps:
    """F and F_m gaps of the recorded models, with x*, x_m* from ``exact_optimum`` (no cross-check)."""
    F_star = exact_optimum(problem.combined, crosscheck=False).F_star
    block_star = np.array([exact_optimum(problem.block(m), crosscheck=False).F_star for m in range(problem.n_blocks)])
    values = np.apply_along_axis(problem.block_objectives, -1, result.global_models)  # (S, P, M)
    global_gap = values.mean(axis=-1) - F_star
    if result.predictors is None:
        return BlockCyclicGaps(global_gap, values - block_star, None, None)
    M = problem.n_blocks
    pred_values = np.apply_along_axis(problem.block_objectives, -1, result.predictors)  # (S, P, M, M)
    own = pred_values[..., np.arange(M), np.arange(M)]  # F_m(p_m), (S, P, M)
    return BlockCyclicGaps(global_gap, values - block_star, own.mean(axis=-1) - F_star, own - block_star)
