"""yu2019.cnn on the smooth network (``problems.models.cnn.digits_tanh_mlp``: dense 64->16, tanh, dense
16->10, softmax cross-entropy), where Theorem 1's hypothesis "f L-smooth" holds.

Constants. The bound's constants are ESTIMATED along each run as on the CNN (``cnn_estimates``): L, G^2
and sigma^2 are LOWER estimates of the suprema Theorem 1 takes (power iteration and secants at recorded
models, exact minibatch moments there), and f(xbar_0) - 0 is an UPPER bound of f(xbar_0) - f*
(cross-entropy is >= 0). The right-hand side 2 f0/(s T) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2 increases
in each of them, so the bound with these constants is at most the bound with the true ones: a PASS
(every record point's upper limit below it) certifies Theorem 1's inequality at those points; a FAIL
does not refute the theorem (larger true constants raise the bound) and is named "with estimated
constants". The same run's CERTIFIED constants over the ball ||theta|| <= B that holds every local
iterate of every seed (B tracked by the kernel; ``smooth_bounds.tanh_mlp_bounds``: L from the Hessian's
terms, G^2 >= every per-sample ||grad l||^2, sigma^2 <= G^2 / b for b rows drawn with replacement) are
evidence beside them, with the bound they give and s L_certified (the hypothesis s <= 1/L is met for the
estimate; the certified L, an upper bound, is looser by the factor reported). The ceiling G^2_certified
of ||grad f||^2 on the ball makes the check uninformative where the bound lies above it.

Rate checks. O(1/sqrt(NT)) is an asymptotic statement; over a finite range of N T the theorem forces a
decay only where its bound at the largest horizon lies below the average measured at the smallest.
``rate_bite`` compares the two, with the constants estimated along the largest run (lower estimates, so
the true bound is at least as high): where the bound is higher, the theorem allows the average to stay
flat over the whole range, an exponent fitted there can neither confirm nor refute the rate, and the
rate check is listed as uninformative with the figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import convergence
from convergence.verdict import Hypothesis

from .sweep import yu_theorem1_bound

if TYPE_CHECKING:
    from convergence import RunResult
    from problems import ImageClassificationProblem
    from problems.models.cnn.smooth_bounds import TanhMLPBounds

    from .cnn_estimates import RunConstants

__all__ = ["certified_ceiling", "rate_bite", "smooth_bound_check"]


def certified_ceiling(f: ImageClassificationProblem, result: RunResult) -> tuple[TanhMLPBounds, convergence.Ceiling]:
    """The certified constants of the tanh network over the ball ||theta|| <= B that holds every local iterate
    of every seed (B tracked by the kernel: ``extras.max_norm_sq``; ``smooth_bounds.tanh_mlp_bounds``) and
    the ceiling they give a squared gradient norm, ||grad f||^2 <= G^2_certified on that ball."""
    from problems.models.cnn.smooth_bounds import tanh_mlp_bounds

    B = float(np.sqrt(np.max(result.extras.max_norm_sq)))
    cert = tanh_mlp_bounds(f.network, f.images, np.zeros(f.dim), B)
    return cert, convergence.Ceiling(cert.G_sq, f"||grad f||^2 <= G^2_certified = {cert.G_sq:.4g} on the ball "
                                     f"||theta|| <= B = {B:.4g} that holds every local iterate of every seed "
                                     f"(smooth_bounds)")


def _bound(steps: np.ndarray | float, *, s: float, K: int, N: int, c: RunConstants) -> np.ndarray:
    """Theorem 1's right-hand side with the estimated constants ``c``."""
    return yu_theorem1_bound(steps, s=s, K=K, N=N, L=c.L, G_sq=c.G_sq, sigma_sq=c.sigma_sq, f0=c.f0)


def smooth_bound_check(name: str, f: ImageClassificationProblem, result: RunResult, c: RunConstants, *, s: float,
                       K: int, N: int, batch_size: int, bound_scale: float,
                       hypotheses: tuple[Hypothesis, ...]) -> tuple[convergence.Verdict, np.ndarray, dict[str, Any]]:
    """Theorem 1 with the estimated constants at every record point of one run, counted (module docstring),
    times ``bound_scale`` (1 as stated), with the certified constants over the ball that holds the run as
    evidence: (verdict named ``name``, bound, evidence)."""
    keep = result.steps > 0
    steps = result.steps[keep].astype(float)
    values = result.extras.grad_sq_mean[:, keep]
    rhs = bound_scale * _bound(steps, s=s, K=K, N=N, c=c)
    cert, ceiling = certified_ceiling(f, result)
    certified = bound_scale * yu_theorem1_bound(steps, s=s, K=K, N=N, L=cert.L, G_sq=cert.G_sq,
                                                sigma_sq=cert.minibatch_variance(batch_size), f0=c.f0)
    planted = "" if bound_scale == 1.0 else f" Planted variant: the bound multiplied by {bound_scale:g}."
    verdict = convergence.check_upper_bound(
        name, steps, values, rhs, hypotheses=hypotheses, ceiling=ceiling,
        notes=f"(1/t) sum ||grad f(xbar_(tau-1))||^2 against Theorem 1 with ESTIMATED constants (L = {c.L:.4g}, G^2 = "
        f"{c.G_sq:.4g}, sigma^2 = {c.sigma_sq:.4g}: lower estimates; f(xbar_0) - 0 = {c.f0:.4g} >= f(xbar_0) - f*) at "
        f"every record point, N = {N}, K = {K}, s = {s:.4g}: the bound increases in each constant, so a PASS "
        f"certifies the inequality there, a FAIL is against the estimated bound only. Certified on the ball "
        f"(L = {cert.L:.4g}, G^2 = {cert.G_sq:.4g}) the bound is {float(certified[-1]):.4g} at t = {int(steps[-1])}, "
        f"and s L_certified = {s * cert.L:.3g}.{planted}",
    )
    evidence = {"N": N, "T": int(steps[-1]), "K": K, "s": s, **c.to_json(), **cert.to_json(),
                "s L (certified)": s * cert.L, "bound at the last point (estimated constants)": float(rhs[-1]),
                "bound at the last point (certified constants)": float(certified[-1])}
    return verdict, rhs, evidence


def rate_bite(largest: tuple[int, float, int, int, RunConstants], smallest_mean: float) -> str | None:
    """None when Theorem 1 forces a decay over a rate check's range, else the reason it does not (module
    docstring): ``largest`` = (steps T, s, K, N, estimated constants) of the run at the range's largest
    horizon, ``smallest_mean`` the mean over seeds of the final average at its smallest."""
    T, s, K, N, c = largest
    top = float(_bound(float(T), s=s, K=K, N=N, c=c))
    if top < smallest_mean:
        return None
    return (f"Theorem 1's bound at the largest horizon (N = {N}, T = {T}), {top:.4g} with the constants "
            f"estimated along that run (lower estimates: the true bound is at least this), is above the average "
            f"measured at the smallest, {smallest_mean:.4g}: the theorem lets the average stay flat over the whole "
            "range, so an exponent fitted there can neither confirm nor refute O(1/sqrt(NT)) (pre-asymptotic)")
