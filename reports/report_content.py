"""What a report says, whatever its format: the tables and lines that Markdown, HTML and the
text table each lay out in their own way.

Negative controls (``Verdict.expected`` set) are listed apart from the claims; a control that
does not come out as expected is an alarm (a check that cannot fail is a defect, DESIGN.md), and
so is a planted variant of the power self-test (``reports.power.PowerRow``) that is not as
expected. ``claims`` (claim id -> ``proofs_check.Claim``) adds what "measured" is and the
bibliography; ``grids`` (claim id -> sweep summaries, ``reports.progress.SweepRecord.summary``)
the configurations each claim ran. A claim's card shows its sub-checks (``Verdict.checks``, with
a tightness column when some is a bound check) and its evidence: scalars, lists of records as
tables, and per-point columns of one length as tables thinned to ``MAX_EVIDENCE_ROWS`` rows; the
uninformative sub-checks (``Verdict.uninformative``) come first among the evidence tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from convergence.verdict import Status, Verdict

from .formatting import (
    MISSING,
    format_figure,
    format_hypotheses,
    format_interval,
    format_tightness,
    format_value,
)
from .power import PowerRow
from .report_files import ReportFigure
from .run_metadata import META_ORDER
from .verdict_rows import QuantityRow, deciding_check, figures_text, interval_text, quantity_row, tightness_text

if TYPE_CHECKING:
    from proofs_check.framework.claim import Claim
    from proofs_check.framework.references import Reference

__all__ = [
    "TITLE", "ALARM_ADVICE", "POWER_INTRO", "CONTROLS_INTRO", "TIGHTNESS_HEADER", "MAX_EVIDENCE_ROWS", "Table",
    "SUMMARY_NOTE", "VERDICT_LEGEND",
    "figures_by_claim", "split_controls", "alarms", "verdict_summary", "control_outcome", "summary_table",
    "controls_table", "power_table", "power_alarms", "power_untested", "checks_table", "evidence_items", "grid_tables",
    "references",
    "headline", "hypotheses_heading", "meta_items",
]

TITLE = "fedbound verification report"
ALARM_ADVICE = ("A check that cannot fail is a defect: verdicts from the same checker are "
                "suspect until this is explained.")
POWER_INTRO = ("Each claim as stated and each planted variant (an evaluator parameter changed so that the claim is "
               "false on its instance, unless the variant says otherwise), with the status a working check must "
               "give it: a planted variant counts as detected only when the sub-check it plants FAILs; one that does "
               "not means the check had no power to see it; \"untested\" when its sub-check already FAILs as stated "
               "or could not fail on the instance.")
CONTROLS_INTRO = "Checks expected to come out a given way (usually FAIL), to show that the checker can fail."
TIGHTNESS_HEADER = "tightness"
MAX_EVIDENCE_ROWS = 15
"""A per-point evidence table longer than this shows this many evenly spaced rows."""

SUMMARY_NOTE = ("Each row's figures are about the quantity it names: for FAIL and INCONCLUSIVE the deciding "
                "sub-check's, for PASS the claim's headline.")
VERDICT_LEGEND = (
    ("PASS", "the data show the claim holds on its instance: every counted sub-check passes its test at level "
             "0.05 (a bound below its limit with its confidence interval, a rate at least as fast, an ordering "
             "by a paired test over seeds)."),
    ("FAIL", "the data show the claim does not hold on its instance: a sub-check FAILs and stands after Holm's "
             "correction over the claim's sub-checks (family-wise error at most 0.05)."),
    ("INCONCLUSIVE", "the data cannot tell: an interval too wide, too few points, one seed of a stochastic "
                     "run, an unmet hypothesis, a FAIL that does not stand after Holm's correction, or every "
                     "sub-check uninformative."),
    ("uninformative", "a sub-check that could not have failed on its instance (e.g. a bound above the largest "
                      "value its quantity can take): listed with its reason, never counted as a PASS."),
)
"""What each verdict means (``convergence.verdict``, ``convergence.check_rules``,
``proofs_check.combine_checks``), defined once for every report."""

_SUMMARY_HEADERS = ("claim", "status", "quantity", "measured", "theoretical", "interval", "hypotheses met",
                    TIGHTNESS_HEADER)
_CONTROL_HEADERS = ("control", "expected", "got", "outcome", "quantity", "measured", "theoretical", "interval",
                    "hypotheses met")
_POWER_HEADERS = ("claim", "variant", "expected", "got", "as expected", "measured", "tightness", "description")
_CHECK_HEADERS = ("sub-check", "status", "measured", "theoretical", "interval", "finding")
_MAX_RECORD_COLUMNS = 8
"""A records table with more keys than this is transposed (one row per key) to fit its card."""


class Table(NamedTuple):
    """A table of text cells: ``headers``, ``rows`` (each as long as the headers) and a ``note`` under it."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


