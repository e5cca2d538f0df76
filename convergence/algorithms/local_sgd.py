"""Numba kernel of local SGD on a proximal local objective with a client sampling and aggregation
scheme, one seed per call: the round loop that FedAvg (mu_prox = 0, ``fedavg.engine``) and FedProx
(mu_prox >= 0, full participation, ``fedprox.kernel``) share.

Algorithm: for round r = 0..R-1, the server samples the round's clients with multiplicities c_k
and aggregation coefficients a_k, b (``participation``: every client with a_k = p_k under
full participation, or Li et al.'s Schemes I, II, transformed II, or McMahan et al.'s original
scheme, drawn from the seed's participation key by the counter-based sampler of ``_rng``). Every
sampled client k (c_k > 0; the others do not compute) starts from the global model W (w_g) and
takes E steps on its local objective h_k(w) = F_k(w) + (mu/2) ||w||^2 + (mu_prox/2) ||w - W||^2,

    W_k <- W_k - eta_t lambda_k (g_k(W_k) + mu W_k + mu_prox (W_k - W)),   t = r E + e,

where g_k is the data gradient of client k (the loss's derivative comes from the model oracle,
``problems.models.kernels.margin_residuals``, dispatched on the model's loss tag): exact, or a
minibatch of ``batch`` rows drawn uniformly with replacement by the counter-based sampler of
``_rng``, and lambda_k = N p_k under transformed Scheme II (F~_k = N p_k F_k), 1 otherwise. Then
the server sets W <- W + s (W' - W), W' = b W + sum_k a_k W_k, s = ``server_lr`` (full
participation and s = 1: the plain weighted average W <- sum_k p_k W_k). With mu_prox = 0 the prox
term is never evaluated and every operation is FedAvg's (Li et al., ICLR 2020, Sec. 2), to the bit
(FedAvg's ``RoundPlan`` has mu_prox = 0.0). Full participation computes a_k = p_k, b = 0
and lambda_k = 1 and multiplies by lambda_k = 1.0 exactly, so its arithmetic is that of the kernel
before schemes existed, bit for bit.

Parameters are stored row-major as (f, C): w[j*C + c] = W[j, c] (C = 1 except for softmax).
Outside its feature support S_k a client's data gradient vanishes, so its local model there is
s_k W with one scalar s_k per client, s_k <- s_k - eta_t (mu s_k + mu_prox (s_k - 1)) from
s_k = 1 (derived in ``local_steps.off_support_scale``; packing in ``packing``).

With ``track`` the kernel also records, over every local iterate of every sampled client,
max ||w - w*||^2 (the radius of the region the iterates visit) and max ||g||^2 of the realised
stochastic gradients lambda_k grad h_k of the local objective (Assumption 4's quantity of Li et al.
when mu_prox = 0, exactly, when gradients are exact; the scaled objective's G~ under transformed
Scheme II).

Clients run one after another, or with ``threads`` > 1 (``kernel_threads``) in parallel over
Numba's threads (``prange`` over the round's clients): each client's local run reads only W and
its own data and writes only its own slice of the local models, its scalar s_k and its own
tracked maxima, with its thread's scratch (allocated once per call, one row per thread); the
server's aggregation then runs serially in client order. Each client's arithmetic is the same
sequence of operations either way and max is exact, so results are bit-identical for every
thread count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np
from numba import get_num_threads, get_thread_id, njit, prange

from problems import FederatedProblem

from .._rng import participation_key, seed_key, stream_key
from ..schedules import StepSchedule, StepSize, step_size_at
from .kernel_threads import kernel_threads
from .local_steps import (
    DIVERGENCE_FACTOR, data_gradient, gram_gradient, off_support_gradient_sq, off_support_scale, prefetch_minibatch,
    sq_dist, sq_norm,
)
from .packing import PackedClients
from .participation import KernelParticipation, sample_buffers, sample_round
from .round_state import STATELESS, correct_gradient, end_client, end_round

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


@njit(cache=True)
def _client_round(
    k, r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W, w_star, w_sq, w_dot, star_sq,
    track, local, scale, client_stats, anchor, G, Xb, Z, idx,
):
    """Client k's E local steps of round r from the global model W (module docstring): writes its
    support-restricted local model into ``local``, its off-support scalar into scale[k] and
    [max ||w - w*||^2, max ||g||^2] over its iterates into client_stats[k] (zeros when not
    ``track``). ``loss``, ``clients``, ``schedule`` and ``plan`` are ``_local_sgd``'s; ``anchor``,
    ``G``, ``Xb``, ``Z`` and ``idx`` are this thread's scratch; w_sq and w_dot are ||W||^2 and W.w*
    (0 when not ``track``), star_sq is ||w*||^2."""
    C, mu, support, support_offsets = clients.n_classes, clients.mu, clients.support, clients.support_offsets
    sample_offsets, rows, row_offsets = clients.sample_offsets, clients.rows, clients.row_offsets
    E, batch, mu_prox = plan.local_steps, plan.batch, plan.mu_prox
    N = counts.size
    so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
    lam = step_scales[k]
    Wk = local[so * C:(so + m) * C]
    off_sq, off_dot, off_star = 0.0, 0.0, 0.0
    if clients.full_support[k]:  # the support is 0..n_features-1 in order: W's block as it is
        for q in range(m * C):
            Wk[q] = W[q]
    else:
        off_sq, off_dot, off_star = w_sq, w_dot, star_sq
        for jj in range(m):
            j = support[so + jj]
            for c in range(C):
                v, vs = W[j * C + c], w_star[j * C + c]
                Wk[jj * C + c] = v
                off_sq -= v * v
                off_dot -= v * vs
                off_star -= vs * vs
    if mu_prox != 0.0:  # the prox term's anchor; FedAvg never reads it
        for q in range(m * C):
            anchor[q] = Wk[q]
    s = 1.0
    max_rad, max_grad = 0.0, 0.0
    n_k = sample_offsets[k + 1] - sample_offsets[k]
    for e in range(E):
        t = r * E + e
        eta = step_size_at(schedule.code, schedule.a, schedule.b, t, E) * lam
        stream = stream_key(key, t, k, N) if batch > 0 else np.uint64(0)
        if batch > 0:  # the next step's rows: this client's, or the next client's first
            k_next = k if e + 1 < E else k + 1
            if k_next < N and counts[k_next] > 0:
                prefetch_minibatch(rows, row_offsets[k_next], support_offsets[k_next + 1] - support_offsets[k_next],
                                   sample_offsets[k_next + 1] - sample_offsets[k_next], batch,
                                   stream_key(key, t + 1 if e + 1 < E else r * E, k_next, N))
        if batch == 0 and clients.uses_gram[k]:
            gram_gradient(clients.gram, clients.gram_offsets[k], clients.gram_rhs, so, m, Wk, G)
        else:
            data_gradient(loss, C, rows, row_offsets[k], m, clients.targets, sample_offsets[k], n_k, batch,
                          stream, Wk, G, Xb, Z, idx)
        correct_gradient(algorithm_state, k, lam, G[:m * C])
        if track:
            g_sq = off_support_gradient_sq(s, mu, mu_prox, off_sq)
            for q in range(m * C):
                g = G[q] + mu * Wk[q]
                if mu_prox != 0.0:
                    g += mu_prox * (Wk[q] - anchor[q])
                g_sq += g * g
            max_grad = max(max_grad, lam * lam * g_sq)
        if mu_prox == 0.0:
            for q in range(m * C):
                Wk[q] -= eta * (G[q] + mu * Wk[q])
        else:
            for q in range(m * C):
                Wk[q] -= eta * (G[q] + mu * Wk[q] + mu_prox * (Wk[q] - anchor[q]))
        s = off_support_scale(s, eta, mu, mu_prox)
        if track:
            rad = max(s * s * off_sq - 2.0 * s * off_dot + off_star, 0.0)
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    diff = Wk[jj * C + c] - w_star[j * C + c]
                    rad += diff * diff
            max_rad = max(max_rad, rad)
    end_client(algorithm_state, k, r, lam, schedule, E, Wk, W)
    scale[k] = s
    client_stats[k, 0] = max_rad
    client_stats[k, 1] = max_grad


def _local_sgd(loss, clients, participation, schedule, plan, state, algorithm_state, threads=1):
    """Run one seed; write the global model at ``plan.record_rounds`` into ``state.records`` (P, d).

    ``loss`` is the model's kernel tag (``kernel_loss()``); the bundles: ``clients``
    (``packing.PackedClients``) the client data, ``participation``
    (``participation.KernelParticipation``) the scheme's code, K, ``cdf`` (N,) and
    ``step_scales`` (N,) lambda_k, ``schedule`` (``schedules.StepSchedule``) the step sizes eta_t =
    ``step_size_at(*schedule, t, E)``, ``plan`` (``RoundPlan``) E, R, the batch, the seed, the
    server's step, mu_prox >= 0 (0: FedAvg) and the record rounds, ``state``
    (``SeedState``) w0, w*, track and the outputs (``stats`` (2,) receives [max ||w - w*||^2,
    max ||g||^2] when ``track``), ``algorithm_state`` the algorithm's own state (``round_state``:
    ``STATELESS`` for FedAvg and FedProx; its type selects the client and server steps compiled
    into the loop). ``threads`` > 1 (``local_sgd_kernel_threaded`` only): each
    round's clients run over Numba's threads, of which there must be exactly ``threads``
    (``local_sgd_for_threads``). Returns -1, or the 0-based round at whose end the model had
    diverged (non-finite, or DIVERGENCE_FACTOR).
    """
    C, support, support_offsets, full_support = (clients.n_classes, clients.support, clients.support_offsets,
                                                 clients.full_support)
    weights, sample_offsets = clients.weights, clients.sample_offsets
    scheme, K, cdf, step_scales = participation
    batch, rounds, server_lr, record_rounds = plan.batch, plan.rounds, plan.server_lr, plan.record_rounds
    w_star, track, records, stats = state.w_star, state.track, state.records, state.stats
    N = weights.size
    d = clients.n_features * C
    m_max = 0
    for k in range(N):
        m_max = max(m_max, support_offsets[k + 1] - support_offsets[k])
    W = state.w0.copy()
    local = np.empty(support_offsets[N] * C)
    scale = np.ones(N)
    client_stats = np.zeros((N, 2))
    n_max = batch
    if batch == 0:
        for k in range(N):
            n_max = max(n_max, sample_offsets[k + 1] - sample_offsets[k])
    anchor = np.empty((threads, m_max * C))
    G = np.empty((threads, m_max * C))
    Xb = np.empty((threads, max(batch, 1) * m_max))
    Z = np.empty((threads, n_max, C))
    idx = np.empty((threads, n_max), dtype=np.int64)
    acc = np.empty(d)
    counts, coefficients, hashes, drawn = sample_buffers(N, K)
    key = seed_key(plan.seed)
    pkey = participation_key(plan.seed)
    broadcast = 0.0
    star_sq = sq_norm(w_star)
    dist0 = sq_dist(W, w_star)
    limit = DIVERGENCE_FACTOR * (1.0 + dist0)
    max_rad, max_grad = dist0, 0.0

    ri = 0
    if record_rounds.size > 0 and record_rounds[0] == 0:
        records[0, :] = W
        ri = 1
    for r in range(rounds):
        w_sq, w_dot = 0.0, 0.0
        if track:
            for q in range(d):
                w_sq += W[q] * W[q]
                w_dot += W[q] * w_star[q]
        broadcast = sample_round(scheme, pkey, r, K, cdf, weights, counts, coefficients, hashes, drawn, broadcast)
        if threads > 1:
            for kk in prange(N):
                if counts[kk] > 0:
                    i = get_thread_id()
                    _client_round(np.int64(kk), r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W,
                                  w_star, w_sq, w_dot, star_sq, track, local, scale, client_stats, anchor[i], G[i], Xb[i],
                                  Z[i], idx[i])
        else:
            for k in range(N):
                if counts[k] > 0:
                    _client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, step_scales, W, w_star, w_sq,
                                  w_dot, star_sq, track, local, scale, client_stats, anchor[0], G[0], Xb[0], Z[0], idx[0])
        for k in range(N):  # max is exact: folding per-client maxima in client order is the serial max
            if counts[k] > 0:
                max_rad = max(max_rad, client_stats[k, 0])
                max_grad = max(max_grad, client_stats[k, 1])
        # server: acc = b W + sum_k a_k w_k over the sampled clients, with w_k = s_k W off the support of k
        off_weight = broadcast
        for k in range(N):
            if counts[k] > 0 and not full_support[k]:
                off_weight += coefficients[k] * scale[k]
        for q in range(d):
            acc[q] = off_weight * W[q]
        for k in range(N):
            if counts[k] == 0:
                continue
            so, m = support_offsets[k], support_offsets[k + 1] - support_offsets[k]
            p, s = coefficients[k], scale[k]
            if full_support[k]:  # the support is 0..n_features-1 in order
                for q in range(m * C):
                    acc[q] += p * local[so * C + q]
                continue
            for jj in range(m):
                j = support[so + jj]
                for c in range(C):
                    q = j * C + c
                    acc[q] += p * (local[(so + jj) * C + c] - s * W[q])
        dist = 0.0
        for q in range(d):
            if server_lr == 1.0:
                W[q] = acc[q]
            else:
                W[q] = W[q] + server_lr * (acc[q] - W[q])
            dist += (W[q] - w_star[q]) ** 2
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


def local_sgd_for_threads() -> tuple[Callable[..., int], dict[str, int]]:
    """The kernel for the current ``kernel_threads()`` and the keyword arguments to add to its
    call: (local_sgd_kernel, {}) for 1 thread, else (local_sgd_kernel_threaded, {"threads": Numba's
    current thread count}) (its scratch has one row per thread id, and ids run below that count)."""
    if kernel_threads() == 1:
        return local_sgd_kernel, {}
    return local_sgd_kernel_threaded, {"threads": get_num_threads()}


def local_sgd_seed(
    problem: FederatedProblem, clients: PackedClients, participation: KernelParticipation, schedule: StepSchedule,
    plan: RoundPlan, w0: np.ndarray, w_star: np.ndarray, track: bool, algorithm_state: Any = STATELESS,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One seed of ``plan`` with step sizes ``schedule`` on ``problem`` (packed as ``clients``,
    ``packing.pack_clients``) from w0 (d,) through the kernel for the current ``kernel_threads()``,
    with the algorithm's ``algorithm_state`` (``round_state``; its arrays are updated in place);
    returns (records (P, d), stats [max ||w - w*||^2, max ||g||^2] (NaN unless ``track``), the
    diverged round or -1). w_star (d,) anchors the divergence test and the radius."""
    records = np.zeros((plan.record_rounds.size, problem.dim))
    stats = np.full(2, np.nan)
    kernel, threads = local_sgd_for_threads()
    state = SeedState(w0, w_star, bool(track), records, stats)
    diverged = kernel(problem.model.kernel_loss(), clients, participation, schedule, plan, state, algorithm_state,
                      **threads)
    return records, stats, int(diverged)
