"""The regions over which the assumption constants are taken (suprema of a quantity over w).

* ``Ball(centre, radius)``: the closed ball {w : ||w - centre|| <= radius}, centre of shape (d,);
  the region of Ding et al. (2020) Assumption 5 (||x|| <= B: ``Ball(0, B)``) and of the upper
  estimates of Li et al.'s constants when the iterates are not stored.
* ``Points(points)``: a finite set, shape (m, d) (for example every iterate a run visited): a
  constant is then exact on that set and says nothing elsewhere.
* ``EVERYWHERE``: all of R^d; only the (G, B)-BGD pair of least squares is finite there.

``ball_samples`` gives the fixed, seeded points of a ball at which the lower estimates
(``attained``) of the certified bounds are evaluated: its centre, 32 points of its sphere and 31
inside it, uniform in direction and, inside, in volume (radius R u^(1/d), u uniform on [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from problems import FederatedProblem

__all__ = ["Ball", "Points", "Everywhere", "EVERYWHERE", "Region", "check_region", "ball_samples", "N_SAMPLES"]

N_SAMPLES = 64
"""Points of a ball at which a certified bound's lower estimate is evaluated (``ball_samples``)."""
_SAMPLE_SEED = 0


@dataclass(frozen=True, eq=False)
class Ball:
    """The closed ball {w : ||w - centre|| <= radius}; centre has shape (d,)."""

    centre: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        centre = np.array(self.centre, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(centre)):
            raise ValueError("centre: the centre of a ball must be finite")
        if not (math.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"radius: must be finite and >= 0, got {self.radius!r}")
        centre.setflags(write=False)
        object.__setattr__(self, "centre", centre)
        object.__setattr__(self, "radius", float(self.radius))

    def describe(self) -> str:
        return f"the ball of radius {self.radius:.6g} around a centre of norm {np.linalg.norm(self.centre):.6g}"


@dataclass(frozen=True, eq=False)
class Points:
    """A finite set of points, shape (m, d) (for example every iterate a run visited)."""

    points: np.ndarray

    def __post_init__(self) -> None:
        points = np.array(self.points, dtype=np.float64)
        if points.ndim != 2 or points.shape[0] == 0 or not np.all(np.isfinite(points)):
            raise ValueError(f"points: expected a non-empty finite (m, d) array, got shape {points.shape}")
        points.setflags(write=False)
        object.__setattr__(self, "points", points)

    def describe(self) -> str:
        return f"the {self.points.shape[0]} given points (exact on that set only)"


@dataclass(frozen=True)
class Everywhere:
    """All of R^d."""

    def describe(self) -> str:
        return "all of R^d"


EVERYWHERE = Everywhere()
Region = Ball | Points | Everywhere


def check_region(problem: FederatedProblem, region: Region, allow_everywhere: bool = False) -> None:
    """ValueError naming ``region`` unless it is a Ball or Points of the problem's dimension d (or
    EVERYWHERE where ``allow_everywhere``: the constant is finite on all of R^d)."""
    if isinstance(region, Ball):
        size = region.centre.size
    elif isinstance(region, Points):
        size = region.points.shape[1]
    elif isinstance(region, Everywhere):
        if not allow_everywhere:
            raise ValueError("region: this constant is infinite on all of R^d; give a Ball or Points")
        return
    else:
        raise ValueError(f"region: expected Ball, Points or EVERYWHERE, got {type(region).__name__}")
    if size != problem.dim:
        raise ValueError(f"region: points have dimension {size}, the problem has d = {problem.dim}")


def ball_samples(ball: Ball) -> np.ndarray:
    """The centre, 32 points on the sphere and 31 inside the ball, shape (64, d), seeded."""
    rng = np.random.default_rng(_SAMPLE_SEED)
    d = ball.centre.size
    directions = rng.standard_normal((N_SAMPLES - 1, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    half = N_SAMPLES // 2
    radii = np.concatenate([np.ones(half), rng.random(N_SAMPLES - 1 - half) ** (1.0 / d)]) * ball.radius
    return np.vstack([ball.centre, ball.centre + radii[:, None] * directions])
