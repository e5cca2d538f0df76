"""li2020.e-growth: the remark of Sec. 3 that E must not exceed Omega(sqrt(T)), with E growing with T.

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), Sec. 3.3,
remark "Choice of E": with T the total number of local steps, Theorem 1's bound is
kappa/(gamma+T-1) (2B/mu + mu gamma/2 ||w_1 - w*||^2), B containing 8 (E-1)^2 G^2 and gamma =
max{8 kappa, E}, so it is O(E^2/T) in E and "E must not exceed Omega(sqrt(T))" for it to vanish.

What is measured. E grows with the horizon as E = T^a; for each a of ``plan.exponents`` and each horizon
T_j of ``plan.horizons`` (log-spaced from ``min_horizon`` to ``max_horizon`` local steps) FedAvg runs
with full participation, exact local gradients and Theorem 1's step eta_t = 2/(mu (gamma + t)), gamma =
max{8 kappa, E_j} (``StepSize.li``), T_j / E_j rounds, and the final gap F(w_T) - F* is recorded. The
smaller of E_j and the round count R_j is rounded from its target (T_j^a or T_j^(1-a)) and the larger is the
nearest integer to the power that makes E_j = T_j^a exact, so E_j R_j^(-a/(1-a)) is 1 within 1/(2 max(E_j, R_j)).

On this instance (exact gradients, so B has no variance term) the gap is set by the client drift: a step
eta moves the limit of FedAvg by Theta((E-1) eta) (li2020.thm4, eq. 33), and eta_T ~ 2/(mu T), so the
gap is Theta((E/T)^2) = Theta(T^(2a-2)) once the start is forgotten (its share decays like
(gamma/T)^2 in distance). Hence O(1/T) holds for a <= 1/2 (exponent 2a - 2 <= -1; a = 1/2 is the
boundary, -1 exactly to first order) and breaks for a > 1/2 (a = 3/4: T^(-1/2)), at the remark's
sqrt(T). Theorem 1's bound, O(E^2/T) = O(T^(2a-1)), is not O(1/T) for any a > 0: the measured break point
is the remark's sqrt(T) but the measured rate below it is faster than the bound's.

The claim, as stated: for every a of ``plan.exponents`` with a <= ``plan.claimed_up_to`` (1/2, the
remark's), the fitted exponent of the final gap in T is at most -1 (``convergence.check_rate_exponent``,
tolerance 0.05 as li2020.thm1, deterministic runs: the interval is the fit's, over the horizons).
The exponents a > claimed_up_to are measured and reported (evidence and table), not checked. Planted
variant: claimed_up_to = 3/4, "O(1/T) also for E = T^(3/4)".

Measured (exponent over the last decade, its 95% OLS interval over the horizons): default plan (T = 1,024 to
131,072, 10 horizons) -1.46 [-1.47, -1.45] (a = 1/4), -0.986 [-0.990, -0.982] (a = 1/2): PASS; a = 3/4:
-0.446 (the planted variant FAILs). A fit over all of T = 512 to 32,768 gives -0.953 at a = 1/2 (the correction to
T^(2a-2) decays like T^(-1/2)), hence the last decade and horizons to 131,072. Runs: 0.6 s CPU.

Instance: ``random_quadratic`` with 4 clients in R^5, mu = 1, L = 2 (kappa = 2, gamma = max{16, E}),
heterogeneity 1 (the clients' optima differ: the drift is not zero), exact gradients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems

from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import PlantedParameters, claim_optimum, combine_checks
from ...framework.parameters import ModePlans, PlanError, parameter
from ...framework.plot_specs import Curve, CurvesPlot
from ...framework.references import LI2020

if TYPE_CHECKING:
    from convergence.budget import Workload
    from convergence.verdict import Verdict

    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "Li2020EGrowthPlan", "evaluate", "SPEC", "horizon_shape"]

CLAIM_ID = "li2020.e-growth"
RATE_TOLERANCE = 0.05
"""As li2020.thm1: a rate slower than T^-0.95 is not O(1/T)."""
REMARK_EXPONENT = 0.5
"""The remark's E = Omega(sqrt(T)): the largest a claimed."""

