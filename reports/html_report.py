"""The report as one self-contained HTML page (``index.html``), rendered from the Jinja2 templates in
``reports/templates`` with autoescaping: inline CSS, no script, PNGs embedded as data URIs (with
links to their SVGs), status badges, claim ids linking to their cards.

The page opens with the alarms and the verdict board (one row per verdict: badge, one line of why,
tightness, a thumbnail of its main figure linking to its card; the verdicts' legend beside it),
made to fit one 1400 x 900 screen for the default claims; then the summary tables, the claim
cards folded (``<details>``; a link to a card's anchor opens it), the references, and the run's
metadata and files last. The parts and their wording are those of the Markdown report
(``reports.report_document``), which this module lays out."""

from __future__ import annotations

import base64
import functools
import io
import os
from pathlib import Path

import jinja2

from convergence.verdict import Status

from .report_content import ALARM_ADVICE, CONTROLS_INTRO, POWER_INTRO, TITLE
from .report_document import ReportDocument
from .report_files import ReportFigure, atomic_write

__all__ = ["render_html", "write_html", "THUMBNAIL_HEIGHT"]

THUMBNAIL_HEIGHT = 40
"""Pixels of a board thumbnail's height (shown at half that, for sharp rendering on dense screens)."""


def render_html(doc: ReportDocument) -> str:
    """The report ``doc`` as one self-contained HTML page: inline CSS, PNGs embedded as data URIs."""
    return _environment().get_template("report.html.j2").render(
        doc=doc, title=TITLE, alarm_advice=ALARM_ADVICE, controls_intro=CONTROLS_INTRO, power_intro=POWER_INTRO,
        statuses=Status.__members__)


def write_html(path: str | os.PathLike[str], doc: ReportDocument) -> Path:
    """Write :func:`render_html` of ``doc`` to ``path`` atomically."""
    return atomic_write(path, render_html(doc))


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("reports", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(anchor=_anchor, data_uri=_data_uri, thumbnail_uri=_thumbnail_uri, svg_name=_svg_name)
    env.globals.update(zip=zip, cell_kind=_cell_kind, nowrap=_nowrap)
    return env


_SHORT_COLUMNS = frozenset({"status", "expected", "got", "measured", "theoretical", "interval", "outcome",
                            "as expected"})
"""Columns of short figures that must not wrap inside a number."""


def _nowrap(header: str, text: str) -> bool:
    """A short figure column, or a short word or number (e.g. 2e-4) that would be unreadable broken
    across lines; a long cell (an interval named as another statistic's) wraps."""
    return (header in _SHORT_COLUMNS and len(text) <= 40) or (len(text) <= 14 and " " not in text)


def _cell_kind(header: str, text: str) -> str:
    """How a table cell is shown: status columns as badges, claim ids as links to their card, the
    power table's marks, the rest as text."""
    if header in ("status", "expected", "got") and text in Status.__members__:
        return "badge"
    if header in ("claim", "control"):
        return "claim"
    if header == "outcome" and text == "ALARM":
        return "alarm"
    if header == "as expected":
        return "ok" if text == "✓" else "no"
    return "text"


def _anchor(claim_id: str) -> str:
    return "claim-" + "-".join(claim_id.split())


def _svg_name(fig: ReportFigure) -> str:
    return fig.path.with_suffix(".svg").name


def _png_bytes(fig: ReportFigure) -> bytes:
    try:
        return fig.path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"figure of claim {fig.claim_id!r} not found: {fig.path}") from None


def _data_uri(fig: ReportFigure) -> str:
    return "data:image/png;base64," + base64.b64encode(_png_bytes(fig)).decode("ascii")


def _thumbnail_uri(fig: ReportFigure) -> str:
    """The figure scaled to ``THUMBNAIL_HEIGHT`` pixels high (Lanczos), as a PNG data URI."""
    from PIL import Image  # matplotlib's own image library: imported when a page has figures

    with Image.open(io.BytesIO(_png_bytes(fig))) as image:
        image = image.convert("RGB")
        width = max(1, round(image.width * THUMBNAIL_HEIGHT / image.height))
        small = image.resize((width, THUMBNAIL_HEIGHT), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
