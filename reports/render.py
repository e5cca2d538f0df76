"""Render verdicts: ``verdicts.json``, ``report.md``, a self-contained ``index.html``, a text table.

Reports read stored results and never rerun anything. Negative controls (``Verdict.expected``
set) are listed apart from the claims; a control that does not come out as expected is an
alarm (a check that cannot fail is a defect, DESIGN.md) and every format says so prominently.

``meta`` is the run's metadata, a JSON-able mapping. These keys come first when present:
``command``, ``seeds``, ``wall_time_s``, ``versions`` (name -> version) and ``machine``; any
other key follows in its own order (``files`` is shown as links).

``claims`` (claim id -> ``proofs_check.Claim``) adds to each card its citation, its statement in
math and what its headline figure measures, a "measured quantity" column to the summary, and a
bibliography; ``grids`` (claim id -> list of sweep summaries, see ``reports.progress``) adds the
configurations each claim ran. Both are optional: verdicts of user checks render without them.

Tightness (DESIGN.md: upper bounds report measured/bound, "tight" or "upper bound" as PEPit's
tests say): every bound check keeps ``tightness`` and ``tightness_label`` in its evidence
(``convergence.check_upper_bound``); the summary and the printed table show the headline's, or,
when the headline is not a bound check, each bound sub-check's, and every sub-check table has a
tightness column. ``power`` (``reports.power.PowerRow``, from ``fedbound verify --power``) adds
the power table: each claim as stated and each planted variant, expected and got status, and
whether they agree; a planted variant not as expected is an alarm, as a negative control is.
"""

from __future__ import annotations

import base64
import contextlib
import enum
import html
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from convergence.verdict import Status, Verdict

from .power import PowerRow, power_summary

if TYPE_CHECKING:
    from proofs_check.claim import Claim

__all__ = [
    "ReportFigure",
    "format_verdict_table",
    "format_power_table",
    "render_html",
    "render_markdown",
    "write_html",
    "write_markdown",
    "write_verdicts_json",
]

_TITLE = "fedbound verification report"
_META_ORDER = ("command", "seeds", "wall_time_s", "versions", "machine")
_MAX_EVIDENCE_ROWS = 15
_MISSING = "n/a"
_SUMMARY_HEADERS = ("claim", "status", "measured", "theoretical", "interval", "hypotheses met")
_TIGHTNESS_HEADER = "tightness"
_POWER_HEADERS = ("claim", "variant", "expected", "got", "as expected", "measured", "tightness", "description")
_POWER_INTRO = ("Each claim as stated and each planted variant (an evaluator parameter changed so that the claim is "
                "false on its instance, unless the variant says otherwise), with the status a working check must "
                "give it: a planted variant that does not FAIL means the check had no power to see it.")
_QUANTITY_HEADER = "measured quantity"
_CONTROL_HEADERS = ("control", "expected", "got", "outcome", "measured", "theoretical", "interval",
                    "hypotheses met")
_ALARM_ADVICE = ("A check that cannot fail is a defect: verdicts from the same checker are "
                 "suspect until this is explained.")


@dataclass(frozen=True)
class ReportFigure:
    """A PNG shown in the section of claim ``claim_id``, with its caption."""

    claim_id: str
    path: Path
    caption: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if self.path.suffix.lower() != ".png":
            raise ValueError(f"path: a report figure must be a .png file, got {self.path}")


class _Table(NamedTuple):
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


# ---------------------------------------------------------------------------------------------
# Public API


