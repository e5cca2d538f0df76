"""Theorem 3 of Yu, Jin, Yang (ICML 2019, arXiv:1905.03817), momentum-less, as restated in the lecture
note ``liu_lecture_fl_fedavg.md`` (l. 445-453): its right-hand side term by term and its hypotheses,
shared by yu2019icml.thm3 and yu2019icml.cor4.

FedAvg (parallel restarted SGD, the note's l. 248-259): N workers, each step x_i^t = x_i^{t-1} - s G_i^t
with G_i^t an unbiased stochastic gradient of f_i at x_i^{t-1}, every K steps the workers restart
from their average; xbar^t = (1/N) sum_i x_i^t at every step t. Under the note's assumptions (l. 240-247:
every f_i L-smooth; E||grad F_i(x, xi) - grad f_i(x)||^2 <= sigma^2 and E||grad F_i(x, xi)||^2 <= G^2
for all x and i) and bounded gradient dissimilarity (l. 427: (1/N) sum_i ||grad f_i(x) - grad f(x)||^2
<= sigma_G^2), if s in (0, 1/L] and K <= 1/(6 L s), then for all T >= 1

    (1/T) sum_{t=0}^{T-1} E||grad f(xbar^t)||^2
        <= 2 (f(xbar^0) - f*)/(s T) + (L/N) s sigma^2 + 4 s^2 K G^2 L^2 + 9 L^2 s^2 K^2 sigma_G^2.

The note writes the G^2 term with K (not K^2, as in the AAAI paper's Theorem 1, ``yu2019.thm1``); it
is checked as written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convergence.verdict import Hypothesis

__all__ = ["Theorem3Terms", "theorem3_hypotheses", "theorem3_terms"]

_RELATIVE_SLACK = 1e-12
"""Rounding allowed in s <= 1/L and K <= 1/(6 L s): the claims take s = 1/(6 L K) exactly."""


@dataclass(frozen=True, eq=False)
class Theorem3Terms:
    """Theorem 3's right-hand side at P record points, term by term (each (P,)): ``initial`` 2 f0/(s T),
    ``noise`` (L/N) s sigma^2, ``second_moment`` 4 s^2 K G^2 L^2, ``dissimilarity`` 9 L^2 s^2 K^2 sigma_G^2."""

    initial: np.ndarray
    noise: np.ndarray
    second_moment: np.ndarray
    dissimilarity: np.ndarray

    def total(self, dissimilarity_scale: float = 1.0) -> np.ndarray:
        """The right-hand side (P,), its last term multiplied by ``dissimilarity_scale`` (1 as stated; 0
        drops the term: a planted variant)."""
        return self.initial + self.noise + self.second_moment + dissimilarity_scale * self.dissimilarity

    def shares(self, j: int) -> dict[str, float]:
        """Each term's share of the right-hand side as stated at record point ``j``."""
        total = float(self.total()[j])
        return {name: float(getattr(self, name)[j]) / total
                for name in ("initial", "noise", "second_moment", "dissimilarity")}


def theorem3_terms(
    steps: np.ndarray, *, s: float, K: int, N: int, L: float, G_sq: float, sigma_sq: float, sigma_G_sq: float,
    f0: float,
) -> Theorem3Terms:
    """Theorem 3's right-hand side (module docstring) after T = ``steps`` local steps (P,), with step s,
    sync interval K, N workers, L, G^2, sigma^2, sigma_G^2 and f0 = f(xbar^0) - f*."""
    T = np.asarray(steps, dtype=float)
    ones = np.ones_like(T)
    return Theorem3Terms(
        initial=2 * f0 / (s * T),
        noise=L / N * s * sigma_sq * ones,
        second_moment=4 * s**2 * K * G_sq * L**2 * ones,
        dissimilarity=9 * L**2 * s**2 * K**2 * sigma_G_sq * ones,
    )


def theorem3_hypotheses(s: float, K: int, L: float, label: str) -> tuple[Hypothesis, ...]:
    """Theorem 3's step hypotheses on one configuration, named ``[label] ...``: s in (0, 1/L] and
    K <= 1/(6 L s)."""
    return (
        Hypothesis(f"[{label}] s in (0, 1/L]", 0 < s <= (1 + _RELATIVE_SLACK) / L, f"s = {s:.6g}, 1/L = {1 / L:.6g}"),
        Hypothesis(f"[{label}] K <= 1/(6 L s)", K <= (1 + _RELATIVE_SLACK) / (6 * L * s),
                   f"K = {K}, 1/(6 L s) = {1 / (6 * L * s):.6g}"),
    )
