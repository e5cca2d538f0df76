"""Two report items of `fedbound verify` built on the assumption estimators and the lemma checks.

assumptions.constants: the constants of the assumptions (THEOREMS.md notation) for each default
problem, each with the definition and method it uses (``proofs_check.assumptions``), validated
by sampling: at random pairs of points in the region, the mu-strong-convexity and L-smoothness
inequalities of every client, and at random points the reported sups of sigma_k^2, G^2 and
sigma_G^2, must never be violated. A violation FAILs the item (so the estimators can fail).

lemmas: the lemma table. li2020.lemma1-3 on the counterexample and a synthetic(1, 1) instance
with Li's schedule, yu2019.drift on heterogeneous least-squares clients with a constant step (the
proof does not need identical data), and ding2020.lemma2, 3, 6, 8, 9 on the Ding instance with
MC-PSGD (the theorem's step sizes, I = 4 so that the drift of lemma 3 is not trivially 0), each a
sub-check whose worst ratio LHS / RHS over every step is reported with its interval. Constants as
the assumptions define them (``proofs_check.lemmas``, ``proofs_check.ding_lemmas``).

Power self-test: ``evaluate_lemmas(settings, planted=LEMMA_ID)`` plants a false version of one lemma
(``PLANTABLE_LEMMAS``): its constant is replaced by ``lemmas.PLANTED_MARGIN`` (0.9) times the
largest one the data prove too small (``lemmas.attained_scale``: a simultaneous lower confidence
limit above the bound), so the planted lemma is false on the instance, by about 11% beyond what
the data resolve, and must FAIL; Lemma 6's additive constant is moved below the attained one the
same way (``lemmas.attained_offset``) and Lemma 8 puts the rejected model on the left. Only the
rows of the planted lemma are evaluated (the others are those of the true claim and cannot
change a FAIL); the row notes give the planted constant next to the paper's.
"""

from __future__ import annotations

import numpy as np

from convergence import FedAvgConfig, Status, StepSize, Uninformative, Verdict
from convergence.block_cyclic import MCPSGDConfig
from problems import BlockCyclicProblem, FederatedProblem, build_problem, exact_optimum, problem_constants, problem_spec

from .assumptions import (
    Ball,
    bgd_pair,
    gradient_dissimilarity,
    gradient_variance,
    heterogeneity,
    parameter_bound,
    second_moment_bound,
    smoothness,
    strong_convexity,
    variance_bound,
)
from .claim import ClaimResult, VerifySettings, combine_checks
from .ding2020 import CYCLES
from .ding2020 import instance as ding_instance
from .ding_lemmas import (
    DingLemmaData,
    collect_ding,
    ding_lemma2,
    ding_lemma3,
    ding_lemma6,
    ding_lemma8,
    ding_lemma9,
    ding_rows,
)
from .lemmas import (
    PLANTED_MARGIN,
    LemmaData,
    attained_offset,
    collect,
    li_lemma1,
    li_lemma2,
    li_lemma3,
    planted_factor,
    yu_drift,
)

__all__ = ["evaluate_constants", "evaluate_lemmas", "DEFAULT_PROBLEMS", "PLANTABLE_LEMMAS"]

PLANTABLE_LEMMAS = ("li2020.lemma1", "li2020.lemma2", "li2020.lemma3", "yu2019.drift", "ding2020.lemma2",
                    "ding2020.lemma3", "ding2020.lemma6", "ding2020.lemma8", "ding2020.lemma9")
"""The lemmas ``evaluate_lemmas(planted=...)`` can plant a false version of."""

DEFAULT_PROBLEMS = {
    "counterexample": problem_spec("li_counterexample", N=5, p=4, mu=2e-4),
    "synthetic(1,1)": problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1),
}
BATCH = 24
SAMPLES = 64


PLANTABLE_CONSTANTS = ("L", "mu", "sigma_k^2", "G^2", "sigma_G^2")
"""The constants ``evaluate_constants(planted=...)`` can report wrongly: the sups (L_k, sigma_k^2, G^2,
sigma_G^2) at PLANTED_SCALE of their value, mu_k at 1 / PLANTED_SCALE (too large)."""

PLANTED_SCALE = 0.9
WITNESS_TOLERANCE = 1e-6
"""Relative slack of the witness checks: far above rounding (1e-12 here), far below a 10% error."""


