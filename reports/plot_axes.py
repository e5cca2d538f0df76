"""The axes of the report figures: log-axis ticks, tick labels that never overlap, wrapped titles.

* ``log_ticks(axis)``: on a log axis whose view holds two or more powers of ten, the major ticks
  are the powers of ten, labelled 10^k (``LogFormatterSciNotation``), and the minor ticks
  2..9 x 10^k are unlabelled (``LogLocator(subs="auto")``); a view holding fewer gets labels at
  1, 2 and 5 x 10^k, or at 1, 2, 3, 5 x 10^k, or at every k x 10^k, the first of these giving
  three labels, or, inside a factor of about three, at a few evenly spaced values
  (``MaxNLocator``), written as plain numbers (``NumberFormatter``).
* ``thin_tick_labels(fig, ax)``: after the figure's layout, measures every tick label with the
  renderer (``Text.get_window_extent``) and, while two labels of one axis overlap, drops the
  minor labels, then every other major label.
* ``wrapped(title, width)``: a title broken at spaces into lines of at most ``width`` characters,
  never inside a ``$...$`` math span.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import (
    FixedLocator,
    Formatter,
    LogFormatterSciNotation,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

__all__ = ["NumberFormatter", "log_ticks", "overlapping_tick_labels", "thin_tick_labels", "wrapped"]

_SUBS: tuple[tuple[float, ...], ...] = ((1.0,), (1.0, 2.0, 5.0), (1.0, 2.0, 3.0, 5.0),
                                        tuple(float(k) for k in range(1, 10)))
"""Major tick multiples of 10^k, coarsest first: the first giving two decades (three ticks for the
others) in the view is used."""
_PLAIN = (1e-3, 1e5)
"""Ticks all within [lo, hi) are written as plain numbers (0.002, 20000), else as m x 10^k."""
_PAD_PX = 2.0
"""Two labels closer than this (in pixels) count as overlapping."""
_MAX_THINNING = 6


class NumberFormatter(Formatter):
    """Tick labels as plain numbers (``0.02``, ``500``, four significant digits) when every tick of the
    axis lies in [1e-3, 1e5), else as m x 10^k in mathtext (``$2\\times10^{-5}$``, ``$10^{4}$``)."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return _number(x, _PLAIN[0] <= abs(x) < _PLAIN[1])

    def format_ticks(self, values: Sequence[float]) -> list[str]:
        plain = all(_PLAIN[0] <= abs(v) < _PLAIN[1] for v in values if v != 0)
        return [_number(v, plain) for v in values]


def _number(x: float, plain: bool) -> str:
    if x == 0 or not math.isfinite(x):
        return ""
    if plain:
        return np.format_float_positional(float(f"{x:.4g}"), trim="-")
    exponent = math.floor(math.log10(abs(x)))
    mantissa = float(f"{x / 10.0**exponent:.3g}")
    if mantissa == 10.0:
        mantissa, exponent = 1.0, exponent + 1
    return f"$10^{{{exponent}}}$" if mantissa == 1.0 else f"${mantissa:g}\\times10^{{{exponent}}}$"


def log_ticks(axis: Axis) -> None:
    """Set the locators and formatters of a log ``axis`` for its current view (module docstring)."""
    lo, hi = sorted(axis.get_view_interval())
    subs = next((s for s in _SUBS if len(_multiples(s, lo, hi)) >= (2 if s == _SUBS[0] else 3)), None)
    if subs == _SUBS[0]:
        axis.set_major_locator(LogLocator(base=10.0))
        axis.set_major_formatter(LogFormatterSciNotation(base=10.0, labelOnlyBase=True))
    else:
        axis.set_major_locator(LogLocator(base=10.0, subs=subs) if subs else MaxNLocator(nbins=3))
        axis.set_major_formatter(NumberFormatter())
    axis.set_minor_locator(LogLocator(base=10.0, subs="auto"))
    axis.set_minor_formatter(NullFormatter())


def _multiples(subs: Sequence[float], lo: float, hi: float) -> list[float]:
    """The values s 10^k (s in ``subs``) in [lo, hi], 0 < lo <= hi."""
    if not (0 < lo <= hi and math.isfinite(hi)):
        return []
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    values = (s * 10.0**k for k in range(first, last + 1) for s in subs)
    return [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]


def overlapping_tick_labels(fig: Figure, axis: Axis) -> list[tuple[Text, Text]]:
    """The pairs of drawn tick labels of ``axis`` (major and minor, non-empty, their tick inside the
    view) whose window extents, measured by the renderer of the last draw, overlap or lie closer
    than 2 pixels."""
    renderer = fig.canvas.get_renderer()
    labels = _drawn_labels(axis)
    boxes = [label.get_window_extent(renderer) for label in labels]
    return [(labels[i], labels[j]) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
            if boxes[i].x0 < boxes[j].x1 + _PAD_PX and boxes[j].x0 < boxes[i].x1 + _PAD_PX
            and boxes[i].y0 < boxes[j].y1 + _PAD_PX and boxes[j].y0 < boxes[i].y1 + _PAD_PX]


def _drawn_labels(axis: Axis) -> list[Text]:
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) * 1e-9
    out: list[Text] = []
    for minor in (False, True):
        locs = axis.get_minorticklocs() if minor else axis.get_majorticklocs()
        ticks = axis.get_minor_ticks(len(locs)) if minor else axis.get_major_ticks(len(locs))
        out += [t.label1 for t, loc in zip(ticks, locs)
                if lo - span <= loc <= hi + span and t.label1.get_visible() and t.label1.get_text()]
    return out


def thin_tick_labels(fig: Figure, ax: Axes) -> None:
    """Lay ``fig`` out and, for each axis of ``ax`` while two of its tick labels overlap, drop its
    minor labels, then keep every other major tick (a power of ten where there is one)."""
    for _ in range(_MAX_THINNING):
        fig.draw_without_rendering()
        crowded = [axis for axis in (ax.xaxis, ax.yaxis) if overlapping_tick_labels(fig, axis)]
        if not crowded:
            return
        for axis in crowded:
            _fewer_labels(axis)


def _fewer_labels(axis: Axis) -> None:
    """Drop the minor labels of ``axis`` if it has any, else every other major tick."""
    if not isinstance(axis.get_minor_formatter(), NullFormatter):
        axis.set_minor_formatter(NullFormatter())
        return
    lo, hi = sorted(axis.get_view_interval())
    locs = np.asarray([v for v in axis.get_majorticklocs() if lo <= v <= hi], dtype=float)
    decades = (locs > 0) & np.isclose(np.log10(np.where(locs > 0, locs, 1.0)) % 1.0, 0.0)
    phase = int(np.argmax(decades)) % 2 if decades.any() else 0
    axis.set_major_locator(FixedLocator(locs[phase::2] if locs.size > 2 else locs[:1]))


def wrapped(title: str, width: int) -> str:
    """``title`` broken at spaces into lines of at most ``width`` characters (a longer word or math
    span keeps its own line); spaces inside ``$...$`` never break."""
    protected = re.sub(r"\$[^$]*\$", lambda m: m.group(0).replace(" ", "\0"), title)
    lines = textwrap.wrap(protected, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).replace("\0", " ")
