"""li2020.thm4 / thm5: FedAvg with E > 1 and a constant step stops short of w*.

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020),
Theorem 4 (Sec. 4) and Theorem 5 / Lemma 6 (Appendix C.4-C.5). On the Appendix C problem with
exact local gradients and a constant, small enough step eta, FedAvg converges to

    w~* = (I - (1/N) sum_i (I - eta A_i)^E)^{-1} (eta/N) sum_{l<E} (I - eta A_1)^l b     (eq. 32)

and  ||w~* - w*|| >= (E-1) eta / 16 * ||A_1 A_2 w*||                                 (eq. 34)

(proved for mu = 0; for mu > 0 the proof replaces A_i by A_i + mu I). E = 1 (gradient descent)
reaches w*; a decaying step reaches w* for any E.

What fedbound checks, each a sub-check of the verdict:
1. lower bound: the exact limit (convergence.fedavg_fixed_point, which solves eq. 32 for the
   problem as built, mu included) against the bound, over a grid of eta and E >= 2, with the
   bound's A_i replaced by A_i + mu I as the paper prescribes;
2. linear growth: the fitted exponent of the bias in (E-1) eta is 1 (within +-0.1) for each E;
3. simulated limit: FedAvg simulated with the constant step ends at the solved limit;
4. E = 1: the limit is w* (solved for every eta and simulated);
5. decaying step: with the paper's eta_t = (1/5)/(5 + a t) (Appendix C.2), simulated FedAvg with
   E > 1 approaches w*, its distance shrinking like eta_t (fitted exponent in eta_0/eta_t <= -1).
"""

from __future__ import annotations

import numpy as np

from convergence import (
    FedAvgConfig,
    Hypothesis,
    RunConfig,
    Status,
    StepSize,
    Verdict,
    check_lower_bound,
    check_rate_exponent,
    check_upper_bound,
    execute,
    fedavg_fixed_point,
    fit_rate,
    log_spaced_rounds,
    RunRequest,
)
from problems import build_problem, li_counterexample_matrices, problem_spec

from .claim import ClaimResult, PlotSpec, VerifySettings, claim_optimum, combine_checks, rate_plot

__all__ = ["evaluate"]

CLAIM_ID = "li2020.thm4"
LINEAR_TOLERANCE = 0.1
"""Allowed deviation of the fitted exponent of the bias in (E-1) eta from 1 (eq. 33-34: the bias
is (E-1) eta/2 ||A^{-1}(V - A_1 A) w*|| + O(eta^2), linear to first order)."""


def _grid(settings: VerifySettings) -> tuple[list[int], list[float]]:
    """Local steps E >= 2 and constant steps eta (all < 1/(4 + mu), Lemma 6's regime)."""
    if settings.quick:
        return [2, 5, 10], [1e-3, 3e-3, 1e-2, 3e-2]
    return [2, 3, 5, 10, 20], [5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2]


