"""Assumption constants estimated along a trajectory, for a model without certified constants (a CNN).

A smoothness theorem such as Yu et al.'s Theorem 1 (``liu_lecture_fl_fedavg.md``, "Assumptions")
takes L, G^2 and sigma^2 as suprema over every x. For a network none is computable; what can be
computed are their values at points a run visited, each a lower estimate of the supremum (the
largest value found, never a certificate):

* L (L-smoothness, ||grad f(x) - grad f(y)|| <= L ||x - y|| for all x, y). Every secant ratio
  ||grad f(x) - grad f(y)|| / ||x - y|| is a lower bound of L. ``secant_smoothness`` takes the
  largest over consecutive points of a trajectory; ``power_smoothness`` runs power iteration on
  the Hessian at one point with central differences, H v ~ (grad f(x + h v) - grad f(x - h v)) / (2h)
  for ||v|| = 1: each iterate's ||H v|| is itself the secant ratio of the pair x +- h v, so the
  largest is again a lower bound of L, and for h small enough to stay within one smooth piece of a
  piecewise-smooth loss (ReLU, max-pool) it is the local Hessian's largest |eigenvalue|, reached by
  the iteration (exact for a quadratic: H v is then exact for any h).
* G^2 >= E||g_b(x)||^2 and sigma^2 >= E||g_b(x) - grad f(x)||^2 for a minibatch gradient g_b of b
  rows drawn uniformly with replacement from n rows with per-sample gradients g_i(x):
  ``sample_minibatch_moments`` gives both exactly at x, Var = v / b and E||g_b||^2 = ||gbar||^2 + v / b with
  v = (1/n) sum_i ||g_i - gbar||^2 and gbar = grad f (the identity ``minibatch_moments`` states for
  linear models, here from explicit per-sample gradients).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["sample_minibatch_moments", "power_smoothness", "secant_smoothness"]


def secant_smoothness(points: np.ndarray, gradients: np.ndarray) -> float:
    """max_j ||g_{j+1} - g_j|| / ||x_{j+1} - x_j|| over consecutive rows of ``points`` (P, d) and
    their ``gradients`` (P, d) (pairs of equal points skipped; 0 with fewer than two distinct points):
    a lower bound of any L with which grad f is L-Lipschitz."""
    points, gradients = np.asarray(points, dtype=np.float64), np.asarray(gradients, dtype=np.float64)
    if points.ndim != 2 or gradients.shape != points.shape:
        raise ValueError(f"gradients: expected the shape of points {points.shape}, got {gradients.shape}")
    steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
    changes = np.linalg.norm(np.diff(gradients, axis=0), axis=1)
    moved = steps > 0
    return float(np.max(changes[moved] / steps[moved])) if np.any(moved) else 0.0


def power_smoothness(gradient: Callable[[np.ndarray], np.ndarray], x: np.ndarray, *, iterations: int,
                     radius: float, seed: int = 0) -> float:
    """The largest ||H v_k|| over ``iterations`` steps of power iteration v_{k+1} = H v_k / ||H v_k||
    from a standard normal v_0 (``default_rng(seed)``), H v = (gradient(x + h v) - gradient(x - h v))
    / (2h) with h = ``radius`` (module docstring): a lower bound of L, the Hessian's largest
    |eigenvalue| at x when it converges. ``gradient`` maps (d,) to (d,) float64; 2 ``iterations``
    calls. 0 when H v vanishes."""
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations: expected an integer >= 1, got {iterations!r}")
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius: expected a finite number > 0, got {radius!r}")
    x = np.asarray(x, dtype=np.float64)
    v = np.random.default_rng(seed).standard_normal(x.size)
    v /= np.linalg.norm(v)
    largest = 0.0
    for _ in range(iterations):
        hv = (np.asarray(gradient(x + radius * v)) - np.asarray(gradient(x - radius * v))) / (2 * radius)
        norm = float(np.linalg.norm(hv))
        if norm == 0.0:
            break
        largest = max(largest, norm)
        v = hv / norm
    return largest


def sample_minibatch_moments(sample_gradients: np.ndarray, batch_size: int) -> tuple[float, float]:
    """(E||g_b||^2, E||g_b - gbar||^2) of the mean gradient g_b of ``batch_size`` rows drawn uniformly
    with replacement from the n rows whose per-sample gradients are ``sample_gradients`` (n, d)
    (module docstring; exact, not sampled)."""
    g = np.asarray(sample_gradients, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] < 1:
        raise ValueError(f"sample_gradients: expected a non-empty (n, d) array, got shape {g.shape}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size: expected an integer >= 1, got {batch_size!r}")
    mean = g.mean(axis=0)
    variance = float(np.mean(np.sum((g - mean) ** 2, axis=1))) / batch_size
    return float(mean @ mean) + variance, variance
