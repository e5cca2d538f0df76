"""A report's content assembled once, for the Markdown and HTML renderers to lay out.

``report_document(verdicts, figures, meta, claims, grids, power)`` gathers, in the
order both reports show them, every part that ``reports.report_content`` words: the alarms (negative
controls and planted variants not as expected), the verdict board (a ``BoardRow`` per verdict: its
status, one line of why, its tightness and its main figure) with the verdicts' legend, the verdict
summary and its tables, the power self-test, a ``ClaimCard`` per claim and per negative control,
the references, and last the run's metadata and files. A renderer only formats a
``ReportDocument``; what it says and in which order is decided here, so report.md and index.html
cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convergence.verdict import Status, Verdict

from .formatting import format_interval, format_value
from .power import PowerRow, power_summary
from .report_content import (
    VERDICT_LEGEND,
    Table,
    alarms,
    checks_table,
    control_outcome,
    controls_table,
    evidence_items,
    figures_by_claim,
    grid_tables,
    headline,
    hypotheses_heading,
    meta_items,
    power_alarms,
    power_table,
    power_untested,
    references,
    split_controls,
    summary_table,
    verdict_summary,
)
from .report_files import ReportFigure
from .run_metadata import fedbound_version
from .verdict_rows import QuantityRow, quantity_row, tightness_text, why_line, why_parts

if TYPE_CHECKING:
    from proofs_check.framework.claim import Claim
    from proofs_check.framework.references import Reference

__all__ = ["BoardRow", "ClaimCard", "ControlAlarm", "PowerSection", "ReportDocument", "report_document"]


@dataclass(frozen=True)
class BoardRow:
    """One verdict on the verdict board: ``claim_id``, ``status``, ``subject`` (``verdict_rows.why_parts``:
    the deciding sub-check of a FAIL or INCONCLUSIVE claim, the headline of a PASS; a negative control's
    says what it expected) and that quantity's ``row`` (its figures), ``tightness`` in short and in
    full (``tightness_full``; "" when none), ``figure`` the card's first figure (None when it has
    none) and ``alarm`` (a negative control not as expected)."""

    claim_id: str
    status: Status
    subject: str
    row: QuantityRow
    tightness: str
    tightness_full: str
    figure: ReportFigure | None
    alarm: bool = False

    @property
    def measured(self) -> str:
        return format_value(self.row.measured)

    @property
    def theoretical(self) -> str:
        return format_value(self.row.theoretical)

    @property
    def interval(self) -> str:
        return format_interval(self.row.interval)


@dataclass(frozen=True)
class ControlAlarm:
    """A negative control that did not come out as expected: its ``claim_id`` and ``outcome`` line."""

    claim_id: str
    outcome: str


@dataclass(frozen=True)
class PowerSection:
    """The power self-test: its ``summary`` line, its ``table`` and the ``untested`` variants' lines."""

    summary: str
    table: Table
    untested: tuple[str, ...]


@dataclass(frozen=True)
class ClaimCard:
    """The card of one claim or negative control.

    ``verdict`` (status, notes, hypotheses), ``claim`` (citation, statement, what "measured" is,
    references; None without claim metadata), ``control`` its outcome line when a negative control
    (None for a claim), ``why`` its one line of why (``verdict_rows.why_line``), ``headline``,
    ``hypotheses_heading``, ``checks`` (the sub-checks table or None), the evidence as ``scalars``
    and ``tables``, ``grid`` (caption, table) per sweep run and its ``figures``."""

    verdict: Verdict
    claim: Claim | None
    control: str | None
    why: str
    headline: str
    hypotheses_heading: str
    checks: Table | None
    scalars: tuple[tuple[str, str], ...]
    tables: tuple[Table, ...]
    grid: tuple[tuple[str, Table], ...]
    figures: tuple[ReportFigure, ...]

    @property
    def kind(self) -> str:
        """" (negative control)" after a control's status, "" for a claim."""
        return " (negative control)" if self.control is not None else ""

    @property
    def alarm(self) -> bool:
        """A negative control that did not come out as expected."""
        return self.control is not None and not self.verdict.as_expected


