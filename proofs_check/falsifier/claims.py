"""The built-in falsifiable claims: Li et al.'s Lemmas 1-3 and Theorem 1, Yu et al.'s drift, with exact expectations.

Built-in claims (``FALSIFIABLE``) take a ``FedAvgInstance`` (a least-squares problem drawn by
``proofs_check.falsifier.strategies`` and a FedAvg config meeting the claim's hypotheses) and evaluate every
expectation exactly (``proofs_check.constants.run_moments.exact_expectations``). True ones (``shared/THEOREMS.md``
l.19-24, l.49-55, l.110): li2020.lemma1, li2020.lemma2, li2020.lemma3, yu2019.drift (identical data,
constant step) and li2020.thm1 (E F(w_T) - F* <= C / (gamma + T - 1), C = kappa (2B/mu + mu gamma/2
||w_1 - w*||^2), Li schedule). Planted false ones (``known_false``): li2020.lemma3[constant=0.01]
(Lemma 3 with 4 replaced by 0.01) and planted.li2020.rate-T2 (E F(w_T) - F* <= C / T^2 with
Theorem 1's C; Li's T is the index of the iterate, local steps done + 1).

Each side is a linear function of the propagated second moment, hence exact up to rounding; a
violation counts only beyond a rounding allowance of 1e-9 times the size of the terms compared.
The right-hand sides are those the lemma checks use (``proofs_check.lemmas.fedavg_bounds``,
``proofs_check.constants.li2020``), with the constants the smallest for which the assumptions hold
as the papers state them (expectations along the run), by the one definition of
``proofs_check.constants.run_moments.IterateMoments``: sigma_k^2 = max_t E var_k(w_t^k), G^2 =
max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch gradient at client k's own iterate (Li et al.
ICLR 2020, Assumptions 3-4), here with exact expectations; the lemma checks of
``proofs_check.lemmas.fedavg`` use the same definition with the mean over seeds. L, mu and Gamma
are exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from convergence import FedAvgConfig, StepSize
from problems import FederatedProblem, exact_optimum, problem_constants

from .search import FalsifiableClaim
from ..lemmas.fedavg_bounds import li_lemma1_bound, li_lemma2_bound, li_lemma3_bound, yu_drift_bound
from ..constants.li2020 import li_theorem1_B, li_theorem1_rate_bound
from ..constants.run_moments import ExactExpectations, IterateMoments, exact_expectations
from .strategies import build_drawn_problem, fedavg_configs, quadratic_problems

__all__ = ["FedAvgInstance", "instances", "exact_moments", "FALSIFIABLE"]

_ROUNDING = 1e-9  # relative rounding allowance of the exact expectations


@dataclass(frozen=True)
class FedAvgInstance:
    """A problem drawn by ``proofs_check.falsifier.strategies`` and a FedAvg config: the inputs of the
    built-in claims. JSON: {"problem": spec, "algorithm": config.to_json()}."""

    problem: FederatedProblem
    config: FedAvgConfig

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem.spec.to_json(), "algorithm": self.config.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FedAvgInstance:
        alg = data["algorithm"]
        config = FedAvgConfig(
            alg["local_steps"], alg["rounds"], StepSize(**alg["step_size"]), alg["batch_size"], alg["server_lr"],
            tuple(alg["record_rounds"]), tuple(alg["seeds"]),
        )
        return cls(build_drawn_problem(data["problem"]), config)


def instances(
    problems: st.SearchStrategy[FederatedProblem], **config_options: Any
) -> st.SearchStrategy[FedAvgInstance]:
    """FedAvgInstance pairs: a problem, then ``fedavg_configs(problem, **config_options)`` for it."""
    return problems.flatmap(lambda p: fedavg_configs(p, **config_options).map(lambda c: FedAvgInstance(p, c)))


def _excess(lhs: np.ndarray, rhs: np.ndarray, size: np.ndarray) -> float:
    """max (lhs - rhs - tol) / (rhs + tol), tol = 1e-9 size: > 0 only beyond rounding."""
    tol = _ROUNDING * np.abs(size) + np.finfo(float).tiny
    return float(np.max((lhs - rhs - tol) / (np.abs(rhs) + tol)))


def _trace_of(instance: FedAvgInstance) -> ExactExpectations:
    optimum = exact_optimum(instance.problem, crosscheck=False)
    return exact_expectations(instance.problem, instance.config, optimum.w_star)


def exact_moments(instance: FedAvgInstance) -> IterateMoments:
    """Li's Assumption 3-4 moments of a least-squares FedAvg instance with exact expectations (one
    realisation, shapes (1, T, N)): the constants the built-in claims use, by the definition the
    lemma checks of ``proofs_check.lemmas.fedavg`` estimate with the mean over seeds."""
    return _trace_of(instance).moments


# ------------------------------------------------------------------------- built-in claims
def _lemma1(instance: FedAvgInstance) -> float:
    """Li Lemma 1: E||vbar_{t+1} - w*||^2 <= (1 - eta mu) E||wbar_t - w*||^2 + eta^2 E||g - gbar||^2
    + 6 L eta^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2."""
    problem = instance.problem
    tr, consts = _trace_of(instance), problem_constants(problem)
    noise = tr.variance @ problem.weights**2
    rhs = li_lemma1_bound(tr.eta, consts.mu, consts.L, tr.Gamma, tr.dist, noise, tr.spread)
    return _excess(tr.dist_next, rhs, tr.size)


def _lemma2(instance: FedAvgInstance) -> float:
    """Li Lemma 2: E||g_t - gbar_t||^2 = sum_k p_k^2 E var_k(w_t^k) <= sum_k p_k^2 sigma_k^2."""
    tr, weights = _trace_of(instance), instance.problem.weights
    expected = tr.variance @ weights**2
    return _excess(expected, np.full(tr.eta.size, li_lemma2_bound(weights, tr.moments.sigma_sq)), expected)


def _lemma3(constant: float) -> Callable[[FedAvgInstance], float]:
    def violation(instance: FedAvgInstance) -> float:
        """Li Lemma 3: E sum_k p_k ||wbar_t - w_t^k||^2 <= constant eta_t^2 (E-1)^2 G^2."""
        tr = _trace_of(instance)
        rhs = li_lemma3_bound(tr.eta, instance.config.local_steps, tr.moments.G_sq, constant)
        return _excess(tr.spread, rhs, tr.size)

    return violation


def _drift(instance: FedAvgInstance) -> float:
    """Yu drift: E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 for every client i (constant step s, K = E)."""
    tr = _trace_of(instance)
    rhs = yu_drift_bound(tr.eta.max(), instance.config.local_steps, tr.moments.G_sq)
    return _excess(tr.drift, np.full_like(tr.drift, rhs), np.repeat(tr.size[:, None], tr.drift.shape[1], axis=1))


def _theorem1_bound(instance: FedAvgInstance, tr: ExactExpectations, horizon: np.ndarray) -> np.ndarray:
    """Li Theorem 1's C / horizon, C = kappa (2B/mu + mu gamma/2 ||w_1 - w*||^2) with
    B = sum p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2 and gamma the schedule's (``li2020_constants``)."""
    problem = instance.problem
    consts = problem_constants(problem)
    optimum = exact_optimum(problem, crosscheck=False)
    B = li_theorem1_B(problem.weights, tr.moments.sigma_sq, consts.L, tr.Gamma, instance.config.local_steps,
                      tr.moments.G_sq)
    return li_theorem1_rate_bound(consts.kappa, consts.mu, instance.config.step_size.gamma, B,
                                  float(optimum.w_star @ optimum.w_star), horizon)


