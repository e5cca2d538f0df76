"""`fedbound bench`'s CNN workload: one local SGD step of Ding et al.'s net at batch 2 and 32,
fedbound's float32 kernel against the NumPy reference, JAX, PyTorch and its floor.

Workload (issue 12; Ding et al. 2020, Sec. 5): the PyTorch-tutorial CIFAR-10 net
(``problems.models.tutorial_cifar_net``: conv 3->6 5x5, ReLU, max-pool 2, conv 6->16 5x5, ReLU,
max-pool 2, fc 400->120->84->10), one local SGD step theta <- theta - lr grad (forward, backward,
update) on 32x32x3 images, at Ding et al.'s batch 2 and at batch 32. Each row is a
``bench_pairs.Comparison`` (units: images), one thread everywhere (the Numba kernel has no
parallel loop, BLAS is limited to one thread, JAX's CPU backend and PyTorch are asked for one):

- numpy reference / kernel: ``reference.sgd_steps_np`` (im2col + BLAS, a tenth of the kernel's
  steps per call) against ``kernel.sgd_steps``, both float32 (the CNN fast path);
- jax / kernel: ``bench_jax.jax_cnn_peer``, the step jitted once and called per minibatch;
- pytorch / kernel: ``bench_torch.torch_cnn_peer``, ``nn.Sequential`` + ``optim.SGD`` on one thread;
- kernel / floor: the floor below.

A peer that is not installed gets a row saying so (neither is a dependency). Agreement
(``AGREEMENT_STEPS`` steps from one initialisation on the same images, batch 2): the NumPy
reference against the Numba kernel in float64 (relative max-norm difference of the parameters;
<= 1e-10 is the library's contract), the float32 kernel against the float64 kernel, and each peer
against the float32 kernel.

Floor: the time the core's FMA pipes need for the step's multiply-adds, a lower bound on any
implementation of the direct convolution and dense layers on one core, timed as an engine
alternated with the kernel (``bench_peak.peak_engine``: the flops at the measured peak of
``bench_peak.fma_peak``, independent FMA chains in registers; 114.8 float32 GFLOP/s here, 32 flops
a cycle, where the 1000^3 sgemm reaches 97.8). The flops are ``NetworkLayout.flops_per_image`` per
image, 2 x the multiply-adds of the conv and dense layers' forward, weight-gradient and
input-gradient passes (none for the first layer, whose input is the image); for the tutorial net
3,204,720 = 2 x (2 x 352,800 (conv1: 28*28*6 outputs x 75 inputs, forward and weight gradient) +
3 x 240,000 (conv2: 10*10*16 x 150) + 3 x (48,000 + 10,080 + 840) (fc 400->120->84->10)), the same
at every batch: ~27.9 us per image at 114.8 GFLOP/s. Why it is a bound: every implementation that
computes these passes does each multiply-add once, at most one FMA lane does it, and no code runs
FMAs faster than the pipes' throughput, which ``fma_peak`` reaches (its only limit, module
docstring there), so kernel / floor >= 1 whatever the kernel's loops, BLAS calls or layouts. Left
out, so the floor stays below every implementation: bias, ReLU, pooling, softmax and the update
(about 3% more arithmetic, none of it multiply-adds), the patch matrices' and planes' copies, and
memory traffic (per image 12 KB of image read once; the 248 KB of float32 parameters stay in L2
between steps). What it does not bound: methods with fewer multiply-adds (Winograd or FFT
convolutions), or backward passes that skip the max-pools' structural zeros (each 2x2 window
routes its gradient to one of its 4 inputs, so 3/4 of the conv layers' output gradients are 0:
skipping them needs 1,955,520 flops per image, 61%); fedbound's kernel does neither, and a peer
that did could run below the floor. ``step_products`` lists the passes as im2col products (their
flops sum to the count). Measured (3 bench runs of 7 pairs, load 14-16): kernel / floor 2.75-2.80
at batch 2 and 2.67-2.74 at batch 32, the kernel at 77-80 and 75-80 us per image.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from problems import check_int
from problems.models import ConvNet, tutorial_cifar_net
from problems.models.cnn import Conv2d, Dense
from problems.models.cnn.kernel import sgd_steps
from problems.models.cnn.reference import sgd_steps_np

from .bench_jax import jax_cnn_peer
from .bench_pairs import Comparison, Engine, compare, skipped
from .bench_peak import peak_engine, peak_gflops
from .bench_timing import MIN_REPEATS, jax_one_thread, matmul_gflops
from .bench_torch import torch_cnn_peer, torch_version

__all__ = ["CNN_BATCHES", "AGREEMENT_STEPS", "CNNBench", "MatrixProduct", "cnn_bench", "step_products"]

CNN_BATCHES = (2, 32)
"""Ding et al.'s local batch size (Sec. 5, "Implementation Settings"), and a larger one."""
AGREEMENT_STEPS = 10
_LR = 1e-3  # small enough that the timed steps on random images stay finite
_IMAGES = 16  # minibatches in the images the steps cycle through
_IMAGES_PER_CALL, _QUICK_IMAGES_PER_CALL = 1000, 200  # kernel steps per call: these over the batch
_UNIT = "image"
_JAX_ABSENT = "jax is not installed: the JAX CNN peer is skipped (pip install jax to time it)"
_TORCH_ABSENT = "torch is not installed: the PyTorch CNN peer is skipped (pip install torch to time it)"


