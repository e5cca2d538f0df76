"""yu2019icml.thm3 on the smooth network: Theorem 3's explicit bound (``bound``) for FedAvg on
``digits_tanh_mlp`` (dense 64->16, tanh, dense 16->10, softmax cross-entropy: every f_k L-smooth on
every bounded region) over N heterogeneous clients of equal size (``problems`` family
``sorted_images``: the images sorted by label and cut into N consecutive clients, so p_k = 1/N is the
averaging weight of the theorem and of parallel restarted SGD).

Left side, exact: (1/t) sum_{tau<t} ||grad f(xbar^tau)||^2 with the full gradient at the average of the
local models at EVERY step (tracked by the kernel), at every record point t; mean over seeds.

Constants, per client, ESTIMATED along the run (``client_moments`` at the initial and every recorded
average xbar of every seed; ``smooth_constants``): G^2 = max_k E||g_{b,k}||^2 and sigma^2 = max_k
E||g_{b,k} - grad f_k||^2 (exact minibatch moments of client k's b rows drawn with replacement),
sigma_G^2 = (1/N) sum_k ||grad f_k - grad f||^2, each the largest over those points; L = max_k of the
Hessian power iteration of f_k (radius ``FD_RADIUS``) at each seed's initial and last recorded model
and of the secants of f_k between consecutive recorded models. All are LOWER estimates of the suprema
the theorem takes, and its right-hand side increases in each, so a PASS (every record point's upper
limit below the bound) certifies the inequality there; a FAIL is against the bound with estimated
constants only. f(xbar^0) - 0 (mean over seeds) is an UPPER bound of f(xbar^0) - f* (cross-entropy >=
0). The step s = 1/(6 L_step K) takes L_step, a plan parameter fixed before the run (the estimate at
the initial models is about 4 and grows along the run to about 6: a step from the initial estimate
leaves K <= 1/(6 L s) unmet); the hypotheses s <= 1/L and K <= 1/(6 L s) are checked with the estimate along the run
(met as far as a lower estimate can tell), and the CERTIFIED constants over the ball ||theta|| <= B
holding every local iterate of every seed (``smooth_bounds.tanh_mlp_bounds``) stand beside them in the
evidence with the bound they give and 6 L_certified s K (the hypothesis with the certified L, far
looser). The ceiling G^2_certified of ||grad f||^2 on that ball makes points where the bound lies
above it uninformative.

Where it bites (measured, 4 seeds, K = 16, L_step = 8): at s = 1/(6 L K) the sigma_G^2 term is
(L/L_step)^2 sigma_G^2/4 whatever K, while the measured average stays near 0.1 (the initial models) and
decays slowly; the bound as stated is 13-25x above it (tightness 0.040 at T = 2,048, 0.069 at 4,096,
0.078 at 32,768), so
its planted variant is the whole bound divided by 100 (``smooth_bound_scale``), which FAILs from
T = 4,096 on (at 2,048 the sub-check FAILs, p = 0.028, but not after Holm over the claim's sub-checks). Dropping the sigma_G^2 term does NOT make the bound fail here: the rest, 2 f0/(s T) +
4 s^2 K G^2 L^2 (G^2 >= max_k ||grad f_k||^2, itself about the heterogeneity on label-sorted clients),
still lies above the measured average (ratio 0.05, 0.10, 0.31 at these horizons, where the term is 15%,
31%, 85% of the bound; 0.32 at T = 131,072 and 0.41 at T = 65,536 with K = 64, explored outside the
claim with L_step = 3.8): the term is most of the bound at long horizons but does not carry it.

Cost: the exact left side (the gradient of f over all n = 500 images at every step's average) is 77% of
the run's CPU (0.52 ms a step; median over 5 pairs of runs with n = 500 and 100 images, linear in n).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis

from ... import constants
from ..yu2019.cnn_estimates import FD_RADIUS, POWER_ITERATIONS
from ..yu2019.cnn_smooth import certified_ceiling
from .bound import theorem3_hypotheses, theorem3_terms

if TYPE_CHECKING:
    from convergence import RunResult
    from problems import ImageClassificationProblem

    from ...framework.settings import VerifySettings

__all__ = ["BATCH", "CLIENTS", "ClientMoments", "N_TRAIN", "NETWORK", "SmoothConstants", "SmoothRun", "client_moments", "smooth_check", "smooth_constants",
           "smooth_run"]

FAMILY, NETWORK, CLIENTS, N_TRAIN, BATCH = "sorted_images", "digits_tanh_mlp", 10, 500, 8
"""The instance: the heterogeneous equal-size family, the smooth network, N clients, the n images they
hold (n / N each) and the minibatch size b."""


@dataclass(frozen=True, eq=False)
class ClientMoments:
    """At one model: per client k (each (N,)) ``second`` E||g_{b,k}||^2 and ``variance`` E||g_{b,k} -
    grad f_k||^2 of a minibatch of b rows drawn with replacement, ``dissimilarity`` ||grad f_k -
    grad f||^2; ``grad_sq`` ||grad f||^2."""

    second: np.ndarray
    variance: np.ndarray
    dissimilarity: np.ndarray
    grad_sq: float

    @property
    def sigma_G_sq(self) -> float:
        """(1/N) sum_k ||grad f_k - grad f||^2 (the clients' weights are 1/N)."""
        return float(self.dissimilarity.mean())


def client_moments(f: ImageClassificationProblem, x: np.ndarray, batch_size: int) -> ClientMoments:
    """The per-client moments at ``x`` (d,) for minibatches of ``batch_size`` (exact: from every row's
    gradient, ``constants.sample_minibatch_moments``); f's clients must have equal weights 1/N."""
    N = f.weights.size
    rows = [f.sample_gradients(x, k) for k in range(N)]
    means = np.array([g.mean(axis=0) for g in rows])
    full = means.mean(axis=0)
    second, variance = np.array([constants.sample_minibatch_moments(g, batch_size) for g in rows]).T
    return ClientMoments(second, variance, np.sum((means - full) ** 2, axis=1), float(full @ full))


@dataclass(frozen=True)
class SmoothConstants:
    """Theorem 3's constants estimated along one run (module docstring): lower estimates L, G_sq, sigma_sq,
    sigma_G_sq; f0 = mean over seeds of f(xbar^0) - 0 (an upper bound of f(xbar^0) - f*)."""

    L: float
    G_sq: float
    sigma_sq: float
    sigma_G_sq: float
    f0: float

    def to_json(self) -> dict[str, float]:
        return {"L (estimate)": self.L, "G^2 (estimate)": self.G_sq, "sigma^2 (estimate)": self.sigma_sq,
                "sigma_G^2 (estimate)": self.sigma_G_sq, "f(xbar^0) - 0": self.f0}


def client_smoothness(f: ImageClassificationProblem, x: np.ndarray, seed: int) -> float:
    """max_k of the Hessian power iteration of f_k at ``x`` (a lower estimate of max_k L_k)."""
    return max(constants.power_smoothness(lambda z, k=k: f.client_gradient(z, k), x, iterations=POWER_ITERATIONS,
                                          radius=FD_RADIUS, seed=seed) for k in range(f.weights.size))


def smooth_constants(f: ImageClassificationProblem, iterates: np.ndarray, batch_size: int,
                     L_init: float) -> SmoothConstants:
    """The estimates along a run whose recorded averages are ``iterates`` (S, P, d), record round 0 first;
    ``L_init`` the initial models' estimate."""
    L, G_sq, sigma_sq, sigma_G_sq = L_init, 0.0, 0.0, 0.0
    for seed, models in enumerate(iterates):
        L = max(L, client_smoothness(f, models[-1], seed))
        for k in range(f.weights.size):
            gradients = np.array([f.client_gradient(x, k) for x in models])
            L = max(L, constants.secant_smoothness(models, gradients))
        for x in models:
            m = client_moments(f, x, batch_size)
            G_sq, sigma_sq = max(G_sq, float(m.second.max())), max(sigma_sq, float(m.variance.max()))
            sigma_G_sq = max(sigma_G_sq, m.sigma_G_sq)
    f0 = float(np.mean([f.objective(models[0]) for models in iterates]))
    return SmoothConstants(L, G_sq, sigma_sq, sigma_G_sq, f0)


@dataclass(frozen=True, eq=False)
class SmoothRun:
    """One FedAvg run on the smooth network: N, K, step s = 1/(6 L_step K), the problem f, the result and
    the estimates along it."""

    N: int
    K: int
    L_step: float
    s: float
    batch_size: int
    f: ImageClassificationProblem
    result: RunResult
    estimates: SmoothConstants


def smooth_run(settings: VerifySettings, *, K: int, T: int, seeds: int, L_step: float, N: int = CLIENTS,
               n_train: int = N_TRAIN, batch_size: int = BATCH) -> SmoothRun:
    """PR-SGD on ``sorted_images`` (N clients of n_train / N images, minibatches of ``batch_size``) for
    T // K rounds of K steps, step 1/(6 L_step K), recorded at round 0 and 8 log-spaced rounds, with the
    estimates along it (the initial models' estimate of L among them)."""
    spec = problems.problem_spec(FAMILY, network=NETWORK, n_clients=N, n_train=n_train)
    f = problems.build_block_cyclic(spec).combined
    L_init = max(client_smoothness(f, f.initial_model(seed), seed) for seed in range(seeds))
    s = 1.0 / (6.0 * L_step * K)
    rounds = T // K
    config = convergence.PRSGDConfig(rounds=rounds, sync_interval=K, step_size=convergence.StepSize.constant(s),
                                     batch_size=batch_size, seeds=tuple(range(seeds)),
                                     record_rounds=(0, *convergence.log_spaced_rounds(rounds, 8)))
    [result] = convergence.execute([convergence.RunRequest(convergence.RunConfig(spec, config))],
                                   settings.sweep_options(), description=f"FedAvg (PR-SGD) on {NETWORK}, N = {N}")
    return SmoothRun(N, K, L_step, s, batch_size, f, result, smooth_constants(f, result.iterates, batch_size, L_init))


def smooth_check(name: str, run: SmoothRun, scale: float, bound_scale: float,
                 planted: str) -> tuple[convergence.Verdict, np.ndarray, dict[str, Any]]:
    """Theorem 3 with the estimated constants at every record point of ``run`` (module docstring), the
    sigma_G^2 term times ``scale`` and the whole bound times ``bound_scale`` (both 1 as stated):
    (verdict named ``name``, bound, evidence)."""
    f, result, c, K, N, s = run.f, run.result, run.estimates, run.K, run.N, run.s
    keep = result.steps > 0
    steps = result.steps[keep].astype(float)
    values = result.extras.grad_sq_mean[:, keep]
    terms = theorem3_terms(steps, s=s, K=K, N=N, L=c.L, G_sq=c.G_sq, sigma_sq=c.sigma_sq, sigma_G_sq=c.sigma_G_sq,
                           f0=c.f0)
    rhs = bound_scale * terms.total(scale)
    cert, ceiling = certified_ceiling(f, result)
    certified = theorem3_terms(steps, s=s, K=K, N=N, L=cert.L, G_sq=cert.G_sq,
                               sigma_sq=cert.minibatch_variance(run.batch_size), sigma_G_sq=cert.G_sq, f0=c.f0)
    label = f"{NETWORK}, N = {N}, estimated L"
    hypotheses = (*theorem3_hypotheses(s, K, c.L, label),
                  Hypothesis(f"[{label}] every f_k L-smooth", True, f"every layer of {NETWORK} is smooth"))
    mean = values.mean(axis=0)
    verdict = convergence.check_upper_bound(
        name, steps, values, rhs, hypotheses=hypotheses, ceiling=ceiling,
        notes=f"(1/t) sum_(tau<t) ||grad f(xbar^tau)||^2 (exact: the full gradient at every step's average) against "
        f"Thm 3 with ESTIMATED constants (L = {c.L:.4g}, G^2 = {c.G_sq:.4g}, sigma^2 = {c.sigma_sq:.4g}, sigma_G^2 = "
        f"{c.sigma_G_sq:.4g}: lower estimates, per client; f(xbar^0) - 0 = {c.f0:.4g} >= f(xbar^0) - f*) at every "
        f"record point, {NETWORK} on {N} label-sorted clients of equal size, K = {K}, s = 1/(6 L_step K) = {s:.4g}: "
        f"a PASS certifies the inequality there, a FAIL is against the estimated bound only. sigma_G^2 term "
        f"{100 * terms.shares(-1)['dissimilarity']:.1f}% of the bound at t = {int(steps[-1])}. Certified on the ball "
        f"(L = {cert.L:.4g}, G^2 = {cert.G_sq:.4g}): 6 L_certified s K = {6 * cert.L * s * K:.3g} (> 1: the "
        f"hypothesis is unmet with the certified L).{planted}",
    )
    evidence = {"instance": f"{NETWORK}, {FAMILY}", "N": N, "T": int(steps[-1]), "K": K, "s": s, "b": run.batch_size,
                "L of the step (plan)": run.L_step, **c.to_json(), **cert.to_json(),
                "sigma_G^2 (certified: (1/N) sum ||grad f_k||^2 - ||grad f||^2 <= G^2_certified)": cert.G_sq,
                "6 L s K (estimated L)": 6 * c.L * s * K, "6 L s K (certified L)": 6 * cert.L * s * K,
                f"shares at t = {int(steps[0])}": terms.shares(0), f"shares at t = {int(steps[-1])}": terms.shares(-1),
                "largest ratio measured / bound without the sigma_G^2 term": float(np.max(mean / terms.total(0.0))),
                "bound at the last point (estimated constants)": float(rhs[-1]),
                "bound at the last point (certified constants)": float(bound_scale * certified.total(scale)[-1])}
    return verdict, rhs, evidence