def figures_by_claim(verdicts: Sequence[Verdict], figures: Sequence[ReportFigure]) -> dict[str, list[ReportFigure]]:
    """Figures grouped by claim; claim ids must be unique and every figure must have its claim."""
    by_claim: dict[str, list[ReportFigure]] = {}
    for v in verdicts:
        if v.claim_id in by_claim:
            raise ValueError(f"verdicts: duplicate claim id {v.claim_id!r}")
        by_claim[v.claim_id] = []
    for fig in figures:
        if fig.claim_id not in by_claim:
            raise ValueError(f"figures: claim id {fig.claim_id!r} has no verdict")
        by_claim[fig.claim_id].append(fig)
    return by_claim


def split_controls(verdicts: Sequence[Verdict]) -> tuple[list[Verdict], list[Verdict]]:
    """(claims, negative controls), each in the given order."""
    return [v for v in verdicts if v.expected is None], [v for v in verdicts if v.expected is not None]


def alarms(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The negative controls that did not come out as expected."""
    return [v for v in verdicts if not v.as_expected]


def verdict_summary(verdicts: Sequence[Verdict]) -> str:
    """E.g. "3 claims: 1 PASS, 1 FAIL, 1 INCONCLUSIVE; 2 negative controls, 1 ALARM"."""
    claims, controls = split_controls(verdicts)
    counts = ", ".join(f"{sum(v.status is s for v in claims)} {s.value}" for s in Status)
    text = f"{len(claims)} claim{'s' * (len(claims) != 1)}: {counts}"
    if controls:
        n_alarms = len(alarms(controls))
        text += (f"; {len(controls)} negative control{'s' * (len(controls) != 1)}, "
                 + (f"{n_alarms} ALARM" if n_alarms else "all as expected"))
    return text


def control_outcome(v: Verdict) -> str:
    """E.g. "negative control: expected FAIL, got FAIL (as expected)"."""
    expected, got = v.expected.value if v.expected else MISSING, v.status.value
    if v.as_expected:
        return f"negative control: expected {expected}, got {got} (as expected)"
    return f"negative control: expected {expected}, got {got} (NOT as expected)"


def summary_table(verdicts: Sequence[Verdict], info: Mapping[str, Claim]) -> Table:
    """One row per claim, every figure of a row about the one quantity it names
    (``verdict_rows.quantity_row``: the deciding sub-check of a FAIL or INCONCLUSIVE claim, the
    headline of a PASS); a tightness column when some row has one."""
    rows = []
    for v in verdicts:
        row = quantity_row(v, info.get(v.claim_id))
        rows.append((v.claim_id, v.status.value, _quantity_cell(row), format_value(row.measured),
                     format_value(row.theoretical), interval_text(row), format_hypotheses(v),
                     tightness_text(v, row)))
    headers = _SUMMARY_HEADERS
    if not any(r[-1] for r in rows):
        return Table(headers[:-1], tuple(r[:-1] for r in rows), SUMMARY_NOTE)
    return Table(headers, tuple((*r[:-1], r[-1] or MISSING) for r in rows), SUMMARY_NOTE)


def controls_table(verdicts: Sequence[Verdict], info: Mapping[str, Claim] | None = None) -> Table:
    """One row per negative control: expected and got status, outcome, and the figures of one
    quantity (``verdict_rows.quantity_row``; named by the claim metadata in ``info`` where given)."""
    out = []
    for v in verdicts:
        row = quantity_row(v, (info or {}).get(v.claim_id))
        out.append((v.claim_id, v.expected.value if v.expected else MISSING, v.status.value,
                    "as expected" if v.as_expected else "ALARM", _quantity_cell(row), format_value(row.measured),
                    format_value(row.theoretical), interval_text(row), format_hypotheses(v)))
    return Table(_CONTROL_HEADERS, tuple(out))


def _quantity_cell(row: QuantityRow) -> str:
    """What a row's figures are: "deciding sub-check: NAME" (with its reason when uninformative), or
    the headline's name."""
    if row.reason:
        return f"every sub-check uninformative; the first: {row.name} ({row.reason})"
    return f"deciding sub-check: {row.name}" if row.deciding else row.quantity


def power_table(rows: Sequence[PowerRow]) -> Table:
    """One row per evaluation of the power self-test."""
    return Table(_POWER_HEADERS, tuple(
        (r.claim_id, _power_variant(r), r.expected.value, r.got.value, _power_mark(r),
         format_value(r.measured),
         format_tightness(r.tightness) or MISSING,
         r.description) for r in rows))


def _power_mark(row: PowerRow) -> str:
    """✓ as expected, "untested" when the instance cannot show the variant's power, "finding" for a claim as
    stated that does not PASS (its statement, not the check, is in question), ✗ NO otherwise."""
    if row.as_expected:
        return "✓"
    return "untested" if row.untested else ("✗ NO" if row.alarm else "finding")


def _power_variant(row: PowerRow) -> str:
    """E.g. "bound x 0.2 (bound_scale=0.2)"; "as stated" for the claim itself."""
    if not row.params:
        return row.variant
    return f"{row.variant} ({', '.join(f'{k}={v}' for k, v in row.params.items())})"


def power_alarms(rows: Sequence[PowerRow]) -> list[str]:
    """One line per planted variant that did not come out as expected (whole: a message is never cut):
    got, the planted sub-check's status, the seeds advice, the notes."""
    return [f"{r.verdict_id}: planted variant expected {r.expected.value}, got {r.got.value}"
            + (f"; its planted sub-check {r.sub_check!r}: "
               f"{r.planted_status.value if r.planted_status is not None else 'not in the verdict'}")
            + (f"; {r.advice}" if r.advice else "") + (f" ({r.notes})" if r.notes else "")
            for r in rows if r.is_variant and r.alarm]


def power_untested(rows: Sequence[PowerRow]) -> list[str]:
    """One line per planted variant whose power could not be shown on its instance, with the reason."""
    return [f"{r.verdict_id}: {r.untested}" for r in rows if r.is_variant and r.untested]


def checks_table(v: Verdict) -> Table | None:
    """The sub-checks a claim combined (``Verdict.checks``), one row each, or None: the deciding one
    first (``verdict_rows.deciding_check``), then FAIL, INCONCLUSIVE and PASS ones, each in the
    claim's order; with a tightness column (before the finding) when some sub-check is a bound
    check. Figures that are not finite read n/a."""
    if not v.checks:
        return None
    deciding = deciding_check(v)
    checks = sorted(v.checks, key=lambda c: (c is not deciding, _STATUS_ORDER[c.verdict.status]))
    rows = tuple(
        (c.name, c.verdict.status.value, format_figure(c.verdict.measured), format_figure(c.verdict.theoretical),
         format_interval(c.verdict.interval, format_figure), c.verdict.notes)
        for c in checks)
    tightness = [format_tightness(c.verdict.tightness) for c in checks]
    if not any(tightness):
        return Table(_CHECK_HEADERS, rows)
    return Table((*_CHECK_HEADERS[:-1], TIGHTNESS_HEADER, _CHECK_HEADERS[-1]),
                 tuple((*r[:-1], t or MISSING, r[-1]) for r, t in zip(rows, tightness)))


_STATUS_ORDER = {Status.FAIL: 0, Status.INCONCLUSIVE: 1, Status.PASS: 2}


def evidence_items(v: Verdict) -> tuple[list[tuple[str, str]], list[Table]]:
    """A verdict's evidence as scalar items and tables: the uninformative sub-checks (sub-check,
    status, reason, the data alone) first, then its tightness (``Verdict.tightness``), lists of records, then per-point columns (one
    table per common length). Nested mappings are flattened with dotted keys; a 1-D list of
    scalars is a column; anything else is summarised by its shape."""
    uninformative = [{"sub-check": u.name, "status": u.verdict.status.value, "reason": u.reason,
                      "the data alone": u.alone} for u in v.uninformative]
    tightness = {} if v.tightness is None else {"tightness": v.tightness.ratio, "tightness_label": v.tightness.label}
    evidence = {**({"uninformative": uninformative} if uninformative else {}), **tightness, **v.evidence}
    scalars: list[tuple[str, str]] = []
    columns: dict[int, dict[str, list[Any]]] = {}
    records = []
    for key, value in _flatten(evidence):
        if isinstance(value, (list, tuple)) and value and all(isinstance(r, Mapping) for r in value):
            records.append(_records_table(value))
            continue
        if isinstance(value, (list, tuple)) and value and all(map(_is_scalar, value)):
            columns.setdefault(len(value), {})[key] = list(value)
        elif isinstance(value, (list, tuple)):
            scalars.append((key, _describe(value)))
        else:
            scalars.append((key, format_value(value)))
    return scalars, records + [_column_table(cols) for cols in columns.values()]


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, np.generic))


