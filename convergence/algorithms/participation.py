"""FedAvg's client sampling and aggregation schemes (Li, Huang, Yang, Wang, Zhang, "On the
Convergence of FedAvg on Non-IID Data", ICLR 2020, Sec. 3.3, Table 1 and App. B.1; McMahan et al.,
AISTATS 2017), one per round: which clients run their E local steps, and how the server combines
their local models w_k with the broadcast model W into the next global model

    W' = b W + sum_k a_k w_k        (then W <- W + server_lr (W' - W); server_lr = 1: W <- W').

p_k are the problem's client weights (sum 1), K = ``participants`` the clients sampled per round.

scheme (``participation``)   sampling S_r in round r                     a_k (k in S_r); b
---------------------------  ------------------------------------------  ------------------------------
full                         every client                                p_k; b = 0
scheme_i                     K draws i_1..i_K iid with replacement,      c_k / K, c_k = #{l: i_l = k};
                             P(i_l = k) = p_k (a multiset)               b = 0
scheme_ii                    K clients uniformly without replacement     (N / K) p_k; b = 0
transformed_scheme_ii        as scheme_ii; client k descends             1 / K; b = 0
                             F~_k = N p_k F_k
original                     as scheme_ii (McMahan et al.)               p_k; b = sum_{k not in S_r} p_k

What the theory assumes and how the code matches it:

* ``scheme_i`` is Li et al.'s Assumption 5 (Theorem 2): K indices drawn with replacement from
  p_1..p_N, the server takes the simple average (1/K) sum_l w_{i_l}. A client drawn c times is
  counted c times: it computes its local model once (its minibatches depend on (seed, step,
  client) only, so c independent runs of it would be the same run) and gets weight c / K, which
  is the paper's average over the multiset. Draws: ``_rng.weighted_draws`` (inverse CDF on the
  counter-based uniform). Unbiased (Lemma 4): E[W'] = sum_k p_k w_k.
* ``scheme_ii`` is Assumption 6 (Theorem 3): a uniform K-subset without replacement
  (``_rng.participants``, the block-cyclic algorithms' sampler) and W' = (N/K) sum_{k in S} p_k w_k.
  The theorem also assumes balanced data p_k = 1/N; the code runs any p, and with unbalanced p the
  coefficients need not sum to 1 (App. B.1), the instability the paper reports (Fig. 1d, Fig. 4).
  Unbiased for any p: E[W'] = (N/K)(K/N) sum_k p_k w_k.
* ``transformed_scheme_ii`` is Sec. 3.3's transformation for unbalanced data: client k runs SGD on
  F~_k = N p_k F_k (its objective, l2 term included, scaled: every gradient and so every step is
  scaled by N p_k), sampled as scheme_ii and averaged simply, W' = (1/K) sum_{k in S} w_k. F =
  (1/N) sum_k F~_k, so this is Scheme II on balanced objectives; Theorem 3 then holds with
  nu = N max p_k and varsigma = N min p_k.
* ``original`` is FedAvg as McMahan et al. run it (Li's Table 1): a uniform K-subset without
  replacement and W' = sum_{k not in S} p_k W + sum_{k in S} p_k w_k, the unsampled clients
  keeping the broadcast model. It is biased towards W (E[W'] = (1 - K/N) W + (K/N) sum_k p_k w_k),
  which is why Li's analysis does not cover it.
* ``full`` is Sec. 2's full participation: every client, W' = sum_k p_k w_k.

Step sizes are the config's ``step_size`` under every scheme: Theorems 2-3 decay eta_t per local
iteration (eta_t = 2 / (mu (gamma + t)), ``StepSize.li``), the paper's experiments per round
(eta_0 / (1 + round), ``StepSize.per_round``); transformed Scheme II multiplies client k's steps by
N p_k on top.

Each scheme is two steps, the same in the Numba kernel (``local_sgd``) and the NumPy reference
(``reference``): ``draw_clients`` (which clients, with multiplicity c_k, round r of a seed) and
``aggregation`` (the a_k and b of that sample), with NumPy twins ``draw_clients_np`` and
``aggregation_np``. Only clients with c_k > 0 compute in the kernel.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from problems import FederatedProblem

from .._rng import participants, participants_np, weighted_draws, weighted_draws_np, weights_cdf
from ..config import ConfigError, config_int

__all__ = [
    "FULL", "ORIGINAL", "PARTICIPATION_SCHEMES", "SCHEME_I", "SCHEME_II", "TRANSFORMED_SCHEME_II",
    "KernelParticipation", "RoundSample", "aggregation", "aggregation_np", "check_participants_fit",
    "check_participation", "draw_clients",
    "draw_clients_np", "kernel_participation", "local_step_scales", "round_sample", "sample_buffers", "sample_round",
]

FULL, SCHEME_I, SCHEME_II, TRANSFORMED_SCHEME_II, ORIGINAL = 0, 1, 2, 3, 4
PARTICIPATION_SCHEMES = {
    "full": FULL, "scheme_i": SCHEME_I, "scheme_ii": SCHEME_II, "transformed_scheme_ii": TRANSFORMED_SCHEME_II,
    "original": ORIGINAL,
}
"""Scheme name (``FedAvgConfig.participation``) -> the kernels' integer code (module docstring)."""


