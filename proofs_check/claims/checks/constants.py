"""The claim ``assumptions.constants``: the constants table of `fedbound verify` and its validation.

The constants of the assumptions (THEOREMS.md notation) for each default problem
(``default_problems``), each with the definition and method it uses
(``proofs_check.constants.assumptions``, ``proofs_check.constants.bgd``), over the ball of radius
||w*|| around w*, validated two ways so that the estimators can fail:

* sampling: at random pairs of points of the ball, the mu-strong-convexity and L-smoothness
  inequalities of every client, and at random points the reported sups of sigma_k^2, G^2 and
  sigma_G^2, must never be violated;
* witnesses: no value found at a point exceeds its sup (``Estimate.attained``), and L_k, mu_k bound
  the extreme secant curvatures of every client.

A violation FAILs the claim. Power self-test: ``assumptions.constants[planted=NAME]`` (the plan's ``planted``) reports
one constant of PLANTABLE_CONSTANTS 10% wrong (a sup at 0.9 of its value, mu_k at 1/0.9), which a
witness catches where the constant is exact (least squares).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import problems
from convergence.verdict import Status, Verdict

from ... import constants
from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.references import LI2020, LIU2022_NOTE
from .default_problems import BATCH, DEFAULT_PROBLEMS

if TYPE_CHECKING:
    from convergence.budget import Workload
    from problems import FederatedProblem

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "ConstantsPlan", "extreme_eigenvectors", "sign_fixed", "PLANTABLE_CONSTANTS", "PLANTED_SCALE",
           "WITNESS_TOLERANCE", "SAMPLES"]

PLANTABLE_CONSTANTS = ("L", "mu", "sigma_k^2", "G^2", "sigma_G^2")
"""The constants assumptions.constants can report 10% off (its planted variants)."""
SAMPLES = 64
"""Random pairs of points of the ball at which the inequalities are checked."""

PLANTED_SCALE = 0.9
WITNESS_TOLERANCE = 1e-6
"""Relative slack of the witness checks: far above rounding (1e-12 here), far below a 10% error."""


@dataclass(frozen=True)
class ConstantsPlan:
    """assumptions.constants: which constant (if any) is reported 10% off."""

    planted: str | None = parameter(None, "a constant reported 10% off (planted variant)", choices=PLANTABLE_CONSTANTS)

    def workload(self) -> Workload:
        """Nothing: the assumption constants are analysis only, no run."""
        from convergence.budget import Workload

        return Workload()


def _secant_curvatures(problem: FederatedProblem, centre: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """(N,) largest and smallest secant curvature (grad F_k(v) - grad F_k(u))'(v - u) / ||v - u||^2 over
    u = centre, v = centre + radius e, e an extreme eigenvector of client k's secant matrix
    S_k[:, j] = grad F_k(centre + e_j) - grad F_k(centre). Every secant curvature lies in [mu_k, L_k]
    (mu_k-strong convexity and L_k-smoothness), so these are witnesses: mu_k <= min, L_k >= max. For
    least squares the gradient is affine, S_k is the Hessian and the witnesses equal mu_k and L_k exactly."""
    d, base = problem.dim, problem.local_gradients(centre)
    grads, _ = constants.all_client_terms(problem, centre + np.vstack([np.zeros(d), np.eye(d)]))  # (N, 1 + d, d), by BLAS
    columns = np.swapaxes(grads[:, 1:] - grads[:, :1], 1, 2)  # (N, d, d): column j is S_k[:, j]
    top, bottom = np.empty(problem.n_clients), np.empty(problem.n_clients)
    for k in range(problem.n_clients):
        for out, e in zip((bottom, top), extreme_eigenvectors(0.5 * (columns[k] + columns[k].T))):
            v = centre + radius * e
            out[k] = float((problem.local_gradients(v)[k] - base[k]) @ (v - centre)) / (radius**2 * float(e @ e))
    return top, bottom


def extreme_eigenvectors(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit eigenvectors (d,) of the smallest and the largest eigenvalue of the symmetric A (d, d).

    Only these two pairs are computed (LAPACK's syevr for an index range, ``scipy.linalg.eigh``
    with ``subset_by_index``), not all d of a full decomposition: the secant witnesses use no other.
    An eigenvector is determined up to its sign, which LAPACK leaves to the algorithm; here the
    sign makes its largest-magnitude entry positive (``sign_fixed``), so the witness direction does
    not depend on the driver (a secant curvature over a ball is not sign-free for a non-quadratic F_k)."""
    from scipy.linalg import eigh

    d = A.shape[0]
    return tuple(sign_fixed(eigh(A, subset_by_index=[i, i])[1][:, 0]) for i in (0, d - 1))  # type: ignore[return-value]


