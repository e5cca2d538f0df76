"""yu2019.thm1 and yu2019.cor2: parallel restarted SGD (Yu, Yang, Zhu, AAAI 2019, as in the
lecture note ``liu_lecture_fl_fedavg.md``).

Theorem 1 (identical data, L-smooth, s in (0, 1/L], sync every K steps):
    (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 <= 2/(s T) (f(xbar_0) - f*) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2,
with xbar_t the average of the local models at every step (not only at syncs).
Corollary 2: s = sqrt(N)/(L sqrt(T)) and K <= T^{1/4}/N^{3/4} give O(1/sqrt(NT)): linear speedup.

Instance: ``identical_quadratic`` (every client holds the same rows, so each worker's gradient is
unbiased for f, as the theorem assumes), single-row minibatches. G^2 and sigma^2 are bounded over
the ball ||x|| <= B that contains every local iterate (B tracked exactly by the kernel; see
``assumption_constants``: exact for least squares). Checks: the explicit bound at every record point of the largest-T run for
each N (thm1), with the average's ceiling (``bound_ceilings.gradient_ceiling``): every averaged model
lies in the ball ||x|| <= B, where ||grad f(x)||^2 <= (||grad f(0)|| + L B)^2, so a bound at or above
that at every record point could not fail and is listed as uninformative (Theorem 1's first term
2 f0/(s t) exceeds it at the first record points: those points are named in the check's evidence); the fitted exponent of the final average squared gradient norm in T at each N and
in N at the largest T, both claimed <= -1/2 (cor2), with the hypothesis K <= T^{1/4}/N^{3/4}
evaluated on every configuration.

The sweep is the plan's (``proofs_check.plans.YuSweepPlan``: clients N, horizons T, seeds; yu2019.cor2 at least
``plans.SPEEDUP_SEEDS``).
Planted variants (the power self-test, ``fedbound verify --power``) change its constant:
``yu2019.thm1[bound_scale=c]`` checks c times Theorem 1's bound, ``yu2019.cor2[claimed_exponent=a]``
checks the rate (NT)^a; a working check FAILs them when they are false on the instance (c below the
measured tightness, a steeper than -1/2 by more than the tolerance).
"""

from __future__ import annotations

import numpy as np

from convergence import (
    Ceiling, Hypothesis, PRSGDConfig, RunConfig, RunRequest, check_rate_exponent, check_upper_bound, execute, log_spaced_rounds,
)
from problems import build_problem, problem_constants, problem_spec

from .constants.bound_ceilings import gradient_ceiling
from .framework.claim import ClaimResult
from .framework.evaluation import claim_optimum, combine_checks
from .framework.settings import VerifySettings
from .framework.plot_specs import rate_plot
from .constants.assumptions import second_moment_bound, variance_bound
from .plans import YuCorollary2Plan, YuSweepPlan, YuTheorem1Plan
from .constants.regions import Ball

__all__ = ["evaluate_thm1", "evaluate_cor2", "yu_sync_interval", "yu_theorem1_bound"]

RATE_TOLERANCE = 0.05


def yu_sync_interval(T: int, N: int) -> int:
    """The largest K allowed by Corollary 2, K <= T^{1/4} / N^{3/4} (at least 1)."""
    return max(1, int(np.floor(T**0.25 / N**0.75 + 1e-12)))


def yu_theorem1_bound(
    steps: np.ndarray | float, *, s: float, K: int, N: int, L: float, G_sq: float, sigma_sq: float, f0: float,
) -> np.ndarray:
    """Theorem 1 of Yu, Yang, Zhu (AAAI 2019) as restated in the lecture note
    (``liu_lecture_fl_fedavg.md``): after T = ``steps`` local steps (array of shape (P,) or a scalar)
    with step s in (0, 1/L], sync interval K, N workers, G^2 >= E||stochastic gradient||^2 and
    sigma^2 >= its variance, f0 = f(xbar_0) - f*,

        (1/T) sum_{t=1}^{T} E||grad f(xbar_{t-1})||^2 <= 2 f0 / (s T) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2.

    Returns the right-hand side at every T (same shape as ``steps``)."""
    T = np.asarray(steps, dtype=float)
    return 2 * f0 / (s * T) + 4 * s**2 * K**2 * G_sq * L**2 + L / N * s * sigma_sq


