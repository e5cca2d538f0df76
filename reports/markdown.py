"""The report as Markdown (``report.md``): alarms first, the run, the verdict summary, negative
controls, the power self-test, a card per claim (citation, statement, headline, notes,
hypotheses, sub-checks, evidence, configurations run, figures with links to their SVGs) and the
references. What each part says is ``reports.report_content``; this module lays it out."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convergence.verdict import Verdict

from .power import PowerRow, power_summary
from .report_content import (
    ALARM_ADVICE,
    CONTROLS_INTRO,
    POWER_INTRO,
    TITLE,
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
    power_untested,
    power_table,
    references,
    split_controls,
    summary_table,
    verdict_summary,
)
from .report_files import ReportFigure, atomic_write, relative_path
from .run_metadata import fedbound_version

if TYPE_CHECKING:
    from proofs_check.framework.claim import Claim

__all__ = ["render_markdown", "write_markdown"]


def render_markdown(
    verdicts: Sequence[Verdict],
    figures: Sequence[ReportFigure] = (),
    meta: Mapping[str, Any] | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    claims: Mapping[str, Claim] | None = None,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> str:
    """The report as Markdown; figure paths are written relative to ``base_dir`` when given."""
    by_claim = figures_by_claim(verdicts, figures)
    info = dict(claims or {})
    grids = dict(grids or {})
    checked, controls = split_controls(verdicts)
    out = [f"# {TITLE}", ""]
    control_alarms = alarms(verdicts)
    if control_alarms:
        out += [f"> **ALARM: {len(control_alarms)} negative control(s) did not come out as expected.** "
                f"{ALARM_ADVICE}", ">"]
        out += [f"> - {_code(v.claim_id)}: {control_outcome(v)}" for v in control_alarms]
        out.append("")
    variant_alarms = power_alarms(power)
    if variant_alarms:
        out += [f"> **ALARM: {len(variant_alarms)} planted variant(s) did not come out as expected.** "
                f"{ALARM_ADVICE}", ">"] + [f"> - {line}" for line in variant_alarms] + [""]
    out += ["## Run", ""]
    out += [f"- **{key}**: {_meta_value(key, value, meta)}" for key, value in meta_items(meta)]
    out += [f"- **fedbound**: {fedbound_version()}", "", "## Verdicts", "", verdict_summary(verdicts), ""]
    if checked:
        out += [_table(summary_table(checked, info)), ""]
    if controls:
        out += ["## Negative controls", "", CONTROLS_INTRO, "", _table(controls_table(controls)), ""]
    if power:
        out += ["## Power self-test", "", POWER_INTRO, "", power_summary(power), "", _table(power_table(power)),
                ""]
        out += [f"- power untested, {line}" for line in power_untested(power)] + ([""] if power_untested(power) else [])
    for heading, group in (("Claims", checked), ("Negative control details", controls)):
        if group:
            out += [f"## {heading}", ""]
            for v in group:
                out += _section(v, by_claim[v.claim_id], base_dir, info.get(v.claim_id), grids.get(v.claim_id, ()))
    cited = references(verdicts, info)
    if cited:
        out += ["## References", ""] + [f"- [{r.key}] {r.entry}" + (f" <{r.url}>" if r.url else "") for r in cited]
    return "\n".join(out).rstrip() + "\n"


def write_markdown(
    path: str | os.PathLike[str],
    verdicts: Sequence[Verdict],
    figures: Sequence[ReportFigure] = (),
    meta: Mapping[str, Any] | None = None,
    *,
    claims: Mapping[str, Claim] | None = None,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> Path:
    """Write :func:`render_markdown` to ``path`` atomically, figure paths relative to its folder."""
    text = render_markdown(verdicts, figures, meta, base_dir=Path(path).parent, claims=claims, grids=grids,
                           power=power)
    return atomic_write(path, text)


def _section(v: Verdict, figures: Sequence[ReportFigure], base_dir: str | os.PathLike[str] | None,
             claim: Claim | None = None, grid: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The card of one claim or negative control."""
    kind = " (negative control)" if v.expected is not None else ""
    out = [f"### {_code(v.claim_id)}: {v.status.value}{kind}", ""]
    if claim is not None:
        cites = "; ".join(f"[{r.key}]" for r in claim.references)
        out += [f"*{claim.citation}* {cites}", "", f"**Statement.** {claim.statement}", "",
                f"**Measured** = {claim.measured}.", ""]
    if v.expected is not None:
        out += [f"> **ALARM: {control_outcome(v)}.** {ALARM_ADVICE}" if not v.as_expected
                else f"*{control_outcome(v)}*", ""]
    out += [headline(v), ""]
    if v.notes:
        out += [v.notes, ""]
    if v.hypotheses:
        out += [f"**{hypotheses_heading(v)}**", ""]
        out += [f"- {'met' if h.met else '**UNMET**'}: {_code(h.name)}: {h.detail}" for h in v.hypotheses]
        out.append("")
    checks = checks_table(v)
    if checks is not None:
        out += ["**Sub-checks**", "", _table(checks), ""]
    scalars, tables = evidence_items(v)
    if scalars or tables:
        out += ["**Evidence**", ""]
        if scalars:
            out += [f"- {key}: {value}" for key, value in scalars] + [""]
        for table in tables:
            out += [_table(table), ""] + ([f"*{table.note}*", ""] if table.note else [])
    if grid:
        out += ["**Configurations run**", ""]
        for caption, table in grid_tables(grid):
            out += [f"*{caption}*", "", _table(table), ""]
    for fig in figures:
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


def _meta_value(key: str, value: str, meta: Mapping[str, Any] | None) -> str:
    if key == "command":
        return _code(value)
    if key == "files" and meta:
        return ", ".join(f"[{name}]({name})" for name in meta["files"])
    return value
