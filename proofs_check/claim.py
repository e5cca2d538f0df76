"""Claims: a theorem's statement, its citation, and an evaluator that returns a verdict.

A ``Claim`` is data (id, references, statement in math, what its headline figure measures, its
plan per mode: ``proofs_check.parameters``) plus the import path of its evaluator, so listing
claims imports no numerical library; the evaluator module is imported when the claim is
evaluated. A claim's evaluator, ``evaluate(settings, plan)``, runs the sweep its plan asks for
(through convergence.execute), checks its hypotheses on the configuration (unmet ones are
reported, never ignored), and turns the trajectories into a Verdict with the checkers of
convergence.checks. It returns the data of its plots as plot specs (``proofs_check.plot_specs``);
the reports layer draws them and never reruns anything.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from convergence.verdict import Status, SubCheck, Uninformative, Verdict

from .claim_text import variant_id
from .parameters import ModePlans, ParameterSpec, ParamValue, named_parameters, resolve_plan
from .plot_specs import PLOT_SPECS, PlotSpec
from .references import Reference

if TYPE_CHECKING:
    from convergence import RunStore, SweepMonitor, SweepOptions
    from problems import FederatedProblem, Optimum

__all__ = [
    "VerifySettings", "ClaimResult", "Claim", "PlantedVariant", "combine_checks", "UnknownClaimError",
    "claim_optimum",
]


class UnknownClaimError(KeyError):
    """A claim id that is not registered; the message lists the known ids."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class VerifySettings:
    """What a claim evaluation may spend and where its runs go.

    seeds for stochastic runs (a claim's plan takes it as its ``seeds``); jobs worker processes (or a
    Dask ``scheduler`` address); quick: the claims' quick plans (smaller grids and horizons, smoke
    tests); full: their full plans (the larger sweeps); progress: True for progress bars, False for
    none, or a ``SweepMonitor`` every sweep reports to; ``store``: path of the run store (SQLite)
    that finished runs are written to and read back from unless ``use_cache`` is False (then they
    are recomputed and overwritten). ``store_readonly`` opens the store for reading only: a run it
    does not hold is an error instead of a computation (``fedbound report``). ``max_cpu_hours``: the
    limit a claim's estimated cost must stay under (``convergence.budget``; None: the environment's
    or the default), checked from its plan before it runs and by every sweep.
    """

    seeds: int = 4
    jobs: int = 1
    quick: bool = False
    full: bool = False
    progress: bool | SweepMonitor = True
    store: str | None = None
    use_cache: bool = True
    scheduler: str | None = None
    store_readonly: bool = False
    max_cpu_hours: float | None = None

    @property
    def mode(self) -> str:
        """The mode, "quick", "full" or "default": which plan of every claim runs (``ModePlans.select``)."""
        return "quick" if self.quick else ("full" if self.full else "default")

    @functools.cached_property
    def run_store(self) -> RunStore | None:
        """The open run store (None without a store path); errors name it ``--store``, the option it comes from."""
        from convergence import RunStore

        return None if self.store is None else RunStore(self.store, readonly=self.store_readonly, field="--store")

    def close(self) -> None:
        """Close the run store if it was opened, so its file is complete on its own (SQLite folds the
        write-ahead log back into the database when the last connection closes). A later use of
        ``run_store`` opens it again."""
        store = self.__dict__.pop("run_store", None)
        if store is not None:
            store.close()

    def sweep_options(self) -> SweepOptions:
        """How every sweep of this verification runs (jobs, scheduler, the run store, caching, progress)."""
        from convergence import SweepOptions

        return SweepOptions(jobs=self.jobs, scheduler=self.scheduler, store=self.run_store,
                            use_cache=self.use_cache, progress=self.progress, max_cpu_hours=self.max_cpu_hours)

    def __post_init__(self) -> None:
        from convergence import config_int

        object.__setattr__(self, "seeds", config_int("seeds", self.seeds))
        object.__setattr__(self, "jobs", config_int("jobs", self.jobs))
        if self.quick and self.full:
            raise ValueError("quick/full: choose at most one of them")
        if self.store_readonly and (self.store is None or not self.use_cache):
            raise ValueError("store_readonly: a read-only store needs a store path and use_cache=True")
        if self.max_cpu_hours is not None:
            from convergence import max_cpu_hours

            object.__setattr__(self, "max_cpu_hours", max_cpu_hours(self.max_cpu_hours))


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict with the plots that show its evidence (``proofs_check.plot_specs``)."""

    verdict: Verdict
    plots: tuple[PlotSpec, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            raise ValueError(f"verdict: expected a Verdict, got {type(self.verdict).__name__}")
        plots = tuple(self.plots)
        for i, plot in enumerate(plots):
            if not isinstance(plot, PLOT_SPECS):
                raise ValueError(f"plots[{i}]: expected a plot spec ({', '.join(k.__name__ for k in PLOT_SPECS)}), "
                                 f"got {type(plot).__name__}")
        object.__setattr__(self, "plots", plots)


@dataclass(frozen=True)
class PlantedVariant:
    """A variant of a claim planted to be false (or, for a negative control, its true counterpart).

    ``params`` are parameters of the claim's plan (e.g. ``{"bound_scale": 0.25}``: an explicit bound
    multiplied by 0.25, a constant made too small), checked by ``Claim``; ``expected`` is the status a
    working checker must give it (FAIL by default). ``name`` is a short label, ``description`` says
    in one line what was changed and why the variant is false on the claim's instance;
    ``sub_check`` names the sub-check the variant plants (text that the names of the sub-checks it
    plants contain, e.g. "explicit bound (eq. 6)" for every instance's bound check; "the claim" for a
    claim whose verdict is one check). The power self-test (``fedbound verify --power``) evaluates the claim and each of its
    variants and reports whether each came out as expected: a variant is detected only when the
    sub-check it plants is among the FAILing ones (``reports.power``); a check that cannot FAIL a
    false variant has no power.
    """

    name: str
    description: str
    params: Mapping[str, ParamValue] = field(hash=False)
    expected: Status = Status.FAIL
    sub_check: str = field(kw_only=True)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("name: a planted variant needs a name")
        if not self.description.strip():
            raise ValueError(f"description: planted variant {self.name!r} has no description")
        if not isinstance(self.params, Mapping) or not self.params:
            raise ValueError(f"params: planted variant {self.name!r} must change at least one plan parameter")
        for key, value in self.params.items():
            if not (isinstance(key, str) and key.isidentifier()):
                raise ValueError(f"params: planted variant {self.name!r} has a parameter name {key!r} that is not an "
                                 "identifier")
            if not isinstance(value, (bool, int, float, str)) or (isinstance(value, float) and not math.isfinite(value)):
                raise ValueError(f"params.{key}: planted variant {self.name!r} needs a finite number, a bool or a "
                                 f"string, got {value!r}")
        if not isinstance(self.expected, Status):
            raise ValueError(f"expected: planted variant {self.name!r} needs a Status, got {self.expected!r}")
        if not isinstance(self.sub_check, str) or not self.sub_check.strip():
            raise ValueError(f"sub_check: planted variant {self.name!r} must name the sub-check it plants")
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
    ``(VerifySettings, plan) -> ClaimResult`` imported on first evaluation; ``plan`` its plan in
    each mode (``ModePlans`` of one plan dataclass, whose fields are the claim's parameters: the
    grid, and the constants of the statement with the paper's values). ``expected`` is set for
    negative controls; ``default`` claims run in a plain ``fedbound verify``; ``variants`` are the
    planted variants of the power self-test (``PlantedVariant``), each evaluated with its params.
    """

    id: str
    references: tuple[Reference, ...]
    where: str
    statement: str
    measured: str
    evaluator: str = field(repr=False)
    plan: ModePlans = field(repr=False)
    expected: Status | None = None
    default: bool = True
    variants: tuple[PlantedVariant, ...] = ()

    def __post_init__(self) -> None:
        if not self.references:
            raise ValueError(f"references: claim {self.id!r} cites no work")
        module, _, function = self.evaluator.partition(":")
        if not module or not function:
            raise ValueError(f"evaluator: expected 'module:function', got {self.evaluator!r}")
        if not isinstance(self.plan, ModePlans):
            raise ValueError(f"plan: claim {self.id!r} needs a ModePlans, got {type(self.plan).__name__}")
        self.plan.check(self.id)
        object.__setattr__(self, "variants", tuple(self.variants))
        for variant in self.variants:
            if not isinstance(variant, PlantedVariant):
                raise ValueError(f"variants: claim {self.id!r} lists a {type(variant).__name__}, not a PlantedVariant")
            self.check_params(variant.params)
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

    def parameters(self) -> tuple[ParameterSpec, ...]:
        """The claim's parameters: the fields of its plan, with their types, ranges and docs (imports
        nothing numerical); their values per mode are ``self.plan.select(mode)``'s."""
        return self.plan.parameters()

    def check_params(self, params: Mapping[str, Any]) -> dict[str, ParamValue]:
        """``params`` checked one by one against the plan's declarations (as their types: an int for
        a float field becomes a float); ValueError naming the claim and the parameter when one is
        unknown, of a wrong type or out of range. Fields that must fit together are checked when
        the plan is resolved (``plan_for``)."""
        return {spec.name: spec.check(self.id, params[spec.name]) for spec in named_parameters(self.id, self.plan, params)}

    def plan_for(self, settings: VerifySettings, params: Mapping[str, Any]) -> Any:
        """The plan the claim runs with under ``settings`` and ``params`` (``resolve_plan``)."""
        return resolve_plan(self.id, self.plan, settings, params)

    def evaluate(self, settings: VerifySettings, **params: ParamValue) -> ClaimResult:
        """Run the claim's evaluator (imported now) under ``settings`` with the plan of the
        settings' mode and ``params`` by name (checked first: ValueError naming the claim and the
        parameter). With params the verdict's id is ``variant_id(self.id, params)``, e.g.
        ``yu2019.thm1[bound_scale=0.25]``, ``li2020.thm1[E=10,seeds=16]``. Before the evaluator is
        imported, the plan's work is counted and priced (``plan_workloads.check_claim_budget``):
        BudgetError naming the parameter when it is over ``settings.max_cpu_hours``.

        The evaluator runs with BLAS on one thread (``problems.one_blas_thread``; the kernels already run so,
        ``convergence.run_seed``): its reductions then do not depend on the machine's core count, so
        the analysis (fits, intervals, eigenvalues, exact optima) is bit-identical across machines and
        job counts, and it is faster on a shared machine, where a second BLAS thread mostly waits
        (measured on 2 cores at load 8: a 610 x 610 ``eigh`` 0.27-0.35 s on one thread, 1.1-4.2 s on
        two; the 62,864 x 50 by 50 x 10 product of a softmax objective 26-39 ms against 76-140 ms)."""
        from problems import one_blas_thread  # here: listing claims imports no numerical library

        from .plan_workloads import check_claim_budget

        check_claim_budget(self, params, settings)
        with one_blas_thread():
            result = self._evaluator()(settings, self.plan_for(settings, params))
        if not params:
            return result
        return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict,
                                                                       claim_id=variant_id(self.id, params)))

    def evaluate_variant(self, settings: VerifySettings, variant: PlantedVariant, **params: ParamValue) -> ClaimResult:
        """Evaluate a planted variant of the claim run with ``params``: ``evaluate(settings, **params,
        **variant.params)`` (the variant's values win), its verdict's ``expected`` set to the variant's
        (so ``verdict.as_expected`` says whether the check had power)."""
        result = self.evaluate(settings, **{**params, **variant.params})
        return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict, expected=variant.expected))


