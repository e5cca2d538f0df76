"""`fedbound bench`'s CNN workload (``convergence.bench_cnn``): the flop count against hand counts,
the step's matrix products and the floor engine running them, the workload's Numba and NumPy steps
agreeing, the JAX and PyTorch peers (or their rows saying they are absent) and the CNN rows of the
bench output."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from convergence.bench import run_bench
from convergence.bench_cnn import CNN_BATCHES, MatrixProduct, cnn_bench, step_products
from convergence.bench_peak import PEAK_CHAINS, PEAK_VECTOR, fma_peak, peak_engine, peak_gflops
from convergence.bench_jax import jax_cnn_peer
from convergence.bench_report import format_bench
from convergence.bench_torch import torch_cnn_peer
from problems.models import ConvNet, tutorial_cifar_net
from problems.models.cnn import Conv2d, Dense, MaxPool2d, NetworkLayout, ReLU
from reports.cli import build_parser


def tiny_net() -> ConvNet:
    """6x6x1 -> conv 1->2 3x3 (4x4x2) -> ReLU -> max-pool (2x2x2) -> dense 8->3."""
    return ConvNet("tiny", NetworkLayout((6, 6, 1), (Conv2d(1, 2, 3), ReLU(), MaxPool2d(), Dense(8, 3))))


def test_flops_per_image_match_hand_counts() -> None:
    # tiny: conv 4*4*2 outputs x 9 inputs = 288 MACs, forward + weight gradient (first layer: no
    # input gradient) = 2 passes; dense 8*3 = 24 MACs, 3 passes; 2 flops per MAC:
    # 2 (2 * 288 + 3 * 24) = 1296
    assert tiny_net().layout.flops_per_image() == 1296
    # tutorial: conv1 28*28*6 x 75 = 352,800 MACs x 2 passes; conv2 10*10*16 x 150 = 240,000 x 3;
    # fc 400*120 + 120*84 + 84*10 = 58,920 x 3: 2 (705,600 + 720,000 + 176,760) = 3,204,720 (~3.2 MFLOP)
    assert tutorial_cifar_net().layout.flops_per_image() == 3_204_720


def test_step_products_are_the_im2col_products_and_sum_to_the_flops() -> None:
    products = step_products(tiny_net(), 3)
    assert [(p.m, p.k, p.n) for p in products] == [
        (48, 9, 2), (9, 48, 2),          # conv: (B*4*4, 3*3*1)(9, 2) forward, (9, 48)(48, 2) weight gradient
        (3, 8, 3), (8, 3, 3), (3, 3, 8),  # dense: forward, weight gradient, input gradient
    ]
    assert sum(p.flops for p in products) == 3 * 1296
    tutorial = step_products(tutorial_cifar_net(), 2)
    assert sum(p.flops for p in tutorial) == 2 * 3_204_720
    assert max(tutorial, key=lambda p: p.flops) == MatrixProduct(1568, 75, 6, "layer 0 forward")


def test_the_bench_has_the_cnn_rows_and_its_steps_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError: JAX absent
    monkeypatch.setitem(sys.modules, "torch", None)  # and PyTorch
    report = run_bench(repeats=3, workloads=(), mc_psgd=False, scaling=False, quick=True)
    json.dumps(report.to_json())
    cnn = report.cnn
    assert cnn.network == "tutorial_cifar_net" and cnn.batches == CNN_BATCHES == (2, 32) and cnn.steps == (100, 6)
    rows = [(c.workload, f"{c.a} / {c.b}") for c in cnn.comparisons]
    assert rows == [(f"CNN b{b}", name) for b in (2, 32) for name in
                    ("numpy reference / kernel", "jax / kernel", "pytorch / kernel", "kernel / floor")]
    for row in cnn.comparisons:
        assert row.measured == (row.a not in ("jax", "pytorch")), row
    # the workload's NumPy steps reproduce the Numba kernel's parameters (float64), float32 stays close
    assert cnn.numpy_rel_diff_float64 <= 1e-10
    assert 0 < cnn.float32_rel_diff < 1e-4
    assert cnn.jax_rel_diff_float32 is None and cnn.torch_rel_diff_float32 is None and cnn.torch_version is None
    assert cnn.flops_per_image == 3_204_720
    assert cnn.floor_images_per_s == pytest.approx(cnn.peak_float32_gflops_1core * 1e9 / 3_204_720)
    # the floor is a lower bound: the kernel is slower than the flops at the peak in every pair
    for row in cnn.comparisons:
        if row.b == "floor":
            assert min(p.cpu_ratio for p in row.pairs) > 1, row
    text = format_bench(report)
    for line in ("CNN b2   numpy reference / kernel", "CNN b32  kernel / floor", "3,204,720 flops per image",
                 "the core's float32 FMA peak",
                 "numpy vs numba float64",
                 "CNN b2   jax / kernel                not measured: jax is not installed: the JAX CNN peer is skipped",
                 "CNN b32  pytorch / kernel            not measured: torch is not installed: the PyTorch CNN peer is "
                 "skipped"):
        assert line in text, line


def test_the_peak_loop_counts_its_multiply_adds() -> None:
    # every chain adds x[t] c[k] once per round: sum_k s_k = rounds * sum(x) * sum(c), exact in float64
    # for these dyadic values (x[t] = 2^-10 t, c = 1..12: every partial sum is a multiple of 2^-10 below 2^40)
    x = np.arange(PEAK_VECTOR, dtype=np.float64) / 1024
    c = np.arange(1, PEAK_CHAINS + 1, dtype=np.float64)
    assert fma_peak(x, c, 3) == 3 * x.sum() * c.sum()


def test_the_floor_engine_does_the_flops_at_the_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    import convergence.bench_peak as bench_peak

    calls = []
    monkeypatch.setattr(bench_peak, "fma_peak", lambda x, c, rounds: calls.append((x.dtype, c.size, rounds)))
    per_round = 2 * PEAK_CHAINS * PEAK_VECTOR
    engine = peak_engine(10.5 * per_round, 7)
    engine.run()
    assert engine.name == "floor" and engine.units == 7
    assert calls == [(np.dtype(np.float32), PEAK_CHAINS, 10)]  # rounded down: never more flops than asked
    peak_engine(1.0, 1).run()
    assert calls[-1][2] == 1


def test_the_peak_is_above_the_large_product_rate() -> None:
    # the FMA pipes' throughput bounds every loop, BLAS's tuned kernels included: the 1000^3 sgemm
    # runs below the peak loop (measured 97.8 against 114.8 GFLOP/s; 20% slack for a loaded machine)
    from convergence.bench_timing import matmul_gflops

    assert peak_gflops(5) > 0.8 * matmul_gflops(3, np.float32)


def test_cnn_bench_needs_batch_2() -> None:
    with pytest.raises(ValueError, match="batches"):
        cnn_bench(3, quick=True, network=tiny_net(), batches=(4,))


def peer_deviation(peer_name: str) -> float | None:
    """Relative max difference of the JAX or PyTorch peer's parameters to the float32 kernel's
    after 5 steps on the tiny net (None when the peer's library is not importable)."""
    from problems.models.cnn.kernel import sgd_steps

    net = tiny_net()
    rng = np.random.default_rng(3)
    images = rng.standard_normal((8, 6, 6, 1)).astype(np.float32)
    labels = rng.integers(0, 3, 8)
    params = net.init_params(1, np.float32)
    peer = {"jax": jax_cnn_peer, "torch": torch_cnn_peer}[peer_name](net, params, images, labels, 2, 0.1)
    if peer is None:
        return None
    kernel = params.copy()
    sgd_steps(net.layout.table, kernel, images, labels, 2, 0.1, 5, *net.workspace(2, np.float32))
    assert not np.allclose(kernel, params)  # the steps moved
    assert np.array_equal(peer(5), peer(5))  # every call starts from the same parameters
    return float(np.max(np.abs(peer(5) - kernel)) / np.max(np.abs(kernel)))


@pytest.mark.parametrize("peer_name", ["jax", "torch"])
def test_each_peer_matches_the_kernel_or_is_reported_missing(peer_name: str) -> None:
    if importlib.util.find_spec(peer_name) is None:
        assert peer_deviation(peer_name) is None
        return
    # JAX and PyTorch start threads; the suite's process pools fork later, so the peer runs in a child process
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    code = f"from test_bench_cnn import peer_deviation as d; print(d({peer_name!r}))"
    child = subprocess.run([sys.executable, "-c", code],
                           capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr
    assert float(child.stdout.strip().splitlines()[-1]) < 1e-5


def test_bench_quick_is_an_option() -> None:
    args = build_parser().parse_args(["bench", "--quick", "--repeats", "3"])
    assert args.quick and args.repeats == 3
    assert not build_parser().parse_args(["bench"]).quick