def check_participation(scheme: object, K: object) -> tuple[str, int | None]:
    """The (scheme, K) pair of a config, checked: a known scheme name; K None for ``full``, an
    integer >= 1 otherwise. ConfigError naming ``participation`` or ``participants``."""
    if not isinstance(scheme, str) or scheme not in PARTICIPATION_SCHEMES:
        raise ConfigError(f"participation: unknown scheme {scheme!r}; choose one of {sorted(PARTICIPATION_SCHEMES)}")
    if scheme == "full":
        if K is not None:
            raise ConfigError(f"participants: full participation runs every client; K = {K!r} "
                              "needs a sampling scheme (participation = 'scheme_i', 'scheme_ii', ...)")
        return scheme, None
    if K is None:
        raise ConfigError(f"participants: scheme {scheme!r} samples K clients per round; give K >= 1")
    return scheme, config_int("participants (K)", K)


def check_participants_fit(scheme: str, K: int | None, n_clients: int) -> None:
    """A scheme that samples without replacement needs K <= N; ConfigError naming ``participants``.
    Scheme I draws with replacement and takes any K >= 1."""
    if K is not None and scheme != "scheme_i" and K > n_clients:
        raise ConfigError(f"participants: K = {K} exceeds the number of clients N = {n_clients}; scheme "
                          f"{scheme!r} samples without replacement (scheme_i draws with replacement)")


class KernelParticipation(NamedTuple):
    """A config's scheme as the kernel takes it: ``code`` (PARTICIPATION_SCHEMES), K (N for full
    participation), ``cdf`` (N,) the weights' CDF for Scheme I's draws (``_rng.weights_cdf``) and
    ``step_scales`` (N,) the factor of every local step (N p_k for transformed Scheme II, else 1)."""

    code: int
    participants: int
    cdf: np.ndarray
    step_scales: np.ndarray


def local_step_scales(scheme: str, weights: np.ndarray) -> np.ndarray:
    """Per-client factor of the local gradient, shape (N,): N p_k under transformed Scheme II
    (client k descends F~_k = N p_k F_k), 1 otherwise (exactly 1.0, so eta * 1.0 = eta)."""
    N = weights.size
    return N * np.asarray(weights, dtype=np.float64) if scheme == "transformed_scheme_ii" else np.ones(N)


def kernel_participation(scheme: str, K: int | None, problem: FederatedProblem) -> KernelParticipation:
    """The kernel's arrays for ``scheme`` with K sampled clients on ``problem`` (K None: full)."""
    weights = problem.weights
    return KernelParticipation(PARTICIPATION_SCHEMES[scheme], problem.n_clients if K is None else K,
                               weights_cdf(weights), local_step_scales(scheme, weights))


@njit(cache=True)
def draw_clients(code, pkey, r, K, cdf, hashes, drawn, counts):
    """counts (N,) <- how often each client is drawn in round r (0 or 1 without replacement, the
    multiplicity c_k under Scheme I); every client once under full participation. ``pkey`` the
    seed's ``_rng.participation_key``; work space ``hashes`` (N,) uint64 and ``drawn`` (K,) int64."""
    N = counts.size
    if code == FULL:
        for k in range(N):
            counts[k] = 1
        return
    for k in range(N):
        counts[k] = 0
    if code == SCHEME_I:
        weighted_draws(pkey, r, K, cdf, drawn)
    else:
        participants(pkey, r, N, K, hashes, drawn)
    for j in range(K):
        counts[drawn[j]] += 1


