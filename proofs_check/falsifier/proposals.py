"""Which input the falsifier tries next: points of a space-filling design, then climbs of the violation.

Design (``SobolDesign``). Point j of a scrambled Sobol' sequence in [0, 1]^D (D =
``DESIGN_DIMENSIONS``; Sobol' 1967 with Joe and Kuo's 2008 direction numbers, scrambled by a random
linear matrix and digital shift (Matousek 1998), as ``scipy.stats.qmc.Sobol`` computes them, seeded
from the search seed) gives the unit coordinates of
the first D choices of the j-th design input (``falsify_choices``, "Unit coordinates": a boolean, a bounded
integer or float at that quantile of its plain random distribution); the other choices are drawn
at random (a choice takes the coordinate of its position, so where the number of earlier choices
varies, a later one takes different coordinates in different inputs). Each scrambled point is
uniform on [0, 1]^D, so each design input has the plain random distribution, and the points are
spread evenly (a scrambled digital (t, m, s)-net; Niederreiter 1992, Ch. 4): the first 2^m points
put one point in each of the 2^m equal cells of any one choice's range, and, the first two
coordinates being a (0, 2)-sequence, one in each of 2^m equal boxes of the first two choices'
ranges (4 x 4 cells for 16 points, say); other projections are filled nearly as evenly. So a
violation that needs one of the 16 combinations of two choices uniform on four values each is hit
by the first 16 design inputs in every seed, and by 16 independent draws with probability
1 - (15/16)^16 = 0.64.

Climb (``Climb``). A (1+1) evolution strategy on the choices of one input, with Rechenberg's 1/5
success rule per choice (Rechenberg 1973; Beyer and Schwefel 2002, Sec. 3): the parent starts as
the input given; each proposal moves a random subset of the parent's choices by
``falsify_choices.mutant`` (choice i joins with probability w_i / sum_j w_j, so about one choice a
proposal, at least one) with the Gaussian width s_i in its unit coordinate. A proposal whose
violation is strictly larger becomes the parent, doubles the widths of the choices it moved (up
to ``MAX_WIDTH``) and sets their weights to 1; a proposal that is not better shrinks their widths
by 2^(-1/4), so that each width settles where about one move in five succeeds (long steps far from
the violation region, short ones close to the boundary of the score), and their weights by
``FAILED_WEIGHT`` (at least ``MIN_WEIGHT``), so that a choice held at its best value (at the end of
its range, say) is moved less often. A proposal that scores exactly as its parent shows that the
choices it moved do not matter there (a seed or an option the claim ignores): their weights drop
to at most ``IGNORED_WEIGHT``, so the moves go to the choices that change the score. The
climb has stalled after ``stall_after(n)`` proposals in a row without an improvement (n the
parent's number of choices); the falsifier then returns to the design and starts a new climb
(multi-start local search).
"""

from __future__ import annotations

import random

import numpy as np
from scipy.stats import qmc

from .choices import Choice, Chooser, mutant

__all__ = ["DESIGN_DIMENSIONS", "FAILED_WEIGHT", "FIRST_WIDTH", "IGNORED_WEIGHT", "MAX_WIDTH", "MIN_WEIGHT", "Climb",
           "SobolDesign", "stall_after"]

DESIGN_DIMENSIONS = 64
"""Choices per input that take their unit coordinates from the design (the built-in claims make about 16)."""
FIRST_WIDTH = 0.3
"""A climb's first Gaussian width in unit coordinates: a move reaches about a third of a choice's range."""
MAX_WIDTH = 0.5
"""The largest width, half a choice's range: wider moves would mostly end clipped at the range's ends."""
IGNORED_WEIGHT = 0.1
"""The largest weight of a choice whose move left the violation exactly unchanged (each starts at 1)."""
FAILED_WEIGHT = 0.8
"""The factor on a choice's weight after a move of it that did not improve the violation (1 after one that did)."""
MIN_WEIGHT = 0.05
"""The least weight: every choice keeps being moved now and then."""


def stall_after(n_choices: int) -> int:
    """Proposals in a row without an improvement after which a climb of an input with ``n_choices``
    choices has stalled: 20 + 4 n, about four moves of each choice beyond a fixed allowance."""
    return 20 + 4 * n_choices


class SobolDesign:
    """The design inputs of one search, in order (module docstring); drawn in blocks that keep the
    number of points a power of 2, as the net property requires."""

    def __init__(self, seed: int) -> None:
        self._sobol = qmc.Sobol(DESIGN_DIMENSIONS, scramble=True, seed=np.random.default_rng(seed))
        self._points = np.empty((0, DESIGN_DIMENSIONS))
        self._next = 0

    def propose(self, rng: random.Random) -> Chooser:
        """A chooser for the next design input; choices without a unit coordinate are drawn by ``rng``."""
        if self._next == len(self._points):
            m = max(4, len(self._points).bit_length() - 1)  # 16 points, then double the total
            self._points = np.vstack([self._points, self._sobol.random_base2(m)])
        point = self._points[self._next]
        self._next += 1
        return Chooser(rng=rng, units=point)


class Climb:
    """A (1+1) evolution strategy from one input (module docstring). ``propose`` gives the chooser of
    the next proposal; ``record`` takes its choices and violation; ``stalled`` says when to stop."""

    def __init__(self, choices: tuple[Choice, ...], score: float) -> None:
        if not choices:
            raise ValueError("choices: a climb needs an input with at least one choice")
        self.parent, self.score = choices, score
        self._widths: dict[int, float] = {}
        self._weights: dict[int, float] = {}
        self._moved: list[int] = []
        self._failures = 0

    @property
    def stalled(self) -> bool:
        return self._failures >= stall_after(len(self.parent))

    def propose(self, rng: random.Random) -> Chooser:
        """The parent with a random subset of its choices moved (later choices that no longer fit: drawn by ``rng``)."""
        n = len(self.parent)
        weights = [self._weights.get(i, 1.0) for i in range(n)]
        total = sum(weights)
        moved = [i for i in range(n) if rng.random() < weights[i] / total]
        self._moved = moved or rng.choices(range(n), weights)
        overrides = {i: mutant(self.parent[i], self._widths.get(i, FIRST_WIDTH), rng) for i in self._moved}
        return Chooser(self.parent, overrides, rng)

    def record(self, choices: tuple[Choice, ...], score: float) -> None:
        """Update the parent, widths and weights with the last proposal's choices and violation."""
        if score > self.score:
            for i in self._moved:
                self._widths[i] = min(2 * self._widths.get(i, FIRST_WIDTH), MAX_WIDTH)
                self._weights[i] = 1.0
            self.parent, self.score, self._failures = choices, score, 0
            return
        self._failures += 1
        for i in self._moved:
            self._widths[i] = self._widths.get(i, FIRST_WIDTH) * 2 ** -0.25
            weight = max(self._weights.get(i, 1.0) * FAILED_WEIGHT, MIN_WEIGHT)
            self._weights[i] = min(weight, IGNORED_WEIGHT) if score == self.score else weight
