"""`fedbound bench`'s CNN workload: one local SGD step of Ding et al.'s net, and its floor.

Workload (issue 12; Ding et al. 2020, Sec. 5): the PyTorch-tutorial CIFAR-10 net
(``problems.models.tutorial_cifar_net``: conv 3->6 5x5, ReLU, max-pool 2, conv 6->16 5x5, ReLU,
max-pool 2, fc 400->120->84->10) at batch 2, one local SGD step theta <- theta - lr grad (forward,
backward, update) on 32x32x3 images. Rates are images per second on one core (single-threaded:
the Numba kernel has no parallel loop, BLAS is limited to one thread, JAX's CPU backend is asked
for one), each the median of ``repeats`` >= 3 timed runs of ``steps`` steps after a warm-up:

- the Numba kernel (``kernel.sgd_steps``) in float32 (the CNN fast path) and float64, and the
  NumPy reference (``reference.sgd_steps_np``, im2col + BLAS) in both, through
  ``problems.models.cnn_step_rate``;
- a JAX peer (``jax_cnn_peer``: the same net with ``lax.conv_general_dilated`` NHWC/HWIO,
  ``reduce_window`` max-pooling, ``jax.grad``, the steps a jit-compiled ``fori_loop``), float32,
  when jax is importable ("not installed" otherwise; JAX is no dependency).

Agreement (``agreement_steps`` steps from one initialisation on the same images): the NumPy
reference against the Numba kernel in float64 (relative max-norm difference of the parameters;
<= 1e-10 is the library's contract), the float32 kernel against the float64 kernel, and the JAX
peer against the float32 kernel.

Floor: flops per image over a single-core float32 matrix-product rate. The flops are
``NetworkLayout.flops_per_image``: 2 x the multiply-adds of the conv and dense layers, forward,
weight gradient and input gradient (none for the first layer, whose input is the image) -- for
the tutorial net 3,204,720 = 2 x (2 x 352,800 (conv1: 28*28*6 outputs x 75) + 3 x 240,000 (conv2:
10*10*16 x 150) + 3 x (48,000 + 10,080 + 840) (fc)), the issue's ~3.2 MFLOP. Bias, ReLU, pooling,
softmax and the update are left out (about 3% more, mostly the update's 2 flops per parameter
over 2 images). The rate is measured twice: at the step's own im2col shapes (``step_products``:
per conv layer (B H'W', K K C_in)(K K C_in, C_out) forward, (K K C_in, B H'W')(B H'W', C_out)
weight gradient and (B H'W', C_out)(C_out, K K C_in) input gradient; per dense layer the same
with B rows), all of one step's products timed together; and at 1000^3. At batch 2 the products
are small (at most 1568 x 75 x 6), so the first rate is far below the second: the floor at the
shapes is what an im2col + BLAS step could reach, the 1000^3 one what the core could.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from problems import check_int
from problems.models import ConvNet, cnn_step_rate, tutorial_cifar_net
from problems.models.cnn import Conv2d, Dense, MaxPool2d
from problems.models.cnn.kernel import sgd_steps
from problems.models.cnn.reference import sgd_steps_np

from .bench_timing import MIN_REPEATS, jax_one_thread, matmul_gflops, median_seconds

__all__ = ["CNN_BATCH", "CNNBench", "MatrixProduct", "cnn_bench", "format_cnn_bench", "jax_cnn_peer",
           "product_rate_float32", "step_products"]

CNN_BATCH = 2
"""Ding et al.'s local batch size (Sec. 5, "Implementation Settings")."""
_LR = 1e-3  # small enough that the timed steps on random images stay finite
_IMAGES = 16  # minibatches in the images the steps cycle through
_STEPS, _QUICK_STEPS = 500, 100
_AGREEMENT_STEPS = 10


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
    """The CNN workload's row of the bench report (module docstring); images per second per core,
    None where the engine was not timed (JAX not installed)."""

    network: str
    batch: int
    steps: int
    repeats: int
    numba_float32_images_per_s: float
    numba_float64_images_per_s: float
    numpy_float32_images_per_s: float
    numpy_float64_images_per_s: float
    jax_float32_images_per_s: float | None
    numpy_rel_diff_float64: float
    float32_rel_diff: float
    jax_rel_diff_float32: float | None
    agreement_steps: int
    flops_per_image: int
    product_gflops_at_shapes: float
    product_shapes: str
    matmul_float32_gflops_1core: float
    floor_images_per_s: float
    floor_large_product_images_per_s: float
    jax_note: str | None

    @property
    def numba_over_floor(self) -> float:
        """Share of the floor at the step's shapes the float32 kernel reaches."""
        return self.numba_float32_images_per_s / self.floor_images_per_s

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "numba_over_floor": self.numba_over_floor}


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