def write_verdicts_json(
    path: str | os.PathLike[str], verdicts: Sequence[Verdict], meta: Mapping[str, Any] | None = None,
    *, figures: Sequence[ReportFigure] = (), grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> Path:
    """Write ``{"fedbound_version", "created", "meta", "claims", "power"}`` atomically; NaN/inf become null.

    Each claim object is ``Verdict.to_json()`` plus ``figures`` (``{"png", "svg", "caption"}``,
    file names relative to the JSON's folder) and ``grid`` (the sweeps it ran, when given); a
    bound check's tightness is in its evidence (``tightness``, ``tightness_label``). ``power`` is
    the list of ``PowerRow.to_json()`` (empty without ``--power``)."""
    by_claim = _figures_by_claim(verdicts, figures)
    base = Path(path).parent
    claims = []
    for i, v in enumerate(verdicts):
        data = v.to_json()
        data["figures"] = [{"png": _md_image_path(f.path, base), "svg": _md_image_path(f.path.with_suffix(".svg"), base),
                            "caption": f.caption} for f in by_claim[v.claim_id]]
        if grids is not None:
            data["grid"] = list(grids.get(v.claim_id, []))
        claims.append(_jsonable(data, f"claims[{i}]"))
    document = {
        "fedbound_version": _fedbound_version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "meta": _jsonable(dict(meta or {}), "meta"),
        "claims": claims,
        "power": [_jsonable(row.to_json(), f"power[{i}]") for i, row in enumerate(power)],
    }
    text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return _atomic_write(path, text)


def format_verdict_table(verdicts: Sequence[Verdict], power: Sequence[PowerRow] = ()) -> str:
    """A plain-text, fixed-width table of every verdict (no colour codes), with a summary line;
    a tightness column when some verdict has one; then the power table when ``power`` is given."""
    if not verdicts:
        return "no verdicts"
    headers = ("claim", "status", "measured", "theoretical", "interval", "hypotheses", "control")
    rows = []
    for v in verdicts:
        control = ""
        if v.expected is not None:
            control = f"expect {v.expected.value}: {'ok' if v.as_expected else 'ALARM'}"
        rows.append((v.claim_id, v.status.value, _fmt(v.measured), _fmt(v.theoretical),
                     _fmt_interval(v.interval), _fmt_hypotheses(v), control))
    if any(_claim_tightness(v, compact=True) for v in verdicts):
        headers = (*headers[:-1], _TIGHTNESS_HEADER, headers[-1])
        rows = [(*r[:-1], _claim_tightness(v, compact=True) or _MISSING, r[-1]) for r, v in zip(rows, verdicts)]
    out = [*_text_table(headers, rows, right={2, 3}), "", _summary(verdicts)]
    out += [f"ALARM: {v.claim_id}: {_control_outcome(v)}" for v in _alarms(verdicts)]
    if power:
        out += ["", format_power_table(power)]
    return "\n".join(out)


def format_power_table(rows: Sequence[PowerRow]) -> str:
    """The power self-test as a plain-text table (claim, variant, expected, got, ✓/✗, measured,
    tightness), its summary line, and an ALARM line per planted variant not as expected."""
    if not rows:
        return "power self-test: no planted variants were run"
    table = _power_table(rows)
    keep = [table.headers.index(h) for h in table.headers if h != "description"]
    cells = [tuple(r[i] for i in keep) for r in table.rows]
    out = _text_table(tuple(table.headers[i] for i in keep), cells, right={5})
    out += ["", power_summary(rows)] + [f"ALARM: {line}" for line in _power_alarms(rows)]
    return "\n".join(out)


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Fixed-width lines: headers, a rule, the rows; columns in ``right`` right-aligned."""
    widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(parts).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


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
    by_claim = _figures_by_claim(verdicts, figures)
    info = dict(claims or {})
    grids = dict(grids or {})
    checked, controls = _split(verdicts)
    out = [f"# {_TITLE}", ""]
    alarms = _alarms(verdicts)
    if alarms:
        out += [f"> **ALARM: {len(alarms)} negative control(s) did not come out as expected.** "
                f"{_ALARM_ADVICE}", ">"]
        out += [f"> - {_md_code(v.claim_id)}: {_control_outcome(v)}" for v in alarms]
        out.append("")
    power_alarms = _power_alarms(power)
    if power_alarms:
        out += [f"> **ALARM: {len(power_alarms)} planted variant(s) did not come out as expected.** "
                f"{_ALARM_ADVICE}", ">"] + [f"> - {line}" for line in power_alarms] + [""]
    out += ["## Run", ""]
    out += [f"- **{key}**: {_md_meta_value(key, value, meta)}" for key, value in _meta_items(meta)]
    out += [f"- **fedbound**: {_fedbound_version()}", "", "## Verdicts", "", _summary(verdicts), ""]
    if checked:
        out += [_md_table(_summary_table(checked, info)), ""]
    if controls:
        out += ["## Negative controls", "",
                "Checks expected to come out a given way (usually FAIL), to show that the checker "
                "can fail.", "", _md_table(_controls_table(controls)), ""]
    if power:
        out += ["## Power self-test", "", _POWER_INTRO, "", power_summary(power), "", _md_table(_power_table(power)), ""]
    for heading, group in (("Claims", checked), ("Negative control details", controls)):
        if group:
            out += [f"## {heading}", ""]
            for v in group:
                out += _md_section(v, by_claim[v.claim_id], base_dir, info.get(v.claim_id), grids.get(v.claim_id, ()))
    references = _references(verdicts, info)
    if references:
        out += ["## References", ""] + [f"- [{r.key}] {r.entry}" + (f" <{r.url}>" if r.url else "") for r in references]
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
    return _atomic_write(path, text)


def render_html(
    verdicts: Sequence[Verdict],
    figures: Sequence[ReportFigure] = (),
    meta: Mapping[str, Any] | None = None,
    *,
    claims: Mapping[str, Claim] | None = None,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> str:
    """The report as one self-contained HTML page: inline CSS, PNGs embedded as data URIs."""
    by_claim = _figures_by_claim(verdicts, figures)
    info = dict(claims or {})
    grids = dict(grids or {})
    checked, controls = _split(verdicts)
    e = html.escape
    body = [f"<h1>{e(_TITLE)}</h1>"]
    alarms = _alarms(verdicts)
    if alarms:
        items = "".join(f"<li><code>{e(v.claim_id)}</code>: {e(_control_outcome(v))}</li>" for v in alarms)
        body.append(f'<div class="alarm" role="alert"><p>ALARM: {len(alarms)} negative control(s) did not '
                    f"come out as expected. {e(_ALARM_ADVICE)}</p><ul>{items}</ul></div>")
    power_alarms = _power_alarms(power)
    if power_alarms:
        items = "".join(f"<li>{e(line)}</li>" for line in power_alarms)
        body.append(f'<div class="alarm" role="alert"><p>ALARM: {len(power_alarms)} planted variant(s) did not '
                    f"come out as expected. {e(_ALARM_ADVICE)}</p><ul>{items}</ul></div>")
    rows = "".join(f"<dt>{e(k)}</dt><dd>{_html_meta_value(k, v, meta)}</dd>" for k, v in _meta_items(meta))
    body.append(f'<h2>Run</h2><dl class="meta">{rows}<dt>fedbound</dt><dd>{e(_fedbound_version())}</dd></dl>')
    body.append(f"<h2>Verdicts</h2><p>{e(_summary(verdicts))}</p>")
    if checked:
        body.append(_html_table(_summary_table(checked, info), "summary"))
    if controls:
        body.append("<h2>Negative controls</h2><p>Checks expected to come out a given way (usually FAIL), "
                    "to show that the checker can fail.</p>" + _html_table(_controls_table(controls), "summary"))
    if power:
        body.append(f'<h2 id="power">Power self-test</h2><p>{e(_POWER_INTRO)}</p><p>{e(power_summary(power))}</p>'
                    + _html_table(_power_table(power), "summary power"))
    for heading, group in (("Claims", checked), ("Negative control details", controls)):
        if group:
            body.append(f"<h2>{e(heading)}</h2>")
            body += [_html_section(v, by_claim[v.claim_id], info.get(v.claim_id), grids.get(v.claim_id, ()))
                     for v in group]
    references = _references(verdicts, info)
    if references:
        items = "".join(
            f'<li id="ref-{e(r.key)}">[{e(r.key)}] {e(r.entry)}'
            + (f' <a href="{e(r.url)}">{e(r.url)}</a>' if r.url else "") + "</li>" for r in references)
        body.append(f'<h2>References</h2><ul class="references">{items}</ul>')
    body.append(f'<footer class="note">generated by fedbound {e(_fedbound_version())}</footer>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(_TITLE)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def write_html(
    path: str | os.PathLike[str],
    verdicts: Sequence[Verdict],
    figures: Sequence[ReportFigure] = (),
    meta: Mapping[str, Any] | None = None,
    *,
    claims: Mapping[str, Claim] | None = None,
    grids: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    power: Sequence[PowerRow] = (),
) -> Path:
    """Write :func:`render_html` to ``path`` atomically."""
    return _atomic_write(path, render_html(verdicts, figures, meta, claims=claims, grids=grids, power=power))


# ---------------------------------------------------------------------------------------------
# Content shared by the formats


def _figures_by_claim(verdicts: Sequence[Verdict], figures: Sequence[ReportFigure]) -> dict[str, list[ReportFigure]]:
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


def _split(verdicts: Sequence[Verdict]) -> tuple[list[Verdict], list[Verdict]]:
    """(claims, negative controls), each in the given order."""
    return [v for v in verdicts if v.expected is None], [v for v in verdicts if v.expected is not None]


def _alarms(verdicts: Sequence[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.as_expected]


def _summary(verdicts: Sequence[Verdict]) -> str:
    """E.g. "3 claims: 1 PASS, 1 FAIL, 1 INCONCLUSIVE; 2 negative controls, 1 ALARM"."""
    claims, controls = _split(verdicts)
    counts = ", ".join(f"{sum(v.status is s for v in claims)} {s.value}" for s in Status)
    text = f"{len(claims)} claim{'s' * (len(claims) != 1)}: {counts}"
    if controls:
        alarms = len(_alarms(controls))
        text += (f"; {len(controls)} negative control{'s' * (len(controls) != 1)}, "
                 + (f"{alarms} ALARM" if alarms else "all as expected"))
    return text


def _control_outcome(v: Verdict) -> str:
    expected, got = v.expected.value if v.expected else _MISSING, v.status.value
    if v.as_expected:
        return f"negative control: expected {expected}, got {got} (as expected)"
    return f"negative control: expected {expected}, got {got} (NOT as expected)"


def _summary_table(verdicts: Sequence[Verdict], info: Mapping[str, Claim]) -> _Table:
    """One row per claim; with claim metadata, a column naming what "measured" is; a tightness
    column when some claim has a bound check (``_claim_tightness``)."""
    headers: tuple[str, ...] = _SUMMARY_HEADERS
    rows = tuple(
        (v.claim_id, v.status.value, _fmt(v.measured), _fmt(v.theoretical), _fmt_interval(v.interval),
         _fmt_hypotheses(v)) for v in verdicts)
    if any(v.claim_id in info for v in verdicts):
        quantity = tuple(info[v.claim_id].measured if v.claim_id in info else "" for v in verdicts)
        headers = (*headers[:2], _QUANTITY_HEADER, *headers[2:])
        rows = tuple((r[0], r[1], q, *r[2:]) for r, q in zip(rows, quantity))
    if any(_claim_tightness(v) for v in verdicts):
        headers = (*headers, _TIGHTNESS_HEADER)
        rows = tuple((*r, _claim_tightness(v) or _MISSING) for r, v in zip(rows, verdicts))
    return _Table(headers, rows)


def _tightness(evidence: Any) -> str:
    """"0.347 (upper bound)" from a bound check's evidence; "" when it has no tightness."""
    if not isinstance(evidence, Mapping) or evidence.get("tightness") is None:
        return ""
    return f"{_fmt(evidence['tightness'])} ({evidence.get('tightness_label', _MISSING)})"


def _claim_tightness(v: Verdict, compact: bool = False) -> str:
    """The tightness of the claim's headline when it is a bound check; otherwise that of each bound
    sub-check ("name: 0.02 (upper bound); ..."; ``compact``: their range and count); "" when none."""
    own = _tightness(v.evidence)
    if own or not isinstance(v.evidence, Mapping):
        return own
    checks = [(str(c.get("name", c.get("claim_id"))), c.get("evidence")) for c in v.evidence.get("checks", ())
              if isinstance(c, Mapping) and _tightness(c.get("evidence"))]
    if not checks:
        return ""
    if not compact:
        return "; ".join(f"{name}: {_tightness(ev)}" for name, ev in checks)
    ratios = [float(ev["tightness"]) for _, ev in checks]
    labels = ", ".join(dict.fromkeys(str(ev.get("tightness_label")) for _, ev in checks))
    return f"{len(checks)} bound sub-check(s): {_fmt(min(ratios))}..{_fmt(max(ratios))} ({labels})"


def _power_table(rows: Sequence[PowerRow]) -> _Table:
    """One row per evaluation of the power self-test."""
    return _Table(_POWER_HEADERS, tuple(
        (r.claim_id, _power_variant(r), r.expected.value, r.got.value, "✓" if r.as_expected else "✗ NO",
         _fmt(r.measured), _tightness({"tightness": r.tightness, "tightness_label": r.tightness_label}) or _MISSING,
         r.description) for r in rows))


def _power_variant(row: PowerRow) -> str:
    """E.g. "bound x 0.2 (bound_scale=0.2)"; "as stated" for the claim itself."""
    if not row.params:
        return row.variant
    return f"{row.variant} ({', '.join(f'{k}={v}' for k, v in row.params.items())})"


def _power_alarms(rows: Sequence[PowerRow]) -> list[str]:
    """One line per planted variant that did not come out as expected."""
    return [f"{r.verdict_id}: planted variant expected {r.expected.value}, got {r.got.value}"
            + (f" ({r.notes[:200]})" if r.notes else "") for r in rows if r.is_variant and not r.as_expected]


def _references(verdicts: Sequence[Verdict], info: Mapping[str, Claim]) -> list[Any]:
    """The works the reported claims cite, each once, in order of first citation."""
    seen: dict[str, Any] = {}
    for v in verdicts:
        claim = info.get(v.claim_id)
        for ref in claim.references if claim else ():
            seen.setdefault(ref.key, ref)
    return list(seen.values())


def _grid_tables(grid: Sequence[Mapping[str, Any]]) -> list[tuple[str, _Table]]:
    """Per sweep a caption and a table: the shared settings as one row of (setting, value)
    pairs and every varying setting with its distinct values."""
    out = []
    for sweep in grid:
        rows = [(k, str(v)) for k, v in sweep.get("fixed", {}).items()]
        rows += [(k, "varies: " + ", ".join(map(str, vals))) for k, vals in sweep.get("varying", {}).items()]
        caption = f"{sweep.get('description', 'runs')}: {sweep.get('runs', 0)} run(s), {sweep.get('reused', 0)} reused"
        out.append((caption, _Table(("setting", "value"), tuple(rows))))
    return out


def _md_meta_value(key: str, value: str, meta: Mapping[str, Any] | None) -> str:
    if key == "command":
        return _md_code(value)
    if key == "files" and meta:
        return ", ".join(f"[{name}]({name})" for name in meta["files"])
    return value


def _html_meta_value(key: str, value: str, meta: Mapping[str, Any] | None) -> str:
    if key == "files" and meta:
        return ", ".join(f'<a href="{html.escape(name)}">{html.escape(name)}</a>' for name in meta["files"])
    return html.escape(value)


def _controls_table(verdicts: Sequence[Verdict]) -> _Table:
    return _Table(_CONTROL_HEADERS, tuple(
        (v.claim_id, v.expected.value if v.expected else _MISSING, v.status.value,
         "as expected" if v.as_expected else "ALARM", _fmt(v.measured), _fmt(v.theoretical),
         _fmt_interval(v.interval), _fmt_hypotheses(v)) for v in verdicts))


def _headline(v: Verdict) -> str:
    return f"measured {_fmt(v.measured)}; theoretical {_fmt(v.theoretical)}; interval {_fmt_interval(v.interval)}"


def _hypotheses_heading(v: Verdict) -> str:
    met = sum(h.met for h in v.hypotheses)
    return f"Hypotheses ({met} of {len(v.hypotheses)} met)"


def _meta_items(meta: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    meta = meta or {}
    keys = [k for k in _META_ORDER if k in meta] + [k for k in meta if k not in _META_ORDER]
    return [(str(k), _fmt(meta[k])) for k in keys]


def _evidence(evidence: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[_Table]]:
    """Split evidence into scalar items and per-point tables (one per common length).

    Nested mappings are flattened with dotted keys; a 1-D list or array of scalars is a column;
    anything else is summarised by its shape.
    """
    scalars: list[tuple[str, str]] = []
    columns: dict[int, dict[str, list[Any]]] = {}
    records = []
    for key, value in _flatten({k: v for k, v in evidence.items() if k != "checks"}):
        if isinstance(value, (list, tuple)) and value and all(isinstance(r, Mapping) for r in value):
            records.append(_records_table(value))
            continue
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)) and value and all(map(_is_scalar, value)):
            columns.setdefault(len(value), {})[key] = list(value)
        elif isinstance(value, (list, tuple)):
            scalars.append((key, _describe(value)))
        else:
            scalars.append((key, _fmt(value)))
    return scalars, records + [_column_table(cols) for cols in columns.values()]


