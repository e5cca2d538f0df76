"""yu2019icml.cor4 on the smooth network: Corollary 4's first bullet (s = sqrt(N/T) as the note states
it, K = 1) for PR-SGD/FedAvg on ``digits_tanh_mlp`` over ``sorted_images`` (N label-sorted clients of
equal size, weights 1/N: heterogeneous), the instance of ``thm3_smooth``.

Measured: the final (1/T) sum_{t<T} ||grad f(xbar^t)||^2, exact (the kernel takes the full gradient at
the average at every step), per seed, at every (N, T) of the plan's grid.

Constants, ESTIMATED along every run (``thm3_smooth.smooth_constants`` at each seed's initial and final
average: per-client Hessian power iterations and secants for L, exact minibatch moments for G^2,
sigma^2, sigma_G^2; LOWER estimates of the suprema the corollary takes; f(xbar^0) - 0 an UPPER bound of
f(xbar^0) - f*). L = the largest estimate over the runs at N (each N is its own partition, so its own
f_k and max_k L_k): the hypotheses of every (N, T)
(the note's T >= 36 L^2 N, Theorem 3's s <= 1/L and K = 1 <= 1/(6 L s), ``cor4_runs.Rule.setting``) are
checked with it, and a configuration that does not meet them is left out of the fits (not applicable, as
on the convex instance); a check with fewer than ``MIN_HORIZONS`` applicable points is uninformative.

Checks (``convergence.check_rate_exponent``, tolerance ``RATE_TOLERANCE``, as the convex instance): the
exponent in N T at each N of the grid, and the exponent in N at the largest T (linear speedup), each
claimed <= -1/2 (the O(N/T) term decays faster in T at fixed N). Uninformative rule of ``yu2019.cnn``
(``cnn_smooth.rate_bite``): where Theorem 3's bound with the estimated constants at the range's largest
point lies above the average measured at its smallest, the theorem lets the curve stay flat and the
fitted exponent can neither confirm nor refute the rate: the check is uninformative with the figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems

from .bound import theorem3_terms
from .cor4_runs import Rule, Setting
from .thm3_smooth import BATCH, FAMILY, NETWORK, SmoothConstants, client_smoothness, smooth_constants

if TYPE_CHECKING:
    from ...framework.settings import VerifySettings

__all__ = ["RULE", "SmoothPoint", "bound_at", "flat_reason", "smooth_points"]

RULE = Rule(stated_step=True, unit_sync=True)
"""Corollary 4's first bullet as the note states it: s = sqrt(N/T), K = 1."""


@dataclass(frozen=True, eq=False)
class SmoothPoint:
    """One run of the grid: N, T, s = sqrt(N/T), the final average of every seed (S,) and the estimates
    along the run."""

    N: int
    T: int
    s: float
    final: np.ndarray
    estimates: SmoothConstants

    def setting(self, L: float) -> Setting:
        """The configuration with its hypotheses at the grid's L (``cor4_runs.Rule.setting``)."""
        return RULE.setting(self.N, self.T, L)


def smooth_points(settings: VerifySettings, clients: tuple[int, ...], horizons: tuple[int, ...], seeds: int,
                  n_train: int) -> list[SmoothPoint]:
    """PR-SGD with K = 1 and s = sqrt(N/T) at every (N, T) of the grid on ``sorted_images`` (n_train
    images, N clients of n_train / N), minibatches of ``BATCH``, recorded at the start and the end, with
    the estimates along each run."""
    specs = {N: problems.problem_spec(FAMILY, network=NETWORK, n_clients=N, n_train=n_train) for N in clients}
    requests, keys = [], []
    for N in clients:
        for T in horizons:
            config = convergence.PRSGDConfig(rounds=T, sync_interval=1, step_size=convergence.StepSize.constant(
                float(np.sqrt(N / T))), batch_size=BATCH, seeds=tuple(range(seeds)), record_rounds=(0, T))
            requests.append(convergence.RunRequest(convergence.RunConfig(specs[N], config)))
            keys.append((N, T))
    results = convergence.execute(requests, settings.sweep_options(),
                                  description=f"FedAvg (PR-SGD), K = 1, s = sqrt(N/T), on {NETWORK}")
    points = []
    for N in clients:
        f = problems.build_block_cyclic(specs[N]).combined
        L_init = max(client_smoothness(f, f.initial_model(seed), seed) for seed in range(seeds))
        for (n, T), result in zip(keys, results):
            if n == N:
                points.append(SmoothPoint(N, T, float(np.sqrt(N / T)), result.extras.grad_sq_mean[:, -1],
                                          smooth_constants(f, result.iterates, BATCH, L_init)))
    return points


def bound_at(point: SmoothPoint, L: float) -> float:
    """Theorem 3's bound at T (K = 1, s = sqrt(N/T)) with the run's estimated constants and L."""
    c = point.estimates
    return float(theorem3_terms(np.array([float(point.T)]), s=point.s, K=1, N=point.N, L=L, G_sq=c.G_sq,
                                sigma_sq=c.sigma_sq, sigma_G_sq=c.sigma_G_sq, f0=c.f0).total()[0])


def flat_reason(largest: SmoothPoint, smallest: SmoothPoint, L: float) -> str | None:
    """None when Theorem 3 forces a decay over a check's range, else why not (``cnn_smooth.rate_bite``'s
    rule): its bound at the largest point above the mean measured at the smallest."""
    top, low = bound_at(largest, L), float(smallest.final.mean())
    if top < low:
        return None
    return (f"Theorem 3's bound at the range's largest point (N = {largest.N}, T = {largest.T}, s = sqrt(N/T), K = 1), "
            f"{top:.4g} with the constants estimated along that run (lower estimates: the true bound is at least "
            f"this), is above the average measured at its smallest (N = {smallest.N}, T = {smallest.T}), {low:.4g}: "
            "the theorem lets the average stay flat over the range, so an exponent fitted there can neither confirm "
            "nor refute O(1/sqrt(NT)) (pre-asymptotic)")
