"""The verdicts as plain-text, fixed-width tables for a terminal or a log (no colour codes): one
row per verdict with a summary line and an ALARM line per negative control not as expected, and
the power self-test's table with its summary and alarms."""

from __future__ import annotations

from collections.abc import Sequence

from convergence.verdict import Verdict

from .formatting import MISSING, format_hypotheses, format_value
from .power import PowerRow, power_summary
from .report_content import (
    TIGHTNESS_HEADER, alarms, control_outcome, power_alarms, power_table, power_untested, verdict_summary,
)
from .verdict_rows import interval_text, quantity_row, tightness_text

__all__ = ["format_verdict_table", "format_power_table"]


def format_verdict_table(verdicts: Sequence[Verdict], power: Sequence[PowerRow] = ()) -> str:
    """A plain-text, fixed-width table of every verdict (no colour codes), with a summary line;
    a tightness column when some verdict has one; then the power table when ``power`` is given.

    A row's figures are about one quantity, named in its "quantity" column: the deciding sub-check of
    a FAIL or INCONCLUSIVE claim, else the headline (``verdict_rows.quantity_row``, the rule the HTML
    and Markdown reports use)."""
    if not verdicts:
        return "no verdicts"
    headers = ("claim", "status", "quantity", "measured", "theoretical", "interval", "hypotheses", "control")
    rows, quantities = [], [quantity_row(v) for v in verdicts]
    for v, q in zip(verdicts, quantities):
        control = ""
        if v.expected is not None:
            control = f"expect {v.expected.value}: {'ok' if v.as_expected else 'ALARM'}"
        rows.append((v.claim_id, v.status.value, _short(q.name if q.deciding else q.quantity),
                     format_value(q.measured), format_value(q.theoretical), interval_text(q), format_hypotheses(v),
                     control))
    tightness = [tightness_text(v, q, compact=True) for v, q in zip(verdicts, quantities)]
    if any(tightness):
        headers = (*headers[:-1], TIGHTNESS_HEADER, headers[-1])
        rows = [(*r[:-1], t or MISSING, r[-1]) for r, t in zip(rows, tightness)]
    out = [*_text_table(headers, rows, right={3, 4}), "", verdict_summary(verdicts)]
    out += [f"ALARM: {v.claim_id}: {control_outcome(v)}" for v in alarms(verdicts)]
    if power:
        out += ["", format_power_table(power)]
    return "\n".join(out)


def _short(name: str, width: int = 44) -> str:
    """A quantity's name cut to ``width`` characters for the terminal (the reports show it whole)."""
    return name if len(name) <= width else name[: width - 3] + "..."


def format_power_table(rows: Sequence[PowerRow]) -> str:
    """The power self-test as a plain-text table (claim, variant, expected, got, ✓/✗, measured,
    tightness), each planted variant's description below it, then its summary line, an ALARM line per
    planted variant not as expected and an untested line per variant whose power the instance cannot
    show. No text is cut: a cell is as wide as its longest entry, and the descriptions (the table's
    widest column in the report) and messages are printed whole, one per line."""
    if not rows:
        return "power self-test: no planted variants were run"
    table = power_table(rows)
    keep = [table.headers.index(h) for h in table.headers if h != "description"]
    cells = [tuple(r[i] for i in keep) for r in table.rows]
    out = _text_table(tuple(table.headers[i] for i in keep), cells, right={5})
    described = [f"  {r.verdict_id}: {r.description}" for r in rows if r.is_variant and r.description]
    out += ["", "planted variants:", *described] if described else []
    out += ["", power_summary(rows)] + [f"ALARM: {line}" for line in power_alarms(rows)]
    out += [f"untested: {line}" for line in power_untested(rows)]
    return "\n".join(out)


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Fixed-width lines: headers, a rule, the rows; columns in ``right`` right-aligned."""
    widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]