SPEC = problems.problem_spec("random_quadratic", n_clients=4, dim=5, mu=1.0, L=2.0, heterogeneity=1.0,
                             samples_per_client=20, seed=0)
"""Heterogeneous least squares (clients' optima differ), kappa = 2: gamma = max{16, E}."""


@dataclass(frozen=True)
class Li2020EGrowthPlan:
    """li2020.e-growth: the exponents a (E = T^a), the horizons and the largest a claimed O(1/T)."""

    min_horizon: int = parameter(doc="smallest horizon T (local steps)", minimum=64)
    max_horizon: int = parameter(doc="largest horizon T (local steps)", minimum=128)
    horizons: int = parameter(doc="horizons, log-spaced from min_horizon to max_horizon", minimum=4)
    exponents: tuple[float, ...] = parameter((0.25, 0.5, 0.75), "exponents a of E = T^a that are run",
                                             above=0, maximum=0.95)
    claimed_up_to: float = parameter(REMARK_EXPONENT, "the largest a for which the rate is claimed O(1/T) (the "
                                                      "remark's 1/2)", above=0, maximum=0.95)

    def __post_init__(self) -> None:
        if self.max_horizon <= self.min_horizon:
            raise PlanError("max_horizon", f"must exceed min_horizon = {self.min_horizon}, got {self.max_horizon}")
        if not any(a <= self.claimed_up_to for a in self.exponents):
            raise PlanError("claimed_up_to", f"no exponent of {self.exponents} is <= {self.claimed_up_to:g}: "
                                             "nothing would be checked")

    def workload(self) -> Workload:
        """len(exponents) x horizons exact-gradient runs, 4 clients, each up to max_horizon local steps."""
        from ...framework.plan_workloads import runs_workload

        total = convergence.Workload()
        for a in self.exponents:
            for T in np.geomspace(self.min_horizon, self.max_horizon, self.horizons):
                E, R = horizon_shape(float(T), a)
                total = total + runs_workload(seeds=1, rounds=R, E=E, clients=4)
        return total


def horizon_shape(T: float, a: float) -> tuple[int, int]:
    """(E, R) with E R ~ T and E = (E R)^a up to rounding the larger of the two (module docstring).

    Raises ValueError naming ``T`` or ``a`` outside T >= 1, 0 < a < 1."""
    if not (np.isfinite(T) and T >= 1):
        raise ValueError(f"T: must be a finite number >= 1, got {T!r}")
    if not (0 < a < 1):
        raise ValueError(f"a: must lie in (0, 1), got {a!r}")
    if a <= 0.5:
        E = max(1, round(T ** a))
        return E, max(1, round(E ** ((1 - a) / a)))
    R = max(1, round(T ** (1 - a)))
    return max(1, round(R ** (a / (1 - a)))), R


