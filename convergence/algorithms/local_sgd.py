"""Numba kernel of local SGD on a proximal local objective with a client sampling and aggregation
scheme, one seed per call: the one round loop that FedAvg (mu_prox = 0, ``fedavg.engine``, on linear
models and on CNNs), FedProx (mu_prox >= 0, full participation, ``fedprox.kernel``) and every
algorithm with its own state (``round_state``) share.

Algorithm: for round r = 0..R-1, the server samples the round's clients with multiplicities c_k
and aggregation coefficients a_k, b (``participation``: every client with a_k = p_k under
full participation, or Li et al.'s Schemes I, II, transformed II, or McMahan et al.'s original
scheme, drawn from the seed's participation key by the counter-based sampler of ``_rng``). Every
sampled client k (c_k > 0; the others do not compute) starts from the global model W (w_g) and
takes E steps on its local objective h_k(w) = F_k(w) + (mu/2) ||w||^2 + (mu_prox/2) ||w - W||^2,

    W_k <- W_k - eta_t lambda_k (g_k(W_k) + mu W_k + mu_prox (W_k - W)),   t = r E + e,

where g_k is the data gradient of client k (from the model oracle: a linear model's loss
derivative, ``problems.models.kernels.margin_residuals``, dispatched on its loss tag, or a
network's backpropagation, ``problems.models.cnn.kernel.network_loss_grad``; a network has mu = 0
and no prox term): exact, or a minibatch of ``batch`` rows drawn uniformly with replacement by
the counter-based sampler of ``_rng``, and lambda_k = N p_k under transformed Scheme II
(F~_k = N p_k F_k), 1 otherwise. Then the server sets W <- W + s (W' - W),
W' = b W + sum_k a_k W_k (float64, in client order), s = ``server_lr`` (full participation and
s = 1: the plain weighted average W <- sum_k p_k W_k), stored in the problem's dtype (float64 for
linear models; a CNN's float32 by default). With mu_prox = 0 the prox term is never evaluated and
every operation is FedAvg's (Li et al., ICLR 2020, Sec. 2), to the bit (FedAvg's ``RoundPlan`` has
mu_prox = 0.0). Full participation computes a_k = p_k, b = 0 and lambda_k = 1 and multiplies by
lambda_k = 1.0 exactly, so its arithmetic is that of the kernel before schemes existed, bit for bit.

How a client's steps and the aggregate are computed depends on the model and is compiled in by
the type of the client-data bundle (``client_rounds``): a linear model's support-restricted rows
with one off-support scalar per client (``linear_rounds``, ``packing.PackedClients``), or a CNN's
images with the network's buffers (``network_rounds.NetworkClients``). The algorithm's own steps
(``round_state``: a correction of each step's gradient, a client's and the server's end of round)
are compiled in by the type of its state, at the same points for both models.

With ``track`` the kernel also records, over every local iterate of every sampled client,
max ||w - w*||^2 (the radius of the region the iterates visit; w* = w0 for a CNN, which has no
exact optimum) and max ||g||^2 of the realised stochastic gradients lambda_k grad h_k of the local
objective (Assumption 4's quantity of Li et al. when mu_prox = 0, exactly, when gradients are
exact; the scaled objective's G~ under transformed Scheme II).

Clients run one after another, or, for linear models, with ``threads`` > 1 (``kernel_threads``:
asked for, and chosen from the work per round) in parallel over Numba's threads (``prange`` over
the round's clients): each client's local run reads only W and its own data and writes only its own slice of the local models, its scalar s_k
and its own tracked maxima, with its thread's scratch (allocated once per call, one row per
thread); the server's aggregation then runs serially in client order. Each client's arithmetic is
the same sequence of operations either way and max is exact, so results are bit-identical for
every thread count. A CNN runs serially (``network_rounds``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np
from numba import get_thread_id, njit, prange

from problems import FederatedProblem, ImageClassificationProblem

from .._rng import participation_key, seed_key
from ..schedules import StepSchedule, StepSize
from . import linear_rounds  # noqa: F401 -- registers the linear model's pieces (network_rounds: the CNN's)
from .client_rounds import aggregate, begin_round, client_round, client_workspace, round_clients
from .kernel_threads import round_work, threads_for_round
from .local_models import local_model
from .local_steps import DIVERGENCE_FACTOR, sq_dist
from .network_rounds import NetworkClients
from .packing import PackedClients
from .participation import KernelParticipation, sample_buffers, sample_round
from .round_state import STATELESS, end_round

__all__ = ["LocalSchedule", "RoundPlan", "SeedState", "local_sgd_kernel", "local_sgd_kernel_threaded",
           "local_sgd_for_threads", "local_sgd_seed"]


class LocalSchedule(Protocol):
    """The rounds of a local-SGD config (FedAvg's, SCAFFOLD's; FedProx's ``fedavg_config``): E local
    steps, R rounds, the step sizes, the minibatch rows (0: exact), the server's step, the record
    rounds and the participation scheme with its K (``participation``)."""

    local_steps: int
    rounds: int
    step_size: StepSize
    batch_size: int
    server_lr: float
    record_rounds: tuple[int, ...]
    participation: str
    participants: int | None


class RoundPlan(NamedTuple):
    """What one seed of the kernel runs (its step sizes apart, a ``StepSchedule``): ``local_steps`` E, ``rounds`` R, ``batch`` the minibatch rows (0: exact gradients), ``seed``,
    ``server_lr`` s, ``mu_prox`` >= 0 (0: FedAvg) and ``record_rounds`` (P,) int64, the rounds after
    which the global model is recorded (0: the initial point), increasing."""

    local_steps: int
    rounds: int
    batch: int
    seed: int
    server_lr: float
    mu_prox: float
    record_rounds: np.ndarray

    @classmethod
    def of(cls, config: LocalSchedule, seed: int, mu_prox: float = 0.0) -> RoundPlan:
        """The plan of ``config``'s rounds for ``seed`` (FedProx: its ``fedavg_config`` and mu_prox),
        every field of the type the compiled kernel takes."""
        return cls(int(config.local_steps), int(config.rounds), int(config.batch_size),
                   int(seed), float(config.server_lr), float(mu_prox),
                   np.asarray(config.record_rounds, dtype=np.int64))


class SeedState(NamedTuple):
    """One seed's model arrays (d = n_features C): ``w0`` (d,) the start, ``w_star`` (d,) the anchor
    of the divergence test and the tracked radius; ``track`` whether to record the maxima; written by
    the kernel: ``records`` (P, d) the global model at the record rounds and ``stats`` (2,)
    [max ||w - w*||^2, max ||g||^2] (only when ``track``)."""

    w0: np.ndarray
    w_star: np.ndarray
    track: bool
    records: np.ndarray
    stats: np.ndarray


def _local_sgd(loss, clients, participation, schedule, plan, state, algorithm_state, threads=None):
    """Run one seed; write the global model at ``plan.record_rounds`` into ``state.records`` (P, d).

    ``loss`` is the model as the kernels take it (``local_models``: a linear model's loss tag,
    ``kernel_loss()``, or a network's layout table); the bundles: ``clients`` the client data, whose
    type selects the model's pieces compiled into the loop (``client_rounds``:
    ``packing.PackedClients`` or ``network_rounds.NetworkClients``), ``participation``
    (``participation.KernelParticipation``) the scheme's code, K, ``cdf`` (N,) and
    ``step_scales`` (N,) lambda_k, ``schedule`` (``schedules.StepSchedule``) the step sizes eta_t =
    ``step_size_at(*schedule, t, E)``, ``plan`` (``RoundPlan``) E, R, the batch, the seed, the
    server's step, mu_prox >= 0 (0: FedAvg) and the record rounds, ``state``
    (``SeedState``) w0, w*, track and the outputs (``stats`` (2,) receives [max ||w - w*||^2,
    max ||g||^2] when ``track``), ``algorithm_state`` the algorithm's own state (``round_state``:
    ``STATELESS`` for FedAvg and FedProx; its type selects the client and server steps compiled
    into the loop). ``threads`` > 1 (``local_sgd_kernel_threaded`` only, linear models): each
    round's clients run over Numba's threads, of which there must be exactly ``threads``
    (``local_sgd_for_threads`` sets them). Returns -1, or the 0-based round at whose end the model
    had diverged (non-finite, or DIVERGENCE_FACTOR).
    """
    scheme, K, cdf, step_scales = participation
    rounds, server_lr, record_rounds = plan.rounds, plan.server_lr, plan.record_rounds
    w_star, track, records, stats = state.w_star, state.track, state.records, state.stats
    weights = clients.weights
    N = weights.size
    W = state.w0.copy()
    d = W.size
    rows = 1 if threads is None else threads  # scratch rows: one per thread
    work = client_workspace(clients, plan, W, w_star, rows)
    client_stats = np.zeros((N, 2))
    acc = np.empty(d)
    counts, coefficients, hashes, drawn = sample_buffers(N, K)
    key = seed_key(plan.seed)
    pkey = participation_key(plan.seed)
    broadcast = 0.0
    dist0 = sq_dist(W, w_star)
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0

    ri = 0
    if record_rounds.size > 0 and record_rounds[0] == 0:
        records[0, :] = W
        ri = 1
    for r in range(rounds):
        broadcast = sample_round(scheme, pkey, r, K, cdf, weights, counts, coefficients, hashes, drawn, broadcast)
        begin_round(clients, work, W, w_star, track, broadcast, acc)
        if threads is not None:  # pruned at compile time in the serial kernel (threads omitted)
            for kk in prange(N):
                if counts[kk] > 0:
                    client_round(np.int64(kk), r, loss, clients, schedule, plan, algorithm_state, key, counts,
                                 coefficients, step_scales, W, w_star, track, work, client_stats, acc, get_thread_id())
        else:
            round_clients(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W,
                          w_star, track, work, client_stats, acc)
        for k in range(N):  # max is exact: folding per-client maxima in client order is the serial max
            if counts[k] > 0:
                max_rad = max(max_rad, client_stats[k, 0])
                max_grad = max(max_grad, client_stats[k, 1])
        aggregate(clients, work, counts, coefficients, broadcast, W, acc)
        dist = 0.0
        for q in range(d):  # W <- W + s (W' - W) in float64, stored in W's dtype
            if server_lr == 1.0:
                W[q] = acc[q]
            else:
                W[q] = np.float64(W[q]) + server_lr * (acc[q] - np.float64(W[q]))
            diff = np.float64(W[q]) - w_star[q]
            dist += diff * diff
        end_round(algorithm_state, counts, weights, step_scales)
        if not (dist <= limit):
            return r
        max_rad = max(max_rad, dist)
        if ri < record_rounds.size and record_rounds[ri] == r + 1:
            records[ri, :] = W
            ri += 1
    stats[0] = max_rad
    stats[1] = max_grad
    return -1


_PRANGE_ONLY = {"prange": True, "comprehension": False, "setitem": False, "reduction": False, "numpy": False,
                "stencil": False, "fusion": False, "inplace_binop": False}
"""Numba's parallel options of the threaded kernel: only the explicit prange over a round's
clients runs in parallel; no array expression is turned into a parallel loop."""

local_sgd_kernel = njit(cache=True)(_local_sgd)
"""The serial kernel (``_local_sgd``; prange is range here): no parallel region, compiled once and
cached, and safe in processes that fork."""

local_sgd_kernel_threaded = njit(parallel=_PRANGE_ONLY)(_local_sgd)
"""The threaded kernel: the same function compiled with Numba's parallel pipeline. Not cached:
Numba's cache index is per function, so two cached compilations of one function would overwrite
each other's entries; it compiles once per process that asks for threads (about as long as the
serial kernel's first compilation)."""


