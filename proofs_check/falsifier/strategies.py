"""Hypothesis strategies for federated problems and FedAvg configurations (public API).

Problem strategies draw small instances (a few clients, a few rows, a few parameters) so that
property tests stay fast; every drawn problem carries a ``spec`` whose JSON rebuilds it exactly
(``build_drawn_problem``, i.e. ``problems.build_problem``), so a failing example can be stored and
replayed:

* ``quadratic_problems``: least squares with exact constants mu and L (``problems.random_quadratic``)
  or, with ``identical_data=True``, N copies of one such client (``problems.identical_quadratic``);
* ``logistic_problems``: l2 binary logistic regression, labels from per-client teachers (the
  problem family ``strategies.logistic``, builder ``logistic_teacher``, registered with
  ``problems.register_family``);
* ``softmax_problems``: l2 softmax regression, labels from per-client teachers (the family
  ``strategies.softmax``, builder ``softmax_teacher``);
* ``block_cyclic_problems``: block-cyclic least squares (Ding et al. 2020), blocks and clients apart.

Configuration strategies take the problem they are for (the step size depends on its L):

* ``fedavg_configs(problem, ...)``: valid ``FedAvgConfig`` objects: E, rounds, a schedule whose
  first step is at most ``max_eta_L / L`` and which satisfies Li et al.'s eta_t <= 2 eta_{t+E}
  (ICLR 2020, Lemma 3), a batch size (0 = exact gradients) and seeds.

Example: a user's own property test (run with pytest).

    from hypothesis import given, settings, strategies as st

    from convergence import Status
    from proofs_check.lemmas.fedavg import collect, li_lemma3
    from proofs_check.falsifier.strategies import fedavg_configs, quadratic_problems

    @settings(max_examples=20, deadline=None)
    @given(st.data())
    def test_li_lemma3_never_fails(data):
        problem = data.draw(quadratic_problems(n_clients=(2, 3), dim=(2, 3)))
        config = data.draw(fedavg_configs(problem, local_steps=(2, 4), rounds=(1, 4), n_seeds=(4, 8)))
        assert li_lemma3(collect(problem, config)).status is not Status.FAIL

Integer arguments given as (lo, hi) are inclusive ranges; float ranges are closed intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from convergence import FedAvgConfig, StepSize
from problems import (
    BlockCyclicProblem,
    FederatedProblem,
    LossKind,
    ProblemSpec,
    block_cyclic_quadratic,
    build_problem,
    identical_quadratic,
    problem_constants,
    problem_builder,
    problem_spec,
    random_quadratic,
    register_family,
)

__all__ = [
    "quadratic_problems",
    "block_cyclic_problems",
    "logistic_problems",
    "softmax_problems",
    "build_drawn_problem",
    "logistic_teacher",
    "softmax_teacher",
    "fedavg_configs",
    "SCHEDULES",
]

IntRange = tuple[int, int]
FloatRange = tuple[float, float]
SCHEDULES = ("constant", "li", "inverse_time", "per_round")
_SEEDS = st.integers(0, 2**16 - 1)
_CURVATURE_GAP = 1.05
"""quadratic_problems draws L >= 1.05 mu: random_quadratic's targets scale like 1/sqrt(L - mu) (its rows
like sqrt(L - mu)), so L -> mu gives near-zero rows, huge targets and objective values whose
constants swamp every difference F(w) - F* in floating point."""


# ---------------------------------------------------------------------- problem builders
def _teacher_problem(
    loss: str, n_clients: int, n_features: int, n_classes: int, min_samples: int, max_samples: int,
    mu: float, heterogeneity: float, seed: int,
) -> FederatedProblem:
    """Classification clients from ``default_rng(seed)``, in this order: sizes n_k ~ U{min..max},
    then per client a feature shift m_k ~ N(0, heterogeneity^2 I), rows x ~ N(m_k, I) and a teacher
    V_k = V_0 + heterogeneity * Delta_k (V_0, Delta_k standard normal, f x C); labels y ~
    Bernoulli(sigmoid(x'V_k)) (logistic, C = 1) or Categorical(softmax(x'V_k)) (softmax).
    Weights p_k = n_k / n."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_samples, max_samples + 1, n_clients)
    C = 1 if loss == "logistic" else n_classes
    base = rng.standard_normal((n_features, C))
    X_parts, y_parts = [], []
    for k in range(n_clients):
        shift = heterogeneity * rng.standard_normal(n_features)
        X = shift + rng.standard_normal((sizes[k], n_features))
        Z = X @ (base + heterogeneity * rng.standard_normal((n_features, C)))
        if loss == "logistic":
            y = (rng.random(sizes[k]) < 1.0 / (1.0 + np.exp(-Z[:, 0]))).astype(np.float64)
        else:
            P = np.exp(Z - Z.max(axis=1, keepdims=True))
            cumulative = np.cumsum(P / P.sum(axis=1, keepdims=True), axis=1)
            y = np.minimum(np.sum(cumulative < rng.random(sizes[k])[:, None], axis=1), C - 1).astype(np.float64)
        X_parts.append(X)
        y_parts.append(y)
    params = {"n_clients": n_clients, "n_features": n_features, "n_classes": C, "min_samples": min_samples,
              "max_samples": max_samples, "mu": mu, "heterogeneity": heterogeneity, "seed": seed}
    return FederatedProblem(
        name=f"{loss}_teacher(N={n_clients}, f={n_features}, C={C}, mu={mu:g}, h={heterogeneity:g}, seed={seed})",
        loss=LossKind(loss),
        X=np.vstack(X_parts),
        y=np.concatenate(y_parts),
        offsets=np.concatenate([[0], np.cumsum(sizes)]),
        weights=sizes / sizes.sum(),
        mu=mu,
        n_classes=C,
        spec=problem_spec(f"strategies.{loss}", **params),
        notes="Teacher-labelled clients (proofs_check.falsifier.strategies).",
    )


