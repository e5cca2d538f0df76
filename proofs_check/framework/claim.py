"""Claims: a theorem's statement, its citation, and an evaluator that returns a verdict.

A ``Claim`` is data (id, references, statement in math, what its headline figure measures, its
plan per mode: ``proofs_check.framework.parameters``) plus its evaluator. Each claim lives in a
module of its own (``proofs_check/claims/<source>/<claim>.py``, found by
``proofs_check.framework.registry``) whose top level imports no numerical library, so listing
claims stays instant; the evaluator reaches numerical code through lazily loaded packages. A claim's
evaluator, ``evaluate(settings, plan)``, runs the sweep its plan asks for
(through convergence.execute), checks its hypotheses on the configuration (unmet ones are
reported, never ignored), and turns the trajectories into a Verdict with the checkers of
convergence.checks. It returns the data of its plots as plot specs (``proofs_check.framework.plot_specs``);
the reports layer draws them and never reruns anything. A claim checked as several statements (an
experiment file compiled into a claim, ``proofs_check.experiments.compile``: one per check) returns
``ClaimResults``, one ClaimResult per statement, each verdict with its own id.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from convergence.verdict import Status, Verdict

from .claim_text import variant_id
from .parameters import ModePlans, ParameterSpec, ParamValue, named_parameters, resolve_plan
from .plot_specs import PLOT_SPECS, PlotSpec
from .references import Reference

if TYPE_CHECKING:
    from .settings import VerifySettings

__all__ = ["ClaimResult", "ClaimResults", "Claim", "PlantedVariant", "UnknownClaimError", "Evaluator"]

Evaluator = Callable[["VerifySettings", Any], "ClaimResult | ClaimResults"]
"""A claim's evaluator: ``(settings, plan) -> ClaimResult``, or ``ClaimResults`` for a claim checked as
several statements (a compiled experiment, one per check)."""


class UnknownClaimError(KeyError):
    """A claim id that is not registered; the message lists the known ids."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict with the plots that show its evidence (``proofs_check.framework.plot_specs``)."""

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
class ClaimResults:
    """What the evaluator of a claim checked as several statements returns (a compiled experiment,
    ``proofs_check.experiments.compile``: one per check): one ClaimResult per statement, each verdict
    with its own id and its own card in the report, in this order."""

    results: tuple[ClaimResult, ...]

    def __post_init__(self) -> None:
        results = tuple(self.results)
        if not results:
            raise ValueError("results: a claim checked as several statements gives at least one result")
        for i, result in enumerate(results):
            if not isinstance(result, ClaimResult):
                raise ValueError(f"results[{i}]: expected a ClaimResult, got {type(result).__name__}")
        object.__setattr__(self, "results", results)


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
    (a ratio, an exponent, a difference); ``evaluator`` is a function ``(VerifySettings, plan) ->
    ClaimResult`` (in the claim's own module); ``plan`` its plan in each mode (``ModePlans`` of one
    plan dataclass, whose fields are the claim's parameters: the grid, and the constants of the
    statement with the paper's values). ``expected`` is set for negative controls; ``default``
    claims run in a plain ``fedbound verify``; ``variants`` are the planted variants of the power
    self-test (``PlantedVariant``), each evaluated with its params: at least one, unless
    ``no_variant`` says why none can be counted (a claim whose hypotheses are unmet on every instance
    it runs, so that none of its sub-checks can FAIL); ``order`` places the claim in
    ``fedbound list`` and the reports (ascending, then by id; claims of other packages default to
    1000, after fedbound's own).
    """

    id: str
    references: tuple[Reference, ...]
    where: str
    statement: str
    measured: str
    evaluator: Evaluator = field(repr=False)
    plan: ModePlans = field(repr=False)
    expected: Status | None = None
    default: bool = True
    variants: tuple[PlantedVariant, ...] = ()
    order: int = 1000
    no_variant: str = ""

    def __post_init__(self) -> None:
        if not self.references:
            raise ValueError(f"references: claim {self.id!r} cites no work")
        if not callable(self.evaluator):
            raise ValueError(f"evaluator: claim {self.id!r} needs a function (settings, plan) -> ClaimResult, "
                             f"got {type(self.evaluator).__name__}")
        if isinstance(self.order, bool) or not isinstance(self.order, int):
            raise ValueError(f"order: claim {self.id!r} needs an int, got {type(self.order).__name__}")
        if not isinstance(self.plan, ModePlans):
            raise ValueError(f"plan: claim {self.id!r} needs a ModePlans, got {type(self.plan).__name__}")
        self.plan.check(self.id)
        object.__setattr__(self, "variants", tuple(self.variants))
        for variant in self.variants:
            if not isinstance(variant, PlantedVariant):
                raise ValueError(f"variants: claim {self.id!r} lists a {type(variant).__name__}, not a PlantedVariant")
            self.check_params(variant.params)
        if not self.variants and not (isinstance(self.no_variant, str) and self.no_variant.strip()):
            raise ValueError(f"variants: claim {self.id!r} plants no variant, so --power cannot show that its checks can "
                             "fail; list one (PlantedVariant), or say in no_variant why none can be counted")
        if self.variants and self.no_variant:
            raise ValueError(f"no_variant: claim {self.id!r} lists planted variants; no_variant is for a claim without")
        ids = [v.id_for(self.id) for v in self.variants]
        if len(set(ids)) != len(ids):
            raise ValueError(f"variants: claim {self.id!r} lists the same parameters twice ({', '.join(ids)})")

    @property
    def citation(self) -> str:
        """E.g. ``Li, Huang, Yang, Wang, Zhang (ICLR 2020, arXiv:1907.02189), Theorem 1``."""
        return f"{self.references[0].short}, {self.where}"

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
        """The result of the claim's evaluator (``evaluate_all``); ValueError for a claim checked as
        several statements (``ClaimResults``)."""
        result = self.evaluate_all(settings, **params)
        if isinstance(result, ClaimResults):
            raise ValueError(f"claim {self.id!r} is checked as {len(result.results)} statements "
                             f"({', '.join(r.verdict.claim_id for r in result.results)}); evaluate it with "
                             "evaluate_all")
        return result

    def evaluate_all(self, settings: VerifySettings, **params: ParamValue) -> ClaimResult | ClaimResults:
        """Run the claim's evaluator under ``settings`` with the plan of the
        settings' mode and ``params`` by name (checked first: ValueError naming the claim and the
        parameter): its ClaimResult, or its ``ClaimResults`` for a claim checked as several
        statements. With params the verdict's id is ``variant_id(self.id, params)``, e.g.
        ``yu2019.thm1[bound_scale=0.25]``, ``li2020.thm1[E=10,seeds=16]`` (each of several results: its
        own id with the params appended). Before the evaluator runs, the plan's work is counted
        and priced (``plan_workloads.check_claim_budget``): BudgetError naming the parameter when it is
        over ``settings.max_cpu_hours``.

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
            result = self.evaluator(settings, self.plan_for(settings, params))
        if not isinstance(result, (ClaimResult, ClaimResults)):
            raise ValueError(f"evaluator: claim {self.id!r} must return a ClaimResult or ClaimResults, got "
                             f"{type(result).__name__}")
        if not params:
            return result
        if isinstance(result, ClaimResults):
            return ClaimResults(tuple(_with_id(r, variant_id(r.verdict.claim_id, params)) for r in result.results))
        return _with_id(result, variant_id(self.id, params))

    def evaluate_variant(self, settings: VerifySettings, variant: PlantedVariant, **params: ParamValue) -> ClaimResult:
        """Evaluate a planted variant of the claim run with ``params``: ``evaluate(settings, **params,
        **variant.params)`` (the variant's values win), its verdict's ``expected`` set to the variant's
        (so ``verdict.as_expected`` says whether the check had power)."""
        result = self.evaluate(settings, **{**params, **variant.params})
        return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict, expected=variant.expected))


def _with_id(result: ClaimResult, claim_id: str) -> ClaimResult:
    """``result`` with its verdict's id set to ``claim_id``."""
    return dataclasses.replace(result, verdict=dataclasses.replace(result.verdict, claim_id=claim_id))