def combine_checks(
    claim_id: str,
    checks: Sequence[tuple[str, Verdict]],
    headline: Verdict | None = None,
    notes: str = "",
    expected: Status | None = None,
    uninformative: Sequence[Uninformative] = (),
    alpha: float = 0.05,
) -> Verdict:
    """One claim verdict from named sub-checks, with family-wise error control over them.

    FAIL when some sub-check FAILs and Holm's step-down procedure over the counted sub-checks'
    ``p_fail`` rejects it at family-wise level ``alpha`` (``convergence.check_rules``; a sub-check
    without a p-value counts as p = 0 when it FAILs, 1 otherwise: an exact comparison), so a
    claim whose every sub-check is true FAILs with probability at most alpha, however many
    sub-checks it has. A sub-check that FAILs on its own but not after Holm's correction counts as
    INCONCLUSIVE (the notes say so, with its adjusted p-value). PASS when every counted sub-check
    PASSes (each an intersection-union test at alpha: no correction needed), else INCONCLUSIVE.
    The verdict's ``p_fail`` is the smallest Holm-adjusted p-value, so claims nest.

    The headline check gives measured / theoretical / interval, and its tightness (evidence
    'tightness' = measured/bound and 'tightness_label', "tight" or "upper bound" / "lower bound",
    when it is a bound check: ``convergence.check_upper_bound``); every sub-check is kept in
    ``Verdict.checks`` (a ``SubCheck``: its name and its own verdict).

    ``uninformative`` sub-checks (``convergence.Uninformative``), and every check that found itself
    so (``Verdict.cannot_fail``), are kept in ``Verdict.uninformative`` and named in the notes but
    not counted; with no counted check left the claim is INCONCLUSIVE ("every sub-check is
    uninformative"), never PASS. ``headline`` defaults to the first counted check."""
    import numpy as np  # here: listing claims imports no numerical library

    from convergence.check_rules import holm_adjusted

    uninformative = list(uninformative) + [Uninformative.of_check(name, v) for name, v in checks if v.cannot_fail]
    checks = [(name, v) for name, v in checks if not v.cannot_fail]
    if headline is not None and headline.cannot_fail:
        headline = None
    skipped = " ".join(f"Not counted (uninformative), {u.name}: {u.reason}." for u in uninformative)
    if not checks:
        if not uninformative:
            raise ValueError(f"checks: claim {claim_id!r} has no sub-check")
        first = uninformative[0].verdict
        hypotheses = tuple({(h.name, h.detail): h for u in uninformative for h in u.verdict.hypotheses}.values())
        untested = f"Every sub-check is uninformative on this instance, so the claim is not tested. {skipped} {notes}"
        return Verdict(claim_id, Status.INCONCLUSIVE, first.measured, first.theoretical, first.interval, hypotheses,
                       untested.strip(), expected=expected, uninformative=tuple(uninformative))
    headline = checks[0][1] if headline is None else headline
    p_values = np.array([_p_fail(v) for _, v in checks])
    adjusted = holm_adjusted(p_values)
    failing = [(name, v, p) for (name, v), p in zip(checks, adjusted) if v.status is Status.FAIL]
    kept = [name for name, _, p in failing if p <= alpha]
    demoted = [f"{name} (adjusted p = {p:.3g})" for name, _, p in failing if p > alpha]
    if kept:
        status = Status.FAIL
    elif all(v.status is Status.PASS for _, v in checks):
        status = Status.PASS
    else:
        status = Status.INCONCLUSIVE
    holm_note = ""
    if len(checks) > 1:
        holm_note = (f"Family-wise error control: Holm over the {len(checks)} counted sub-checks' p-values at "
                     f"{alpha:g}.")
    if demoted:
        holm_note += (f" FAILs on its own but not after Holm's correction, so counted as INCONCLUSIVE: "
                      f"{'; '.join(demoted)}.")
    hypotheses = tuple(h for _, v in checks for h in v.hypotheses)
    unique = tuple({(h.name, h.detail): h for h in hypotheses}.values())
    has_tightness = "tightness" in headline.evidence
    evidence = {key: headline.evidence[key] for key in ("tightness", "tightness_label") if has_tightness}
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=headline.measured,
        theoretical=headline.theoretical,
        interval=headline.interval,
        hypotheses=unique,
        notes=" ".join(part for part in (notes, skipped, holm_note.strip()) if part),
        evidence=evidence,
        expected=expected,
        checks=tuple(SubCheck(name, v) for name, v in checks),
        uninformative=tuple(uninformative),
        p_fail=float(adjusted.min()),
    )


