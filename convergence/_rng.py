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
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["GOLDEN", "SEED_MAX", "mix64", "mix64_np", "seed_key", "stream_key", "sample_index", "sample_indices_np"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
SEED_MAX = 2**63 - 1
"""Largest seed: the kernels take the seed as a signed 64-bit integer (int64) before mixing it."""
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


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
