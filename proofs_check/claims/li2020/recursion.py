"""Li et al. (ICLR 2020), the one-step recursion of Theorem 1's proof (eq. 13, built from Lemmas 1-3):

    Delta_{t+1} <= (1 - eta_t mu) Delta_t + eta_t^2 B,        Delta_t = E||wbar_t - w*||^2,

checked at every local step of traced seeds (``thm1``'s module docstring says how both sides
are measured exactly given the past: ``RecursionTerms``), and the instance where it bites
(``RECURSION_INSTANCE``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from convergence.verdict import Hypothesis, Verdict

from ... import constants

if TYPE_CHECKING:
    from convergence import FedAvgTrace
    from problems import FederatedProblem, Optimum, ProblemSpec

__all__ = ["RecursionTerms", "recursion_terms", "check_recursion", "RecursionInstance", "RECURSION_INSTANCE"]


@dataclass(frozen=True)
class RecursionInstance:
    """A run on which eq. 13 is checked at every local step (its length and seeds come from the
    plan: ``recursion_steps``, ``recursion_seeds`` >= thm1.RECURSION_SEEDS)."""

    label: str
    spec: ProblemSpec
    local_steps: int
    batch_size: int


RECURSION_INSTANCE = RecursionInstance(
    "identical quadratic, E = 1",
    problems.problem_spec("identical_quadratic", n_clients=4, dim=5, mu=1.0, L=1.5, samples_per_client=20, seed=0),
    1, 1,
)
"""Identical clients (Gamma = 0), E = 1 (8 (E-1)^2 G^2 = 0), batch 1: B = sum_k p_k^2 sigma_k^2, the
minibatch noise alone; kappa = 1.5 gives gamma = 12 and eta_1 = 2/(13 mu) <= 1/(4L) = 1/6."""


@dataclass(frozen=True, eq=False)
class RecursionTerms:
    """Both sides of eq. 13 per seed and local step along S traced seeds of T steps each.

    ``steps`` (T,) the 0-based global step t of each column; ``eta`` (T,) eta_t; ``current`` (S, T)
    ||wbar_t - w*||^2; ``next_expected`` (S, T) ||wbar_t - eta_t gbar_t - w*||^2 + eta_t^2 V_t, the
    expectation of ||wbar_{t+1} - w*||^2 given the past (module docstring); ``radius`` the largest
    ||w_t^k - w*|| over every seed, step and client; ``grad_sq`` the largest ||g_{t,k}||^2.
    """

    steps: np.ndarray
    eta: np.ndarray
    current: np.ndarray
    next_expected: np.ndarray
    radius: float
    grad_sq: float


def recursion_terms(
    problem: FederatedProblem, optimum: Optimum, traces: tuple[FedAvgTrace, ...], first_step: int = 0
) -> RecursionTerms:
    """RecursionTerms of the traces of a run's seeds (``RunResult.extras.traces`` of a traced FedAvg
    run; batch size from the traces); ``first_step`` is the global step of each trace's first local
    step (0 for a run from the start, t0 for a window restarted at step t0 with the schedule
    shifted by t0)."""
    if not traces:
        raise ValueError("traces: need at least one traced seed")
    p, w_star = problem.weights, optimum.w_star
    T = traces[0].step_sizes.size
    eta = traces[0].step_sizes
    local = np.stack([trace.local_models for trace in traces])  # (S, T+1, N, d)
    average = np.stack([trace.averages for trace in traces])[:, :T]
    gbar = np.stack([trace.mean_full_gradients for trace in traces])
    variance = np.einsum("k,stk->st", p**2, constants.gradient_variance(problem, local[:, :T], traces[0].batch_size))
    current = np.sum((average - w_star) ** 2, axis=2)
    following = np.sum((average - eta[None, :, None] * gbar - w_star) ** 2, axis=2) + eta**2 * variance
    return RecursionTerms(
        np.arange(first_step, first_step + T), eta, current, following,
        float(np.max(np.linalg.norm(local - w_star, axis=-1))),
        float(np.max(np.stack([trace.stochastic_gradient_sq for trace in traces]))),
    )


def check_recursion(
    claim_id: str,
    terms: RecursionTerms,
    mu: float,
    B: float,
    *,
    B_scale: float = 1.0,
    deterministic: bool,
    hypotheses: tuple[Hypothesis, ...] = (),
    notes: str = "",
) -> Verdict:
    """Eq. 13, E X_t <= B_scale eta_t^2 B at every step (module docstring), by check_upper_bound on
    X_t^s = next_expected - (1 - eta_t mu) current; B_scale = 1 is the paper's (another value is a
    planted variant). evidence adds ``max_lhs_over_rhs``, max_t Delta_{t+1} / ((1 - eta_t mu) Delta_t
    + B_scale eta_t^2 B) with Delta the means over seeds."""
    mu = problems.check_real("mu", mu, 0.0)
    B = problems.check_real("B", B, 0.0, strict=True)
    B_scale = problems.check_real("B_scale", B_scale, 0.0, strict=True)
    eta = terms.eta
    allowance = B_scale * eta**2 * B
    values = terms.next_expected - (1 - eta * mu) * terms.current
    verdict = convergence.check_upper_bound(
        claim_id, terms.steps + 1.0, values, allowance, hypotheses=hypotheses, deterministic=deterministic,
        notes=notes,
    )
    lhs_rhs = float(np.max(terms.next_expected.mean(axis=0) / ((1 - eta * mu) * terms.current.mean(axis=0) + allowance)))
    return verdict.with_evidence(max_lhs_over_rhs=lhs_rhs)