def sign_fixed(e: np.ndarray) -> np.ndarray:
    """``e`` (d,) or ``-e``, whichever has its largest-magnitude entry (the first, on a tie) positive."""
    return e if e[np.argmax(np.abs(e))] >= 0 else -e


def _constants(label: str, problem: FederatedProblem, rng: np.random.Generator,
               planted: str | None = None) -> tuple[dict, Verdict]:
    """Constants over the ball of radius ||w*|| around w*, validated two ways: no sampled point of the ball
    violates them (they are upper / lower bounds), and no witness exceeds them (each sup is at least its
    value at a point of the ball: ``Estimate.attained``; L_k, mu_k against the extreme secant curvatures).
    A constant reported too small (a sup) or too large (mu_k) by 10% (``planted``) is caught by a witness
    where the constant is exact (least squares); certified bounds (logistic / softmax) are only sampled."""
    optimum = problems.exact_optimum(problem, crosscheck=False)
    ball = constants.Ball(optimum.w_star, float(np.linalg.norm(optimum.w_star)))
    L, mu = constants.smoothness(problem), constants.strong_convexity(problem)
    sigma = constants.variance_bound(problem, ball, BATCH)
    G = constants.second_moment_bound(problem, ball, BATCH)
    dissim = constants.gradient_dissimilarity(problem, ball, "p")
    row = {
        "problem": label, "L": L.value, "mu": mu.value, "max sigma_k^2 (b=24)": sigma.max, "G^2 (b=24)": G.value,
        "sigma_G^2": dissim.value, "Gamma": constants.heterogeneity(problem, optimum).value,
        "B = max ||w||": constants.parameter_bound(ball).value,
        "BGD G^2 at B^2=1": constants.bgd_pair(problem, ball, 1.0).G_sq,
        "exact": "yes" if all(e.exact for e in (L, mu, sigma, G, dissim)) else "bounds", "region": ball.describe(),
    }
    consts = problems.problem_constants(problem)
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
        var = constants.gradient_variance(problem, u, BATCH)
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


def evaluate(settings: VerifySettings, plan: ConstantsPlan) -> ClaimResult:
    """The constants table and its validation (``_constants``); ``plan.planted`` names a constant of
    PLANTABLE_CONSTANTS to report 10% wrong (power self-test: the sups L_k, sigma_k^2, G^2, sigma_G^2
    at PLANTED_SCALE of their value, mu_k at 1 / PLANTED_SCALE, too large)."""
    planted = plan.planted
    rng = np.random.default_rng(0)
    rows, checks = [], []
    for label, spec in DEFAULT_PROBLEMS.items():
        row, verdict = _constants(label, problems.build_problem(spec), rng, planted)
        rows.append(row)
        checks.append((f"validation (samples and witnesses), {label}", verdict))
    verdict = combine_checks("assumptions.constants", checks, headline=checks[0][1],
                             notes="Constants of the assumptions per default problem (table below); measured = number of "
                             "sampled or witnessed violations of the reported inequalities (0 expected).")
    return ClaimResult(verdict.with_evidence(constants=rows))



CLAIM = Claim(
    "assumptions.constants", (LI2020, LIU2022_NOTE), "Assumptions 1-4 (Li et al.); σ_G², (G, B)-BGD (Liu)",
    "For each default problem: μ-strong convexity and L-smoothness of every F_k, σ_k² ≥ E‖∇F_k(w, ξ) − "
    "∇F_k(w)‖², G² ≥ E‖∇F_k(w, ξ)‖², σ_G² ≥ (1/N) Σ‖∇f_i − ∇f‖², Γ = F* − Σ p_k F_k* ≥ 0, and the (G, B)-BGD "
    "pair, each never violated at sampled points of the region.",
    "the number of sampled violations of the reported inequalities on the first problem (must be 0)",
    evaluate,
    plan=ModePlans(default=ConstantsPlan()),
    variants=(
        PlantedVariant("L 10% off", "max_k L_k reported at 0.9 of its value (an exact constant on the counterexample)",
                       {"planted": "L"}, sub_check="validation (samples and witnesses)"),
        PlantedVariant("mu 10% off", "mu_k reported at 1/0.9 of its value (too large)", {"planted": "mu"},
                       sub_check="validation (samples and witnesses)"),
        PlantedVariant("sigma_k^2 10% off", "sigma_k^2 reported at 0.9 of its sup over the ball",
                       {"planted": "sigma_k^2"}, sub_check="validation (samples and witnesses)"),
        PlantedVariant("G^2 10% off", "G^2 reported at 0.9 of its sup over the ball", {"planted": "G^2"},
                       sub_check="validation (samples and witnesses)"),
        PlantedVariant("sigma_G^2 10% off", "sigma_G^2 reported at 0.9 of its sup over the ball",
                       {"planted": "sigma_G^2"}, sub_check="validation (samples and witnesses)"),
    ),
    order=160,
)
