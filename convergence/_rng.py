"""Counter-based minibatch sampling shared by the Numba kernels and the NumPy reference paths.

Every sampled row index is a pure function of (seed, global step t, client k, slot j), so a
trajectory does not depend on the order in which clients, seeds or runs are executed: this is
what makes results bit-identical across executors and job counts, and lets the vectorised NumPy
reference draw the very same minibatches as the sequential kernel.

The mixing function is SplitMix64's finaliser (Steele, Lea, Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014), a bijection on 64-bit words with good avalanche.
An index in [0, n) is taken from the high 32 bits by multiply-shift, ((h >> 32) * n) >> 32
(Lemire 2019), whose bias is below n / 2^32.

    stream(seed, t, k) = mix(mix(seed + G) + G * (t * N + k + 1))
    index(seed, t, k, j) = multiply_shift(mix(stream + G * (j + 1)), n_k)

with G = 0x9E3779B97F4A7C15 and all arithmetic modulo 2^64.

Client sampling (partial participation) uses a second key per seed, the participation key
pkey = mix(key ^ PARTICIPATION_SALT), so that which clients take part never correlates with their
minibatches, and hashes it the same way:

* a uniform K-subset of N clients without replacement (``participants``): the K clients with the
  smallest stream_key(pkey, r, k, N) in round r. mix is a bijection, so the N hashes are distinct
  and, for a pseudorandom mix, every K-subset is equally likely (the block-cyclic algorithms' and
  FedAvg's Schemes II);
* K draws with replacement with probabilities p_k (``weighted_draws``): draw j of round r takes
  u_j = (stream_key(pkey, r, j, K) >> 11) 2^-53, uniform on the 2^53 multiples of 2^-53 in
  [0, 1), and returns the client k with cdf[k-1] <= u_j < cdf[k] (inverse CDF), where
  cdf = cumsum(p) / sum(p) (``weights_cdf``: cdf[N-1] = 1 exactly, so u_j < 1 always finds a
  client, and a client with p_k = 0 is never drawn). FedAvg's Scheme I.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "GOLDEN", "PARTICIPATION_SALT", "SEED_MAX", "mix64", "mix64_np", "participants", "participants_np",
    "participation_key", "sample_index", "sample_indices_np", "seed_key", "stream_key", "weighted_draws",
    "weighted_draws_np", "weights_cdf",
]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
SEED_MAX = 2**63 - 1
"""Largest seed: the kernels take the seed as a signed 64-bit integer (int64) before mixing it."""
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_UNIT = 2.0**-53
PARTICIPATION_SALT = np.uint64(0xD1B54A32D192ED03)
"""XOR-ed into the seed key to make the participation key (an odd constant with mixed bits)."""


@njit(cache=True)
def mix64(z):
    """SplitMix64 finaliser on a uint64 (scalar or array)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def seed_key(seed: int) -> np.uint64:
    """Per-seed key mix(seed + G)."""
    return mix64(np.uint64(seed) + GOLDEN)


@njit(cache=True)
def stream_key(key: np.uint64, t: int, k: int, n_clients: int) -> np.uint64:
    """Key of client k's minibatch at global step t."""
    return mix64(np.uint64(key) + GOLDEN * np.uint64(t * n_clients + k + 1))


@njit(cache=True)
def sample_index(stream: np.uint64, j: int, n: int) -> int:
    """The j-th row index in [0, n) of a minibatch stream."""
    h = mix64(np.uint64(stream) + GOLDEN * np.uint64(j + 1))
    return np.int64(((h >> _S32) * np.uint64(n)) >> _S32)