def _theorem1(instance: FedAvgInstance) -> float:
    """Li Theorem 1 (eq. 4): E F(w_T) - F* <= C / (gamma + T - 1), T - 1 = local steps done."""
    tr = _trace_of(instance)
    steps = instance.config.local_steps * np.arange(1, instance.config.rounds + 1)
    return _excess(tr.gap, _theorem1_bound(instance, tr, instance.config.step_size.gamma + steps), tr.gap_size)


def _rate_t2(instance: FedAvgInstance) -> float:
    """Planted false: E F(w_T) - F* <= C / T^2 with Theorem 1's C, T = local steps done + 1."""
    tr = _trace_of(instance)
    T = instance.config.local_steps * np.arange(1, instance.config.rounds + 1) + 1.0
    return _excess(tr.gap, _theorem1_bound(instance, tr, T**2), tr.gap_size)


def _claim(claim_id: str, description: str, strategy: st.SearchStrategy[FedAvgInstance],
           violation: Callable[[FedAvgInstance], float], known_false: bool = False) -> FalsifiableClaim:
    return FalsifiableClaim(claim_id, description, strategy, violation, decode=FedAvgInstance.from_json,
                            known_false=known_false)


_LI_INSTANCES = instances(quadratic_problems(), local_steps=(1, 4), rounds=(1, 4), max_eta_L=0.25)
_SPREAD_INSTANCES = instances(quadratic_problems(n_clients=(2, 4)), local_steps=(2, 4), rounds=(1, 4), max_eta_L=0.25)
_YU_INSTANCES = instances(quadratic_problems(n_clients=(2, 4), identical_data=True), local_steps=(2, 4),
                          rounds=(1, 4), schedules=("constant",), batch_sizes=(1, 4))