def evaluate(settings: VerifySettings, plan: Li2020EGrowthPlan) -> ClaimResult:
    """Every (a, T) run, the rate check per a <= claimed_up_to, the others measured (module docstring)."""
    planted = PlantedParameters.of(("claimed_up_to", plan.claimed_up_to, REMARK_EXPONENT))
    problem = problems.build_problem(SPEC)
    optimum, optimum_note = claim_optimum(problem)
    consts = problems.problem_constants(problem)
    targets = np.geomspace(plan.min_horizon, plan.max_horizon, plan.horizons)
    shapes = {a: sorted({horizon_shape(float(T), a) for T in targets}, key=lambda s: s[0] * s[1])
              for a in plan.exponents}
    requests = []
    for a in plan.exponents:
        for E, R in shapes[a]:
            algorithm = convergence.FedAvgConfig(E, R, convergence.StepSize.li(consts.mu, consts.L, E), 0, 1.0, (R,), (0,))
            requests.append(convergence.RunRequest(convergence.RunConfig(SPEC, algorithm), optimum))
    results = iter(convergence.execute(requests, settings.sweep_options(), description="li2020 E = T^a"))
    checks: list[tuple[str, Verdict]] = []
    table, curves = [], []
    for a in plan.exponents:
        T = np.array([E * R for E, R in shapes[a]], dtype=float)
        gap = np.array([[float(next(results).gap[0, -1]) for _ in shapes[a]]])
        E_max = shapes[a][-1][0]
        claimed = a <= plan.claimed_up_to
        verdict = convergence.check_rate_exponent(
            f"{CLAIM_ID}/a={a:g}", T, gap, claimed_exponent=-1.0, tolerance=RATE_TOLERANCE, deterministic=True,
            fit_from=float(T[-1]) / 10,
            notes=(f"E = T^{a:g} (E from {shapes[a][0][0]} to {E_max}), T from {int(T[0])} to {int(T[-1])} local steps, "
                   f"{len(T)} horizons, exact gradients, eta_t = 2/(mu (gamma + t)), gamma = max{{8 kappa, E}}; exponent "
                   f"of the final gap F(w_T) - F* in T over the last decade of horizons (expected 2a - 2 = {2 * a - 2:g} to first "
                   f"order); w* from the {optimum_note}."),
        )
        if claimed:
            checks.append((f"rate O(1/T) with E = T^{a:g}", verdict))
        curves.append(Curve(T.tolist(), gap[0].tolist(), f"a = {a:g} (slope {verdict.measured:.3g})"))
        table.append({"a": a, "claimed O(1/T)": claimed, "T": [int(t) for t in T], "E": [s[0] for s in shapes[a]],
                      "final gap": gap[0].tolist(), "fitted exponent": verdict.measured,
                      "interval": verdict.interval, "expected 2a - 2": 2 * a - 2, "verdict if claimed": verdict.status.name})
    breaks = "; ".join(f"a = {row['a']:g}: exponent {row['fitted exponent']:.3g}" for row in table
                       if not row["claimed O(1/T)"])
    verdict = combine_checks(
        CLAIM_ID, checks, headline=checks[-1][1],
        notes=(f"{planted.note()}Claimed: the final gap is O(1/T) when E = T^a for every a <= {plan.claimed_up_to:g} "
               f"(headline: the largest such a). Measured, not claimed: {breaks or 'none'}. Theorem 1's bound is "
               "O(E^2/T) = O(T^(2a-1)); on exact gradients the drift gives Theta(T^(2a-2))."),
    )
    plot = CurvesPlot(
        "li2020_e_growth", "Li et al. Sec. 3: E = T^a, final gap against T",
        "Final gap F(w_T) - F* of FedAvg with Theorem 1's step and E = T^a local steps a round, exact gradients, "
        "heterogeneous least squares (4 clients); O(1/T) needs a <= 1/2.",
        curves=tuple(curves) + (Curve(curves[0].x, [curves[0].y[0] * curves[0].x[0] / t for t in curves[0].x], "1/T"),),
        xlabel=r"$T$ (local steps)", ylabel=r"$F(w_T) - F^*$", logx=True, logy=True,
    )
    return ClaimResult(planted.mark(verdict.with_evidence(constants=table)), (plot,))


CLAIM = Claim(
    CLAIM_ID, (LI2020,), "Sec. 3.3, remark on the choice of E",
    "E must not exceed Ω(√T): with E = T^a local steps a round, full participation and Theorem 1's step "
    "η_t = 2/(μ(γ+t)), FedAvg's gap E F(w_T) − F* is O(1/T) for a ≤ 1/2 on a heterogeneous strongly convex problem.",
    "the fitted exponent of the final gap in T with E = T^a, for the largest a ≤ 1/2 (claimed ≤ −1); larger a are "
    "measured and reported",
    evaluate,
    plan=ModePlans(
        quick=Li2020EGrowthPlan(min_horizon=2048, max_horizon=131072, horizons=7),
        default=Li2020EGrowthPlan(min_horizon=1024, max_horizon=131072, horizons=10),
        full=Li2020EGrowthPlan(min_horizon=1024, max_horizon=262144, horizons=10),
    ),
    variants=(
        PlantedVariant("O(1/T) also for E = T^(3/4)", "the rate claimed for a = 3/4 too (measured exponent about "
                       "-0.5: the drift Theta((E/T)^2))", {"claimed_up_to": 0.75},
                       sub_check="rate O(1/T) with E = T^0.75"),
    ),
    order=21,
)