_MAX_RECORD_COLUMNS = 8
"""A records table with more keys than this is transposed (one row per key) to fit its card."""


def _records_table(records: Sequence[Mapping[str, Any]]) -> _Table:
    """A list of flat mappings (e.g. constants per instance) as one table: keys as headers, or,
    with more than _MAX_RECORD_COLUMNS keys and fewer records, one row per key and a column
    per record (headed by its first value, e.g. the instance label)."""
    keys = tuple(dict.fromkeys(k for r in records for k in r))
    if len(keys) <= _MAX_RECORD_COLUMNS or len(records) >= len(keys):
        return _Table(keys, tuple(tuple(_fmt(r.get(k)) for k in keys) for r in records))
    first, rest = keys[0], keys[1:]
    headers = (first, *(_fmt(r.get(first)) for r in records))
    return _Table(headers, tuple((k, *(_fmt(r.get(k)) for r in records)) for k in rest))


_CHECK_HEADERS = ("sub-check", "status", "measured", "theoretical", "interval", "finding")


def _checks_table(v: Verdict) -> _Table | None:
    """The sub-checks a claim combined (evidence['checks']), one row each, or None; with a
    tightness column (before the finding) when some sub-check is a bound check."""
    checks = v.evidence.get("checks") if isinstance(v.evidence, Mapping) else None
    if not checks:
        return None
    rows = tuple(
        (str(c.get("name", c.get("claim_id"))), str(c.get("status")), _fmt(c.get("measured")),
         _fmt(c.get("theoretical")), _fmt_interval(c.get("interval")), str(c.get("notes", "")))
        for c in checks)
    tightness = [_tightness(c.get("evidence")) for c in checks]
    if not any(tightness):
        return _Table(_CHECK_HEADERS, rows)
    return _Table((*_CHECK_HEADERS[:-1], _TIGHTNESS_HEADER, _CHECK_HEADERS[-1]),
                  tuple((*r[:-1], t or _MISSING, r[-1]) for r, t in zip(rows, tightness)))


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, np.generic))