def _sweep(settings: VerifySettings, plan: YuSweepPlan) -> list[dict]:
    """One PR-SGD run per (N, T) of the plan with T >= N^3, s = sqrt(N)/(L sqrt(T)) and K from Corollary 2."""
    clients, horizons = plan.clients, plan.horizons
    seeds = tuple(range(plan.seeds))
    plans = []
    for N in clients:
        problem = build_problem(problem_spec("identical_quadratic", n_clients=N, dim=10, mu=0.1, L=10.0,
                                             samples_per_client=50, seed=0))
        optimum, note = claim_optimum(problem)
        L = problem_constants(problem).L
        for T in (T for T in horizons if T >= N**3):  # K = 1 <= T^(1/4)/N^(3/4) needs T >= N^3
            K = yu_sync_interval(T, N)
            rounds = T // K
            config = PRSGDConfig.yu(N, L, rounds, K, batch_size=1, seeds=seeds,
                                    record_rounds=log_spaced_rounds(rounds, 12))
            plans.append({"N": N, "T": rounds * K, "T_nominal": T, "K": K, "L": L, "problem": problem,
                          "optimum": optimum, "config": config, "note": note})
    results = execute([RunRequest(RunConfig(p["problem"].spec, p["config"]), p["optimum"]) for p in plans], settings.sweep_options(), description="PR-SGD runs")
    runs = [dict(plan, result=result) for plan, result in zip(plans, results)]
    return runs


def _bound(run: dict, steps: np.ndarray) -> tuple[np.ndarray, dict, Ceiling]:
    """Theorem 1's right-hand side (``yu_theorem1_bound``) after ``steps`` steps, with its constants and
    the ceiling of the average squared gradient norm over the ball ||x|| <= B that holds every iterate."""
    problem, result, L, K, N = run["problem"], run["result"], run["L"], run["K"], run["N"]
    s = run["config"].step_size.eta0
    B = float(np.sqrt(np.max(result.extras.max_norm_sq)))
    ball = Ball(np.zeros(problem.dim), B)
    sigma_sq = variance_bound(problem, ball, 1).max
    G_sq = second_moment_bound(problem, ball, 1).value
    f0 = problem.objective(np.zeros(problem.dim)) - run["optimum"].F_star
    rhs = yu_theorem1_bound(steps, s=s, K=K, N=N, L=L, G_sq=G_sq, sigma_sq=sigma_sq, f0=f0)
    ceiling = gradient_ceiling(L, float(np.linalg.norm(problem.gradient(np.zeros(problem.dim)))), B,
                               "the ball ||x|| <= B (c = 0, R = B tracked by the kernel) that holds every local "
                               "iterate of every seed, hence every average xbar_t")
    return rhs, {"N": N, "T": run["T"], "K": K, "s": s, "L": L, "G^2": G_sq, "sigma^2": sigma_sq,
                 "B = max ||x_t^i||": B, "f(x_0) - f*": f0, "ceiling of ||grad f||^2": float(ceiling.value)}, ceiling


def _hypotheses(run: dict) -> tuple[Hypothesis, ...]:
    N, T, K, L = run["N"], run["T"], run["K"], run["L"]
    s = run["config"].step_size.eta0
    limit = T**0.25 / N**0.75
    return (
        Hypothesis(f"[N={N}, T={T}] s = sqrt(N)/(L sqrt(T)) <= 1/L", abs(s - np.sqrt(N) / (L * np.sqrt(T))) < 1e-12 * s
                   and s <= 1 / L, f"s = {s:.4g}, 1/L = {1 / L:.4g}"),
        Hypothesis(f"[N={N}, T={T}] K <= T^(1/4)/N^(3/4)", K <= limit + 1e-12, f"K = {K}, T^(1/4)/N^(3/4) = {limit:.4g}"),
    )


