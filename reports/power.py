"""The power self-test's rows: did each claim, and each planted false variant of it, come out as expected?

DESIGN.md: a check that cannot fail is a defect, so every shipped claim carries planted variants
(``proofs_check.PlantedVariant``: parameters of its plan that make the claim false on
its instance, e.g. a bound multiplied by 0.2, a claimed exponent made steeper) that a working check
must FAIL. ``fedbound verify --power`` evaluates each selected claim as stated (expected PASS; a
negative control: its ``expected``) and each of its variants (expected FAIL unless the variant
says otherwise), and reports one ``PowerRow`` per evaluation.

Each variant names the sub-check it plants (``PlantedVariant.sub_check``: text that the planted
sub-checks' names contain, e.g. "explicit bound (eq. 6)" for every instance's bound check;
``WHOLE_CLAIM`` for a claim whose verdict is a single check). A variant expected to FAIL is detected ("as expected")
only when the claim FAILs AND a sub-check it plants is among the FAILing ones: a FAIL elsewhere
(an unrelated sub-check, or a FAIL the claim had as stated) shows no power of the planted check.
Its power is untested (``PowerRow.untested``, the reason; neither as expected nor an alarm) when
the planted sub-check FAILs already as stated, or is uninformative on the instance. A variant
whose planted sub-check came out INCONCLUSIVE says, from the sub-check's p-value, about how many
seeds would reach power at the effect it measured (``PowerRow.advice``). Messages are never cut.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convergence.verdict import Status, Tightness, Verdict

if TYPE_CHECKING:
    from proofs_check.framework.claim import PlantedVariant

__all__ = ["PowerRow", "AS_STATED", "WHOLE_CLAIM", "power_summary"]

AS_STATED = "as stated"
"""The ``variant`` of the row of a claim evaluated as stated (no parameters changed)."""

WHOLE_CLAIM = "the claim"
"""The ``sub_check`` of a variant of a claim whose verdict is one check (no sub-checks): the verdict itself."""


@dataclass(frozen=True)
class PowerRow:
    """One evaluation of the power self-test.

    ``claim_id`` the registered claim; ``verdict_id`` the id of the verdict (the claim id, or
    ``ID[param=value,...]`` for a variant); ``variant`` AS_STATED or the variant's name;
    ``params`` the plan parameters the variant changed (empty as stated); ``expected`` and
    ``got`` statuses; ``measured`` / ``theoretical`` / ``interval`` the verdict's headline
    figures; ``tightness`` the headline's (``Verdict.tightness``: measured/bound and its label, in
    JSON the keys ``tightness`` and ``tightness_label``) when it is a bound check, else None; ``failed_checks``
    the sub-checks that FAILed; ``notes`` the verdict's notes and every sub-check's status;
    for a variant, ``sub_check`` the sub-check it plants, ``planted_status`` that sub-check's status
    here (None when the verdict has no such sub-check), ``untested`` the reason its power could not
    be shown on this instance (empty otherwise), ``advice`` how many seeds would reach power.
    """

    claim_id: str
    verdict_id: str
    variant: str
    description: str
    expected: Status
    got: Status
    measured: float
    theoretical: float
    interval: tuple[float, float] | None = None
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    tightness: Tightness | None = None
    failed_checks: tuple[str, ...] = ()
    notes: str = ""
    sub_check: str = ""
    planted_status: Status | None = None
    untested: str = ""
    advice: str = ""

    @property
    def as_expected(self) -> bool:
        """True when the evaluation got the status it expected and, for a variant expected to FAIL, the
        sub-check it plants is among the FAILing ones (module docstring); False when power is untested."""
        if self.untested:
            return False
        if self.is_variant and self.expected is Status.FAIL:
            return self.got is Status.FAIL and self.planted_status is Status.FAIL
        return self.got is self.expected

    @property
    def alarm(self) -> bool:
        """True when a planted variant is not as expected for a reason other than untested power (a check
        without power), or a negative control (a claim registered to FAIL) did not FAIL. A claim as stated
        that does not PASS is a finding about its statement, reported, never an alarm of the self-test."""
        if not self.is_variant:
            return self.expected is not Status.PASS and not self.as_expected
        return not self.as_expected and not self.untested

    @property
    def is_variant(self) -> bool:
        """True for a planted variant, False for the claim as stated."""
        return bool(self.params)

    @classmethod
    def from_verdict(cls, claim_id: str, verdict: Verdict, variant: PlantedVariant | None = None,
                     stated: Verdict | None = None) -> PowerRow:
        """The row of ``verdict``: the claim ``claim_id`` as stated (``variant`` None; expected its
        ``verdict.expected``, PASS for a claim that is not a negative control) or a planted variant,
        judged against ``stated``, the claim's verdict as stated (module docstring)."""
        failed = tuple(c.name for c in verdict.checks if c.verdict.status is Status.FAIL)
        checks = [f"{c.name}: {c.verdict.status.value}" for c in verdict.checks]
        notes = verdict.notes + (f" Sub-checks: {'; '.join(checks)}." if checks else "")
        planted = _planted(verdict, variant.sub_check) if variant is not None else ()
        planted_status = _worst(tuple(v.status for _, v in planted)) if planted else None
        untested = advice = ""
        if variant is not None:
            untested = _untested(verdict, variant, stated)
            if not planted and not untested:
                names = ", ".join(c.name for c in verdict.checks) or "none"
                notes = (f"The variant plants the sub-check {variant.sub_check!r}, which this verdict does not have "
                         f"(its sub-checks: {names}). {notes}")
            if planted_status is Status.INCONCLUSIVE and variant.expected is Status.FAIL and not untested:
                advice = _seeds_advice(planted, max(len(verdict.checks), 1))
        return cls(
            claim_id=claim_id,
            verdict_id=verdict.claim_id,
            variant=AS_STATED if variant is None else variant.name,
            description="the claim as registered" if variant is None else variant.description,
            expected=(verdict.expected or Status.PASS) if variant is None else variant.expected,
            got=verdict.status,
            measured=verdict.measured,
            theoretical=verdict.theoretical,
            interval=verdict.interval,
            params={} if variant is None else dict(variant.params),
            tightness=verdict.tightness,
            failed_checks=failed,
            notes=notes,
            sub_check="" if variant is None else variant.sub_check,
            planted_status=planted_status,
            untested=untested,
            advice=advice,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (NaN/inf figures as None): claim, verdict_id, variant, description,
        params, expected, got, as_expected, measured, theoretical, interval, tightness,
        tightness_label, failed_checks, notes."""
        return {
            "claim": self.claim_id, "verdict_id": self.verdict_id, "variant": self.variant,
            "description": self.description, "params": dict(self.params), "expected": self.expected.value,
            "got": self.got.value, "as_expected": self.as_expected, "measured": _finite(self.measured),
            "theoretical": _finite(self.theoretical),
            "interval": None if self.interval is None else [_finite(v) for v in self.interval],
            "tightness": None if self.tightness is None else _finite(self.tightness.ratio),
            "tightness_label": None if self.tightness is None else self.tightness.label, "failed_checks": list(self.failed_checks), "notes": self.notes,
            "sub_check": self.sub_check, "planted_status": None if self.planted_status is None else self.planted_status.value,
            "untested": self.untested, "advice": self.advice,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PowerRow:
        """The row ``to_json`` wrote; KeyError/ValueError on a malformed object."""
        interval = data.get("interval")
        return cls(
            claim_id=str(data["claim"]), verdict_id=str(data["verdict_id"]), variant=str(data["variant"]),
            description=str(data["description"]), expected=Status(data["expected"]), got=Status(data["got"]),
            measured=_nan(data["measured"]), theoretical=_nan(data["theoretical"]),
            interval=None if interval is None else (_nan(interval[0]), _nan(interval[1])),
            params=dict(data.get("params") or {}),
            tightness=None if data.get("tightness_label") is None else Tightness(
                math.nan if data.get("tightness") is None else float(data["tightness"]), str(data["tightness_label"])),
            failed_checks=tuple(data.get("failed_checks", ())),
            notes=str(data.get("notes", "")), sub_check=str(data.get("sub_check", "")),
            planted_status=None if data.get("planted_status") is None else Status(data["planted_status"]),
            untested=str(data.get("untested", "")), advice=str(data.get("advice", "")),
        )


def power_summary(rows: Sequence[PowerRow]) -> str:
    """E.g. "power self-test: 3 claims as stated (3 as expected), 3 planted variants (2 as expected, 1 power
    untested)"."""
    stated = [r for r in rows if not r.is_variant]
    variants = [r for r in rows if r.is_variant]
    missed = sum(r.alarm for r in variants)
    untested = sum(bool(r.untested) for r in variants)
    detected = len(variants) - missed - untested
    findings = sum(not r.as_expected and not r.alarm for r in stated)
    return (f"power self-test: {len(stated)} claim(s) as stated ({sum(r.as_expected for r in stated)} as expected"
            + (f", {findings} not PASS: a finding about the statement" if findings else "") + "), "
            f"{len(variants)} planted variant(s) ({detected} as expected"
            + (f", {untested} power untested" if untested else "")
            + (f", {missed} NOT: no power" if missed else "") + ")")