def _describe(value: Sequence[Any]) -> str:
    if not value:
        return "empty"
    try:
        return f"array of shape {np.shape(value)}"
    except ValueError:
        return f"{len(value)} items"


def _column_table(columns: dict[str, list[Any]]) -> Table:
    """Columns of one length as a table, thinned to at most MAX_EVIDENCE_ROWS evenly spaced rows."""
    keys = tuple(columns)
    n = len(columns[keys[0]])
    if n <= MAX_EVIDENCE_ROWS:
        return Table(keys, tuple(tuple(format_value(columns[k][i]) for k in keys) for i in range(n)))
    picked = np.unique(np.round(np.linspace(0, n - 1, MAX_EVIDENCE_ROWS)).astype(int))
    rows = tuple((str(i), *(format_value(columns[k][i]) for k in keys)) for i in picked)
    return Table(("#", *keys), rows, f"{len(picked)} of {n} rows shown, evenly spaced")


def _records_table(records: Sequence[Mapping[str, Any]]) -> Table:
    """A list of flat mappings (e.g. constants per instance) as one table: keys as headers, or,
    with more than _MAX_RECORD_COLUMNS keys and fewer records, one row per key and a column
    per record (headed by its first value, e.g. the instance label)."""
    keys = tuple(dict.fromkeys(k for r in records for k in r))
    if len(keys) <= _MAX_RECORD_COLUMNS or len(records) >= len(keys):
        return Table(keys, tuple(tuple(format_value(r.get(k)) for k in keys) for r in records))
    first, rest = keys[0], keys[1:]
    headers = (first, *(format_value(r.get(first)) for r in records))
    return Table(headers, tuple((k, *(format_value(r.get(k)) for r in records)) for k in rest))