@problem_builder
def logistic_teacher(
    n_clients: int, n_features: int, n_classes: int, min_samples: int, max_samples: int, mu: float,
    heterogeneity: float, seed: int,
) -> FederatedProblem:
    """The problem family ``strategies.logistic``: ``_teacher_problem`` with logistic labels (n_classes = 1)."""
    return _teacher_problem("logistic", n_clients, n_features, n_classes, min_samples, max_samples, mu,
                            heterogeneity, seed)


@problem_builder
def softmax_teacher(
    n_clients: int, n_features: int, n_classes: int, min_samples: int, max_samples: int, mu: float,
    heterogeneity: float, seed: int,
) -> FederatedProblem:
    """The problem family ``strategies.softmax``: ``_teacher_problem`` with softmax labels in [0, n_classes)."""
    return _teacher_problem("softmax", n_clients, n_features, n_classes, min_samples, max_samples, mu,
                            heterogeneity, seed)


register_family("strategies.logistic", logistic_teacher)
register_family("strategies.softmax", softmax_teacher)


def build_drawn_problem(spec: ProblemSpec | Mapping[str, Any]) -> FederatedProblem:
    """Rebuild a problem drawn by these strategies from its ``spec`` or its JSON (``problems.build_problem``;
    the teacher families are registered problem families)."""
    return build_problem(spec)


# -------------------------------------------------------------------- problem strategies
def _ints(bounds: IntRange, name: str, minimum: int) -> st.SearchStrategy[int]:
    lo, hi = bounds
    if not minimum <= lo <= hi:
        raise ValueError(f"{name}: expected an inclusive range ({minimum} <= lo <= hi), got {bounds!r}")
    return st.integers(lo, hi)


def _floats(bounds: FloatRange, name: str, positive: bool = True) -> st.SearchStrategy[float]:
    lo, hi = bounds
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi and (lo > 0 if positive else lo >= 0)):
        raise ValueError(f"{name}: expected a finite range lo <= hi with lo {'>' if positive else '>='} 0, got {bounds!r}")
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def quadratic_problems(
    n_clients: IntRange = (1, 4),
    dim: IntRange = (2, 4),
    mu_range: FloatRange = (0.1, 1.0),
    L_range: FloatRange = (1.0, 4.0),
    heterogeneity_range: FloatRange = (0.0, 2.0),
    extra_samples: IntRange = (0, 3),
    weightings: Sequence[str] = ("balanced", "dirichlet"),
    identical_data: bool = False,
) -> st.SearchStrategy[FederatedProblem]:
    """Least-squares problems with every F_k exactly mu-strongly convex and L-smooth.

    Draws N, d, mu in mu_range, L in L_range with L >= 1.05 mu (so 1.05 * mu_range's top must not
    exceed L_range's top; see ``_CURVATURE_GAP``),
    heterogeneity (distance scale of the client optima; 0 gives Li's Gamma = 0),
    samples_per_client = d + extra, a weighting and a seed, and builds ``random_quadratic``.
    ``identical_data=True`` builds ``identical_quadratic`` instead: N copies of one client, p_k = 1/N
    (Yu et al. AAAI 2019's identical-data setting).
    """
    if not (0 < L_range[0] <= L_range[1] < np.inf and _CURVATURE_GAP * mu_range[1] <= L_range[1]):
        raise ValueError(f"L_range: need 0 < lo <= hi, finite, hi >= 1.05 * mu_range's top; "
                         f"got L_range={L_range}, mu_range={mu_range}")

    @st.composite
    def build(draw: st.DrawFn) -> FederatedProblem:
        N = draw(_ints(n_clients, "n_clients", 1))
        d = draw(_ints(dim, "dim", 2))
        mu = draw(_floats(mu_range, "mu_range"))
        L = draw(st.floats(max(L_range[0], _CURVATURE_GAP * mu), L_range[1]))
        n = d + draw(_ints(extra_samples, "extra_samples", 0))
        seed = draw(_SEEDS)
        if identical_data:
            return identical_quadratic(N, d, mu, L, n, seed)
        h = draw(_floats(heterogeneity_range, "heterogeneity_range", positive=False))
        weighting = draw(st.sampled_from(tuple(weightings)))
        return random_quadratic(N, d, mu, L, h, n, seed, weighting)

    return build()