def _describe(value: list[Any] | tuple[Any, ...]) -> str:
    if not value:
        return "empty"
    try:
        return f"array of shape {np.shape(value)}"
    except ValueError:
        return f"{len(value)} items"


def _column_table(columns: dict[str, list[Any]]) -> _Table:
    """Columns of one length as a table, thinned to at most _MAX_EVIDENCE_ROWS evenly spaced rows."""
    keys = tuple(columns)
    n = len(columns[keys[0]])
    if n <= _MAX_EVIDENCE_ROWS:
        return _Table(keys, tuple(tuple(_fmt(columns[k][i]) for k in keys) for i in range(n)))
    picked = np.unique(np.round(np.linspace(0, n - 1, _MAX_EVIDENCE_ROWS)).astype(int))
    rows = tuple((str(i), *(_fmt(columns[k][i]) for k in keys)) for i in picked)
    return _Table(("#", *keys), rows, f"{len(picked)} of {n} rows shown, evenly spaced")


# ---------------------------------------------------------------------------------------------
# Markdown


def _md_section(v: Verdict, figures: Sequence[ReportFigure], base_dir: str | os.PathLike[str] | None,
                claim: Claim | None = None, grid: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    kind = " (negative control)" if v.expected is not None else ""
    out = [f"### {_md_code(v.claim_id)}: {v.status.value}{kind}", ""]
    if claim is not None:
        cites = "; ".join(f"[{r.key}]" for r in claim.references)
        out += [f"*{claim.citation}* {cites}", "", f"**Statement.** {claim.statement}", "",
                f"**Measured** = {claim.measured}.", ""]
    if v.expected is not None:
        out += [f"> **ALARM: {_control_outcome(v)}.** {_ALARM_ADVICE}" if not v.as_expected
                else f"*{_control_outcome(v)}*", ""]
    out += [_headline(v), ""]
    if v.notes:
        out += [v.notes, ""]
    if v.hypotheses:
        out += [f"**{_hypotheses_heading(v)}**", ""]
        out += [f"- {'met' if h.met else '**UNMET**'}: {_md_code(h.name)}: {h.detail}" for h in v.hypotheses]
        out.append("")
    checks = _checks_table(v)
    if checks is not None:
        out += ["**Sub-checks**", "", _md_table(checks), ""]
    scalars, tables = _evidence(v.evidence)
    if scalars or tables:
        out += ["**Evidence**", ""]
        if scalars:
            out += [f"- {key}: {value}" for key, value in scalars] + [""]
        for table in tables:
            out += [_md_table(table), ""] + ([f"*{table.note}*", ""] if table.note else [])
    if grid:
        out += ["**Configurations run**", ""]
        for caption, table in _grid_tables(grid):
            out += [f"*{caption}*", "", _md_table(table), ""]
    for fig in figures:
        alt = (fig.caption or v.claim_id).replace("[", "\\[").replace("]", "\\]")
        target = _md_image_path(fig.path, base_dir)
        out += [f"![{alt}]({f'<{target}>' if ' ' in target else target})", ""]
        svg = _md_image_path(fig.path.with_suffix(".svg"), base_dir)
        out += [(f"*{fig.caption}* " if fig.caption else "") + f"([SVG]({svg}))", ""]
    return out


def _md_table(table: _Table) -> str:
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([row(table.headers), row(["---"] * len(table.headers)), *(row(r) for r in table.rows)])


def _md_code(text: str) -> str:
    """``text`` as an inline code span, with a fence longer than any backtick run inside."""
    run = longest = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def _md_image_path(path: Path, base_dir: str | os.PathLike[str] | None) -> str:
    if base_dir is None:
        return path.as_posix()
    return Path(os.path.relpath(path.resolve(), Path(base_dir).resolve())).as_posix()


# ---------------------------------------------------------------------------------------------
# HTML

_CSS = """
body{margin:0;background:#fff;color:#1f2328;line-height:1.5;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:1.7em;border-bottom:1px solid #d0d7de;padding-bottom:.3em}
h2{font-size:1.35em;margin-top:1.8em;border-bottom:1px solid #eaeef2;padding-bottom:.2em}
h3{font-size:1.12em;margin:0 0 .4em}
h4{font-size:1em;margin:1em 0 .3em}
article{border:1px solid #d0d7de;border-radius:8px;padding:14px 18px;margin:16px 0}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #d0d7de;padding:4px 9px;text-align:left;vertical-align:top;overflow-wrap:break-word}
td.nowrap,.badge,td code{white-space:nowrap}
.table-wrap{max-width:100%;overflow-x:auto}
.citation{color:#57606a;font-style:italic;margin:.2em 0}
.statement{background:#f6f8fa;border-left:4px solid #8c959f;padding:6px 10px}
ul.references li{margin:.3em 0}
th{background:#f6f8fa}
table.evidence td{font-variant-numeric:tabular-nums}
table.evidence td.nowrap{text-align:right}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em;
background:#f6f8fa;padding:1px 4px;border-radius:4px}
.badge{display:inline-block;padding:0 8px;border:1px solid;border-radius:10px;font-weight:600;font-size:.85em}
.badge.pass{color:#116329;background:#dafbe1;border-color:#4ac26b}
.badge.fail{color:#a40e26;background:#ffebe9;border-color:#ff8182}
.badge.inconclusive{color:#7d4e00;background:#fff8c5;border-color:#d4a72c}
.alarm{border:2px solid #cf222e;background:#ffebe9;color:#82071e;padding:8px 14px;border-radius:6px;font-weight:600}
.control{border-left:4px solid #8c959f;background:#f6f8fa;padding:4px 10px}
.notes{white-space:pre-wrap}
li.unmet{color:#a40e26}
.ok{color:#116329;font-weight:700}
strong.unmet{color:#a40e26}
.unmet strong{font-weight:700}
figure{margin:1em 0}
img{max-width:100%;height:auto;border:1px solid #eaeef2}
figcaption,.note{color:#57606a;font-size:.9em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}
dl.meta dt{font-weight:600}
dl.meta dd{margin:0;word-break:break-word}
"""


def _html_section(v: Verdict, figures: Sequence[ReportFigure], claim: Claim | None = None,
                  grid: Sequence[Mapping[str, Any]] = ()) -> str:
    e = html.escape
    kind = " (negative control)" if v.expected is not None else ""
    out = [f'<article id="{e(_anchor(v.claim_id))}">',
           f"<h3><code>{e(v.claim_id)}</code> {_badge(v.status.value)}{e(kind)}</h3>"]
    if claim is not None:
        cites = " ".join(f'<a href="#ref-{e(r.key)}">[{e(r.key)}]</a>' for r in claim.references)
        out += [f'<p class="citation">{e(claim.citation)} {cites}</p>',
                f'<p class="statement"><strong>Statement.</strong> {e(claim.statement)}</p>',
                f'<p class="quantity"><strong>Measured</strong> = {e(claim.measured)}.</p>']
    if v.expected is not None:
        out.append(f'<p class="alarm" role="alert">ALARM: {e(_control_outcome(v))}. {e(_ALARM_ADVICE)}</p>'
                   if not v.as_expected else f'<p class="control">{e(_control_outcome(v))}</p>')
    out.append(f"<p>{e(_headline(v))}</p>")
    if v.notes:
        out.append(f'<p class="notes">{e(v.notes)}</p>')
    if v.hypotheses:
        items = "".join(
            f'<li class="met">met: <code>{e(h.name)}</code>: {e(h.detail)}</li>' if h.met
            else f'<li class="unmet"><strong>UNMET</strong>: <code>{e(h.name)}</code>: {e(h.detail)}</li>'
            for h in v.hypotheses)
        out.append(f"<h4>{e(_hypotheses_heading(v))}</h4><ul>{items}</ul>")
    checks = _checks_table(v)
    if checks is not None:
        out += ["<h4>Sub-checks</h4>", _html_table(checks, "checks")]
    scalars, tables = _evidence(v.evidence)
    if scalars or tables:
        out.append("<h4>Evidence</h4>")
        if scalars:
            out.append("<ul>" + "".join(f"<li>{e(k)}: {e(val)}</li>" for k, val in scalars) + "</ul>")
        out += [_html_table(t, "evidence") for t in tables]
    if grid:
        out.append("<details><summary>Configurations run</summary>")
        for caption, table in _grid_tables(grid):
            out += [f'<p class="note">{e(caption)}</p>', _html_table(table, "grid")]
        out.append("</details>")
    for fig in figures:
        svg = e(fig.path.with_suffix(".svg").name)
        caption = f'<figcaption>{e(fig.caption)} (<a href="{svg}">SVG</a>)</figcaption>'
        out.append(f'<figure><img src="{_data_uri(fig)}" alt="{e(fig.caption or v.claim_id)}">{caption}</figure>')
    out.append("</article>")
    return "\n".join(out)


def _html_table(table: _Table, css_class: str) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in table.headers)
    rows = "".join(
        "<tr>" + "".join(f"<td{_NOWRAP if h in _SHORT_COLUMNS or _is_token(c) else ''}>{_html_cell(h, c)}</td>"
                         for h, c in zip(table.headers, row)) + "</tr>"
        for row in table.rows)
    note = f'<p class="note">{e(table.note)}</p>' if table.note else ""
    return (f'<div class="table-wrap"><table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
            f"</table></div>{note}")