def _planted(verdict: Verdict, sub_check: str) -> tuple[tuple[str, Verdict], ...]:
    """The counted sub-checks a variant plants: those whose name contains ``sub_check``; the verdict
    itself for ``WHOLE_CLAIM`` on a verdict without sub-checks."""
    if sub_check == WHOLE_CLAIM and not verdict.checks:
        return ((WHOLE_CLAIM, verdict),)
    return tuple((c.name, c.verdict) for c in verdict.checks if sub_check in c.name)


def _worst(statuses: tuple[Status, ...]) -> Status:
    """FAIL if any FAILs, else INCONCLUSIVE if any is, else PASS."""
    for status in (Status.FAIL, Status.INCONCLUSIVE):
        if status in statuses:
            return status
    return Status.PASS


def _untested(verdict: Verdict, variant: PlantedVariant, stated: Verdict | None) -> str:
    """Why a variant's power cannot be shown on this instance, or "": its planted sub-check FAILs as
    stated already, or is uninformative here (it could not have failed)."""
    skipped = [u for u in verdict.uninformative if variant.sub_check in u.name]
    if skipped and not _planted(verdict, variant.sub_check):
        return (f"power untested: the planted sub-check {skipped[0].name!r} is uninformative on this instance "
                f"({skipped[0].reason})")
    if stated is not None and variant.expected is Status.FAIL:
        as_stated = _planted(stated, variant.sub_check)
        if as_stated and _worst(tuple(v.status for _, v in as_stated)) is Status.FAIL:
            return (f"power untested: the planted sub-check {variant.sub_check!r} FAILs already as stated, so its FAIL "
                    "in the variant cannot show power (run the variant on an instance where the claim PASSes)")
    return ""