def _classification_problems(
    loss: str, n_clients: IntRange, n_features: IntRange, n_classes: IntRange, samples: IntRange,
    mu_range: FloatRange, heterogeneity_range: FloatRange,
) -> st.SearchStrategy[FederatedProblem]:
    @st.composite
    def build(draw: st.DrawFn) -> FederatedProblem:
        N = draw(_ints(n_clients, "n_clients", 1))
        f = draw(_ints(n_features, "n_features", 1))
        C = draw(_ints(n_classes, "n_classes", 2)) if loss == "softmax" else 1
        lo = draw(_ints(samples, "samples_per_client", 1))
        hi = draw(st.integers(lo, samples[1]))
        mu = draw(_floats(mu_range, "mu_range"))
        h = draw(_floats(heterogeneity_range, "heterogeneity_range", positive=False))
        teacher = logistic_teacher if loss == "logistic" else softmax_teacher
        return teacher(N, f, C, lo, hi, mu, h, draw(_SEEDS))

    return build()


def logistic_problems(
    n_clients: IntRange = (1, 4),
    n_features: IntRange = (1, 4),
    samples_per_client: IntRange = (1, 8),
    mu_range: FloatRange = (0.05, 1.0),
    heterogeneity_range: FloatRange = (0.0, 2.0),
) -> st.SearchStrategy[FederatedProblem]:
    """l2 binary logistic problems: N clients of n_k in samples_per_client rows of f features, labels
    drawn from per-client teachers whose spread grows with the heterogeneity; mu > 0."""
    return _classification_problems("logistic", n_clients, n_features, (2, 2), samples_per_client, mu_range,
                                    heterogeneity_range)


def softmax_problems(
    n_clients: IntRange = (1, 3),
    n_features: IntRange = (1, 3),
    n_classes: IntRange = (2, 3),
    samples_per_client: IntRange = (1, 8),
    mu_range: FloatRange = (0.05, 1.0),
    heterogeneity_range: FloatRange = (0.0, 2.0),
) -> st.SearchStrategy[FederatedProblem]:
    """l2 softmax problems (d = f * C): as ``logistic_problems`` with C classes."""
    return _classification_problems("softmax", n_clients, n_features, n_classes, samples_per_client, mu_range,
                                    heterogeneity_range)


# ------------------------------------------------------------------ configuration strategies
def block_cyclic_problems(
    n_clients: IntRange = (1, 3),
    n_blocks: IntRange = (1, 3),
    dim: IntRange = (2, 4),
    samples: IntRange = (2, 6),
    block_spread_range: FloatRange = (0.0, 2.0),
    client_spread_range: FloatRange = (0.0, 1.0),
    mu_range: FloatRange = (0.05, 1.0),
) -> st.SearchStrategy[BlockCyclicProblem]:
    """Block-cyclic least-squares problems (Ding et al. 2020, Sec. 2) from ``block_cyclic_quadratic``.

    Draws N clients, M blocks, d, rows per (block, client), how far the block optima are apart
    (block_spread; 0 = one distribution for every block), client heterogeneity within a block,
    mu and a seed. Every F_m^i is mu-strongly convex (l2 term) and has an exact optimum, so the
    per-block and global gaps of block-cyclic runs (``convergence.block_cyclic_gaps``) are exact.
    """

    @st.composite
    def build(draw: st.DrawFn) -> BlockCyclicProblem:
        return block_cyclic_quadratic(
            draw(_ints(n_clients, "n_clients", 1)), draw(_ints(n_blocks, "n_blocks", 1)), draw(_ints(dim, "dim", 1)),
            draw(_ints(samples, "samples", 1)), draw(_floats(block_spread_range, "block_spread_range", positive=False)),
            draw(_floats(client_spread_range, "client_spread_range", positive=False)),
            draw(_floats(mu_range, "mu_range")), 0.1, draw(_SEEDS),
        )

    return build()