@dataclass(frozen=True)
class MatrixProduct:
    """One (m, k) x (k, n) product of a step: 2 m k n flops; ``what`` says which."""

    m: int
    k: int
    n: int
    what: str

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n


@dataclass(frozen=True)
class CNNBench:
    """The CNN workload's rows (module docstring): per batch the kernel's steps per call and the
    products' shapes; the core's float32 peak (the floor's rate, ``bench_peak.peak_gflops``) and
    the 1000^3 float32 product's rate beside it (GFLOP/s, one core); the comparisons; the agreement
    after ``agreement_steps`` steps at batch 2 (None: the peer is not installed)."""

    network: str
    flops_per_image: int
    batches: tuple[int, ...]
    steps: tuple[int, ...]
    product_shapes: tuple[str, ...]
    peak_float32_gflops_1core: float
    matmul_float32_gflops_1core: float
    comparisons: tuple[Comparison, ...]
    numpy_rel_diff_float64: float
    float32_rel_diff: float
    jax_rel_diff_float32: float | None
    torch_rel_diff_float32: float | None
    agreement_steps: int
    torch_version: str | None

    @property
    def floor_images_per_s(self) -> float:
        """Images per second at the floor: the flops per image at the core's float32 peak."""
        return self.peak_float32_gflops_1core * 1e9 / self.flops_per_image

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "comparisons": [c.to_json() for c in self.comparisons],
                "floor_images_per_s": self.floor_images_per_s}


def step_products(network: ConvNet, batch: int) -> tuple[MatrixProduct, ...]:
    """The matrix products of one SGD step at ``batch`` written as im2col + GEMM (module
    docstring); their flops sum to batch x ``network.layout.flops_per_image()``."""
    batch = check_int("batch", batch, minimum=1)
    shapes = network.layout.activation_shapes()
    products = []
    for i, layer in enumerate(network.layout.layers):
        if isinstance(layer, Conv2d):
            oh, ow, oc = shapes[i + 1]
            rows, inner = batch * oh * ow, layer.fan_in
        elif isinstance(layer, Dense):
            rows, inner, oc = batch, layer.in_features, layer.out_features
        else:
            continue
        products.append(MatrixProduct(rows, inner, oc, f"layer {i} forward"))
        products.append(MatrixProduct(inner, rows, oc, f"layer {i} weight gradient"))
        if i > 0:
            products.append(MatrixProduct(rows, oc, inner, f"layer {i} input gradient"))
    return tuple(products)


