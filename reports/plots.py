"""Report figures: rates, biases and generic curves, saved as PNG and SVG with the Agg backend.

Every function saves one PNG to ``path`` (creating its folder), the same figure as SVG beside it
(``path`` with the suffix ``.svg``, for papers), and returns the PNG's path. Axis labels may use
matplotlib mathtext (``$\\|\\tilde w^* - w^*\\|$``). Values that
a log axis cannot show (non-positive) and non-finite values are masked; the figure then says
how many points it left out. Empty input raises ValueError naming the argument.

* :func:`plot_rate`: measured means with confidence bands on log-log axes, an optional
  theoretical bound and an optional fitted power law (one or several series).
* :func:`plot_bias`: a measured bias against a lower bound, optionally coloured by group
  (for example the number E of local steps).
* :func:`plot_curves`: several labelled curves, for example trajectories under two schedules.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, TypedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

__all__ = ["RateSeries", "plot_bias", "plot_curves", "plot_rate"]

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
}
_BAND_ALPHA = 0.22


class _RateSeriesRequired(TypedDict):
    x: ArrayLike
    mean: ArrayLike


class RateSeries(_RateSeriesRequired, total=False):
    """One series of :func:`plot_rate`: ``x`` and ``mean`` are required; ``lo`` and ``hi``
    (the confidence band, both or neither) and ``label`` are optional."""

    lo: ArrayLike
    hi: ArrayLike
    label: str


def plot_rate(
    path: str | PathLike[str],
    x: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    lo: ArrayLike | None = None,
    hi: ArrayLike | None = None,
    *,
    series: Sequence[RateSeries] = (),
    bound: ArrayLike | None = None,
    bound_label: str = "theoretical bound",
    fit: tuple[float, float, ArrayLike] | None = None,
    reference: tuple[float, str] | None = None,
    xlabel: str,
    ylabel: str,
    title: str,
    label: str = "measured",
) -> Path:
    """Plot measured means against ``x`` on log-log axes and save the PNG to ``path``.

    The main series is ``(x, mean)`` with the optional band ``(lo, hi)`` shaded and the legend
    entry ``label``. Further series (a negative control, say) come in ``series`` and share the
    axes; ``x``/``mean`` may be left out when ``series`` holds everything.

    ``bound`` is a theoretical bound evaluated at the first series' x, drawn dashed.
    ``fit = (exponent, intercept, x_used)`` is a fitted power law
    ``log y = intercept + exponent * log x`` (natural logarithms), drawn over ``x_used`` with
    its exponent in the legend. ``reference = (exponent, label)`` draws the power law
    ``y_0 (x / x_0)^exponent`` through the first series' first point (a claimed rate, so that a
    curve that does not follow it is visibly off).
    """
    all_series: list[RateSeries] = []
    if x is not None or mean is not None:
        if x is None or mean is None:
            raise ValueError("x, mean: give both or neither (or pass series)")
        main: RateSeries = {"x": x, "mean": mean, "label": label}
        if lo is not None:
            main["lo"] = lo
        if hi is not None:
            main["hi"] = hi
        all_series.append(main)
    elif lo is not None or hi is not None:
        raise ValueError("lo, hi: given without x and mean")
    all_series.extend(series)
    if not all_series:
        raise ValueError("x: empty (give x and mean, or series)")

    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots()
        try:
            first_x: np.ndarray | None = None
            offset = 1 if x is not None else 0
            for i, entry in enumerate(all_series):
                prefix = "" if i < offset else f"series[{i - offset}]."
                sx = _draw_rate_series(ax, entry, prefix, f"C{i}", notes)
                first_x = sx if first_x is None else first_x
            if bound is not None:
                yb = _vector("bound", bound, len(first_x))
                _line(ax, first_x, yb, "bound", notes, True, True,
                      color="black", linestyle="--", linewidth=1.4, label=bound_label)
            if fit is not None:
                _draw_fit(ax, fit, notes)
            if reference is not None:
                _draw_reference(ax, all_series[0], reference)
            _finish(fig, ax, True, True, xlabel, ylabel, title, notes)
            return _save(fig, path)
        finally:
            plt.close(fig)


def plot_bias(
    path: str | PathLike[str],
    x: ArrayLike,
    measured: ArrayLike,
    bound: ArrayLike,
    *,
    xlabel: str = "(E-1) eta",
    ylabel: str = "||w~* - w*||",
    title: str,
    groups: ArrayLike | None = None,
    group_name: str | None = None,
) -> Path:
    """Plot a measured bias against ``x`` with its lower bound (dashed) on log-log axes.

    ``groups`` (one label per point, e.g. E) colours the points by group; each group's points
    are joined in x order and its bound drawn dashed in its colour. ``group_name`` prefixes
    the group labels in the legend ("E = 2").
    """
    xs = _vector("x", x)
    ys = _vector("measured", measured, len(xs))
    bs = _vector("bound", bound, len(xs))
    labels: list[Hashable] = [0] * len(xs) if groups is None else list(np.asarray(groups).tolist())
    if len(labels) != len(xs):
        raise ValueError(f"groups: length {len(labels)} != length of x {len(xs)}")
    try:
        order: list[Hashable] = sorted(set(labels))
    except TypeError:
        order = list(dict.fromkeys(labels))

    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots()
        try:
            grouped = groups is not None
            colors = _group_colors(len(order)) if grouped else ["C0"]
            for group, color in zip(order, colors):
                sel = np.array([lab == group for lab in labels])
                name = (f"{group_name} = {group}" if group_name else str(group)) if grouped else "measured"
                _line(ax, xs[sel], ys[sel], name, notes, True, True,
                      color=color, marker="o", markersize=4.5, linewidth=1.2, label=name)
                bound_name = f"lower bound ({name})" if grouped else "lower bound"
                _line(ax, xs[sel], bs[sel], bound_name, notes, True, True, color=color if grouped else "black",
                      linestyle="--", linewidth=1.2, label=None if grouped else bound_name)
            proxy = [Line2D([], [], color="0.3", linestyle="--", label="lower bound (dashed)")] if grouped else []
            _finish(fig, ax, True, True, xlabel, ylabel, title, notes, extra_handles=proxy)
            return _save(fig, path)
        finally:
            plt.close(fig)


def plot_curves(
    path: str | PathLike[str],
    curves: Sequence[tuple[ArrayLike, ArrayLike, str]],
    *,
    logx: bool,
    logy: bool,
    xlabel: str,
    ylabel: str,
    title: str,
) -> Path:
    """Plot several labelled curves ``(x, y, label)`` on shared axes and save the PNG."""
    if len(curves) == 0:
        raise ValueError("curves: empty")
    notes: list[str] = []
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots()
        try:
            for i, (cx, cy, text) in enumerate(curves):
                xs = _vector(f"curves[{i}].x", cx)
                ys = _vector(f"curves[{i}].y", cy, len(xs))
                _line(ax, xs, ys, str(text), notes, logx, logy, color=f"C{i}", linewidth=1.5, label=str(text))
            _finish(fig, ax, logx, logy, xlabel, ylabel, title, notes)
            return _save(fig, path)
        finally:
            plt.close(fig)


def _vector(name: str, values: ArrayLike, length: int | None = None) -> np.ndarray:
    """``values`` as a non-empty 1-D float array (of ``length`` if given); errors name it."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: not a numeric array ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty")
    if length is not None and arr.size != length:
        raise ValueError(f"{name}: length {arr.size} != length of x {length}")
    return arr


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


