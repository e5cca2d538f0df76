"""Report figures: draw a plot spec (``proofs_check.framework.plot_specs``) as PNG and SVG with the Agg backend.

``render(spec)`` dispatches on the spec's class (``RatePlot``, ``BiasPlot``, ``CurvesPlot``) and
returns the drawn matplotlib Figure (the caller closes it); ``save_plot(spec, path)`` saves it as
one PNG at ``path`` (creating its folder) and the same figure as SVG beside it (``path`` with the
suffix ``.svg``, for papers), and returns the PNG's path; ``draw`` saves a claim's spec into the
report folder as ``<spec.name>.png`` and returns it as a ``ReportFigure``. Every figure uses
constrained layout, wraps a long title, puts a legend of more than ``_LEGEND_INSIDE`` entries
below the axes, and its axes go through ``reports.plot_axes`` (log ticks, no overlapping tick
labels).
The specs validated their fields when they were built; here values that an axis cannot show
(non-positive on a log axis, non-finite) are masked, and the figure says how many points it left
out. Axis labels may use matplotlib mathtext (``$\\|\\tilde w^* - w^*\\|$``); their fractions are set in
display style (``\\frac`` drawn as ``\\dfrac``).

* ``RatePlot``: measured means with confidence bands on log-log axes, an optional theoretical
  bound (dashed), the fitted power laws, each over the x range it fitted and with its slope in the
  legend (the fit over all usable points dotted, the tail fit dashed), and the claimed rate
  (dash-dotted).
* ``BiasPlot``: a measured bias against its lower bound, optionally coloured by group (for
  example the number E of local steps).
* ``CurvesPlot``: several labelled curves, for example trajectories under two schedules, and the
  x at which a check compares them (a dotted vertical line).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from proofs_check.framework.plot_specs import (  # noqa: E402
    PLOT_SPECS,
    BiasPlot,
    CurvesPlot,
    FittedPowerLaw,
    PlotSpec,
    RatePlot,
    RateSeries,
    ReferenceRate,
)

from .plot_axes import log_ticks, thin_tick_labels, wrapped  # noqa: E402
from .report_files import ReportFigure  # noqa: E402

__all__ = ["draw", "render", "save_plot"]

_DPI = 110
_STYLE: dict[str, Any] = {
    "figure.figsize": (6.4, 4.4),
    "figure.dpi": _DPI,
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 9,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "fedbound",
}
"""Figure style; ``svg.hashsalt`` fixes the SVG's element ids (matplotlib draws them at random otherwise)."""
_BAND_ALPHA = 0.22
_FIT_STYLES: tuple[dict[str, Any], ...] = (
    {"color": "0.25", "linestyle": ":", "linewidth": 2.0},
    {"color": "C4", "linestyle": (0, (5, 2)), "linewidth": 2.0},
)
"""The fitted power laws of a rate plot, in the spec's order (all usable points, then the tail)."""
_TITLE_CHARS = 66
"""Longest title line in characters, about the width of the figure at ``axes.titlesize``."""
_NOTE_CHARS = 100
"""Longest line of the masking notes under a figure (8.5 pt), about the figure's width."""
_LEGEND_INSIDE = 5
"""A legend with more entries goes below the axes, in two columns, so that it covers no data."""
_LEGEND_ROW_INCHES = 0.2
"""The figure grows by this much per row of a legend below the axes, so that the axes keep their height."""


def draw(spec: PlotSpec, claim_id: str, out_dir: str | PathLike[str]) -> ReportFigure:
    """Save ``spec`` to ``out_dir/<spec.name>.png`` (and ``.svg``) and return it as a figure of
    ``claim_id`` with the spec's caption."""
    return ReportFigure(claim_id, save_plot(spec, Path(out_dir) / f"{spec.name}.png"), spec.caption)


def save_plot(spec: PlotSpec, path: str | PathLike[str]) -> Path:
    """Draw ``spec`` and save it as PNG at ``path`` and SVG beside it; return the PNG's path.
    TypeError for anything that is not a plot spec."""
    with plt.rc_context(_STYLE):
        fig = render(spec)
        try:
            return _save(fig, path)
        finally:
            plt.close(fig)


@functools.singledispatch
def render(spec: PlotSpec) -> Figure:
    """The figure of ``spec``, drawn and laid out (module docstring); the caller closes it
    (``plt.close``). TypeError for anything that is not a plot spec."""
    kinds = ", ".join(k.__name__ for k in PLOT_SPECS)
    raise TypeError(f"spec: expected a plot spec ({kinds}), got {type(spec).__name__}")