def evaluate(settings: VerifySettings, N: int = 5, p: int = 4, mu: float = 2e-4) -> ClaimResult:
    """Run the five sub-checks of the module docstring and combine them."""
    spec = problem_spec("li_counterexample", N=N, p=p, mu=mu)
    problem = build_problem(spec)
    optimum, optimum_note = claim_optimum(problem)
    w_star = optimum.w_star
    A, _ = li_counterexample_matrices(N, p)
    shifted = A + mu * np.eye(problem.dim)[None]
    bound_norm = float(np.linalg.norm(shifted[0] @ shifted[1] @ w_star))
    local_steps, etas = _grid(settings)

    xs, bias, bounds, groups, radii = [], [], [], [], []
    for E in local_steps:
        for eta in etas:
            fp = fedavg_fixed_point(problem, eta, E)
            xs.append((E - 1) * eta)
            bias.append(float(np.linalg.norm(fp.w - w_star)))
            bounds.append((E - 1) * eta / 16 * bound_norm)
            groups.append(E)
            radii.append(fp.spectral_radius)
    xs, bias, bounds, groups = map(np.asarray, (xs, bias, bounds, groups))
    order = np.argsort(xs, kind="stable")
    converging = Hypothesis(
        "constant-step FedAvg converges (spectral radius of the round map < 1)",
        bool(max(radii) < 1),
        f"max spectral radius over the grid = {max(radii):.6f}",
    )
    small_step = Hypothesis(
        "eta < 1/(4 + mu) (Appendix C.4)", max(etas) < 1 / (4 + mu), f"max eta = {max(etas):g}, 1/(4+mu) = {1 / (4 + mu):.6f}"
    )
    lower = check_lower_bound(
        CLAIM_ID + "/lower-bound", xs[order], bias[order][None, :], bounds[order], hypotheses=(converging, small_step),
        deterministic=True,  # the exact fixed point of eq. 32: no sampling
        notes=f"||(A_1 + mu I)(A_2 + mu I) w*|| = {bound_norm:.6g}; bias from the exact fixed point (eq. 32).",
    )
    linear_checks = [_linearity(E, etas, bias[groups == E]) for E in local_steps]
    simulated, sim_plot = _simulated_limit(settings, problem, spec, optimum)
    gd = _gradient_descent(settings, problem, spec, optimum, etas)
    decay, decay_plot = _decaying_step(settings, spec, optimum)
    checks = [("lower bound (eq. 34)", lower), *linear_checks, simulated, gd, decay]
    verdict = combine_checks(
        CLAIM_ID, checks, headline=lower,
        notes=(
            "Headline: the smallest ratio measured bias / lower bound over the (eta, E) grid "
            f"(E in {local_steps}, eta in {etas}). Bias = ||w~* - w*|| with w~* the exact FedAvg limit; "
            f"w* from the {optimum_note}."
        ),
    )
    plots = (
        PlotSpec(
            "li2020_thm4_bias", "bias", "FedAvg limit bias vs (E-1) eta (Li et al. 2020, Thm 4)",
            "Exact limit ||w~* - w*|| of constant-step FedAvg on the Appendix C problem, coloured by E, "
            "with the lower bound (E-1) eta / 16 ||A_1 A_2 w*||.",
            {"x": xs.tolist(), "measured": bias.tolist(), "bound": bounds.tolist(), "groups": groups.tolist(),
             "xlabel": r"$(E-1)\,\eta$", "ylabel": r"$\|\tilde w^* - w^*\|$"},
        ),
        sim_plot,
        decay_plot,
    )
    return ClaimResult(verdict, plots)


def _linearity(E: int, etas: list[float], bias: np.ndarray) -> tuple[str, Verdict]:
    """Exponent of the bias in eta at fixed E: 1 within LINEAR_TOLERANCE."""
    fit = fit_rate(np.asarray(etas) * (E - 1), bias[None, :])
    lo, hi = fit.interval
    ok = lo >= 1 - LINEAR_TOLERANCE and hi <= 1 + LINEAR_TOLERANCE
    off = hi < 1 - LINEAR_TOLERANCE or lo > 1 + LINEAR_TOLERANCE
    status = Status.PASS if ok else (Status.FAIL if off else Status.INCONCLUSIVE)
    verdict = Verdict(
        f"{CLAIM_ID}/linear-growth/E={E}", status, fit.exponent, 1.0, fit.interval,
        notes=f"log-log fit of the bias in (E-1) eta over eta in {etas}; PASS if the interval lies in [0.9, 1.1].",
        evidence={"x": list(fit.x_used), "mean": list(fit.y_mean_used)},
    )
    return f"linear growth in (E-1) eta, E = {E}", verdict


def _horizon(settings: VerifySettings, quick: int, default: int, full: int) -> int:
    return quick if settings.quick else (full if settings.full else default)


def _simulated_limit(settings, problem, spec, optimum) -> tuple[tuple[str, Verdict], PlotSpec]:
    """Simulate constant-step FedAvg (E = 5, eta = 0.05) and compare its end point with eq. 32."""
    E, eta = 5, 0.05
    fp = fedavg_fixed_point(problem, eta, E)
    rounds = _horizon(settings, 40_000, 120_000, 200_000)
    records = log_spaced_rounds(rounds, 30)
    cfg = RunConfig(spec, FedAvgConfig(E, rounds, StepSize.constant(eta), 0, 1.0, (0,) + records, (0,)))
    (traj,) = execute([RunRequest(cfg, optimum)], **settings.sweep_options(), description="thm4 constant step")
    end = traj.iterates[0, -1]
    gap_to_limit = float(np.linalg.norm(end - fp.w) / np.linalg.norm(fp.w - optimum.w_star))
    bias = float(np.linalg.norm(fp.w - optimum.w_star))
    verdict = check_upper_bound(
        f"{CLAIM_ID}/simulated-limit", np.array([float(rounds * E)]), np.array([[gap_to_limit]]), np.array([1e-3]),
        deterministic=True,  # exact local gradients, full participation
        notes=(f"||w_T - w~*|| / ||w~* - w*|| after T = {rounds * E} steps with E = {E}, eta = {eta} "
               f"(spectral radius {fp.spectral_radius:.6f}); PASS if <= 1e-3: the simulation reaches the solved limit, "
               f"which sits at distance {bias:.4g} from w*."),
    )
    dist = np.sqrt(traj.dist_sq[0])
    plot = PlotSpec(
        "li2020_thm4_trajectories", "curves", "Constant step E=5: FedAvg stalls at the biased limit",
        "Simulated ||w_t - w*|| with a constant step (E = 5, eta = 0.05) and the solved bias ||w~* - w*|| (eq. 32).",
        {"curves": [
            {"x": traj.steps[1:].tolist(), "y": dist[1:].tolist(), "label": "simulated ||w_t - w*||"},
            {"x": traj.steps[1:].tolist(), "y": [bias] * (len(dist) - 1), "label": "solved bias ||w~* - w*||"},
        ], "xlabel": r"local steps $t$", "ylabel": r"$\|w_t - w^*\|$", "logx": True, "logy": True},
    )
    return ("simulation reaches the solved limit (E = 5, eta = 0.05)", verdict), plot