def product_rate_float32(products: tuple[MatrixProduct, ...], repeats: int) -> float:
    """Single-core GFLOP/s of ``np.matmul`` over all ``products`` in float32 (out= preallocated
    buffers), the median of ``repeats`` timings of enough calls to last >= 2 ms."""
    rng = np.random.default_rng(0)
    operands = [(rng.random((p.m, p.k), dtype=np.float32), rng.random((p.k, p.n), dtype=np.float32),
                 np.empty((p.m, p.n), dtype=np.float32)) for p in products]

    def step() -> None:
        for a, b, out in operands:
            np.matmul(a, b, out=out)

    flops = sum(p.flops for p in products)
    with threadpool_limits(limits=1):
        step()
        calls = max(1, math.ceil(2e-3 / median_seconds(step, 1)))
        return flops / median_seconds(step, repeats, calls) / 1e9


def jax_cnn_peer(network: ConvNet, params0: np.ndarray, images: np.ndarray, labels: np.ndarray, batch: int,
                 lr: float) -> Callable[[int], np.ndarray] | None:
    """A jit-compiled JAX run of ``n`` SGD steps of ``network`` from ``params0`` (float32) on the
    minibatches rows [(s b) mod n_images, + b) -- ``kernel.sgd_steps``'s order -- returning the
    parameters (waits for the device); None when jax is not importable. Each new ``n`` compiles
    once: time after a warm-up call with the same ``n``."""
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        return None
    layout = network.layout
    blocks = {block.layer: block for block in layout.parameter_blocks}

    def weights(theta: Any, i: int) -> tuple[Any, Any]:
        block = blocks[i]
        w = theta[block.offset : block.offset + block.weight_size].reshape(block.weight_shape)
        return w, theta[block.offset + block.weight_size : block.offset + block.size]

    def loss(theta: Any, x: Any, y: Any) -> Any:
        for i, layer in enumerate(layout.layers):
            if isinstance(layer, Conv2d):
                w, b = weights(theta, i)
                x = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b
            elif isinstance(layer, MaxPool2d):
                x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            elif isinstance(layer, Dense):
                w, b = weights(theta, i)
                x = x.reshape(x.shape[0], -1) @ w + b
            else:
                x = jnp.maximum(x, 0)
        picked = jnp.take_along_axis(x, y[:, None], axis=1)[:, 0]
        return jnp.mean(jax.nn.logsumexp(x, axis=1) - picked)

    gradient = jax.grad(loss)
    X = jnp.asarray(images, dtype=jnp.float32)
    Y = jnp.asarray(labels, dtype=jnp.int32)
    n_images = images.shape[0]
    lr32 = np.float32(lr)

    def run(theta: Any, n_steps: int) -> Any:
        def step(s: Any, th: Any) -> Any:
            start = (s * batch) % n_images
            xb = lax.dynamic_slice_in_dim(X, start, batch)
            yb = lax.dynamic_slice_in_dim(Y, start, batch)
            return th - lr32 * gradient(th, xb, yb)

        return lax.fori_loop(0, n_steps, step, theta)

    compiled = jax.jit(run, static_argnums=1)
    theta0 = jnp.asarray(params0, dtype=jnp.float32)
    return lambda n: np.asarray(compiled(theta0, n).block_until_ready())


def cnn_bench(repeats: int = 5, quick: bool = False, network: ConvNet | None = None) -> CNNBench:
    """Time the CNN workload and price its floor (module docstring); ``quick`` times 100 steps per
    run instead of 500. ``network`` defaults to the tutorial CIFAR-10 net. ``repeats`` >= 3."""
    repeats = check_int("repeats", repeats, minimum=MIN_REPEATS, error=ValueError)
    network = network if network is not None else tutorial_cifar_net()
    steps = _QUICK_STEPS if quick else _STEPS
    rates = {dtype: cnn_step_rate(network, batch=CNN_BATCH, steps=steps, repeats=repeats, dtype=dtype)
             for dtype in (np.float32, np.float64)}
    images, labels = _inputs(network)
    params64 = network.init_params(0, np.float64)
    numba64 = _numba_steps(network, params64, images, labels, _AGREEMENT_STEPS)
    numpy64 = params64.copy()
    sgd_steps_np(network.layout, numpy64, images, labels, CNN_BATCH, _LR, _AGREEMENT_STEPS)
    numba32 = _numba_steps(network, params64.astype(np.float32), images.astype(np.float32), labels,
                           _AGREEMENT_STEPS)
    jax_rate, jax_diff, jax_note = _time_jax(network, params64.astype(np.float32), images, labels, numba32, steps,
                                             repeats)
    products = step_products(network, CNN_BATCH)
    at_shapes = product_rate_float32(products, repeats)
    large = matmul_gflops(repeats, np.float32)
    flops = network.layout.flops_per_image()
    largest = max(products, key=lambda p: p.flops)
    return CNNBench(
        network=network.name, batch=CNN_BATCH, steps=steps, repeats=repeats,
        numba_float32_images_per_s=rates[np.float32].numba_images_per_s,
        numba_float64_images_per_s=rates[np.float64].numba_images_per_s,
        numpy_float32_images_per_s=rates[np.float32].numpy_images_per_s,
        numpy_float64_images_per_s=rates[np.float64].numpy_images_per_s,
        jax_float32_images_per_s=jax_rate,
        numpy_rel_diff_float64=_rel_diff(numpy64, numba64),
        float32_rel_diff=_rel_diff(numba32.astype(np.float64), numba64),
        jax_rel_diff_float32=jax_diff, agreement_steps=_AGREEMENT_STEPS,
        flops_per_image=flops, product_gflops_at_shapes=at_shapes,
        product_shapes=f"{len(products)} products, largest ({largest.m}x{largest.k})({largest.k}x{largest.n})",
        matmul_float32_gflops_1core=large,
        floor_images_per_s=at_shapes * 1e9 / flops, floor_large_product_images_per_s=large * 1e9 / flops,
        jax_note=jax_note,
    )


