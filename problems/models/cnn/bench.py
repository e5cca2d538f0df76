"""Micro-benchmark of one CNN SGD step (forward, backward, update) in images per second.

The workload is the issue's: the tutorial CIFAR-10 net at batch 2 on 32x32x3 images, one local
SGD step theta <- theta - lr grad per minibatch. The Numba path runs ``kernel.sgd_steps`` (the
step loop compiled, no Python per step, one thread); the NumPy path runs
``reference.sgd_steps_np`` with BLAS limited to one thread (threadpoolctl), so both are per core.
Each figure is the median over ``repeats`` timed runs of ``steps`` steps each. The floor is
``flops_per_image`` (``NetworkLayout.flops_per_image``: about 3.2 MFLOP for the tutorial net)
over a machine's matrix-product rate; this module measures, it does not estimate that rate.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from ...validation import check_int
from .kernel import sgd_steps
from .network import ConvNet
from .networks import tutorial_cifar_net
from .reference import sgd_steps_np

__all__ = ["StepRate", "cnn_step_rate"]

_LR = 1e-3  # small enough that a few hundred steps on random images stay finite


@dataclass(frozen=True)
class StepRate:
    """Measured SGD step rates of one network: images per second (median over repeats)."""

    network: str
    batch: int
    steps: int
    dtype: str
    numba_images_per_s: float
    numpy_images_per_s: float
    flops_per_image: int

    @property
    def speedup(self) -> float:
        """Numba rate over NumPy rate."""
        return self.numba_images_per_s / self.numpy_images_per_s

    @property
    def numba_gflops(self) -> float:
        """Arithmetic rate of the Numba path, GFLOP/s (flops_per_image x images per second)."""
        return self.flops_per_image * self.numba_images_per_s / 1e9


def cnn_step_rate(
    network: ConvNet | None = None,
    *,
    batch: int = 2,
    steps: int = 500,
    repeats: int = 5,
    dtype: np.dtype | type = np.float32,
    seed: int = 0,
) -> StepRate:
    """Images per second of one SGD step at ``batch`` on ``network`` (default: the tutorial CIFAR-10
    net), Numba and NumPy, in ``dtype`` (float32, the CNN fast path, or float64); images are
    N(0, 1) draws from Philox keyed by ``seed`` (the rate does not depend on their values)."""
    from threadpoolctl import threadpool_limits

    network = network if network is not None else tutorial_cifar_net()
    batch = check_int("batch", batch, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    repeats = check_int("repeats", repeats, minimum=1)
    params0 = network.init_params(seed, dtype)
    rng = np.random.Generator(np.random.Philox(key=seed))
    n_images = batch * 16
    images = rng.standard_normal((n_images, *network.input_shape)).astype(params0.dtype)
    labels = rng.integers(0, network.n_classes, size=n_images).astype(np.int64)
    table = network.layout.table
    work = network.workspace(batch, params0.dtype)

    def numba_run(n: int) -> None:
        sgd_steps(table, params0.copy(), images, labels, batch, _LR, n, *work)

    def numpy_run(n: int) -> None:
        sgd_steps_np(network.layout, params0.copy(), images, labels, batch, _LR, n)

    numba_run(1)  # compile (or load from the cache) outside the timing
    numpy_steps = max(1, steps // 10)
    with threadpool_limits(limits=1):
        numba_rate = _median_rate(numba_run, steps, batch, repeats)
        numpy_rate = _median_rate(numpy_run, numpy_steps, batch, repeats)
    return StepRate(
        network.name, batch, steps, params0.dtype.name, numba_rate, numpy_rate, network.layout.flops_per_image()
    )


def _median_rate(run, steps: int, batch: int, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(steps)
        rates.append(steps * batch / (time.perf_counter() - start))
    return statistics.median(rates)