def fedavg_configs(
    problem: FederatedProblem,
    local_steps: IntRange = (1, 4),
    rounds: IntRange = (1, 6),
    schedules: Sequence[str] = SCHEDULES,
    max_eta_L: float = 1.0,
    batch_sizes: IntRange = (0, 4),
    n_seeds: IntRange = (1, 3),
    server_lrs: Sequence[float] = (1.0,),
) -> st.SearchStrategy[FedAvgConfig]:
    """Valid FedAvg configs for ``problem``; L = max_k L_k and mu from ``problems.problem_constants``.

    Step sizes: "constant" eta = u max_eta_L / L and "per_round" eta_0 = u max_eta_L / L with
    u in [0.05, 1]; "inverse_time" the same eta_0 with decay in [0, 1/E] (so that
    eta_t <= 2 eta_{t+E}); "li" is Li et al.'s eta_t = 2/(mu(gamma + t)), gamma = max{8 kappa, E},
    whose first step is below 1/(4L), offered only when max_eta_L >= 1/4 and mu > 0. With
    max_eta_L = 1/4 every schedule meets Li's Lemma 1 condition eta_t <= 1/(4L); with 1, Yu's s <= 1/L.
    Batch size 0 means exact gradients; seeds are n consecutive integers from a drawn start.
    """
    consts = problem_constants(problem)
    allowed = tuple(s for s in schedules if s != "li" or (max_eta_L >= 0.25 and consts.mu > 0))
    unknown = sorted(set(schedules) - set(SCHEDULES))
    if unknown or not allowed:
        raise ValueError(f"schedules: choose from {SCHEDULES} (li needs max_eta_L >= 1/4 and mu > 0), got {schedules!r}")
    if not (np.isfinite(max_eta_L) and max_eta_L > 0):
        raise ValueError(f"max_eta_L: must be a finite number > 0, got {max_eta_L!r}")
    return _fedavg_config(
        consts.mu, consts.L, max_eta_L / consts.L, allowed, tuple(server_lrs), _ints(local_steps, "local_steps", 1),
        _ints(rounds, "rounds", 1), _ints(batch_sizes, "batch_sizes", 0), _ints(n_seeds, "n_seeds", 1),
    )


@st.composite
def _fedavg_config(
    draw: st.DrawFn, mu: float, L: float, eta_max: float, schedules: tuple[str, ...], server_lrs: tuple[float, ...],
    local_steps: st.SearchStrategy[int], rounds: st.SearchStrategy[int], batch_sizes: st.SearchStrategy[int],
    n_seeds: st.SearchStrategy[int],
) -> FedAvgConfig:
    """The draws of ``fedavg_configs``, in this order: E, rounds, schedule (and its scale), batch size,
    first seed, number of seeds, server learning rate. Defined once at module level: ``fedavg_configs``
    runs for every drawn problem (``instances`` flat-maps over problems), and building a composite
    strategy anew each time cost Hypothesis a source-code inspection per draw (about 3 ms)."""
    E = draw(local_steps)
    R = draw(rounds)
    kind = draw(st.sampled_from(schedules))
    schedule = StepSize.li(mu, L, E) if kind == "li" else _scaled_schedule(draw, kind, eta_max, E)
    batch = draw(batch_sizes)
    first = draw(st.integers(0, 1000))
    seeds = tuple(range(first, first + draw(n_seeds)))
    server_lr = draw(st.sampled_from(server_lrs))
    return FedAvgConfig(E, R, schedule, batch, server_lr, (R,), seeds)


def _scaled_schedule(draw: st.DrawFn, kind: str, eta_max: float, E: int) -> StepSize:
    """A constant / per_round / inverse_time schedule with eta_0 = u eta_max, u in [0.05, 1], and for
    inverse_time a decay in [0, 1/E], so that eta_t / eta_{t+E} <= 1 + decay E <= 2."""
    eta0 = eta_max * draw(st.floats(0.05, 1.0))
    if kind == "constant":
        return StepSize.constant(eta0)
    if kind == "inverse_time":
        return StepSize.inverse_time(eta0, draw(st.floats(0.0, 1.0 / E)))
    return StepSize.per_round(eta0)
