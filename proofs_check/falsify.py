"""A falsifier: search problem instances and configurations for a violation of a claim's inequality.

``falsify(claim, budget, seed)`` runs ``hypothesis.find`` over ``claim.inputs`` for an input whose
``claim.violation(inputs)`` is > 0, with ``hypothesis.target`` steering the search towards larger
violations, then lets Hypothesis shrink it to a small counterexample. The search is derandomised
by ``seed`` (``random.Random(seed)``) and uses no example database, so the same claim, budget and
seed give the same result; the counterexample comes back as JSON from which ``reproduce`` recomputes
the violation. When nothing is found within ``budget`` generated examples the result says so
(``found = False``): evidence, not proof, that the claim holds on the searched family.

Writing your own claim. A ``FalsifiableClaim`` is an id, a description, a Hypothesis strategy of
inputs and a Python function ``violation(inputs) -> float``: > 0 means the inequality is violated
(by that much, e.g. (LHS - RHS) / RHS), <= 0 means it holds. It must be computed exactly (or with
a reliable interval, reporting the lower end of the excess) so that a positive value is a proof.
Inputs are encoded to JSON by ``encode`` (default: ``inputs.to_json()`` when it exists, else the
inputs themselves) and decoded by ``decode`` (default: the identity). For example:

    from hypothesis import strategies as st
    from proofs_check.falsify import FalsifiableClaim, falsify

    def excess(pair):                        # claim: (a + b)^2 <= 2 a^2 + 2 b^2
        a, b = pair
        return (a + b) ** 2 - 2 * a**2 - 2 * b**2

    claim = FalsifiableClaim("my.claim", "(a+b)^2 <= 2a^2 + 2b^2",
                             st.tuples(st.integers(-9, 9), st.integers(-9, 9)), excess)
    print(falsify(claim, budget=100, seed=0).message)   # no violation in 100 examples

Built-in claims (``FALSIFIABLE``) take a ``FedAvgInstance`` (a least-squares problem drawn by
``proofs_check.strategies`` and a FedAvg config meeting the claim's hypotheses) and evaluate every
expectation exactly (below). True ones (``shared/THEOREMS.md`` l.19-24, l.49-55, l.110):
li2020.lemma1, li2020.lemma2, li2020.lemma3, yu2019.drift (identical data, constant step) and
li2020.thm1 (E F(w_T) - F* <= C / (gamma + T - 1), C = kappa (2B/mu + mu gamma/2 ||w_1 - w*||^2),
Li schedule). Planted false ones (``known_false``): li2020.lemma3[constant=0.01] (Lemma 3 with 4
replaced by 0.01) and planted.li2020.rate-T2 (E F(w_T) - F* <= C / T^2 with Theorem 1's C; Li's
T is the index of the iterate, local steps done + 1).

Exact expectations. On least squares a local step is affine in the model, w <- (I - eta (A_b + mu I)) w
+ eta c_b, with A_b, c_b the minibatch moments, and the clients draw independent minibatches. So
the first and second moments of the stacked local models z = (w^1, ..., w^N, 1) evolve exactly:
Y <- P Y P' + corrections, P = E[step map] (block diagonal), and for client k the correction
(eta^2 / b) [(1/n_k) sum_i (x~_i' Y_k x~_i) x_i x_i' - S~_k Y_k S~_k'] of its own block (the
covariance of a b-row minibatch drawn with replacement; x~_i = (x_i, -y_i), S~_k = X_k'X~_k / n_k,
Y_k client k's augmented block); averaging maps Y to R Y R'. Every side of Li's Lemmas 1-3, Yu's
drift and E F(w_T) - F* = (1/2) E (w_T - w*)'H(w_T - w*) is a linear function of Y, hence exact up
to rounding; a violation counts only beyond a rounding allowance of 1e-9 times the size of the
terms compared. The constants are the smallest for which the assumptions hold as the papers state
them (expectations along the run), by the one definition of ``proofs_check.assumptions.IterateMoments``:
sigma_k^2 = max_t E var_k(w_t^k), G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch gradient at
client k's own iterate (Li et al. ICLR 2020, Assumptions 3-4), here with exact expectations; the
lemma checks of ``proofs_check.lemmas`` use the same definition with the mean over seeds. L, mu and
Gamma are exact.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, find, settings, target
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from convergence import FedAvgConfig, StepSize
from problems import FederatedProblem, LossKind, exact_optimum, problem_constants

from .assumptions import IterateMoments
from .strategies import build_drawn_problem, fedavg_configs, quadratic_problems

__all__ = [
    "FalsifiableClaim",
    "FalsifyResult",
    "FedAvgInstance",
    "instances",
    "falsify",
    "reproduce",
    "exact_moments",
    "FALSIFIABLE",
]

_ROUNDING = 1e-9  # relative rounding allowance of the exact expectations


# ------------------------------------------------------------------------------ public types
def _encode_default(inputs: Any) -> Any:
    return inputs.to_json() if hasattr(inputs, "to_json") else inputs


def _identity(data: Any) -> Any:
    return data


@dataclass(frozen=True)
class FalsifiableClaim:
    """An inequality to falsify: ``violation(inputs) > 0`` means it fails on ``inputs`` (module
    docstring); ``known_false`` marks planted false claims (negative controls)."""

    id: str
    description: str
    inputs: st.SearchStrategy[Any] = field(repr=False)
    violation: Callable[[Any], float] = field(repr=False)
    encode: Callable[[Any], Any] = field(default=_encode_default, repr=False)
    decode: Callable[[Any], Any] = field(default=_identity, repr=False)
    known_false: bool = False


@dataclass(frozen=True)
class FalsifyResult:
    """The outcome of ``falsify``: whether a violation was found, the shrunk counterexample as JSON
    ({"claim", "inputs", "violation"}), the seed and budget that reproduce the search, how many
    examples the search tried (at most ``budget``; up to and including the first violating one),
    how many more evaluations shrinking took, and how long it all took."""

    claim_id: str
    found: bool
    violation: float | None
    counterexample: dict[str, Any] | None
    seed: int
    budget: int
    examples_tried: int
    shrink_evaluations: int
    seconds: float
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim_id, "found": self.found, "violation": self.violation,
            "counterexample": self.counterexample, "seed": self.seed, "budget": self.budget,
            "examples_tried": self.examples_tried, "shrink_evaluations": self.shrink_evaluations,
            "seconds": self.seconds, "message": self.message,
        }


def falsify(claim: FalsifiableClaim, budget: int, seed: int) -> FalsifyResult:
    """Search ``budget`` generated inputs (then shrink) for a violation of ``claim``; see the module
    docstring. Deterministic for a given claim, budget and seed."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget: must be an integer >= 1, got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    calls = 0
    first_hit: int | None = None  # the call that found the first violation: the search's last example

    def violated(inputs: Any) -> bool:
        nonlocal calls, first_hit
        calls += 1
        value = float(claim.violation(inputs))
        if math.isnan(value):
            raise ValueError(f"violation: claim {claim.id} returned NaN (a violation must be a number)")
        target(min(value, 1e300), label="violation")
        if value > 0 and first_hit is None:
            first_hit = calls
        return value > 0

    search = settings(
        max_examples=budget, database=None, deadline=None, verbosity=Verbosity.quiet,
        phases=(Phase.generate, Phase.target, Phase.shrink), suppress_health_check=list(HealthCheck),
    )
    start = time.perf_counter()
    try:
        example = find(claim.inputs, violated, settings=search, random=random.Random(seed))
    except NoSuchExample:
        return FalsifyResult(claim.id, False, None, None, seed, budget, calls, 0, time.perf_counter() - start,
                             f"{claim.id}: no violation in {calls} examples (budget {budget}, seed {seed})")
    value = float(claim.violation(example))
    counterexample = {"claim": claim.id, "inputs": claim.encode(example), "violation": value}
    json.dumps(counterexample)  # the counterexample must be JSON
    tried = first_hit if first_hit is not None else calls
    return FalsifyResult(
        claim.id, True, value, counterexample, seed, budget, tried, calls - tried, time.perf_counter() - start,
        f"{claim.id}: violated by {value:.6g} (found at example {tried} of budget {budget}, then {calls - tried} "
        f"shrinking evaluations; seed {seed})",
    )