"""Lemma 3's and Yu's drift instances have N >= 2 clients and E >= 2: with one client or E = 1 the local
models never leave their average (both sides are 0), so such inputs could not fail and would only
spend the search's budget (they were about half of the inputs drawn before)."""
_RATE_INSTANCES = instances(
    quadratic_problems(n_clients=(2, 3), dim=(2, 3), mu_range=(0.5, 1.0), L_range=(1.0, 2.0), heterogeneity_range=(0.0, 1.0)),
    local_steps=(1, 2), rounds=(1, 400), schedules=("li",), batch_sizes=(1, 2),
)

FALSIFIABLE: dict[str, FalsifiableClaim] = {
    c.id: c
    for c in (
        _claim("li2020.lemma1", "Li et al. 2020 Lemma 1 (one SGD step of the virtual sequence), eta_t <= 1/(4L)",
               _LI_INSTANCES, _lemma1),
        _claim("li2020.lemma2", "Li et al. 2020 Lemma 2: E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2",
               _LI_INSTANCES, _lemma2),
        _claim("li2020.lemma3", "Li et al. 2020 Lemma 3: E sum_k p_k ||wbar_t - w_t^k||^2 <= 4 eta_t^2 (E-1)^2 G^2",
               _SPREAD_INSTANCES, _lemma3(4.0)),
        _claim("li2020.lemma3[constant=0.01]", "planted false: Li Lemma 3 with the constant 4 replaced by 0.01",
               _SPREAD_INSTANCES, _lemma3(0.01), known_false=True),
        _claim("yu2019.drift", "Yu et al. 2019 client drift: E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 (identical data)",
               _YU_INSTANCES, _drift),
        _claim("li2020.thm1", "Li et al. 2020 Theorem 1: E F(w_T) - F* <= C/(gamma + T - 1) with the Li schedule",
               _RATE_INSTANCES, _theorem1),
        _claim("planted.li2020.rate-T2",
               "planted false: FedAvg with the Li schedule reaches E F(w_T) - F* <= C/T^2, C = Theorem 1's constant",
               _RATE_INSTANCES, _rate_t2, known_false=True),
    )
}
"""The built-in falsifiable claims by id (module docstring)."""