def _gradient_descent(settings, problem, spec, optimum, etas) -> tuple[str, Verdict]:
    """E = 1: the fixed point is w* for every eta (solved), and simulated GD gets there."""
    w_star = optimum.w_star
    scale = float(np.linalg.norm(w_star))
    solved = np.array([np.linalg.norm(fedavg_fixed_point(problem, eta, 1).w - w_star) / scale for eta in etas])
    rounds = _horizon(settings, 60_000, 150_000, 300_000)
    cfg = RunConfig(spec, FedAvgConfig(1, rounds, StepSize.constant(0.2), 0, 1.0, (rounds,), (0,)))
    (traj,) = execute([RunRequest(cfg, optimum)], **settings.sweep_options(), description="thm4 E=1")
    simulated = float(np.sqrt(traj.dist_sq[0, -1]) / scale)
    values = np.append(solved, simulated)[None, :]
    verdict = check_upper_bound(
        f"{CLAIM_ID}/E=1", np.arange(1.0, values.shape[1] + 1), values, np.full(values.shape[1], 1e-8),
        deterministic=True,  # solved limits and exact-gradient descent
        notes=(f"relative distance ||w~* - w*|| / ||w*|| of the E = 1 limit for eta in {etas} (solved), and of "
               f"simulated gradient descent after {rounds} steps with eta = 0.2 (last point); PASS if all <= 1e-8."),
    )
    return "E = 1 reaches w*", verdict


def _decaying_step(settings, spec, optimum) -> tuple[tuple[str, Verdict], PlotSpec]:
    """Appendix C.2's decaying step, E = 5: the distance to w* shrinks like eta_t."""
    E, a = 5, 1e-4
    schedule = StepSize.inverse_time(1 / 25, a / 5)  # (1/5) / (5 + a t)
    rounds = _horizon(settings, 100_000, 400_000, 1_000_000)
    records = log_spaced_rounds(rounds, 40)
    cfg = RunConfig(spec, FedAvgConfig(E, rounds, schedule, 0, 1.0, records, (0,)))
    (traj,) = execute([RunRequest(cfg, optimum)], **settings.sweep_options(), description="thm4 decaying step")
    steps = traj.steps.astype(float)
    x = 1 + (a / 5) * steps  # eta_0 / eta_t
    dist = np.sqrt(traj.dist_sq)
    verdict = check_rate_exponent(
        f"{CLAIM_ID}/decaying-step", x, dist, claimed_exponent=-1.0, fit_from=float(x[-1]) / 10,
        tolerance=0.1,  # 10% of -1: the bias is Theta(eta) only to first order (eq. 33), O(eta^2) terms bend it
        deterministic=True,  # exact local gradients, full participation
        notes=(f"eta_t = (1/5)/(5 + a t), a = {a:g}, E = {E}, T = {rounds * E}: fit of ||w_t - w*|| against "
               "eta_0/eta_t over the last decade; the bias of a step eta is Theta((E-1) eta) (eq. 33-34), so "
               "the distance must shrink at least like eta_t. Final distance "
               f"{dist[0, -1]:.3g} (||w*|| = {np.linalg.norm(optimum.w_star):.3g})."),
    )
    plot = rate_plot(
        "li2020_thm4_decay", "Decaying step, E=5: FedAvg reaches w* (Li et al. 2020, App. C.2)",
        "||w_t - w*|| for eta_t = (1/5)/(5 + 1e-4 t), E = 5, against eta_0/eta_t, with the fitted slope.",
        verdict, xlabel=r"$\eta_0 / \eta_t$", ylabel=r"$\|w_t - w^*\|$",
    )
    return ("decaying step reaches w* (E = 5)", verdict), plot