def cnn_bench(pairs: int = 5, quick: bool = False, network: ConvNet | None = None,
              batches: tuple[int, ...] = CNN_BATCHES) -> CNNBench:
    """The CNN workload's rows (module docstring), ``pairs`` >= 3 alternated pairs each; a call of
    the kernel runs 1000 images' steps (``quick``: 200). ``network`` defaults to the tutorial
    CIFAR-10 net; batch 2 must be among ``batches`` (the agreement runs there)."""
    pairs = check_int("repeats", pairs, minimum=MIN_REPEATS, error=ValueError)
    if 2 not in batches:
        raise ValueError(f"batches: must include 2 (the agreement's batch), got {batches!r}")
    network = network if network is not None else tutorial_cifar_net()
    jax_one_thread()
    rows: list[Comparison] = []
    steps, shapes, diffs = [], [], {}
    with threadpool_limits(limits=1):
        for batch in batches:
            n = max(1, (_QUICK_IMAGES_PER_CALL if quick else _IMAGES_PER_CALL) // batch)
            steps.append(n)
            batch_rows, batch_diffs, shape = _batch_rows(network, batch, n, pairs, agreement=batch == 2)
            rows.extend(batch_rows)
            shapes.append(shape)
            diffs.update(batch_diffs)
    return CNNBench(network.name, network.layout.flops_per_image(), tuple(batches), tuple(steps), tuple(shapes),
                    peak_gflops(pairs), matmul_gflops(pairs, np.float32), tuple(rows), diffs["numpy"], diffs["float32"], diffs["jax"],
                    diffs["torch"], AGREEMENT_STEPS, torch_version())


def _batch_rows(network: ConvNet, batch: int, n: int, pairs: int,
                agreement: bool) -> tuple[list[Comparison], dict[str, float | None], str]:
    """One batch's rows (``n`` kernel steps per call), the agreement at this batch (an empty dict
    unless ``agreement``) and the products' shapes."""
    name = f"CNN b{batch}"
    images, labels = _inputs(network, batch)
    params64 = network.init_params(0, np.float64)
    params32, images32 = params64.astype(np.float32), images.astype(np.float32)
    table, work = network.layout.table, network.workspace(batch, np.float32)

    def kernel_run() -> None:
        sgd_steps(table, params32.copy(), images32, labels, batch, _LR, n, *work)

    reference_steps = max(1, n // 10)
    kernel = Engine("kernel", kernel_run, n * batch)
    reference = Engine("numpy reference", lambda: sgd_steps_np(network.layout, params32.copy(), images32, labels,
                                                               batch, _LR, reference_steps), reference_steps * batch)
    rows = [compare(name, reference, kernel, pairs, _UNIT)]
    numba32 = _numba_steps(network, params32, images32, labels, batch)
    diffs: dict[str, float | None] = {}
    for peer_name, key, make, absent in (("jax", "jax", jax_cnn_peer, _JAX_ABSENT),
                                         ("pytorch", "torch", torch_cnn_peer, _TORCH_ABSENT)):
        peer = make(network, params32, images32, labels, batch, _LR)
        if peer is None:
            rows.append(skipped(name, peer_name, "kernel", _UNIT, absent))
            diffs[key] = None
            continue
        diffs[key] = _rel_diff(peer(AGREEMENT_STEPS), numba32)
        rows.append(compare(name, Engine(peer_name, lambda peer=peer: peer(n), n * batch), kernel, pairs, _UNIT))
    rows.append(compare(name, kernel, peak_engine(n * batch * network.layout.flops_per_image(), n * batch), pairs,
                        _UNIT))
    products = step_products(network, batch)
    largest = max(products, key=lambda p: p.flops)
    shape = f"{len(products)} products, largest ({largest.m}x{largest.k})({largest.k}x{largest.n})"
    if not agreement:
        return rows, {}, shape
    numba64 = _numba_steps(network, params64, images, labels, batch)
    numpy64 = params64.copy()
    sgd_steps_np(network.layout, numpy64, images, labels, batch, _LR, AGREEMENT_STEPS)
    diffs["numpy"] = _rel_diff(numpy64, numba64)
    diffs["float32"] = _rel_diff(numba32, numba64)
    return rows, diffs, shape


def _inputs(network: ConvNet, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """_IMAGES minibatches of N(0, 1) images (float64) and labels from Philox keyed 0."""
    rng = np.random.Generator(np.random.Philox(key=0))
    n = batch * _IMAGES
    images = rng.standard_normal((n, *network.input_shape))
    return images, rng.integers(0, network.n_classes, size=n).astype(np.int64)


def _numba_steps(network: ConvNet, params: np.ndarray, images: np.ndarray, labels: np.ndarray,
                 batch: int) -> np.ndarray:
    """The kernel's parameters after AGREEMENT_STEPS steps from ``params`` (not modified)."""
    out = params.copy()
    sgd_steps(network.layout.table, out, images, labels, batch, _LR, AGREEMENT_STEPS,
              *network.workspace(batch, params.dtype))
    return out


def _rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|, in float64."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