def format_cnn_bench(row: dict[str, Any]) -> list[str]:
    """The CNN workload's lines of the bench table, from ``CNNBench.to_json()``."""
    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"

    jax_diff = row["jax_rel_diff_float32"]
    lines = [
        f"CNN workload: {row['network']}, batch {row['batch']}, one local SGD step (forward, backward, update); "
        f"images/s on one core, medians of {row['repeats']} runs of {row['steps']} steps after a warm-up:",
        f"  {'engine':<26}{'float32':>12}{'float64':>12}",
        f"  {'numba kernel':<26}{rate(row['numba_float32_images_per_s']):>12}"
        f"{rate(row['numba_float64_images_per_s']):>12}",
        f"  {'numpy reference':<26}{rate(row['numpy_float32_images_per_s']):>12}"
        f"{rate(row['numpy_float64_images_per_s']):>12}",
        f"  {'jax (jit, one thread)':<26}{rate(row['jax_float32_images_per_s']):>12}{'-':>12}",
        f"  floor: {row['flops_per_image']:,} flops per image (forward + backward, conv and dense products) over "
        f"the float32 product rate on one core: {row['product_gflops_at_shapes']:.2f} GFLOP/s at the step's im2col "
        f"shapes ({row['product_shapes']}) -> {rate(row['floor_images_per_s'])} images/s; "
        f"{row['matmul_float32_gflops_1core']:.1f} GFLOP/s at 1000^3 -> "
        f"{rate(row['floor_large_product_images_per_s'])} images/s; numba float32 / floor at shapes = "
        f"{row['numba_over_floor']:.2f}",
        f"  agreement after {row['agreement_steps']} steps (relative max difference of the parameters): numpy vs "
        f"numba float64 {row['numpy_rel_diff_float64']:.1e}, numba float32 vs float64 {row['float32_rel_diff']:.1e}"
        + ("" if jax_diff is None else f", jax vs numba float32 {jax_diff:.1e}"),
    ]
    if row["jax_note"] is not None:
        lines.append(f"  note: {row['jax_note']}")
    return lines


def _inputs(network: ConvNet) -> tuple[np.ndarray, np.ndarray]:
    """_IMAGES minibatches of N(0, 1) images (float64) and labels from Philox keyed 0."""
    rng = np.random.Generator(np.random.Philox(key=0))
    n = CNN_BATCH * _IMAGES
    images = rng.standard_normal((n, *network.input_shape))
    return images, rng.integers(0, network.n_classes, size=n).astype(np.int64)


def _numba_steps(network: ConvNet, params: np.ndarray, images: np.ndarray, labels: np.ndarray,
                 n_steps: int) -> np.ndarray:
    """The kernel's parameters after ``n_steps`` steps from ``params`` (not modified)."""
    out = params.copy()
    sgd_steps(network.layout.table, out, images, labels, CNN_BATCH, _LR, n_steps,
              *network.workspace(CNN_BATCH, params.dtype))
    return out


def _time_jax(network: ConvNet, params32: np.ndarray, images: np.ndarray, labels: np.ndarray,
              numba32: np.ndarray, steps: int, repeats: int) -> tuple[float | None, float | None, str | None]:
    """(JAX images/s, its relative difference to the float32 kernel, a note when not installed)."""
    jax_one_thread()
    peer = jax_cnn_peer(network, params32, images, labels, CNN_BATCH, _LR)
    if peer is None:
        return None, None, "jax is not installed: the JAX CNN peer is skipped (pip install jax to time it)"
    diff = _rel_diff(peer(_AGREEMENT_STEPS).astype(np.float64), numba32.astype(np.float64))
    peer(steps)  # compile for this step count
    seconds = median_seconds(lambda: peer(steps), repeats)
    return steps * CNN_BATCH / seconds, diff, None


def _rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|."""
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