_SHORT_COLUMNS = frozenset({"status", "expected", "got", "measured", "theoretical", "interval", "outcome",
                            "as expected"})
"""Columns of short figures that must not wrap inside a number."""
_NOWRAP = ' class="nowrap"'


def _is_token(text: str) -> bool:
    """A short word or number (e.g. 2e-4), which would be unreadable broken across lines."""
    return len(text) <= 14 and " " not in text


def _html_cell(header: str, text: str) -> str:
    """Status columns as badges, claim ids as links to their section, the rest escaped."""
    if header in ("status", "expected", "got") and text in Status.__members__:
        return _badge(text)
    if header in ("claim", "control"):
        return f'<a href="#{html.escape(_anchor(text))}"><code>{html.escape(text)}</code></a>'
    if header == "outcome" and text == "ALARM":
        return '<strong class="unmet">ALARM</strong>'
    if header == "as expected":
        return ('<span class="ok" title="as expected">✓</span>' if text == "✓"
                else '<strong class="unmet" title="NOT as expected">✗ NO</strong>')
    return html.escape(text)


def _badge(status: str) -> str:
    return f'<span class="badge {html.escape(status.lower())}">{html.escape(status)}</span>'


def _anchor(claim_id: str) -> str:
    return "claim-" + "-".join(claim_id.split())


