"""Plots, HTML / Markdown / JSON rendering and the command line (public API)."""

from .figures import draw
from .plots import plot_bias, plot_curves, plot_rate
from .render import (
    ReportFigure,
    format_verdict_table,
    render_html,
    render_markdown,
    write_html,
    write_markdown,
    write_verdicts_json,
)

__all__ = [
    "ReportFigure",
    "draw",
    "format_verdict_table",
    "plot_bias",
    "plot_curves",
    "plot_rate",
    "render_html",
    "render_markdown",
    "write_html",
    "write_markdown",
    "write_verdicts_json",
]
