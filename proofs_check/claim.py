"""Claims: a theorem's statement, its citation, and an evaluator that returns a verdict.

A claim's evaluator runs the sweep it needs (through convergence.execute), checks its
hypotheses on the configuration (unmet ones are reported, never ignored), and turns the
trajectories into a Verdict with the checkers of convergence.checks. It returns the data of its
plots as ``PlotSpec`` objects; the reports layer draws them and never reruns anything.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from convergence import RunStore, Status, Verdict, config_int
from problems import FederatedProblem, LossKind, Optimum, exact_optimum, problem_constants

__all__ = [
    "VerifySettings", "PlotSpec", "ClaimResult", "Claim", "combine_checks", "UnknownClaimError", "rate_plot",
    "claim_optimum",
]


class UnknownClaimError(KeyError):
    """A claim id that is not registered; the message lists the known ids."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class VerifySettings:
    """What a claim evaluation may spend and where its runs go.

    seeds for stochastic runs; jobs worker processes (or a Dask ``scheduler`` address); quick:
    smaller grids and horizons (smoke tests); full: the larger sweeps; ``store``: path of the run
    store (SQLite) that finished runs are written to and read back from unless ``use_cache`` is
    False (then they are recomputed and overwritten).
    """

    seeds: int = 4
    jobs: int = 1
    quick: bool = False
    full: bool = False
    progress: bool = True
    store: str | None = None
    use_cache: bool = True
    scheduler: str | None = None

    @functools.cached_property
    def run_store(self) -> RunStore | None:
        """The open run store (None without a store path)."""
        return None if self.store is None else RunStore(self.store)

    def sweep_options(self) -> dict[str, Any]:
        """Keyword arguments for convergence.execute / execute_block_cyclic."""
        return {"jobs": self.jobs, "scheduler": self.scheduler, "store": self.run_store, "use_cache": self.use_cache,
                "progress": self.progress}

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", config_int("seeds", self.seeds))
        object.__setattr__(self, "jobs", config_int("jobs", self.jobs))
        if self.quick and self.full:
            raise ValueError("quick/full: choose at most one of them")


@dataclass(frozen=True)
class PlotSpec:
    """Data for one figure. kind: 'rate' (log-log series with bound and fit), 'bias' (scatter of
    a measured quantity against x with a bound line) or 'curves' (labelled lines).
    ``data`` holds plain lists/floats so a report can be rebuilt from JSON."""

    name: str
    kind: str
    title: str
    caption: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict with the plots that show its evidence."""

    verdict: Verdict
    plots: tuple[PlotSpec, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A checkable statement: id, citation, statement (math in text), and its evaluator."""

    id: str
    citation: str
    statement: str
    evaluate: Callable[[VerifySettings], ClaimResult] = field(repr=False)
    expected: Status | None = None
    default: bool = True


def combine_checks(
    claim_id: str,
    checks: Sequence[tuple[str, Verdict]],
    headline: Verdict,
    notes: str = "",
    expected: Status | None = None,
) -> Verdict:
    """One claim verdict from named sub-checks: FAIL if any fails, PASS if all pass, else
    INCONCLUSIVE. The headline check gives measured / theoretical / interval; every sub-check
    is kept in evidence['checks'] with its own status and figures."""
    statuses = [v.status for _, v in checks]
    if Status.FAIL in statuses:
        status = Status.FAIL
    elif all(s is Status.PASS for s in statuses):
        status = Status.PASS
    else:
        status = Status.INCONCLUSIVE
    hypotheses = tuple(h for _, v in checks for h in v.hypotheses)
    unique = tuple({(h.name, h.detail): h for h in hypotheses}.values())
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=headline.measured,
        theoretical=headline.theoretical,
        interval=headline.interval,
        hypotheses=unique,
        notes=notes,
        evidence={"checks": [dict(v.to_json(), name=name) for name, v in checks]},
        expected=expected,
    )


def rate_plot(
    name: str, title: str, caption: str, verdict: Verdict, *, xlabel: str, ylabel: str,
    bound: Sequence[float] | None = None, label: str = "measured (mean over seeds)",
) -> PlotSpec:
    """PlotSpec of a rate or bound check: its per-point mean and interval, the fitted line
    (when the check fitted one) and an optional bound curve, from the verdict's evidence."""
    ev = verdict.evidence
    data: dict[str, Any] = {
        "x": ev["x"], "mean": ev["mean"], "lo": ev["lo"], "hi": ev["hi"], "xlabel": xlabel, "ylabel": ylabel,
        "label": label,
    }
    if "exponent" in ev:
        x_used = [x for x, used in zip(ev["x"], ev["used"]) if used]
        data["fit"] = [ev["exponent"], ev["intercept"], x_used]
    if bound is not None:
        data["bound"] = list(bound)
    return PlotSpec(name, "rate", title, caption, data)


def claim_optimum(problem: FederatedProblem) -> tuple[Optimum, str]:
    """The exact optimum a claim measures gaps against, and a sentence certifying it.

    Least squares: closed form, cross-checked with cvxpy (cheap). Logistic / softmax: the Newton
    solution, certified by its gradient norm: F is mu_F-strongly convex, so the computed point
    w^ satisfies ||w^ - w*|| <= ||grad F(w^)|| / mu_F and F(w^) - F* <= ||grad F(w^)||^2 / (2 mu_F).
    (The cvxpy cross-check of those losses runs in the test suite on small instances; on the
    claim instances it takes minutes and is less accurate than the certificate.)
    """
    crosscheck = problem.loss is LossKind.LEAST_SQUARES
    optimum = exact_optimum(problem, crosscheck=crosscheck)
    mu_F = problem_constants(problem).mu_global
    text = (
        f"optimum: {optimum.method}; ||grad F(w*)|| = {optimum.grad_norm:.2e}, so ||w^ - w*|| <= "
        f"{optimum.grad_norm / mu_F:.2e} and F(w^) - F* <= {optimum.grad_norm**2 / (2 * mu_F):.2e}"
    )
    if optimum.crosscheck is not None:
        text += f"; cvxpy agrees to {max(v for k, v in optimum.crosscheck.items() if isinstance(v, float)):.1e} relative"
    return optimum, text
