"""PyTorch's default initialisation of conv and dense layers, from a counter-based generator.

torch.nn.Conv2d and torch.nn.Linear call ``kaiming_uniform_(w, a=sqrt(5))``: gain
sqrt(2 / (1 + a^2)) = sqrt(1/3), bound gain sqrt(3 / fan_in) = 1/sqrt(fan_in); and draw the bias
from U(-1/sqrt(fan_in), 1/sqrt(fan_in)). So every weight and bias of a layer with fan_in inputs per
unit is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), of variance 1/(3 fan_in) (fan_in = K K C_in for a conv,
D_in for a dense layer).

The numbers come from NumPy's Philox4x64-10 (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3", SC 2011), a counter-based generator: ``Generator(Philox(key=seed))`` yields the same
stream on every machine and process, so an initial model is a pure function of (network, seed)
and runs are bit-identical on any executor. (``problems`` cannot import convergence's SplitMix64
hash, and Philox is NumPy's own counter-based generator.) The layers draw in the order of the
flat vector (each weight, row-major, then its bias), in float64; a float32 vector is the float64
one rounded, so both precisions start from the same point.
"""

from __future__ import annotations

import numpy as np

from ...validation import ProblemError, check_int
from .layout import NetworkLayout

__all__ = ["default_init"]

_SEED_MAX = 2**64 - 1


def default_init(layout: NetworkLayout, seed: int, dtype: np.dtype | type = np.float32) -> np.ndarray:
    """The flat parameter vector (layout.n_params,) of PyTorch's default initialisation (module
    docstring) drawn from Philox keyed by ``seed`` (an integer in [0, 2^64)); dtype float32 (the
    CNN fast path, the default) or float64 (the precision the Numba/NumPy agreement is tested in)."""
    seed = check_int("seed", seed, minimum=0, maximum=_SEED_MAX)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ProblemError(f"dtype: expected float64 or float32, got {dtype}")
    rng = np.random.Generator(np.random.Philox(key=seed))
    params = np.empty(layout.n_params, dtype=np.float64)
    for block in layout.parameter_blocks:
        bound = 1.0 / np.sqrt(block.fan_in)
        params[block.offset : block.offset + block.size] = rng.uniform(-bound, bound, size=block.size)
    return params.astype(dtype, copy=False)