def grid_tables(grid: Sequence[Mapping[str, Any]]) -> list[tuple[str, Table]]:
    """Per sweep a caption and a table: the shared settings as one row of (setting, value)
    pairs and every varying setting with its distinct values."""
    out = []
    for sweep in grid:
        rows = [(k, str(v)) for k, v in sweep.get("fixed", {}).items()]
        rows += [(k, "varies: " + ", ".join(map(str, vals))) for k, vals in sweep.get("varying", {}).items()]
        caption = f"{sweep.get('description', 'runs')}: {sweep.get('runs', 0)} run(s), {sweep.get('reused', 0)} reused"
        out.append((caption, Table(("setting", "value"), tuple(rows))))
    return out


def references(verdicts: Sequence[Verdict], info: Mapping[str, Claim]) -> list[Reference]:
    """The works the reported claims cite, each once, in order of first citation."""
    seen: dict[str, Reference] = {}
    for v in verdicts:
        claim = info.get(v.claim_id)
        for ref in claim.references if claim else ():
            seen.setdefault(ref.key, ref)
    return list(seen.values())


def headline(v: Verdict) -> str:
    """E.g. "measured 0.5; theoretical 1; interval [0.4, 0.6]" (``verdict_rows.figures_text`` of the
    headline: an interval that is not about the measured value is named apart); "interval n/a"
    without one."""
    row = quantity_row(v, headline=True)
    return figures_text(row) + ("; interval n/a" if row.interval is None and row.other_interval is None else "")


def hypotheses_heading(v: Verdict) -> str:
    """E.g. "Hypotheses (2 of 3 met)"."""
    met = sum(h.met for h in v.hypotheses)
    return f"Hypotheses ({met} of {len(v.hypotheses)} met)"


def meta_items(meta: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The run metadata as (key, text) pairs, ``META_ORDER`` first."""
    meta = meta or {}
    keys = [k for k in META_ORDER if k in meta] + [k for k in meta if k not in META_ORDER]
    return [(str(k), format_value(meta[k])) for k in keys]