def _secant_curvatures(problem: FederatedProblem, centre: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """(N,) largest and smallest secant curvature (grad F_k(v) - grad F_k(u))'(v - u) / ||v - u||^2 over
    u = centre, v = centre + radius e, e an extreme eigenvector of client k's secant matrix
    S_k[:, j] = grad F_k(centre + e_j) - grad F_k(centre). Every secant curvature lies in [mu_k, L_k]
    (mu_k-strong convexity and L_k-smoothness), so these are witnesses: mu_k <= min, L_k >= max. For
    least squares the gradient is affine, S_k is the Hessian and the witnesses equal mu_k and L_k exactly."""
    d, base = problem.dim, problem.local_gradients(centre)
    columns = np.stack([problem.local_gradients(centre + e) - base for e in np.eye(d)], axis=2)  # (N, d, d)
    top, bottom = np.empty(problem.n_clients), np.empty(problem.n_clients)
    for k in range(problem.n_clients):
        _, vectors = np.linalg.eigh(0.5 * (columns[k] + columns[k].T))
        for out, e in ((bottom, vectors[:, 0]), (top, vectors[:, -1])):
            v = centre + radius * e
            out[k] = float((problem.local_gradients(v)[k] - base[k]) @ (v - centre)) / (radius**2 * float(e @ e))
    return top, bottom


def _constants(label: str, problem: FederatedProblem, rng: np.random.Generator,
               planted: str | None = None) -> tuple[dict, Verdict]:
    """Constants over the ball of radius ||w*|| around w*, validated two ways: no sampled point of the ball
    violates them (they are upper / lower bounds), and no witness exceeds them (each sup is at least its
    value at a point of the ball: ``Estimate.attained``; L_k, mu_k against the extreme secant curvatures).
    A constant reported too small (a sup) or too large (mu_k) by 10% (``planted``) is caught by a witness
    where the constant is exact (least squares); certified bounds (logistic / softmax) are only sampled."""
    optimum = exact_optimum(problem, crosscheck=False)
    ball = Ball(optimum.w_star, float(np.linalg.norm(optimum.w_star)))
    L, mu = smoothness(problem), strong_convexity(problem)
    sigma = variance_bound(problem, ball, BATCH)
    G = second_moment_bound(problem, ball, BATCH)
    dissim = gradient_dissimilarity(problem, ball, "p")
    row = {
        "problem": label, "L": L.value, "mu": mu.value, "max sigma_k^2 (b=24)": sigma.max, "G^2 (b=24)": G.value,
        "sigma_G^2": dissim.value, "Gamma": heterogeneity(problem, optimum).value,
        "B = max ||w||": parameter_bound(ball).value, "BGD G^2 at B^2=1": bgd_pair(problem, ball, 1.0).G_sq,
        "exact": "yes" if all(e.exact for e in (L, mu, sigma, G, dissim)) else "bounds", "region": ball.describe(),
    }
    consts = problem_constants(problem)
    scale = {name: PLANTED_SCALE if name == planted else 1.0 for name in PLANTABLE_CONSTANTS}
    L_k, mu_k = consts.L_k * scale["L"], consts.mu_k / scale["mu"]
    sigma_k, G_sq, dissim_sq = sigma.values * scale["sigma_k^2"], G.value * scale["G^2"], dissim.value * scale["sigma_G^2"]
    violations = []
    for _ in range(SAMPLES):
        u, v = (optimum.w_star + ball.radius * _unit_ball(rng, problem.dim) for _ in range(2))
        gu = problem.local_gradients(u)
        fu, fv = problem.local_objectives(u), problem.local_objectives(v)
        linear = fu + (gu @ (v - u))
        half = 0.5 * float((v - u) @ (v - u))
        slack = 1e-9 * (1 + np.abs(fv))
        if np.any(fv < linear + mu_k * half - slack) or np.any(fv > linear + L_k * half + slack):
            violations.append("strong convexity / smoothness")
        var = gradient_variance(problem, u, BATCH)
        if np.any(var > sigma_k * (1 + 1e-9)):
            violations.append("sigma_k^2 sup")
        if np.max(np.sum(gu**2, axis=1) + var) > G_sq * (1 + 1e-9):
            violations.append("G^2 sup")
        spread = problem.weights @ np.sum((gu - problem.weights @ gu) ** 2, axis=1)
        if spread > dissim_sq * (1 + 1e-9):
            violations.append("sigma_G^2 sup")
    top, bottom = _secant_curvatures(problem, optimum.w_star, ball.radius)
    witnessed = {
        "L_k below a secant curvature": np.any(top > L_k * (1 + WITNESS_TOLERANCE)),
        "mu_k above a secant curvature": np.any(bottom < mu_k * (1 - WITNESS_TOLERANCE)),
        "sigma_k^2 below its value at a point of the ball": np.any(sigma.attained > sigma_k * (1 + WITNESS_TOLERANCE)),
        "G^2 below its value at a point of the ball": G.attained is not None and G.attained > G_sq * (1 + WITNESS_TOLERANCE),
        "sigma_G^2 below its value at a point of the ball":
            dissim.attained is not None and dissim.attained > dissim_sq * (1 + WITNESS_TOLERANCE),
    }
    violations += [name for name, hit in witnessed.items() if hit]
    status = Status.FAIL if violations else Status.PASS
    what = "" if planted is None else f"Planted: {planted} reported at {PLANTED_SCALE:g} of its value ({'1/' if planted == 'mu' else ''}{PLANTED_SCALE:g}). "
    verdict = Verdict(
        f"assumptions.constants/{label}", status, float(len(violations)), 0.0, None,
        notes=(f"{what}{SAMPLES} sampled pairs in {ball.describe()} and the witnesses (extreme secant curvatures, the "
               "points where each sup is attained): "
               + ("no inequality violated" if not violations else "violated: " + ", ".join(sorted(set(violations))))
               + f". Methods: L: {L.method}; sigma_k^2: {sigma.method}; G^2: {G.method}; sigma_G^2: {dissim.method}."),
    )
    return row, verdict


def _unit_ball(rng: np.random.Generator, dim: int) -> np.ndarray:
    """A uniform point of the unit ball in R^dim."""
    z = rng.normal(size=dim)
    return z / np.linalg.norm(z) * rng.random() ** (1 / dim)


def evaluate_constants(settings: VerifySettings, *, planted: str | None = None) -> ClaimResult:
    """The constants table and its validation (``_constants``); ``planted`` names a constant of
    PLANTABLE_CONSTANTS to report 10% wrong (power self-test)."""
    if planted is not None and planted not in PLANTABLE_CONSTANTS:
        raise ValueError(f"planted: expected None or one of {', '.join(PLANTABLE_CONSTANTS)}, got {planted!r}")
    rng = np.random.default_rng(0)
    rows, checks = [], []
    for label, spec in DEFAULT_PROBLEMS.items():
        row, verdict = _constants(label, build_problem(spec), rng, planted)
        rows.append(row)
        checks.append((f"validation (samples and witnesses), {label}", verdict))
    verdict = combine_checks("assumptions.constants", checks, headline=checks[0][1],
                             notes="Constants of the assumptions per default problem (table below); measured = number of "
                             "sampled or witnessed violations of the reported inequalities (0 expected).")
    return ClaimResult(verdict.with_evidence(constants=rows))


def _ding_lemma_run(seeds: tuple[int, ...]) -> tuple[BlockCyclicProblem, MCPSGDConfig]:
    """The Ding instance with MC-PSGD at K = 64 (C = 2, E = 16, I = 4), gamma and eta of Theorem 2."""
    problem = ding_instance()
    N, M, E, I = problem.n_clients, problem.n_blocks, 16, 4
    T = CYCLES * M * E * I
    L = problem_constants(problem.combined).L
    config = MCPSGDConfig(cycles=CYCLES, rounds_per_block=E, local_steps=I, batch_size=1, seeds=seeds,
                          step_size=StepSize.constant(np.sqrt(N) / (L * np.sqrt(T))),
                          block_step_size=StepSize.constant(np.sqrt(N * M) / (L * np.sqrt(T))))
    return problem, config


def _li_rows(data: LemmaData, label: str, planted: str | None) -> list[tuple[str, Verdict]]:
    """Li's Lemmas 1-3 (true, or only the planted one) on one collected run."""
    rows = []
    if planted in (None, "li2020.lemma1"):
        true = li_lemma1(data)
        rows.append(true if planted is None else li_lemma1(data, scale=planted_factor(true)))
    if planted in (None, "li2020.lemma2"):
        true = li_lemma2(data)
        rows.append(true if planted is None else li_lemma2(data, factor=planted_factor(true)))
    if planted in (None, "li2020.lemma3"):
        true = li_lemma3(data)
        rows.append(true if planted is None else li_lemma3(data, constant=4.0 * planted_factor(true)))
    return [(f"{v.claim_id}, {label}", v) for v in rows]


LEMMA2_EQUALITY = (
    "Li's Lemma 2 holds with equality at t = 0 by the definition of sigma_k^2 = max_t E var_k(w_t^k) (every "
    "client starts at w_0, where its variance peaks), so no sample of realised noise can confirm it; the row still "
    "FAILs, and then counts, if the clients' noise is correlated"
)


def _split_lemma2(checks: list[tuple[str, Verdict]]) -> tuple[list[tuple[str, Verdict]], list[Uninformative]]:
    """Li Lemma 2 rows that are INCONCLUSIVE are uninformative (LEMMA2_EQUALITY); a FAIL stays counted."""
    counted, uninformative = [], []
    for name, v in checks:
        if v.claim_id == "li2020.lemma2" and v.status is Status.INCONCLUSIVE:
            uninformative.append(Uninformative.of(name, v, LEMMA2_EQUALITY))
        else:
            counted.append((name, v))
    return counted, uninformative


def _ding_planted_rows(data: DingLemmaData, planted: str) -> list[tuple[str, Verdict]]:
    """The rows of one planted Ding lemma (module docstring)."""
    if planted == "ding2020.lemma2":
        rows = [ding_lemma2(data, factor=planted_factor(ding_lemma2(data)))]
    elif planted == "ding2020.lemma3":
        rows = [ding_lemma3(data, 4.0 * planted_factor(ding_lemma3(data, over=over)), over=over)
                for over in ("max", "mean")]
    elif planted == "ding2020.lemma6":
        rows = [ding_lemma6(data, constant=attained_offset(ding_lemma6(data), PLANTED_MARGIN))]
    elif planted == "ding2020.lemma8":
        rows = [ding_lemma8(data, model="rejected")]
    else:
        rows = [ding_lemma9(data, factor=planted_factor(ding_lemma9(data)))]
    return [(f"{v.claim_id}, block-cyclic MC-PSGD", v) for v in rows]


def evaluate_lemmas(settings: VerifySettings, *, planted: str | None = None) -> ClaimResult:
    """The lemma table (module docstring); ``planted`` names a lemma of PLANTABLE_LEMMAS to make false."""
    if planted is not None and planted not in PLANTABLE_LEMMAS:
        raise ValueError(f"planted: expected None or one of {', '.join(PLANTABLE_LEMMAS)}, got {planted!r}")
    seeds = tuple(range(max(settings.seeds, 16)))  # lemma 2 compares realised noise: it needs many seeds
    checks: list[tuple[str, Verdict]] = []
    if planted is None or planted.startswith("li2020"):
        for label, spec in DEFAULT_PROBLEMS.items():
            problem = build_problem(spec)
            c = problem_constants(problem)
            E = 5
            config = FedAvgConfig(E, 10 if settings.quick else 30, StepSize.li(c.mu, c.L, E), BATCH, seeds=seeds)
            checks += _li_rows(collect(problem, config), label, planted)
    if planted in (None, "yu2019.drift"):
        # heterogeneous clients: the drift lemma's proof needs a constant step and E||g||^2 <= G^2, not identical data
        problem = build_problem(problem_spec("random_quadratic", n_clients=4, dim=10, mu=0.1, L=10.0, heterogeneity=1.0,
                                             samples_per_client=50, seed=0))
        config = FedAvgConfig(5, 10 if settings.quick else 30, StepSize.constant(0.02), 1, seeds=seeds)
        data = collect(problem, config)
        true = yu_drift(data)
        drift = true if planted is None else yu_drift(data, constant=4.0 * planted_factor(true))
        checks.append((f"{drift.claim_id}, heterogeneous clients", drift))
    if planted is None or planted.startswith("ding2020"):
        data = collect_ding(*_ding_lemma_run(seeds))
        checks += ([(f"{name}, block-cyclic MC-PSGD", v) for name, v in ding_rows(data)] if planted is None
                   else _ding_planted_rows(data, planted))
    checks, uninformative = _split_lemma2(checks) if planted is None else (checks, [])
    # lemma 8's ratio is 1 by construction (the selected model is one of the two compared)
    headline_rows = [v for name, v in checks if "Lemma 8" not in name] or [v for _, v in checks]
    worst = max(headline_rows, key=lambda v: v.measured)
    what = "The lemma table" if planted is None else f"Planted false {planted} (power self-test), only its rows"
    verdict = combine_checks(
        "lemmas", checks, headline=worst,
        notes=f"{what}: each row is LHS <= RHS at every local step (expectations over seeds with intervals). "
        "Headline: the worst ratio LHS / RHS over all rows but Ding's lemma 8, whose ratio is 1 by construction.",
        uninformative=uninformative,
    )
    return ClaimResult(verdict)