def local_sgd_for_threads(problem: FederatedProblem, participants: int, plan: RoundPlan
                          ) -> tuple[Callable[..., int], dict[str, int]]:
    """The kernel for a linear model's seed of ``plan`` with ``participants`` clients a round, and
    the keyword arguments to add to its call: (local_sgd_kernel_threaded, {"threads": n}) when
    ``kernel_threads.threads_for_round`` gives n > 1 for the round's work (``round_work``:
    participants x E x the batch, or a client's mean sample count for exact gradients, x d), else
    (local_sgd_kernel, {}) (its scratch has one row per thread id, and ids run below n)."""
    rows = plan.batch if plan.batch > 0 else problem.offsets[-1] / problem.n_clients
    threads = threads_for_round(participants, round_work(participants, plan.local_steps, rows, problem.dim))
    if threads == 1:
        return local_sgd_kernel, {}
    return local_sgd_kernel_threaded, {"threads": threads}


def local_sgd_seed(
    problem: FederatedProblem | ImageClassificationProblem, clients: PackedClients | NetworkClients,
    participation: KernelParticipation, schedule: StepSchedule, plan: RoundPlan, w0: np.ndarray, w_star: np.ndarray,
    track: bool, algorithm_state: Any = STATELESS,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One seed of ``plan`` with step sizes ``schedule`` on ``problem`` (its clients as the bundle
    ``clients``, ``local_models.local_model(problem).kernel_clients``) from w0 (d,) through the
    kernel ``local_sgd_for_threads`` chooses (the serial one for a model that runs serially),
    with the algorithm's ``algorithm_state`` (``round_state``; its arrays are updated in place);
    returns (records (P, d), stats [max ||w - w*||^2, max ||g||^2] (NaN unless ``track``), the
    diverged round or -1). w_star (d,) float64 anchors the divergence test and the radius."""
    model = local_model(problem)
    records = np.zeros((plan.record_rounds.size, problem.dim))
    stats = np.full(2, np.nan)
    kernel, threads = (local_sgd_kernel, {}) if model.serial else local_sgd_for_threads(
        problem, participation.participants, plan)
    state = SeedState(w0, w_star, bool(track), records, stats)
    diverged = kernel(model.kernel_loss(), clients, participation, schedule, plan, state, algorithm_state, **threads)
    return records, stats, int(diverged)