@dataclass(frozen=True)
class ReportDocument:
    """Everything a report shows, in order (module docstring).

    ``control_alarms`` and ``variant_alarms`` (lines) first; ``verdict_summary`` (one line), the
    ``board`` (claims, then negative controls) and the ``legend`` (verdict, meaning) pairs; the
    ``summary`` table of the claims and the ``controls`` table (None when there are none);
    ``power`` (None without a power self-test); ``sections``, the non-empty groups of cards
    ("Claims", "Negative control details") with their headings; the cited ``references``; and last
    ``meta``, the run's (key, text) pairs, ``files`` the report's files (linked in the "files"
    item) and the ``version`` of fedbound."""

    control_alarms: tuple[ControlAlarm, ...]
    variant_alarms: tuple[str, ...]
    verdict_summary: str
    board: tuple[BoardRow, ...]
    legend: tuple[tuple[str, str], ...]
    summary: Table | None
    controls: Table | None
    power: PowerSection | None
    sections: tuple[tuple[str, tuple[ClaimCard, ...]], ...]
    references: tuple[Reference, ...]
    meta: tuple[tuple[str, str], ...]
    files: tuple[str, ...]
    version: str


def report_document(
    verdicts: Sequence[Verdict],
    figures: Sequence[ReportFigure] = (),
    meta: Mapping[str, Any] | None = None,
    *,
    claims: Mapping[str, Claim] | None = None,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> ReportDocument:
    """The content of the report on ``verdicts`` (claim ids unique; every figure's claim among them,
    ValueError otherwise), with claim metadata, sweep grids and power rows where given: what
    ``render_markdown`` and ``render_html`` lay out."""
    by_claim = figures_by_claim(verdicts, figures)
    info = dict(claims or {})
    grids = dict(grids or {})
    checked, controls = split_controls(verdicts)

    def cards(group: Sequence[Verdict]) -> tuple[ClaimCard, ...]:
        return tuple(_card(v, info.get(v.claim_id), grids.get(v.claim_id, ()), by_claim[v.claim_id])
                     for v in group)

    return ReportDocument(
        control_alarms=tuple(ControlAlarm(v.claim_id, control_outcome(v)) for v in alarms(verdicts)),
        variant_alarms=tuple(power_alarms(power)),
        verdict_summary=verdict_summary(verdicts),
        board=tuple(_board_row(v, info.get(v.claim_id), by_claim[v.claim_id]) for v in (*checked, *controls)),
        legend=VERDICT_LEGEND,
        summary=summary_table(checked, info) if checked else None,
        controls=controls_table(controls, info) if controls else None,
        power=PowerSection(power_summary(power), power_table(power), tuple(power_untested(power))) if power else None,
        sections=tuple((heading, cards(group)) for heading, group in
                       (("Claims", checked), ("Negative control details", controls)) if group),
        references=tuple(references(verdicts, info)),
        meta=tuple(meta_items(meta)),
        files=tuple(meta["files"]) if meta and "files" in meta else (),
        version=fedbound_version(),
    )


def _board_row(v: Verdict, claim: Claim | None, figures: Sequence[ReportFigure]) -> BoardRow:
    row = quantity_row(v, claim)
    subject, _ = why_parts(v, row)
    if v.expected is not None:
        subject = f"negative control, expected {v.expected.value}; {subject}"
    return BoardRow(v.claim_id, v.status, subject, row, tightness_text(v, row, compact=True),
                    tightness_text(v, row), figures[0] if figures else None, not v.as_expected)


def _card(v: Verdict, claim: Claim | None, grid: Sequence[Mapping[str, Any]],
          figures: Sequence[ReportFigure]) -> ClaimCard:
    scalars, tables = evidence_items(v)
    return ClaimCard(
        verdict=v,
        claim=claim,
        control=control_outcome(v) if v.expected is not None else None,
        why=why_line(v, quantity_row(v, claim)),
        headline=headline(v),
        hypotheses_heading=hypotheses_heading(v),
        checks=checks_table(v),
        scalars=tuple(scalars),
        tables=tuple(tables),
        grid=tuple(grid_tables(grid)),
        figures=tuple(figures),
    )
