"""Report figures: draw a plot spec (``proofs_check.framework.plot_specs``) as PNG and SVG with the Agg backend.

``save_plot(spec, path)`` dispatches on the spec's class (``RatePlot``, ``BiasPlot``,
``CurvesPlot``), saves one PNG to ``path`` (creating its folder) and the same figure as SVG beside
it (``path`` with the suffix ``.svg``, for papers), and returns the PNG's path; ``draw`` saves a
claim's spec into the report folder as ``<spec.name>.png`` and returns it as a ``ReportFigure``.
The specs validated their fields when they were built; here values that an axis cannot show
(non-positive on a log axis, non-finite) are masked, and the figure says how many points it left
out. Axis labels may use matplotlib mathtext (``$\\|\\tilde w^* - w^*\\|$``).

* ``RatePlot``: measured means with confidence bands on log-log axes, an optional theoretical
  bound (dashed), fitted power law (dotted) and claimed rate (dash-dotted).
* ``BiasPlot``: a measured bias against its lower bound, optionally coloured by group (for
  example the number E of local steps).
* ``CurvesPlot``: several labelled curves, for example trajectories under two schedules.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
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

from .report_files import ReportFigure  # noqa: E402

__all__ = ["draw", "save_plot"]

_DPI = 110
_STYLE: dict[str, Any] = {
    "figure.figsize": (6.4, 4.4),
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


def draw(spec: PlotSpec, claim_id: str, out_dir: str | PathLike[str]) -> ReportFigure:
    """Save ``spec`` to ``out_dir/<spec.name>.png`` (and ``.svg``) and return it as a figure of
    ``claim_id`` with the spec's caption."""
    return ReportFigure(claim_id, save_plot(spec, Path(out_dir) / f"{spec.name}.png"), spec.caption)


@functools.singledispatch
def save_plot(spec: PlotSpec, path: str | PathLike[str]) -> Path:
    """Draw ``spec`` and save it as PNG at ``path`` and SVG beside it; return the PNG's path.
    TypeError for anything that is not a plot spec."""
    kinds = ", ".join(k.__name__ for k in PLOT_SPECS)
    raise TypeError(f"spec: expected a plot spec ({kinds}), got {type(spec).__name__}")


@save_plot.register(RatePlot)
def _save_rate(spec: RatePlot, path: str | PathLike[str]) -> Path:
    """Each series (mean line and band) in its colour, then the bound at the first series' x, the
    fitted power law and the claimed rate through the first series' first point."""
    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots()
        try:
            first_x = [_draw_rate_series(ax, series, f"C{i}", notes) for i, series in enumerate(spec.series)][0]
            if spec.bound is not None:
                _line(ax, first_x, np.asarray(spec.bound, dtype=float), "bound", notes, True, True,
                      color="black", linestyle="--", linewidth=1.4, label=spec.bound_label)
            if spec.fit is not None:
                _draw_fit(ax, spec.fit, notes)
            if spec.reference is not None:
                _draw_reference(ax, spec.series[0], spec.reference)
            _finish(fig, ax, True, True, spec.xlabel, spec.ylabel, spec.title, notes)
            return _save(fig, path)
        finally:
            plt.close(fig)


@save_plot.register(BiasPlot)
def _save_bias(spec: BiasPlot, path: str | PathLike[str]) -> Path:
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
        fig, ax = plt.subplots()
        try:
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
            return _save(fig, path)
        finally:
            plt.close(fig)