@render.register(RatePlot)
def _render_rate(spec: RatePlot) -> Figure:
    """Each series (mean line and band) in its colour, then the bound at the first series' x, the
    fitted power laws and the claimed rate through the first series' first point."""
    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(layout="constrained")
        bands: dict[Artist, Artist] = {}
        first_x = [_draw_rate_series(ax, series, f"C{i}", notes, bands) for i, series in enumerate(spec.series)][0]
        if spec.bound is not None:
            _line(ax, first_x, np.asarray(spec.bound, dtype=float), "bound", notes, True, True,
                  color="black", linestyle="--", linewidth=1.4, label=spec.bound_label)
        for fit, style in zip(spec.fits, _FIT_STYLES * len(spec.fits)):
            _draw_fit(ax, fit, style, notes)
        if spec.reference is not None:
            _draw_reference(ax, spec.series[0], spec.reference)
        _finish(fig, ax, True, True, spec.xlabel, spec.ylabel, spec.title, notes, bands=bands)
    return fig


@render.register(BiasPlot)
def _render_bias(spec: BiasPlot) -> Figure:
    """The measured points joined in x order with the lower bound dashed, on log-log axes; with
    groups, each group in its colour (its bound dashed in the same colour), named ``group_name =
    label`` in the legend."""
    xs = np.asarray(spec.x, dtype=float)
    ys = np.asarray(spec.measured, dtype=float)
    bs = np.asarray(spec.bound, dtype=float)
    grouped = spec.groups is not None
    labels: list[Hashable] = list(spec.groups) if spec.groups is not None else [0] * len(xs)
    try:
        order: list[Hashable] = sorted(set(labels))
    except TypeError:  # ints and strings mixed: in order of appearance
        order = list(dict.fromkeys(labels))

    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(layout="constrained")
        colors = _group_colors(len(order)) if grouped else ["C0"]
        for group, color in zip(order, colors):
            sel = np.array([lab == group for lab in labels])
            name = (f"{spec.group_name} = {group}" if spec.group_name else str(group)) if grouped else "measured"
            _line(ax, xs[sel], ys[sel], name, notes, True, True,
                  color=color, marker="o", markersize=4.5, linewidth=1.2, label=name)
            bound_name = f"lower bound ({name})" if grouped else "lower bound"
            _line(ax, xs[sel], bs[sel], bound_name, notes, True, True, color=color if grouped else "black",
                  linestyle="--", linewidth=1.2, label=None if grouped else bound_name)
        proxy = [Line2D([], [], color="0.3", linestyle="--", label="lower bound (dashed)")] if grouped else []
        _finish(fig, ax, True, True, spec.xlabel, spec.ylabel, spec.title, notes, extra_handles=proxy)
    return fig


@render.register(CurvesPlot)
def _render_curves(spec: CurvesPlot) -> Figure:
    """Every curve in its colour on shared axes (log or linear as the spec says), and the x the
    check compares at as a dotted vertical line."""
    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(layout="constrained")
        for i, curve in enumerate(spec.curves):
            _line(ax, np.asarray(curve.x, dtype=float), np.asarray(curve.y, dtype=float), curve.label, notes,
                  spec.logx, spec.logy, color=f"C{i}", linewidth=1.5, label=curve.label)
        if spec.compared_at is not None and (spec.compared_at > 0 or not spec.logx):
            ax.axvline(spec.compared_at, color="0.4", linestyle=":", linewidth=1.3,
                       label=f"compared at {spec.compared_at:g}")
        _finish(fig, ax, spec.logx, spec.logy, spec.xlabel, spec.ylabel, spec.title, notes)
    return fig


def _shown(values: np.ndarray, log: bool) -> np.ndarray:
    """Mask of the values an axis can show: finite, and positive on a log axis."""
    ok = np.isfinite(values)
    return ok & (values > 0) if log else ok


def _note_masked(notes: list[str], name: str, dropped: int, log: bool) -> None:
    if dropped:
        why = "non-positive or non-finite" if log else "non-finite"
        notes.append(f"{name}: {dropped} {why} point{'s' if dropped > 1 else ''} not shown")


def _line(
    ax: Axes, x: np.ndarray, y: np.ndarray, name: str, notes: list[str], logx: bool, logy: bool,
    **style: Any,
) -> Line2D | None:
    """Plot the showable points of (x, y) in x order, noting how many were masked; the line, or
    None when no point is showable."""
    ok = _shown(x, logx) & _shown(y, logy)
    _note_masked(notes, name, int(ok.size - ok.sum()), logx or logy)
    order = np.argsort(x[ok], kind="stable")
    if not ok.any():
        return None
    (line,) = ax.plot(x[ok][order], y[ok][order], **style)
    return line


