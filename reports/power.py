"""The power self-test's rows: did each claim, and each planted false variant of it, come out as expected?

DESIGN.md: a check that cannot fail is a defect, so every shipped claim carries planted variants
(``proofs_check.PlantedVariant``: parameters of its plan that make the claim false on
its instance, e.g. a bound multiplied by 0.2, a claimed exponent made steeper) that a working check
must FAIL. ``fedbound verify --power`` evaluates each selected claim as stated (expected PASS; a
negative control: its ``expected``) and each of its variants (expected FAIL unless the variant
says otherwise), and reports one ``PowerRow`` per evaluation. A row is "as expected" when the
status it got is the status it expected; a variant that does not FAIL means the check had no
power to see that falsehood on this instance with these seeds (the row's notes say why, e.g. too
few seeds for the Holm-corrected test).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convergence.verdict import Status, Verdict

if TYPE_CHECKING:
    from proofs_check.claim import PlantedVariant

__all__ = ["PowerRow", "AS_STATED", "power_summary"]

AS_STATED = "as stated"
"""The ``variant`` of the row of a claim evaluated as stated (no parameters changed)."""


@dataclass(frozen=True)
class PowerRow:
    """One evaluation of the power self-test.

    ``claim_id`` the registered claim; ``verdict_id`` the id of the verdict (the claim id, or
    ``ID[param=value,...]`` for a variant); ``variant`` AS_STATED or the variant's name;
    ``params`` the plan parameters the variant changed (empty as stated); ``expected`` and
    ``got`` statuses; ``measured`` / ``theoretical`` / ``interval`` the verdict's headline
    figures; ``tightness`` and ``tightness_label`` the headline's measured/bound and "tight" /
    "upper bound" / "lower bound" when it is a bound check (None otherwise); ``failed_checks``
    the sub-checks that FAILed; ``notes`` the verdict's notes and every sub-check's status.
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
    tightness: float | None = None
    tightness_label: str | None = None
    failed_checks: tuple[str, ...] = ()
    notes: str = ""

    @property
    def as_expected(self) -> bool:
        """True when the evaluation got the status it expected."""
        return self.got is self.expected

    @property
    def is_variant(self) -> bool:
        """True for a planted variant, False for the claim as stated."""
        return bool(self.params)

    @classmethod
    def from_verdict(cls, claim_id: str, verdict: Verdict, variant: PlantedVariant | None = None) -> PowerRow:
        """The row of ``verdict``: the claim ``claim_id`` as stated (``variant`` None; expected its
        ``verdict.expected``, PASS for a claim that is not a negative control) or a planted variant."""
        failed = tuple(c.name for c in verdict.checks if c.verdict.status is Status.FAIL)
        tightness = verdict.evidence.get("tightness")
        checks = [f"{c.name}: {c.verdict.status.value}" for c in verdict.checks]
        notes = verdict.notes + (f" Sub-checks: {'; '.join(checks)}." if checks else "")
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
            tightness=None if tightness is None else float(tightness),
            tightness_label=verdict.evidence.get("tightness_label") if tightness is not None else None,
            failed_checks=failed,
            notes=notes,
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
            "tightness": None if self.tightness is None else _finite(self.tightness),
            "tightness_label": self.tightness_label, "failed_checks": list(self.failed_checks), "notes": self.notes,
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
            tightness=None if data.get("tightness") is None else float(data["tightness"]),
            tightness_label=data.get("tightness_label"), failed_checks=tuple(data.get("failed_checks", ())),
            notes=str(data.get("notes", "")),
        )


def power_summary(rows: Sequence[PowerRow]) -> str:
    """E.g. "power self-test: 3 claims as stated (3 as expected), 3 planted variants (3 as expected)"."""
    stated = [r for r in rows if not r.is_variant]
    variants = [r for r in rows if r.is_variant]
    missed = sum(not r.as_expected for r in variants)
    return (f"power self-test: {len(stated)} claim(s) as stated ({sum(r.as_expected for r in stated)} as expected), "
            f"{len(variants)} planted variant(s) ({len(variants) - missed} as expected"
            + (f", {missed} NOT: no power" if missed else "") + ")")


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