def sample_indices_np(seed: int, t: int, sizes: np.ndarray, batch: int) -> np.ndarray:
    """All clients' minibatch row indices at step t, shape (N, batch), NumPy-vectorised.

    Computes the same numbers as ``sample_index`` in the kernels (local indices per client).
    """
    sizes = np.asarray(sizes, dtype=np.uint64)
    n_clients = sizes.size
    with np.errstate(over="ignore"):  # modulo 2^64, as in the kernels
        key = mix64_np(np.uint64(seed) + GOLDEN)
        ks = np.arange(n_clients, dtype=np.uint64)
        streams = mix64_np(key + GOLDEN * (np.uint64(t) * np.uint64(n_clients) + ks + np.uint64(1)))
    js = np.arange(1, batch + 1, dtype=np.uint64)
    h = mix64_np(streams[:, None] + GOLDEN * js[None, :])
    return (((h >> _S32) * sizes[:, None]) >> _S32).astype(np.int64)


def mix64_np(z: np.ndarray) -> np.ndarray:
    """NumPy twin of mix64 (uint64 arithmetic wraps modulo 2^64)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return z ^ (z >> _S31)


@njit(cache=True)
def participation_key(seed: int) -> np.uint64:
    """The key of a seed's client sampling, mix(seed_key(seed) ^ PARTICIPATION_SALT)."""
    return mix64(seed_key(seed) ^ PARTICIPATION_SALT)


@njit(cache=True)
def participants(pkey, r, N, K, hashes, out):
    """out[:K] <- the K clients of round r (ascending): smallest stream_key(pkey, r, k, N).

    A uniform K-subset of the N clients, without replacement; ``hashes`` (N,) uint64 is work space.
    """
    for k in range(N):
        hashes[k] = stream_key(pkey, r, k, N)
    chosen = np.sort(np.argsort(hashes, kind="mergesort")[:K])
    for j in range(K):
        out[j] = chosen[j]


def participants_np(seed: int, r: int, n_clients: int, k: int) -> np.ndarray:
    """NumPy twin of ``participants``: the k clients of round r, ascending, shape (k,)."""
    with np.errstate(over="ignore"):
        pkey = mix64_np(mix64_np(np.uint64(seed) + GOLDEN) ^ PARTICIPATION_SALT)
        ids = np.arange(n_clients, dtype=np.uint64)
        hashes = mix64_np(pkey + GOLDEN * (np.uint64(r) * np.uint64(n_clients) + ids + np.uint64(1)))
    return np.sort(np.argsort(hashes, kind="stable")[:k])


def weights_cdf(weights: np.ndarray) -> np.ndarray:
    """cdf = cumsum(p) / sum(p), shape (N,), for ``weighted_draws``: non-decreasing, cdf[N-1] = 1
    exactly (x / x = 1 in IEEE arithmetic). p (N,) non-negative with a positive sum."""
    c = np.cumsum(np.asarray(weights, dtype=np.float64))
    return c / c[-1]


@njit(cache=True)
def weighted_draws(pkey, r, K, cdf, out):
    """out[:K] <- K clients of round r drawn independently with replacement, client k with
    probability cdf[k] - cdf[k-1] (``weights_cdf``): draw j is the first k with cdf[k] > u_j,
    u_j = (stream_key(pkey, r, j, K) >> 11) 2^-53 in [0, 1) (module docstring)."""
    N = cdf.size
    for j in range(K):
        u = np.float64(stream_key(pkey, r, j, K) >> _S11) * _UNIT
        lo, hi = 0, N - 1  # the answer lies in [lo, hi]: cdf[N-1] = 1 > u
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        out[j] = lo


def weighted_draws_np(seed: int, r: int, K: int, cdf: np.ndarray) -> np.ndarray:
    """NumPy twin of ``weighted_draws``: the K clients drawn in round r, in draw order, shape (K,)."""
    with np.errstate(over="ignore"):
        pkey = mix64_np(mix64_np(np.uint64(seed) + GOLDEN) ^ PARTICIPATION_SALT)
        js = np.arange(K, dtype=np.uint64)
        h = mix64_np(pkey + GOLDEN * (np.uint64(r) * np.uint64(K) + js + np.uint64(1)))
    u = (h >> _S11).astype(np.float64) * _UNIT
    return np.searchsorted(cdf, u, side="right").astype(np.int64)