def _draw_rate_series(ax: Axes, entry: RateSeries, prefix: str, color: str, notes: list[str]) -> np.ndarray:
    """Draw one series of :func:`plot_rate` (mean line and band) and return its x.

    ``prefix`` ("" for the main series, "series[i]." otherwise) names the series in errors.
    """
    xs = _vector(f"{prefix}x", entry.get("x", ()))
    ys = _vector(f"{prefix}mean", entry.get("mean", ()), len(xs))
    text = entry.get("label") or prefix.rstrip(".") or "measured"
    _line(ax, xs, ys, text, notes, True, True, color=color, marker="o", markersize=3.5, linewidth=1.5, label=text)
    lo, hi = entry.get("lo"), entry.get("hi")
    if (lo is None) != (hi is None):
        raise ValueError(f"{prefix}lo, {prefix}hi: give both or neither")
    if lo is not None and hi is not None:
        los = _vector(f"{prefix}lo", lo, len(xs))
        his = _vector(f"{prefix}hi", hi, len(xs))
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


def _draw_fit(ax: Axes, fit: tuple[float, float, ArrayLike], notes: list[str]) -> None:
    """Draw the power law exp(intercept) * x**exponent over the fitted x."""
    exponent, intercept, x_used = fit
    xs = _vector("fit x_used", x_used)
    if not (np.isfinite(exponent) and np.isfinite(intercept)):
        notes.append("fit: non-finite exponent or intercept, not shown")
        return
    ok = _shown(xs, True)
    _note_masked(notes, "fit", int(ok.size - ok.sum()), True)
    xs = np.sort(xs[ok])
    if xs.size:
        ax.plot(xs, np.exp(intercept) * xs**exponent, color="0.25", linestyle=":", linewidth=2.0,
                label=f"fit: slope {float(exponent):.3g}")


def _draw_reference(ax: Axes, first: RateSeries, reference: tuple[float, str]) -> None:
    """Draw y_0 (x / x_0)^exponent over the series' x range, through its first showable point."""
    exponent, text = reference
    xs = np.asarray(first["x"], dtype=float)
    ys = np.asarray(first["mean"], dtype=float)
    ok = _shown(xs, True) & _shown(ys, True)
    if not ok.any():
        return
    order = np.argsort(xs[ok], kind="stable")
    x_ok, y_ok = xs[ok][order], ys[ok][order]
    ax.plot(x_ok, y_ok[0] * (x_ok / x_ok[0]) ** exponent, color="C3", linestyle="-.", linewidth=1.4, label=text)


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
    """Save the figure as PNG at ``path`` and as SVG beside it; return the PNG's path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=_DPI, bbox_inches="tight", format="png")
    fig.savefig(out.with_suffix(".svg"), bbox_inches="tight", format="svg")
    return out
