"""Claims: a theorem's statement, its citation, and an evaluator that returns a verdict.

A ``Claim`` is data (id, references, statement in math, what its headline figure measures) plus
the import path of its evaluator, so listing claims imports no numerical library; the evaluator
module is imported when the claim is evaluated. A claim's evaluator runs the sweep it needs (through convergence.execute), checks its
hypotheses on the configuration (unmet ones are reported, never ignored), and turns the
trajectories into a Verdict with the checkers of convergence.checks. It returns the data of its
plots as ``PlotSpec`` objects; the reports layer draws them and never reruns anything.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import numbers
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

from convergence.verdict import Status, Verdict

from .references import Reference

if TYPE_CHECKING:
    from convergence import RunStore, SweepMonitor
    from problems import FederatedProblem, Optimum

__all__ = [
    "VerifySettings", "PlotSpec", "ClaimResult", "Claim", "PlantedVariant", "ParamValue", "variant_id", "combine_checks",
    "Uninformative",
    "UnknownClaimError", "rate_plot", "claim_optimum", "claim_float",
]

ParamValue = Union[bool, int, float, str]
"""A claim parameter's value: a JSON scalar, written ``ID[param=value]``."""


class UnknownClaimError(KeyError):
    """A claim id that is not registered; the message lists the known ids."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class VerifySettings:
    """What a claim evaluation may spend and where its runs go.

    seeds for stochastic runs; jobs worker processes (or a Dask ``scheduler`` address); quick:
    smaller grids and horizons (smoke tests); full: the larger sweeps; progress: True for progress
    bars, False for none, or a ``SweepMonitor`` every sweep reports to; ``store``: path of the run
    store (SQLite) that finished runs are written to and read back from unless ``use_cache`` is
    False (then they are recomputed and overwritten).
    """

    seeds: int = 4
    jobs: int = 1
    quick: bool = False
    full: bool = False
    progress: bool | SweepMonitor = True
    store: str | None = None
    use_cache: bool = True
    scheduler: str | None = None

    @functools.cached_property
    def run_store(self) -> RunStore | None:
        """The open run store (None without a store path); errors name it ``--store``, the option it comes from."""
        from convergence import RunStore

        return None if self.store is None else RunStore(self.store, field="--store")

    def sweep_options(self) -> dict[str, Any]:
        """Keyword arguments for convergence.execute / execute_block_cyclic."""
        return {"jobs": self.jobs, "scheduler": self.scheduler, "store": self.run_store, "use_cache": self.use_cache,
                "progress": self.progress}

    def __post_init__(self) -> None:
        from convergence.config import config_int

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


def claim_float(name: str, value: Any, *, positive: bool = False) -> float:
    """A claim parameter as a float: ValueError naming ``name`` unless it is a finite real number
    (and > 0 with ``positive``); bools are refused (True is not a scale)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name}: must be > 0, got {value!r}")
    return float(value)


def _param_text(value: ParamValue) -> str:
    """A parameter value as written in an id: floats in their shortest round-trip form (0.25, 1e-05)."""
    return repr(value) if isinstance(value, float) else str(value)


def variant_id(claim_id: str, params: Mapping[str, ParamValue]) -> str:
    """The id of a claim evaluated with parameters, in the falsifier's syntax ``ID[param=value,...]``
    (e.g. ``yu2019.thm1[bound_scale=0.25]``); the claim's own id without parameters."""
    if not params:
        return claim_id
    return f"{claim_id}[{','.join(f'{k}={_param_text(v)}' for k, v in params.items())}]"


@dataclass(frozen=True)
class PlantedVariant:
    """A variant of a claim planted to be false (or, for a negative control, its true counterpart).

    ``params`` are keyword arguments passed to the claim's evaluator (e.g. ``{"bound_scale": 0.25}``:
    an explicit bound multiplied by 0.25, a constant made too small); ``expected`` is the status a
    working checker must give it (FAIL by default). ``name`` is a short label, ``description`` says
    in one line what was changed and why the variant is false on the claim's instance. The power
    self-test (``fedbound verify --power``) evaluates the claim and each of its variants and reports
    whether each came out as expected: a check that cannot FAIL a false variant has no power.
    """

    name: str
    description: str
    params: Mapping[str, ParamValue] = field(hash=False)
    expected: Status = Status.FAIL

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("name: a planted variant needs a name")
        if not self.description.strip():
            raise ValueError(f"description: planted variant {self.name!r} has no description")
        if not isinstance(self.params, Mapping) or not self.params:
            raise ValueError(f"params: planted variant {self.name!r} must change at least one evaluator parameter")
        for key, value in self.params.items():
            if not (isinstance(key, str) and key.isidentifier()):
                raise ValueError(f"params: planted variant {self.name!r} has a parameter name {key!r} that is not an "
                                 "identifier")
            if not isinstance(value, (bool, int, float, str)) or (isinstance(value, float) and not math.isfinite(value)):
                raise ValueError(f"params.{key}: planted variant {self.name!r} needs a finite number, a bool or a "
                                 f"string, got {value!r}")
        if not isinstance(self.expected, Status):
            raise ValueError(f"expected: planted variant {self.name!r} needs a Status, got {self.expected!r}")
        object.__setattr__(self, "params", types.MappingProxyType(dict(self.params)))

    def id_for(self, claim_id: str) -> str:
        """The id of this variant's verdict, e.g. ``ding2020.thm1[bound_scale=0.5]``."""
        return variant_id(claim_id, self.params)