@njit(cache=True)
def aggregation(code, counts, weights, K, coefficients):
    """coefficients (N,) <- a_k of the sampled clients (0 for the others); returns b, the weight of
    the broadcast model (module docstring's table)."""
    N = counts.size
    broadcast = 0.0
    for k in range(N):
        if counts[k] == 0:
            coefficients[k] = 0.0
            if code == ORIGINAL:
                broadcast += weights[k]
        elif code == FULL or code == ORIGINAL:
            coefficients[k] = weights[k]
        elif code == SCHEME_I:
            coefficients[k] = counts[k] / K
        elif code == SCHEME_II:
            coefficients[k] = (N / K) * weights[k]
        else:
            coefficients[k] = 1.0 / K
    return broadcast


@njit(cache=True)
def sample_buffers(N, K):
    """The work space of a run's round samples (``sample_round``): counts (N,) int64, coefficients (N,)
    float64, hashes (N,) uint64 and drawn (K,) int64, uninitialised."""
    return np.empty(N, dtype=np.int64), np.empty(N), np.empty(N, dtype=np.uint64), np.empty(K, dtype=np.int64)


@njit(cache=True)
def sample_round(code, pkey, r, K, cdf, weights, counts, coefficients, hashes, drawn, broadcast):
    """The sample of round r in the kernels: counts and coefficients <- ``draw_clients`` and
    ``aggregation`` of round r, returning b; under full participation (the same sample every round)
    only round 0 computes them, later rounds keep them and return ``broadcast``, the b of round 0."""
    if r == 0 or code != FULL:
        draw_clients(code, pkey, r, K, cdf, hashes, drawn, counts)
        return aggregation(code, counts, weights, K, coefficients)
    return broadcast


def draw_clients_np(scheme: str, seed: int, r: int, K: int | None, weights: np.ndarray) -> np.ndarray:
    """NumPy twin of ``draw_clients``: the multiplicities c_k (N,) int64 of round r of ``seed``."""
    N = weights.size
    if scheme == "full":
        return np.ones(N, dtype=np.int64)
    if scheme == "scheme_i":
        drawn = weighted_draws_np(seed, r, K, weights_cdf(weights))
    else:
        drawn = participants_np(seed, r, N, K)
    return np.bincount(drawn, minlength=N).astype(np.int64)


def aggregation_np(scheme: str, counts: np.ndarray, weights: np.ndarray, K: int | None) -> tuple[np.ndarray, float]:
    """NumPy twin of ``aggregation``: (a (N,), b) for the multiplicities ``counts`` (N,)."""
    N = weights.size
    sampled = counts > 0
    if scheme in ("full", "original"):
        coefficients = np.where(sampled, weights, 0.0)
    elif scheme == "scheme_i":
        coefficients = counts / K
    elif scheme == "scheme_ii":
        coefficients = np.where(sampled, (N / K) * weights, 0.0)
    else:
        coefficients = np.where(sampled, 1.0 / K, 0.0)
    broadcast = float(np.sum(weights[~sampled])) if scheme == "original" else 0.0
    return coefficients, broadcast


class RoundSample(NamedTuple):
    """One round's sample: ``counts`` (N,) int64 the multiplicities c_k, ``coefficients`` (N,) the
    a_k and ``broadcast`` b, so that W' = b W + sum_k a_k w_k (module docstring)."""

    counts: np.ndarray
    coefficients: np.ndarray
    broadcast: float


def round_sample(scheme: str, K: int | None, weights: np.ndarray, seed: int, r: int) -> RoundSample:
    """The sample of round r (0-based) of ``seed`` under ``scheme`` with K clients on client
    weights p (N,): what the kernel and the reference both use (the reference computes it with
    this function)."""
    weights = np.asarray(weights, dtype=np.float64)
    counts = draw_clients_np(scheme, seed, r, K, weights)
    return RoundSample(counts, *aggregation_np(scheme, counts, weights, K))