def reproduce(claim: FalsifiableClaim, counterexample: dict[str, Any]) -> float:
    """The violation of ``claim`` on a counterexample's JSON (as returned by ``falsify``)."""
    return float(claim.violation(claim.decode(counterexample["inputs"])))


# ------------------------------------------------------------------------ FedAvg instances
@dataclass(frozen=True)
class FedAvgInstance:
    """A problem drawn by ``proofs_check.strategies`` and a FedAvg config: the inputs of the
    built-in claims. JSON: {"problem": spec, "algorithm": config.to_json()}."""

    problem: FederatedProblem
    config: FedAvgConfig

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem.spec, "algorithm": self.config.to_json()}

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


# ---------------------------------------------------------------------- exact expectations
@dataclass(frozen=True, eq=False)
class _Trace:
    """Exact expectations along a least-squares FedAvg run, steps t = 0..T-1 (module docstring).

    moments: E var_k(w_t^k, b) and E||grad F_k(w_t^k)||^2 as ``IterateMoments`` (one exact
    realisation, shapes (1, T, N)), hence sigma_k^2 and G^2 of Li's Assumptions 3-4; spread (T,)
    E sum_k p_k ||wbar_t - w_t^k||^2; drift (T, N) E||xbar_t - w_t^i||^2 (xbar the plain mean);
    dist (T,) E||wbar_t - w*||^2; dist_next (T,) E||vbar_{t+1} - w*||^2; size (T,)
    E sum_k p_k ||w_t^k||^2 + ||w*||^2 (the scale of the squared distances, for rounding);
    gap (R,) and gap_size (R,): E F(w) - F* after rounds 1..R and (1/2)(E w'Hw + w*'Hw*); Gamma:
    Li's F* - sum_k p_k F_k* = sum_k p_k (1/2)(w* - w_k*)'H_k(w* - w_k*) (exact for quadratics, and
    free of the large constants ||y_k||^2 / (2 n_k) that F* and F_k* carry, which ill-conditioned
    data make dominate; problems.heterogeneity_gamma agrees where those constants are moderate).
    """

    eta: np.ndarray
    moments: IterateMoments
    spread: np.ndarray
    drift: np.ndarray
    dist: np.ndarray
    dist_next: np.ndarray
    size: np.ndarray
    gap: np.ndarray
    gap_size: np.ndarray
    Gamma: float

    @property
    def variance(self) -> np.ndarray:
        """E var_k(w_t^k, b), shape (T, N)."""
        return self.moments.expected_variance

    @property
    def grad_sq(self) -> np.ndarray:
        """E||grad F_k(w_t^k)||^2, shape (T, N)."""
        return self.moments.grad_sq[0]