def evaluate_thm1(settings: VerifySettings, plan: YuTheorem1Plan) -> ClaimResult:
    """The explicit bound at every record point of the largest-T run of each N (Holm-Bonferroni
    over the record points, ``check_upper_bound``). ``plan.bound_scale`` multiplies the bound: 1 is
    Theorem 1; a planted variant with a scale below the measured tightness is false and must FAIL."""
    bound_scale = plan.bound_scale
    planted = "" if bound_scale == 1.0 else f" Planted variant: the bound multiplied by {bound_scale:g}."
    runs = _sweep(settings, plan)
    checks, plots, constants = [], [], []
    for N in sorted({r["N"] for r in runs}):
        run = max((r for r in runs if r["N"] == N), key=lambda r: r["T"])
        result = run["result"]
        keep = result.steps > 0
        steps = result.steps[keep].astype(float)
        rhs, consts, ceiling = _bound(run, steps)
        rhs = bound_scale * rhs
        constants.append(consts)
        verdict = check_upper_bound(
            f"yu2019.thm1/N={N}", steps, result.extras.grad_sq_mean[:, keep], rhs, hypotheses=_hypotheses(run)[:1],
            ceiling=ceiling,
            notes=f"(1/t) sum ||grad f(xbar_(tau-1))||^2 against Thm 1 at every record point t, N = {N}, "
            f"T = {run['T']}, K = {run['K']}; {run['note']}.{planted}",
        )
        checks.append((f"explicit bound, N = {N}", verdict))
        plots.append(rate_plot(
            f"yu2019_thm1_N{N}", f"Yu et al. Thm 1, PR-SGD, N = {N}: average squared gradient norm and bound",
            f"(1/t) sum ||grad f(xbar)||^2 (mean over seeds) with Thm 1's bound (dashed), N = {N}, K = {run['K']}.",
            verdict, xlabel=r"$t$ (local steps)", ylabel=r"$\frac{1}{t}\sum_\tau \|\nabla f(\bar x_{\tau-1})\|^2$", bound=rhs.tolist(),
        ))
    counted = [v for _, v in checks if not v.cannot_fail]
    verdict = combine_checks("yu2019.thm1", checks, headline=max(counted, key=lambda v: v.measured) if counted else None,
                             notes="Headline: the largest ratio measured / bound over the checked runs." + planted)
    return ClaimResult(verdict.with_evidence(constants=constants), tuple(plots))


def evaluate_cor2(settings: VerifySettings, plan: YuCorollary2Plan) -> ClaimResult:
    """Exponent in N T at each N, and in N at the largest T, both claimed <= ``plan.claimed_exponent``
    (-1/2: Corollary 2's O(1/sqrt(NT)); a steeper planted exponent such as -1 is false and must FAIL)."""
    claimed_exponent = plan.claimed_exponent
    planted = "" if claimed_exponent == -0.5 else f" Planted variant: claimed exponent {claimed_exponent:g}."
    runs = _sweep(settings, plan)
    checks, series = [], []
    for N in sorted({r["N"] for r in runs}):
        group = sorted((r for r in runs if r["N"] == N), key=lambda r: r["T"])
        x = np.array([r["N"] * r["T"] for r in group], dtype=float)
        values = np.stack([r["result"].extras.grad_sq_mean[:, -1] for r in group], axis=1)
        hypotheses = tuple(h for r in group for h in _hypotheses(r))
        verdict = check_rate_exponent(
            f"yu2019.cor2/N={N}", x, values, claimed_exponent=claimed_exponent, hypotheses=hypotheses,
            tolerance=RATE_TOLERANCE,  # 0.05 = 10% of the claimed -1/2: slower than (NT)^-0.45 is not O(1/sqrt(NT))
            notes=f"final (1/T) sum ||grad f||^2 against N T for T in {[r['T'] for r in group]}, N = {N}.{planted}",
        )
        checks.append((f"rate in N T, N = {N}", verdict))
        series.append(verdict)
    T_max = max(r["T_nominal"] for r in runs)
    top = sorted((r for r in runs if r["T_nominal"] == T_max), key=lambda r: r["N"])
    speedup = check_rate_exponent(
        "yu2019.cor2/speedup", np.array([r["N"] for r in top], dtype=float),
        np.stack([r["result"].extras.grad_sq_mean[:, -1] for r in top], axis=1), claimed_exponent=claimed_exponent,
        min_points=len(top), notes=f"linear speedup: exponent in N at T = {T_max}.{planted}",
        tolerance=RATE_TOLERANCE,  # 10% of the claimed -1/2, as the rate in N T
    ) if len(top) >= 3 else None
    if speedup is not None:
        checks.append((f"linear speedup in N at T = {T_max}", speedup))
    verdict = combine_checks("yu2019.cor2", checks, headline=checks[0][1],
                             notes=f"Headline: the exponent in N T at the smallest N. Claimed: at most {claimed_exponent:g}."
                             + planted)
    plot = rate_plot(
        "yu2019_cor2", "Yu et al. Cor. 2: average squared gradient norm vs N T",
        "Final (1/T) sum ||grad f(xbar)||^2 (mean over seeds) against N T, smallest N, with the fitted slope.",
        series[0], xlabel=r"$NT$", ylabel=r"$\frac{1}{T}\sum_t \|\nabla f(\bar x_{t-1})\|^2$",
    )
    return ClaimResult(verdict, (plot,))