@dataclass(frozen=True)
class Claim:
    """A checkable statement and how to evaluate it.

    ``references`` are the works it comes from (the first is the primary source) and ``where``
    the place in it ("Theorem 1, eq. 4-5"); ``statement`` is the claim in math: what is bounded,
    under which hypotheses; ``measured`` says in one line what the verdict's headline figure is
    (a ratio, an exponent, a difference); ``evaluator`` is ``"module:function"``, a function
    ``VerifySettings -> ClaimResult`` imported on first evaluation, whose keyword parameters (the
    defaults give the claim as stated) are the claim's parameters. ``expected`` is set for
    negative controls; ``default`` claims run in a plain ``fedbound verify``; ``variants`` are the
    planted variants of the power self-test (``PlantedVariant``), each evaluated with its params.
    """

    id: str
    references: tuple[Reference, ...]
    where: str
    statement: str
    measured: str
    evaluator: str = field(repr=False)
    expected: Status | None = None
    default: bool = True
    variants: tuple[PlantedVariant, ...] = ()

    def __post_init__(self) -> None:
        if not self.references:
            raise ValueError(f"references: claim {self.id!r} cites no work")
        module, _, function = self.evaluator.partition(":")
        if not module or not function:
            raise ValueError(f"evaluator: expected 'module:function', got {self.evaluator!r}")
        object.__setattr__(self, "variants", tuple(self.variants))
        for variant in self.variants:
            if not isinstance(variant, PlantedVariant):
                raise ValueError(f"variants: claim {self.id!r} lists a {type(variant).__name__}, not a PlantedVariant")
        ids = [v.id_for(self.id) for v in self.variants]
        if len(set(ids)) != len(ids):
            raise ValueError(f"variants: claim {self.id!r} lists the same parameters twice ({', '.join(ids)})")

    @property
    def citation(self) -> str:
        """E.g. ``Li, Huang, Yang, Wang, Zhang (ICLR 2020, arXiv:1907.02189), Theorem 1``."""
        return f"{self.references[0].short}, {self.where}"

    def _evaluator(self) -> Callable[..., ClaimResult]:
        module, _, function = self.evaluator.partition(":")
        return getattr(importlib.import_module(module), function)

    def parameters(self) -> tuple[str, ...]:
        """The names of the parameters the claim's evaluator takes by keyword (imports it)."""
        signature = inspect.signature(self._evaluator())
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return tuple(name for name, p in list(signature.parameters.items())[1:] if p.kind in kinds)

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Raise ValueError naming the claim and the parameter when the evaluator does not take one
        of ``params`` by keyword."""
        known = self.parameters()
        for name in params:
            if name not in known:
                takes = f"it takes {', '.join(known)}" if known else "it takes none"
                raise ValueError(f"params: claim {self.id!r} has no parameter {name!r} ({takes}; evaluator "
                                 f"{self.evaluator})")

    def evaluate(self, settings: VerifySettings, **params: ParamValue) -> ClaimResult:
        """Run the claim's evaluator (imported now) under ``settings`` with keyword ``params``
        (checked first: an unknown one is a ValueError naming the claim and the parameter). With
        params the verdict's id is ``variant_id(self.id, params)``, e.g. ``yu2019.thm1[bound_scale=0.25]``."""
        if params:
            self.check_params(params)
        result = self._evaluator()(settings, **params)
        if not params:
            return result
        return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict,
                                                                       claim_id=variant_id(self.id, params)))

    def evaluate_variant(self, settings: VerifySettings, variant: PlantedVariant) -> ClaimResult:
        """Evaluate a planted variant: ``evaluate(settings, **variant.params)``, its verdict's
        ``expected`` set to the variant's (so ``verdict.as_expected`` says whether the check had power)."""
        result = self.evaluate(settings, **variant.params)
        return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict, expected=variant.expected))


@dataclass(frozen=True)
class Uninformative:
    """A sub-check that cannot confirm its statement on the instance it ran: its name, the reason
    (e.g. "the gap is <= 0, so the bound holds trivially"), what the data alone gave, and the
    verdict shown for it (INCONCLUSIVE; its notes are the reason, then the data alone). It is kept
    in the claim's evidence and never counted as a PASS."""

    name: str
    reason: str
    alone: str
    verdict: Verdict

    @classmethod
    def of(cls, name: str, verdict: Verdict, reason: str) -> "Uninformative":
        """``verdict`` recast as INCONCLUSIVE because on this instance it is uninformative for ``reason``."""
        alone = f"{verdict.status.value}: {verdict.notes}"
        return cls(name, reason, alone, Verdict(
            verdict.claim_id, Status.INCONCLUSIVE, verdict.measured, verdict.theoretical, verdict.interval,
            verdict.hypotheses, f"uninformative: {reason}. The data alone give {alone}", verdict.evidence))

    def to_json(self) -> dict[str, Any]:
        return {"sub-check": self.name, "status": self.verdict.status.value, "reason": self.reason,
                "the data alone": self.alone}