def _exact_trace(problem: FederatedProblem, config: FedAvgConfig, w_star: np.ndarray) -> _Trace:
    """Propagate the second moment Y of (w^1, ..., w^N, 1) through every step (module docstring).

    Client data are stacked and padded with zero rows (x = 0, y = 0 adds nothing to the sums, which
    are divided by the true n_k): rows (N, n_max, d), lifted rows x~ = (x, -y) (N, n_max, d+1).
    """
    if problem.loss is not LossKind.LEAST_SQUARES or config.server_lr != 1.0:
        raise ValueError("instance: exact expectations need a least-squares problem and server_lr = 1")
    N, d, b, E, T = problem.n_clients, problem.dim, config.batch_size, config.local_steps, config.total_steps
    p, D, sizes = problem.weights, problem.n_clients * problem.dim + 1, problem.client_sizes
    eta = config.step_size.at(np.arange(T), E)
    lifted = np.zeros((N, int(sizes.max()), d + 1))
    for k in range(N):
        X, y = problem.client_data(k)
        lifted[k, : sizes[k]] = np.column_stack([X, -y])
    rows = lifted[:, :, :d]
    gram = np.einsum("kni,knj->kij", rows, lifted) / sizes[:, None, None]  # S~_k = [S_k, -c_k]
    hess = gram + problem.mu * np.eye(d, d + 1)[None]  # [S_k + mu I, -c_k]: grad F_k(w) = H~_k (w, 1)
    Q = np.zeros((D, D))
    for k in range(N):
        Q[k * d : (k + 1) * d, k * d : (k + 1) * d] = hess[k, :, :d]
        Q[k * d : (k + 1) * d, -1] = hess[k, :, d]
    H = np.einsum("k,kij->ij", p, hess[:, :, :d])
    average = np.eye(D)
    average[: N * d, : N * d] = np.kron(np.ones((N, 1)), np.kron(p[None, :], np.eye(d)))
    index = np.array([np.r_[k * d : (k + 1) * d, D - 1] for k in range(N)])  # client k's augmented block
    diagonal = (index[:, :d, None], index[:, None, :d])
    Y = np.zeros((D, D))
    Y[-1, -1] = 1.0  # w_0 = 0
    spread, dist, dist_next, size = np.empty(T), np.empty(T), np.empty(T), np.empty(T)
    variance, grad_sq, drift = np.zeros((T, N)), np.empty((T, N)), np.empty((T, N))
    gap, gap_size = np.empty(config.rounds), np.empty(config.rounds)
    star, star_H = float(w_star @ w_star), float(w_star @ H @ w_star)
    local_star = np.linalg.solve(hess[:, :, :d], -hess[:, :, d:])[:, :, 0]  # H_k w_k* = c_k
    offset = w_star[None] - local_star
    Gamma = 0.5 * float(p @ np.einsum("ki,kij,kj->k", offset, hess[:, :, :d], offset))

    def distance(traces: np.ndarray, means: np.ndarray) -> float:
        return float(p @ traces @ p - 2 * w_star @ (p @ means) + star)

    def blocks(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.einsum("kili->kl", Y[: N * d, : N * d].reshape(N, d, N, d)), Y[: N * d, -1].reshape(N, d)

    for t in range(T):
        traces, means = blocks(Y)
        own = np.diag(traces)
        spread[t] = p @ own - p @ traces @ p
        drift[t] = own - 2 * traces.sum(axis=1) / N + traces.sum() / N**2
        dist[t] = distance(traces, means)
        size[t] = p @ own + star
        Yk = Y[index[:, :, None], index[:, None, :]]  # (N, d+1, d+1)
        grad_sq[t] = np.einsum("kij,kjl,kil->k", hess, Yk, hess)
        P = np.eye(D) - eta[t] * Q
        Y = P @ Y @ P.T
        if b:
            q = np.einsum("kni,kij,knj->kn", lifted, Yk, lifted)
            cov = (np.einsum("kni,kn,knj->kij", rows, q, rows) / sizes[:, None, None]
                   - np.einsum("kia,kab,kjb->kij", gram, Yk, gram))
            variance[t] = np.einsum("kii->k", cov) / b
            Y[diagonal] += eta[t] ** 2 / b * cov
        dist_next[t] = distance(*blocks(Y))
        if (t + 1) % E == 0:
            Y = average @ Y @ average.T
            r = (t + 1) // E - 1
            second = float(np.sum(H * Y[:d, :d]))
            gap[r] = 0.5 * (second - 2 * w_star @ H @ Y[:d, -1] + star_H)
            gap_size[r] = 0.5 * (second + star_H)
        Y = 0.5 * (Y + Y.T)
    moments = IterateMoments(grad_sq[None], variance[None], True,
                             "Li et al. Assumptions 3-4 at client k's own iterates, exact expectations (falsify)")
    return _Trace(eta, moments, spread, drift, dist, dist_next, size, gap, gap_size, Gamma)


def _excess(lhs: np.ndarray, rhs: np.ndarray, size: np.ndarray) -> float:
    """max (lhs - rhs - tol) / (rhs + tol), tol = 1e-9 size: > 0 only beyond rounding."""
    tol = _ROUNDING * np.abs(size) + np.finfo(float).tiny
    return float(np.max((lhs - rhs - tol) / (np.abs(rhs) + tol)))


def _trace_of(instance: FedAvgInstance) -> _Trace:
    optimum = exact_optimum(instance.problem, crosscheck=False)
    return _exact_trace(instance.problem, instance.config, optimum.w_star)


def exact_moments(instance: FedAvgInstance) -> IterateMoments:
    """Li's Assumption 3-4 moments of a least-squares FedAvg instance with exact expectations (one
    realisation, shapes (1, T, N)): the constants the built-in claims use, by the definition the
    lemma checks of ``proofs_check.lemmas`` estimate with the mean over seeds."""
    return _trace_of(instance).moments


# ------------------------------------------------------------------------- built-in claims
def _lemma1(instance: FedAvgInstance) -> float:
    """Li Lemma 1: E||vbar_{t+1} - w*||^2 <= (1 - eta mu) E||wbar_t - w*||^2 + eta^2 E||g - gbar||^2
    + 6 L eta^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2."""
    problem = instance.problem
    tr, consts = _trace_of(instance), problem_constants(problem)
    noise = tr.variance @ problem.weights**2
    rhs = (1 - tr.eta * consts.mu) * tr.dist + tr.eta**2 * noise + 6 * consts.L * tr.eta**2 * tr.Gamma + 2 * tr.spread
    return _excess(tr.dist_next, rhs, tr.size)


def _lemma2(instance: FedAvgInstance) -> float:
    """Li Lemma 2: E||g_t - gbar_t||^2 = sum_k p_k^2 E var_k(w_t^k) <= sum_k p_k^2 sigma_k^2."""
    tr, p2 = _trace_of(instance), instance.problem.weights**2
    return _excess(tr.variance @ p2, np.full(tr.eta.size, p2 @ tr.moments.sigma_sq), tr.variance @ p2)


def _lemma3(constant: float) -> Callable[[FedAvgInstance], float]:
    def violation(instance: FedAvgInstance) -> float:
        """Li Lemma 3: E sum_k p_k ||wbar_t - w_t^k||^2 <= constant eta_t^2 (E-1)^2 G^2."""
        tr, E = _trace_of(instance), instance.config.local_steps
        rhs = constant * tr.eta**2 * (E - 1) ** 2 * tr.moments.G_sq
        return _excess(tr.spread, rhs, tr.size)

    return violation


def _drift(instance: FedAvgInstance) -> float:
    """Yu drift: E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 for every client i (constant step s, K = E)."""
    tr, K = _trace_of(instance), instance.config.local_steps
    rhs = 4 * tr.eta.max() ** 2 * K**2 * tr.moments.G_sq
    return _excess(tr.drift, np.full_like(tr.drift, rhs), np.repeat(tr.size[:, None], tr.drift.shape[1], axis=1))


def _theorem1_constant(instance: FedAvgInstance, tr: _Trace) -> tuple[float, float]:
    """(C, gamma) with Li Theorem 1 read as E F(w_T) - F* <= C / (gamma + T - 1):
    C = kappa (2B/mu + mu gamma/2 ||w_1 - w*||^2), B = sum p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2."""
    problem, E = instance.problem, instance.config.local_steps
    consts = problem_constants(problem)
    optimum = exact_optimum(problem, crosscheck=False)
    B = (problem.weights**2 @ tr.moments.sigma_sq + 6 * consts.L * tr.Gamma
         + 8 * (E - 1) ** 2 * tr.moments.G_sq)
    gamma = instance.config.step_size.gamma
    C = consts.kappa * (2 * B / consts.mu + consts.mu * gamma / 2 * float(optimum.w_star @ optimum.w_star))
    return C, gamma


def _theorem1(instance: FedAvgInstance) -> float:
    """Li Theorem 1 (eq. 4): E F(w_T) - F* <= C / (gamma + T - 1), T - 1 = local steps done."""
    tr = _trace_of(instance)
    C, gamma = _theorem1_constant(instance, tr)
    steps = instance.config.local_steps * np.arange(1, instance.config.rounds + 1)
    return _excess(tr.gap, C / (gamma + steps), tr.gap_size)


def _rate_t2(instance: FedAvgInstance) -> float:
    """Planted false: E F(w_T) - F* <= C / T^2 with Theorem 1's C, T = local steps done + 1."""
    tr = _trace_of(instance)
    C, _ = _theorem1_constant(instance, tr)
    T = instance.config.local_steps * np.arange(1, instance.config.rounds + 1) + 1.0
    return _excess(tr.gap, C / T**2, tr.gap_size)


def _claim(claim_id: str, description: str, strategy: st.SearchStrategy[FedAvgInstance],
           violation: Callable[[FedAvgInstance], float], known_false: bool = False) -> FalsifiableClaim:
    return FalsifiableClaim(claim_id, description, strategy, violation, _encode_default, FedAvgInstance.from_json,
                            known_false)


_LI_INSTANCES = instances(quadratic_problems(), local_steps=(1, 4), rounds=(1, 4), max_eta_L=0.25)
_YU_INSTANCES = instances(quadratic_problems(n_clients=(2, 4), identical_data=True), local_steps=(1, 4),
                          rounds=(1, 4), schedules=("constant",), batch_sizes=(1, 4))
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
               _LI_INSTANCES, _lemma3(4.0)),
        _claim("li2020.lemma3[constant=0.01]", "planted false: Li Lemma 3 with the constant 4 replaced by 0.01",
               _LI_INSTANCES, _lemma3(0.01), known_false=True),
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
