"""The one quantity a report row shows for a verdict, and the sub-check that decides a claim.

A claim combines named sub-checks (``proofs_check.combine_checks``) and its headline figures are
those of one of them (by default the first): a claim that FAILs on another sub-check would show a
passing-looking headline. So a row of a FAIL or INCONCLUSIVE verdict shows its *deciding*
sub-check (``deciding_check``), named, with that sub-check's own measured value, theoretical
value and interval; a PASS shows its headline. Every report format (the HTML verdict board and
summary, the Markdown summary) takes its rows from ``quantity_row`` and its one-line reason from
``why_line``, so they cannot disagree on which sub-check decided.

A confidence interval contains its own estimate; a verdict whose interval does not contain its
measured value carries the interval of another statistic (e.g. ``li2020.eq8``: the measured E*
with the interval of the paired difference of rounds that decided its location). Such an interval
is never shown as if it were the measured value's: ``QuantityRow.other_interval`` holds it, named
apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convergence.verdict import Status, SubCheck, Tightness, Uninformative, Verdict

from .formatting import MISSING, claim_tightness, format_interval, format_tightness, format_value

if TYPE_CHECKING:
    from proofs_check.framework.claim import Claim

__all__ = ["HEADLINE", "QuantityRow", "deciding_check", "quantity_row", "figures_text", "interval_text",
           "tightness_text", "why_parts", "why_line"]

HEADLINE = "headline figure"
"""The name of a row's quantity when it is a verdict's headline and nothing names it better."""
_OTHER_INTERVAL = "of another statistic than the measured value (see the card's evidence)"


@dataclass(frozen=True)
class QuantityRow:
    """What one row shows, all about one quantity: ``quantity`` names it (the deciding sub-check's
    name, or what the claim's headline measures); ``name`` is the short name (a sub-check's, or
    ``HEADLINE``); ``status`` is that quantity's own check's status; ``measured``, ``theoretical``
    and ``interval`` (None when the check has none or when it is not about ``measured``) its
    figures; ``other_interval`` a verdict's interval that is not about ``measured`` (module
    docstring), else None; ``tightness`` that quantity's measured/bound when it is a bound check;
    ``deciding`` True when the row shows a deciding sub-check rather than the headline; ``unmet``
    the names of that check's unmet hypotheses; ``reason`` why a deciding sub-check could not have
    failed (every sub-check uninformative), else ""."""

    quantity: str
    name: str
    status: Status
    measured: float
    theoretical: float
    interval: tuple[float, float] | None
    other_interval: tuple[float, float] | None
    tightness: Tightness | None
    deciding: bool
    unmet: tuple[str, ...] = ()
    reason: str = ""


def deciding_check(v: Verdict) -> SubCheck | Uninformative | None:
    """The sub-check that decides a FAIL or INCONCLUSIVE claim, by ``combine_checks``' own rule.

    FAIL: among the FAILing sub-checks, the one with the smallest ``p_fail`` (a FAIL without a
    p-value counts as p = 0, as ``combine_checks`` counts it; ties: the first listed). Holm's
    step-down procedure rejects the smallest p-values first and its adjusted p-values grow with the
    raw ones, so when the claim FAILs this sub-check's FAIL is one that stands.
    INCONCLUSIVE: the first counted sub-check that does not PASS (INCONCLUSIVE, or FAILing alone
    but not after Holm's correction); when every sub-check is uninformative (none counted), the
    first uninformative one, whose reason decides.
    None for a PASS and for a verdict with no such sub-check (it is its own deciding check)."""
    if v.status is Status.PASS:
        return None
    if v.status is Status.FAIL:
        failing = [c for c in v.checks if c.verdict.status is Status.FAIL]
        if failing:
            return min(failing, key=lambda c: 0.0 if c.verdict.p_fail is None else c.verdict.p_fail)
    not_passing = [c for c in v.checks if c.verdict.status is not Status.PASS]
    if not_passing:
        return not_passing[0]
    if not v.checks and v.uninformative:
        return v.uninformative[0]
    return None


def quantity_row(v: Verdict, claim: Claim | None = None, *, headline: bool = False) -> QuantityRow:
    """The row of ``v``: its deciding sub-check (``deciding_check``) for FAIL and INCONCLUSIVE,
    otherwise (and always with ``headline``) its headline, named by ``claim.measured`` when claim
    metadata is given, else by the sub-check whose figures it is, else ``HEADLINE``."""
    deciding = None if headline else deciding_check(v)
    if deciding is not None:
        source, name, quantity = deciding.verdict, deciding.name, deciding.name
        reason = deciding.reason if isinstance(deciding, Uninformative) else ""
    else:
        source, reason = v, ""
        name = _headline_check(v) or HEADLINE
        quantity = claim.measured if claim is not None else name
    interval, other = source.interval, None
    if interval is not None and not _contains(interval, source.measured):
        interval, other = None, interval
    unmet = tuple(h.name for h in source.hypotheses if not h.met)
    return QuantityRow(quantity, name, source.status, source.measured, source.theoretical, interval, other,
                       source.tightness, deciding is not None, unmet, reason)


def figures_text(row: QuantityRow, other: bool = True) -> str:
    """E.g. "measured 2.1; theoretical 0; interval [2.07, 2.14]"; an interval that is not about the
    measured value is named apart (left out when not ``other``)."""
    text = f"measured {format_value(row.measured)}; theoretical {format_value(row.theoretical)}"
    if row.interval is not None:
        text += f"; interval {format_interval(row.interval)}"
    if other and row.other_interval is not None:
        text += f"; interval {format_interval(row.other_interval)} {_OTHER_INTERVAL}"
    return text


def interval_text(row: QuantityRow) -> str:
    """The interval cell of a row: the quantity's interval, or the other statistic's named as such."""
    if row.other_interval is not None:
        return f"{MISSING}: {format_interval(row.other_interval)} is {_OTHER_INTERVAL}"
    return format_interval(row.interval)


def tightness_text(v: Verdict, row: QuantityRow, compact: bool = False) -> str:
    """The tightness of the row's quantity when it is a bound check; for a headline row without one,
    its bound sub-checks' (``claim_tightness``: each named, or with ``compact`` their count and range);
    "" when there is none."""
    if row.deciding or row.tightness is not None:
        return format_tightness(row.tightness)
    return claim_tightness(v, compact=compact)


def why_parts(v: Verdict, row: QuantityRow) -> tuple[str, str]:
    """Why ``v`` has its status, as (subject, figures): the subject names the row's quantity (the
    deciding sub-check of a FAIL or INCONCLUSIVE claim, with its status when it differs from the
    claim's: a FAIL that does not stand after Holm's correction; for PASS the headline) and adds its
    unmet hypotheses, the notes of a FAIL or INCONCLUSIVE single check, an interval of another
    statistic and, when every sub-check is uninformative, the reason; the figures are
    ``figures_text``."""
    if row.reason:
        subject = f"every sub-check is uninformative; {row.name}: {row.reason}"
    elif row.status is v.status:
        subject = row.quantity if row.name == HEADLINE else row.name
    else:
        state = "FAILs alone, not after Holm's correction" if row.status is Status.FAIL else row.status.value
        subject = f"{row.name} ({state})"
    if row.unmet:
        subject += f"; hypotheses unmet: {', '.join(row.unmet)}"
    if not row.deciding and v.status is not Status.PASS and v.notes:
        subject += f"; {v.notes}"  # a single check: its notes say why
    if row.other_interval is not None:
        subject += f"; the verdict's interval {format_interval(row.other_interval)} is {_OTHER_INTERVAL}"
    return subject, figures_text(row, other=False)


def why_line(v: Verdict, row: QuantityRow) -> str:
    """``why_parts`` as one line: "subject: figures"."""
    subject, figures = why_parts(v, row)
    return f"{subject}: {figures}"


def _headline_check(v: Verdict) -> str:
    """The name of the first sub-check whose figures are the verdict's headline, or ""."""
    for check in v.checks:
        c = check.verdict
        if _same(c.measured, v.measured) and _same(c.theoretical, v.theoretical) and c.interval == v.interval:
            return check.name
    return ""


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _contains(interval: tuple[float, float], value: float) -> bool:
    """True when ``value`` lies in ``interval`` (to rounding), or when either is not finite (nothing to tell)."""
    lo, hi = interval
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(value)):
        return True
    slack = 1e-9 * max(abs(lo), abs(hi), abs(value), 1.0)
    return lo - slack <= value <= hi + slack
