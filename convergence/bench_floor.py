"""The floor of `fedbound bench`'s linear workloads (W1-W3): what no implementation of a local
client-step can beat, timed as an engine alternated with the kernel.

    floor = the step's matrix products at the workload's own shapes + its exps,

the products over the N clients of one step as NumPy's batched matmul (single-threaded BLAS):
(n, m) x (m, C) and (m, n) x (n, C) (n rows used, m = |S_k| features, C classes) for a minibatch
step, (m, m) x (m, C) for an exact least-squares step in Gram form; the exps, ``exp_calls`` per
client-step over a buffer, by the cheaper of NumPy's vectorised ``np.exp`` (out= a preallocated
buffer) and the kernels' own ``vector_exp.exp_inplace`` (``machine_rates``): a floor may not
charge more than the kernel pays. The flops count the support-restricted step
(``PackedClients.flops_per_step``). The floor counts no memory traffic (bench prints the bytes
beside it, ``PackedClients.bytes_per_step``), no softmax arithmetic beside the exps (max, shift,
sum, scale: 4 b C flops) and no sampler, so it is below what any implementation can reach.
``FloorModel.large_product_us`` prices the same flops at the 1000^3 product's rate: at tiny
shapes (W1's 5 x 5 Gram products) NumPy's per-call overhead, not the core, sets the rate at the
shapes, and the kernel runs below the timed floor.

W2 per client-step: 60,390 flops (4 b m C = 58,560 in the two products, b = 24 rows, m = 61
features with the bias, C = 10; 3 m C = 1,830 in the update), 240 exps, and 11,712 bytes of data
rows read (b m 8) at random from a 17 MB data set. Checked on this machine (AMD EPYC, Zen 4: 16
double flops a cycle from two 256-bit FMA pipes): the product rate at W2's shapes (~40 GFLOP/s,
OpenBLAS's small-matrix kernels) is near the core's peak. Where the kernel's time above the floor
goes on W2 (measured in-process, CPU time per client-step at E = 20, ~2.8 us on a loaded
machine): the two BLAS products ~1.5 us, the softmax residuals ~0.45 us (~0.25 us of it the exps),
the row gathers, the sampler and the update, and the data rows arriving cold (every client
reading client 0's rows, an experiment: ~2.45 against ~3.03 us; prefetching the next step's rows
into L2, ``algorithms.prefetch``, takes ~0.25 us of that back). The cold cost falls slowly with E
(E = 1, 5, 20, 80 with the same total steps: 3.72, 3.06, 2.83, 2.66 us); independent of E remain
~0.8 us per client and round. Sampled with ``perf`` (cpu-clock, the kernel alone, load ~13): before
``local_steps.gather_rows`` 10.6% of the kernel's samples were Numba's atomic reference counts
(NRT incref / decref) around the in-loop row copy, 4.5% after (the calls into ``data_gradient`` and
its array views), 0.8% once the step made no views (``flat_products``, ``_nrt=False``); OpenBLAS's
two small-matrix kernels take ~48% of the samples, the exps ~8%.
The floor leaves out what any implementation also pays at these shapes: the 11.7 kB of random rows,
the softmax bookkeeping and the update (~0.2 us, ~0.1 us), so kernel / floor cannot reach 1 with
BLAS's products.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .algorithms.packing import PackedClients
from .bench_pairs import Engine
from .bench_timing import matmul_gflops, median_seconds

__all__ = ["FloorModel", "MachineRates", "floor_engine", "floor_model", "machine_rates"]


@dataclass(frozen=True)
class MachineRates:
    """Single-core rates: GFLOP/s of a 1000 x 1000 float64 product; ns per exp over ``exp_buffer``
    doubles in [-10, 0] (in cache; softmax's shifted logits) of ``np.exp`` (out=) and of the
    kernels' ``exp_inplace``, and the cheaper of the two (``exp_ns``), all medians of process CPU."""

    matmul_gflops_1core: float
    exp_numpy_ns: float
    exp_kernel_ns: float
    exp_buffer: int

    @property
    def exp_ns(self) -> float:
        return min(self.exp_numpy_ns, self.exp_kernel_ns)

    @property
    def kernel_exp_is_cheaper(self) -> bool:
        return self.exp_kernel_ns < self.exp_numpy_ns


@dataclass(frozen=True)
class FloorModel:
    """A workload's floor inputs per client-step: flops, exps, bytes of data read, the products'
    shapes, and the floor priced at the 1000^3 product rate and the cheaper exp (microseconds)."""

    flops: float
    exp_calls: float
    bytes_read: float
    product_shapes: str
    large_product_us: float


def machine_rates(repeats: int) -> MachineRates:
    """Time the 1000^3 product and the two exps (``MachineRates``)."""
    from problems.models.vector_exp import exp_inplace

    x, out = np.random.default_rng(0).uniform(-10.0, 0.0, 1 << 16), np.empty(1 << 16)
    numpy_exp = median_seconds(lambda: np.exp(x, out=out), repeats, calls=100) / x.size * 1e9
    work = x.copy()
    exp_inplace(work, work.size)  # compiled (or loaded) before timing; branch-free: any values cost alike
    kernel_exp = median_seconds(lambda: exp_inplace(work, work.size), repeats, calls=100) / x.size * 1e9
    return MachineRates(matmul_gflops(repeats), numpy_exp, kernel_exp, x.size)


def _product_step(packed: PackedClients, batch_size: int) -> tuple[Callable[[], None], str]:
    """(one local step's products over all N clients, their shapes), m the largest support and n
    the batch (exact gradients: the largest client)."""
    N, C = packed.n_clients, packed.n_classes
    m = packed.max_support
    rng = np.random.default_rng(0)
    if batch_size == 0 and packed.uses_gram.all():
        Q, w, g = rng.random((N, m, m)), rng.random((N, m, C)), np.empty((N, m, C))

        def gram() -> None:
            np.matmul(Q, w, out=g)

        return gram, f"{N} x ({m}x{m})({m}x{C})"
    n = batch_size if batch_size > 0 else int(np.diff(packed.sample_offsets).max())
    X, w, z, g = rng.random((N, n, m)), rng.random((N, m, C)), np.empty((N, n, C)), np.empty((N, m, C))

    def minibatch() -> None:
        np.matmul(X, w, out=z)
        np.matmul(X.transpose(0, 2, 1), z, out=g)

    return minibatch, f"{N} x ({n}x{m})({m}x{C}) + ({m}x{n})({n}x{C})"


def floor_model(packed: PackedClients, batch_size: int, exp_calls: float, rates: MachineRates,
                steps_per_unit: int = 1) -> FloorModel:
    """The floor's inputs for ``steps_per_unit`` SGD steps per client-step (W3: two chains)."""
    flops = steps_per_unit * float(packed.flops_per_step(batch_size).mean())
    exps = steps_per_unit * exp_calls
    large = flops / (rates.matmul_gflops_1core * 1e3) + exps * rates.exp_ns * 1e-3
    return FloorModel(flops, exps, steps_per_unit * float(packed.bytes_per_step(batch_size).mean()),
                      _product_step(packed, batch_size)[1], large)


def floor_engine(packed: PackedClients, batch_size: int, exp_calls: float, rates: MachineRates, client_steps: int,
                 steps_per_unit: int = 1) -> Engine:
    """The floor as an engine: ``client_steps / N`` steps (rounded up), each ``steps_per_unit`` x
    (the products over the N clients + N ``exp_calls`` exps by the cheaper exp); its units are
    client-steps."""
    from problems.models.vector_exp import exp_inplace

    step, _ = _product_step(packed, batch_size)
    N = packed.n_clients
    steps = -(-client_steps // N) * steps_per_unit
    size = round(N * exp_calls)
    x, out = np.random.default_rng(1).uniform(-10.0, 0.0, size), np.empty(size)
    kernel_exp = rates.kernel_exp_is_cheaper

    def run() -> None:
        for _ in range(steps):
            step()
            if size == 0:
                continue
            if kernel_exp:
                exp_inplace(out, size)  # branch-free: the values (growing to inf) cost alike
            else:
                np.exp(x, out=out)

    return Engine("floor", run, steps // steps_per_unit * N)
