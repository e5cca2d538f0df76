"""The report as Markdown (``report.md``): alarms first, the verdict summary with the verdicts'
legend, negative controls, the power self-test, a card per claim (citation, statement, headline,
notes, hypotheses, sub-checks, evidence, configurations run, figures with links to their SVGs),
the references and last the run. What each part says is ``reports.report_content``; this module lays it out."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .report_content import ALARM_ADVICE, CONTROLS_INTRO, POWER_INTRO, TITLE, Table
from .report_document import ClaimCard, ReportDocument
from .report_files import atomic_write, relative_path

__all__ = ["render_markdown", "write_markdown"]


def render_markdown(doc: ReportDocument, *, base_dir: str | os.PathLike[str] | None = None) -> str:
    """The report ``doc`` as Markdown; figure paths are written relative to ``base_dir`` when given."""
    out = [f"# {TITLE}", ""]
    if doc.control_alarms:
        out += [f"> **ALARM: {len(doc.control_alarms)} negative control(s) did not come out as expected.** "
                f"{ALARM_ADVICE}", ">"]
        out += [f"> - {_code(a.claim_id)}: {a.outcome}" for a in doc.control_alarms]
        out.append("")
    if doc.variant_alarms:
        out += [f"> **ALARM: {len(doc.variant_alarms)} planted variant(s) did not come out as expected.** "
                f"{ALARM_ADVICE}", ">"] + [f"> - {line}" for line in doc.variant_alarms] + [""]
    out += ["## Verdicts", "", doc.verdict_summary, ""]
    out += [f"- **{name}**: {meaning}" for name, meaning in doc.legend] + [""]
    if doc.summary is not None:
        out += [_table(doc.summary), "", f"*{doc.summary.note}*", ""]
    if doc.controls is not None:
        out += ["## Negative controls", "", CONTROLS_INTRO, "", _table(doc.controls), ""]
    if doc.power is not None:
        out += ["## Power self-test", "", POWER_INTRO, "", doc.power.summary, "", _table(doc.power.table), ""]
        out += [f"- power untested, {line}" for line in doc.power.untested] + ([""] if doc.power.untested else [])
    for heading, cards in doc.sections:
        out += [f"## {heading}", ""]
        for card in cards:
            out += _section(card, base_dir)
    if doc.references:
        out += ["## References", ""] + [f"- [{r.key}] {r.entry}" + (f" <{r.url}>" if r.url else "")
                                        for r in doc.references] + [""]
    out += ["## Run", ""]
    out += [f"- **{key}**: {_meta_value(key, value, doc.files)}" for key, value in doc.meta]
    out += [f"- **fedbound**: {doc.version}"]
    return "\n".join(out).rstrip() + "\n"


def write_markdown(path: str | os.PathLike[str], doc: ReportDocument) -> Path:
    """Write :func:`render_markdown` of ``doc`` to ``path`` atomically, figure paths relative to its folder."""
    return atomic_write(path, render_markdown(doc, base_dir=Path(path).parent))


def _section(card: ClaimCard, base_dir: str | os.PathLike[str] | None) -> list[str]:
    """The card of one claim or negative control."""
    v, claim = card.verdict, card.claim
    out = [f"### {_code(v.claim_id)}: {v.status.value}{card.kind}", ""]
    if claim is not None:
        cites = "; ".join(f"[{r.key}]" for r in claim.references)
        out += [f"*{claim.citation}* {cites}", "", f"**Statement.** {claim.statement}", "",
                f"**Measured** = {claim.measured}.", ""]
    if card.control is not None:
        out += [f"> **ALARM: {card.control}.** {ALARM_ADVICE}" if card.alarm else f"*{card.control}*", ""]
    out += [card.headline, ""]
    if v.notes:
        out += [v.notes, ""]
    if v.hypotheses:
        out += [f"**{card.hypotheses_heading}**", ""]
        out += [f"- {'met' if h.met else '**UNMET**'}: {_code(h.name)}: {h.detail}" for h in v.hypotheses]
        out.append("")
    if card.checks is not None:
        out += ["**Sub-checks**", "", _table(card.checks), ""]
    if card.scalars or card.tables:
        out += ["**Evidence**", ""]
        if card.scalars:
            out += [f"- {key}: {value}" for key, value in card.scalars] + [""]
        for table in card.tables:
            out += [_table(table), ""] + ([f"*{table.note}*", ""] if table.note else [])
    if card.grid:
        out += ["**Configurations run**", ""]
        for caption, table in card.grid:
            out += [f"*{caption}*", "", _table(table), ""]
    for fig in card.figures:
        alt = (fig.caption or v.claim_id).replace("[", "\\[").replace("]", "\\]")
        target = relative_path(fig.path, base_dir)
        out += [f"![{alt}]({f'<{target}>' if ' ' in target else target})", ""]
        svg = relative_path(fig.path.with_suffix(".svg"), base_dir)
        out += [(f"*{fig.caption}* " if fig.caption else "") + f"([SVG]({svg}))", ""]
    return out


def _table(table: Table) -> str:
    """A pipe table; pipes in cells are escaped and line breaks become spaces."""
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([row(table.headers), row(["---"] * len(table.headers)), *(row(r) for r in table.rows)])


def _code(text: str) -> str:
    """``text`` as an inline code span, with a fence longer than any backtick run inside."""
    run = longest = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def _meta_value(key: str, value: str, files: Sequence[str]) -> str:
    if key == "command":
        return _code(value)
    if key == "files":
        return ", ".join(f"[{name}]({name})" for name in files)
    return value