def combine_checks(
    claim_id: str,
    checks: Sequence[tuple[str, Verdict]],
    headline: Verdict | None = None,
    notes: str = "",
    expected: Status | None = None,
    uninformative: Sequence[Uninformative] = (),
) -> Verdict:
    """One claim verdict from named sub-checks: FAIL if any fails, PASS if all pass, else
    INCONCLUSIVE. The headline check gives measured / theoretical / interval, and its tightness
    (evidence 'tightness' = measured/bound and 'tightness_label', "tight" or "upper bound" /
    "lower bound", when it is a bound check: ``convergence.check_upper_bound``); every sub-check
    is kept in evidence['checks'] with its own status and figures.

    ``uninformative`` sub-checks (``Uninformative``) are listed in evidence['uninformative'] and in
    the notes but not counted; with no counted check left the claim is INCONCLUSIVE ("every
    sub-check is uninformative"), never PASS. ``headline`` defaults to the first counted check."""
    skipped = " ".join(f"Not counted (uninformative), {u.name}: {u.reason}." for u in uninformative)
    if not checks:
        if not uninformative:
            raise ValueError(f"checks: claim {claim_id!r} has no sub-check")
        first = uninformative[0].verdict
        hypotheses = tuple({(h.name, h.detail): h for u in uninformative for h in u.verdict.hypotheses}.values())
        return Verdict(claim_id, Status.INCONCLUSIVE, first.measured, first.theoretical, first.interval, hypotheses,
                       f"Every sub-check is uninformative on this instance, so the claim is not tested. {skipped} {notes}",
                       {"checks": [], "uninformative": [u.to_json() for u in uninformative]}, expected=expected)
    headline = checks[0][1] if headline is None else headline
    statuses = [v.status for _, v in checks]
    if Status.FAIL in statuses:
        status = Status.FAIL
    elif all(s is Status.PASS for s in statuses):
        status = Status.PASS
    else:
        status = Status.INCONCLUSIVE
    hypotheses = tuple(h for _, v in checks for h in v.hypotheses)
    unique = tuple({(h.name, h.detail): h for h in hypotheses}.values())
    evidence: dict[str, Any] = {"checks": [dict(v.to_json(), name=name) for name, v in checks]}
    if uninformative:
        evidence["uninformative"] = [u.to_json() for u in uninformative]
    if "tightness" in headline.evidence:
        evidence["tightness"] = headline.evidence["tightness"]
        evidence["tightness_label"] = headline.evidence["tightness_label"]
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=headline.measured,
        theoretical=headline.theoretical,
        interval=headline.interval,
        hypotheses=unique,
        notes=f"{notes} {skipped}".strip(),
        evidence=evidence,
        expected=expected,
    )


def rate_plot(
    name: str, title: str, caption: str, verdict: Verdict, *, xlabel: str, ylabel: str,
    bound: Sequence[float] | None = None, label: str = "measured (mean over seeds)",
    reference: tuple[float, str] | None = None,
) -> PlotSpec:
    """PlotSpec of a rate or bound check: its per-point mean and interval, the fitted line
    (when the check fitted one), an optional bound curve and an optional reference power law
    ``(exponent, label)`` through the first point (a claimed rate), from the verdict's evidence."""
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
    if reference is not None:
        data["reference"] = list(reference)
    return PlotSpec(name, "rate", title, caption, data)


def claim_optimum(problem: FederatedProblem) -> tuple[Optimum, str]:
    """The exact optimum a claim measures gaps against, and a sentence certifying it.

    Least squares: closed form, cross-checked with cvxpy (cheap). Logistic / softmax: the Newton
    solution, certified by its gradient norm: F is mu_F-strongly convex, so the computed point
    w^ satisfies ||w^ - w*|| <= ||grad F(w^)|| / mu_F and F(w^) - F* <= ||grad F(w^)||^2 / (2 mu_F).
    (The cvxpy cross-check of those losses runs in the test suite on small instances; on the
    claim instances it takes minutes and is less accurate than the certificate.)
    """
    from problems import exact_optimum, problem_constants

    crosscheck = problem.model.quadratic
    optimum = exact_optimum(problem, crosscheck=crosscheck)
    mu_F = problem_constants(problem).mu_global
    text = (
        f"optimum: {optimum.method}; ||grad F(w*)|| = {optimum.grad_norm:.2e}, so ||w^ - w*|| <= "
        f"{optimum.grad_norm / mu_F:.2e} and F(w^) - F* <= {optimum.grad_norm**2 / (2 * mu_F):.2e}"
    )
    if optimum.crosscheck is not None:
        text += f"; cvxpy agrees to {max(v for k, v in optimum.crosscheck.items() if isinstance(v, float)):.1e} relative"
    return optimum, text
