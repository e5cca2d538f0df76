"""li2020/choices' step rule per source pixel (eta_0 on m pixels -> eta_0 m / f on f window averages), the one
rule li2020.eq8, li2020.k-effect and li2020.schemes share, against its derivation (the module docstring)."""

from __future__ import annotations

import numpy as np

from problems import li_images
from proofs_check.claims.li2020.choices import source_step_scale


def _softmax_weight_gradient(V: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean cross-entropy gradient (C, f) of logits V x over rows X (n, f), labels y (n,)."""
    z = X @ V.T
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(y.size), y] -= 1.0
    return p.T @ X / y.size


def test_one_step_on_window_averages_is_the_pixel_step_on_window_constant_images() -> None:
    # Derivation (li2020/choices): with P (f, m) the averaging matrix and V = W P, a step W <- W - s G_W moves V by
    # -(s f / m) G_V Pi, Pi the projector on window-constant weights; for images constant over each window
    # G_V Pi = G_V, so s = eta m / f on the features is exactly the step eta on the pixels.
    problem = li_images(dataset="digits", balanced=True, n_clients=10, n_samples=160)  # 2 x 2 pooling: f = 16
    scale = source_step_scale(64, problem)  # the 8 x 8 grid as the source: m = 64 pixels over 16 features
    assert scale == 4.0
    rng = np.random.default_rng(0)
    cells = rng.uniform(size=(32, 4, 4))
    pixels = np.repeat(np.repeat(cells, 2, axis=1), 2, axis=2).reshape(32, 64)  # constant over 2 x 2 windows
    averages = pixels.reshape(32, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(32, 16)
    np.testing.assert_allclose(averages, cells.reshape(32, 16), rtol=0, atol=1e-15)
    P = np.zeros((16, 64))
    for j in range(64):
        P[(j // 8) // 2 * 4 + (j % 8) // 2, j] = 0.25
    y = rng.integers(0, 10, 32)
    W = rng.normal(size=(10, 16))
    eta = 0.1
    V_after = W @ P - eta * _softmax_weight_gradient(W @ P, pixels, y)
    W_after = W - eta * scale * _softmax_weight_gradient(W, averages, y)
    np.testing.assert_allclose(W_after @ P, V_after, rtol=0, atol=1e-12)
    # the rule is not scale-free: without it (s = eta) the pixel model moves 4 times less
    assert not np.allclose((W - eta * _softmax_weight_gradient(W, averages, y)) @ P, V_after, atol=1e-3)


def test_features_that_are_the_data_keep_the_step() -> None:
    problem = li_images(dataset="digits", balanced=True, n_clients=10, n_samples=160)
    assert source_step_scale(None, problem) == 1.0
    assert source_step_scale(1024, problem) == 64.0  # the digits: 32 x 32 bitmaps over 16 features