def _data_uri(fig: ReportFigure) -> str:
    try:
        data = fig.path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"figure of claim {fig.claim_id!r} not found: {fig.path}") from None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


# ---------------------------------------------------------------------------------------------
# Formatting and files


def _fmt(value: Any) -> str:
    """Compact text: 3 significant digits, scientific below 1e-3 and from 1e4 on."""
    if value is None:
        return _MISSING
    if isinstance(value, enum.Enum):
        return _fmt(value.value)
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _fmt_float(float(value))
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _fmt_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return np.format_float_positional(float(f"{x:.3g}"), trim="-")
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def _fmt_interval(interval: tuple[float, float] | None) -> str:
    return _MISSING if interval is None else f"[{_fmt(interval[0])}, {_fmt(interval[1])}]"


def _fmt_hypotheses(v: Verdict) -> str:
    if not v.hypotheses:
        return "none declared"
    met = sum(h.met for h in v.hypotheses)
    return f"{'yes' if v.hypotheses_met else 'NO'} ({met}/{len(v.hypotheses)})"


def _jsonable(value: Any, where: str) -> Any:
    """``value`` with JSON types only: NaN/inf -> None, NumPy -> Python; errors name the field."""
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, where)
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), where)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: cannot write a {type(value).__name__} to JSON")


def _fedbound_version() -> str:
    try:
        return metadata.version("fedbound")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _atomic_write(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then move it into place."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return out