@save_plot.register(CurvesPlot)
def _save_curves(spec: CurvesPlot, path: str | PathLike[str]) -> Path:
    """Every curve in its colour on shared axes (log or linear as the spec says)."""
    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots()
        try:
            for i, curve in enumerate(spec.curves):
                _line(ax, np.asarray(curve.x, dtype=float), np.asarray(curve.y, dtype=float), curve.label, notes,
                      spec.logx, spec.logy, color=f"C{i}", linewidth=1.5, label=curve.label)
            _finish(fig, ax, spec.logx, spec.logy, spec.xlabel, spec.ylabel, spec.title, notes)
            return _save(fig, path)
        finally:
            plt.close(fig)


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
) -> None:
    """Plot the showable points of (x, y) in x order, noting how many were masked."""
    ok = _shown(x, logx) & _shown(y, logy)
    _note_masked(notes, name, int(ok.size - ok.sum()), logx or logy)
    order = np.argsort(x[ok], kind="stable")
    if ok.any():
        ax.plot(x[ok][order], y[ok][order], **style)


def _draw_rate_series(ax: Axes, series: RateSeries, color: str, notes: list[str]) -> np.ndarray:
    """Draw one series of a rate plot (mean line and its band) and return its x."""
    xs = np.asarray(series.x, dtype=float)
    ys = np.asarray(series.mean, dtype=float)
    text = series.label
    _line(ax, xs, ys, text, notes, True, True, color=color, marker="o", markersize=3.5, linewidth=1.5, label=text)
    if series.lo is not None and series.hi is not None:
        los = np.asarray(series.lo, dtype=float)
        his = np.asarray(series.hi, dtype=float)
        shown = _shown(xs, True) & _shown(ys, True)
        band = shown & _shown(los, True) & _shown(his, True) & (his > los)
        _note_masked(notes, f"{text} band", int((shown & (his > los)).sum() - band.sum()), True)
        order = np.argsort(xs, kind="stable")
        if band.any():
            ax.fill_between(
                xs[order], np.where(band, los, np.nan)[order], np.where(band, his, np.nan)[order],
                color=color, alpha=_BAND_ALPHA, linewidth=0, label=f"{text} (CI)",
            )
    return xs


def _draw_fit(ax: Axes, fit: FittedPowerLaw, notes: list[str]) -> None:
    """Draw the power law exp(intercept) * x**exponent over the fitted x."""
    xs = np.asarray(fit.x_used, dtype=float)
    if not (np.isfinite(fit.exponent) and np.isfinite(fit.intercept)):
        notes.append("fit: non-finite exponent or intercept, not shown")
        return
    ok = _shown(xs, True)
    _note_masked(notes, "fit", int(ok.size - ok.sum()), True)
    xs = np.sort(xs[ok])
    if xs.size:
        ax.plot(xs, np.exp(fit.intercept) * xs**fit.exponent, color="0.25", linestyle=":", linewidth=2.0,
                label=f"fit: slope {fit.exponent:.3g}")


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
    notes: list[str], *, extra_handles: Sequence[Line2D] = (),
) -> None:
    """Scales, labels, legend (plus ``extra_handles``), and the masking notes under the axes."""
    if not ax.has_data():
        ax.set_xlim(1.0, 10.0)
        ax.set_ylim(1.0, 10.0)
        ax.text(0.5, 0.5, "no data to show", transform=ax.transAxes, ha="center", va="center", color="0.35")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    handles = [*ax.get_legend_handles_labels()[0], *extra_handles]
    if handles:
        ax.legend(handles=handles, loc="best", framealpha=0.85)
    if notes:
        ax.annotate("; ".join(notes), xy=(0.0, 0.0), xycoords="axes fraction", xytext=(0, -44),
                    textcoords="offset points", va="top", ha="left", fontsize=8.5, color="0.35",
                    wrap=True)
    fig.tight_layout()


def _save(fig: Figure, path: str | PathLike[str]) -> Path:
    """Save the figure as PNG at ``path`` and as SVG beside it; return the PNG's path. Both are
    byte-identical for the same spec: the SVG carries no date (``metadata={"Date": None}``) and its
    ids are salted (``_STYLE``)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=_DPI, bbox_inches="tight", format="png")
    fig.savefig(out.with_suffix(".svg"), bbox_inches="tight", format="svg", metadata={"Date": None})
    return out