def _seeds_advice(planted: tuple[tuple[str, Verdict], ...], n_checks: int) -> str:
    """About how many seeds would make the planted sub-check FAIL after Holm over the claim's ``n_checks``
    sub-checks at 5%, from its p_fail and seeds under the normal approximation (the statistic grows like
    sqrt(S)): S' = S (z(1 - 0.05 / (2 n_checks)) / z(1 - p_fail / 2))^2."""
    best = min(((name, v) for name, v in planted if v.p_fail is not None), key=lambda item: item[1].p_fail,
               default=None)
    if best is None:
        return ""
    name, v = best
    seeds = _n_seeds(v)
    if seeds is None:
        return ""
    if v.p_fail >= 1.0:
        return (f"{name!r} shows no sign of the planted falsehood (p = 1 with {seeds} seeds): more seeds would "
                "not reach power at this size")
    from scipy import stats

    needed = math.ceil(seeds * (stats.norm.isf(0.05 / (2 * n_checks)) / stats.norm.isf(v.p_fail / 2)) ** 2)
    return (f"{name!r} came out INCONCLUSIVE with {seeds} seeds (p = {v.p_fail:.3g}); at the effect it measured, "
            f"about {max(needed, seeds + 1)} seeds would reach power after Holm over {n_checks} sub-check(s) "
            "(normal approximation)")


def _n_seeds(verdict: Verdict) -> int | None:
    """The number of seeds a check's evidence records (bound checks: test.n_seeds; others: n_seeds)."""
    test = verdict.evidence.get("test")
    value = test.get("n_seeds") if isinstance(test, Mapping) else verdict.evidence.get("n_seeds")
    return int(value) if isinstance(value, int) and value > 0 else None


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