def _p_fail(verdict: Verdict) -> float:
    """The p-value Holm reads for a sub-check: its ``p_fail``, or for a check that is no test (an
    exact comparison) 0 when it FAILs and 1 otherwise."""
    if verdict.p_fail is not None:
        return verdict.p_fail
    return 0.0 if verdict.status is Status.FAIL else 1.0


def claim_optimum(problem: FederatedProblem, local_optima: bool = True) -> tuple[Optimum, str]:
    """The exact optimum a claim measures gaps against, and a sentence certifying it; with
    ``local_optima=False`` (a claim that reads only w* and F*, no Gamma) a logistic / softmax problem's
    F_k* are not solved (``exact_optimum``; least squares keeps them: its cross-check covers every F_k).

    Least squares: closed form, cross-checked with cvxpy (cheap). Logistic / softmax: the Newton
    solution, certified by its gradient norm: F is mu_F-strongly convex, so the computed point
    w^ satisfies ||w^ - w*|| <= ||grad F(w^)|| / mu_F and F(w^) - F* <= ||grad F(w^)||^2 / (2 mu_F).
    (The cvxpy cross-check of those losses runs in the test suite on small instances; on the
    claim instances it takes minutes and is less accurate than the certificate.)
    """
    from problems import exact_optimum, problem_constants

    crosscheck = problem.model.quadratic
    optimum = exact_optimum(problem, crosscheck=crosscheck, local_optima=local_optima or crosscheck)
    mu_F = problem_constants(problem).mu_global
    text = (
        f"optimum: {optimum.method}; ||grad F(w*)|| = {optimum.grad_norm:.2e}, so ||w^ - w*|| <= "
        f"{optimum.grad_norm / mu_F:.2e} and F(w^) - F* <= {optimum.grad_norm**2 / (2 * mu_F):.2e}"
    )
    if optimum.crosscheck is not None:
        text += f"; cvxpy agrees to {max(v for k, v in optimum.crosscheck.items() if isinstance(v, float)):.1e} relative"
    return optimum, text
