"""What every claim's evaluator uses to reach its verdict: ``combine_checks`` (one verdict from named
sub-checks, Holm's family-wise control over their p-values), ``claim_optimum`` (the exact optimum
the gaps are measured against, with its certificate) and ``PlantedParameters`` (the plan
parameters that plant a false variant, named in the notes and the evidence)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convergence.verdict import Status, SubCheck, Uninformative, Verdict

if TYPE_CHECKING:
    from problems import FederatedProblem, Optimum

__all__ = ["PlantedParameters", "combine_checks", "claim_optimum"]


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

    The headline check gives measured / theoretical / interval, and its tightness
    (``Verdict.tightness``, when it is a bound check: ``convergence.check_upper_bound``); every sub-check is kept in
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
    return Verdict(
        claim_id=claim_id,
        status=status,
        measured=headline.measured,
        theoretical=headline.theoretical,
        interval=headline.interval,
        hypotheses=unique,
        notes=" ".join(part for part in (notes, skipped, holm_note.strip()) if part),
        expected=expected,
        checks=tuple(SubCheck(name, v) for name, v in checks),
        tightness=headline.tightness,
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


@dataclass(frozen=True)
class PlantedParameters:
    """The plan parameters of a run that differ from the claim's statement (``values``: name -> value,
    in the order given): each plants a false variant (``framework.claim.PlantedVariant``)."""

    values: Mapping[str, Any]

    @classmethod
    def of(cls, *rows: tuple[str, Any, Any]) -> PlantedParameters:
        """From (name, the plan's value, the statement's value) rows: the rows whose values differ."""
        return cls({name: value for name, value, stated in rows if value != stated})

    def note(self, spec: str = "g") -> str:
        """"PLANTED FALSE VARIANT (name = value, ...); " (values formatted with ``spec``) to open a
        verdict's notes, or "" when nothing is planted."""
        if not self.values:
            return ""
        return "PLANTED FALSE VARIANT (" + ", ".join(f"{k} = {v:{spec}}" for k, v in self.values.items()) + "); "

    def mark(self, verdict: Verdict) -> Verdict:
        """``verdict`` with the planted values in its evidence (``planted``) when there are any."""
        return verdict.with_evidence(planted=dict(self.values)) if self.values else verdict
