"""Li et al.'s eq. 8 (ICLR 2020, Sec. 3.4): the shape of the rounds to an eps accuracy in E,

    T_eps / E  ∝  h(E) = (1 + 1/K) E G^2 + A / E + G^2,    A = sum_k p_k^2 sigma_k^2 + L Gamma + kappa G^2,

its minimiser E*_theory = sqrt(A / ((1 + 1/K) G^2)), and the least-squares scale of measured rounds
against h (li2020.eq8's evidence: ``eq8``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Eq8Constants", "eq8_rounds_shape", "eq8_optimal_E", "ScaleFit", "fit_scale"]


@dataclass(frozen=True)
class Eq8Constants:
    """The constants of eq. 8 on one instance: K, sum_k p_k^2 sigma_k^2, L, Gamma, kappa, G^2."""

    K: int
    sum_p2_sigma2: float
    L: float
    Gamma: float
    kappa: float
    G_sq: float

    @property
    def A(self) -> float:
        """A = sum_k p_k^2 sigma_k^2 + L Gamma + kappa G^2 (eq. 8's numerator of 1/E)."""
        return self.sum_p2_sigma2 + self.L * self.Gamma + self.kappa * self.G_sq


def eq8_rounds_shape(E: np.ndarray, c: Eq8Constants) -> np.ndarray:
    """h(E) = (1 + 1/K) E G^2 + A / E + G^2 (eq. 8), shape of ``E``."""
    E = np.asarray(E, dtype=np.float64)
    return (1 + 1 / c.K) * E * c.G_sq + c.A / E + c.G_sq


def eq8_optimal_E(c: Eq8Constants) -> float:
    """argmin_E h(E) = sqrt(A / ((1 + 1/K) G^2)) (dh/dE = (1 + 1/K) G^2 - A / E^2 = 0)."""
    return math.sqrt(c.A / ((1 + 1 / c.K) * c.G_sq))


@dataclass(frozen=True)
class ScaleFit:
    """The least-squares scale of measured rounds R (P,) against a shape h (P,): c = R.h / h.h and the
    relative residual ||R - c h|| / ||R||."""

    scale: float
    relative_residual: float


def fit_scale(measured: np.ndarray, shape: np.ndarray) -> ScaleFit:
    """``ScaleFit`` of ``measured`` (P,) against ``shape`` (P,), both finite, shape not all zero."""
    measured, shape = np.asarray(measured, dtype=np.float64), np.asarray(shape, dtype=np.float64)
    if measured.shape != shape.shape or measured.ndim != 1 or not np.all(np.isfinite(measured)) \
            or not np.all(np.isfinite(shape)) or not np.any(shape):
        raise ValueError("measured/shape: need two equal-length finite vectors, shape not all zero")
    scale = float(measured @ shape / (shape @ shape))
    return ScaleFit(scale, float(np.linalg.norm(measured - scale * shape) / np.linalg.norm(measured)))