def _draw_rate_series(ax: Axes, series: RateSeries, color: str, notes: list[str],
                      bands: dict[Artist, Artist]) -> np.ndarray:
    """Draw one series of a rate plot (mean line and its band, the band recorded in ``bands`` under
    its line for a shared legend entry) and return its x."""
    xs = np.asarray(series.x, dtype=float)
    ys = np.asarray(series.mean, dtype=float)
    text = series.label
    line = _line(ax, xs, ys, text, notes, True, True, color=color, marker="o", markersize=3.5, linewidth=1.5,
                 label=text)
    if series.lo is not None and series.hi is not None:
        los = np.asarray(series.lo, dtype=float)
        his = np.asarray(series.hi, dtype=float)
        shown = _shown(xs, True) & _shown(ys, True)
        band = shown & _shown(los, True) & _shown(his, True) & (his > los)
        _note_masked(notes, f"{text} band", int((shown & (his > los)).sum() - band.sum()), True)
        order = np.argsort(xs, kind="stable")
        if band.any():
            fill = ax.fill_between(
                xs[order], np.where(band, los, np.nan)[order], np.where(band, his, np.nan)[order],
                color=color, alpha=_BAND_ALPHA, linewidth=0,
            )
            if line is not None:
                line.set_label(f"{text}, CI band")
                bands[line] = fill
    return xs


def _draw_fit(ax: Axes, fit: FittedPowerLaw, style: dict[str, Any], notes: list[str]) -> None:
    """Draw the power law exp(intercept) * x**exponent from the first to the last x it fitted,
    labelled with its slope."""
    if not (np.isfinite(fit.exponent) and np.isfinite(fit.intercept)):
        notes.append(f"{fit.label}: non-finite exponent or intercept, not shown")
        return
    xs = np.asarray(fit.x_range, dtype=float)
    ax.plot(xs, np.exp(fit.intercept) * xs**fit.exponent, label=f"{fit.label}: slope {fit.exponent:.3g}", **style)


def _draw_reference(ax: Axes, first: RateSeries, reference: ReferenceRate) -> None:
    """Draw y_0 (x / x_0)^exponent over the series' x range, through its first showable point."""
    xs = np.asarray(first.x, dtype=float)
    ys = np.asarray(first.mean, dtype=float)
    ok = _shown(xs, True) & _shown(ys, True)
    if not ok.any():
        return
    order = np.argsort(xs[ok], kind="stable")
    x_ok, y_ok = xs[ok][order], ys[ok][order]
    ax.plot(x_ok, y_ok[0] * (x_ok / x_ok[0]) ** reference.exponent, color="C3", linestyle="-.", linewidth=1.4,
            label=reference.label)


def _group_colors(n: int) -> list[Any]:
    """Distinct colours: the tab10 cycle up to 10 groups, viridis beyond."""
    if n <= 10:
        return [f"C{i}" for i in range(n)]
    return list(plt.get_cmap("viridis")(np.linspace(0.0, 0.9, n)))


def _finish(
    fig: Figure, ax: Axes, logx: bool, logy: bool, xlabel: str, ylabel: str, title: str,
    notes: list[str], *, extra_handles: Sequence[Line2D] = (), bands: Mapping[Artist, Artist] | None = None,
) -> None:
    """Scales and their ticks, labels, the wrapped title, the legend (plus ``extra_handles``; a line
    with a band in ``bands`` shares its entry with it; below the axes, the figure taller, when it is
    long), the masking notes under the axes, and tick labels thinned until none overlap."""
    bands = bands or {}
    if not ax.has_data():
        ax.set_xlim(1.0, 10.0)
        ax.set_ylim(1.0, 10.0)
        ax.text(0.5, 0.5, "no data to show", transform=ax.transAxes, ha="center", va="center", color="0.35")
    if logx:
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
    if logy:
        ax.set_yscale("log")
        log_ticks(ax.yaxis)
    ax.set_xlabel(_display_fractions(xlabel))
    ax.set_ylabel(_display_fractions(ylabel))
    ax.set_title(wrapped(title, _TITLE_CHARS))
    handles, labels = ax.get_legend_handles_labels()
    handles = [(bands[h], h) if h in bands else h for h in handles] + list(extra_handles)
    labels += [h.get_label() for h in extra_handles]
    if len(handles) > _LEGEND_INSIDE:
        fig.set_figheight(fig.get_figheight() + _LEGEND_ROW_INCHES * ((len(handles) + 1) // 2))
        fig.legend(handles, labels, loc="outside lower center", ncols=2, framealpha=0.85)
    elif handles:
        ax.legend(handles, labels, loc="best", framealpha=0.85)
    if notes:
        fig.text(0.0, 0.0, wrapped("; ".join(notes), _NOTE_CHARS), va="top", ha="left", fontsize=8.5,
                 color="0.35")
    thin_tick_labels(fig, ax)


def _display_fractions(label: str) -> str:
    """``label`` with its mathtext fractions in display style (``\\frac`` -> ``\\dfrac``): an inline
    fraction at axis-label size is too small to read."""
    return re.sub(r"\\frac(?![A-Za-z])", r"\\dfrac", label)


def _save(fig: Figure, path: str | PathLike[str]) -> Path:
    """Save the figure as PNG at ``path`` and as SVG beside it; return the PNG's path. Both are
    byte-identical for the same spec: the SVG carries no date (``metadata={"Date": None}``) and its
    ids are salted (``_STYLE``)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=_DPI, bbox_inches="tight", format="png")
    fig.savefig(out.with_suffix(".svg"), bbox_inches="tight", format="svg", metadata={"Date": None})
    return out
