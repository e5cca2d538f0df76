"""What the report figures draw, read back from the matplotlib figures ``save_plot`` saves: a fitted
power law spans exactly the x range its fit used, and a rate check's tail fit is drawn with its
slope; an ordering's curves are drawn against the quantity the check compares at; no two tick
labels of an axis overlap and no title runs off the figure (text extents from the renderer).

The figures are caught as ``Figure.savefig`` is called (``saved``), so the tests read what
``save_plot`` and ``fedbound run`` write, whatever builds the figure; ``tracking_plot`` and
``render`` are imported in the tests that use them, so every other test also runs on a tree
without them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from convergence import check_rate_exponent
from proofs_check.experiments import load_experiment
from proofs_check.framework.plot_specs import (
    BiasPlot,
    Curve,
    CurvesPlot,
    RatePlot,
    RateSeries,
    rate_plot,
)
from reports import run_experiment
from reports.plots import save_plot
from reports.progress import VerifyProgress

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Every figure saved while the test runs, once each, in order."""
    figures: list[Figure] = []
    original = Figure.savefig

    def record(self: Figure, *args, **kwargs):
        if self not in figures:
            figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return figures


def _legend_texts(fig: Figure) -> list[str]:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    return [t.get_text() for legend in legends if legend is not None for t in legend.get_texts()]


# ---------------------------------------------------------------- rate plots: the fits


def _kinked_rate() -> tuple[np.ndarray, object]:
    """A rate check on 3/x up to x = 100 and flat at 0.03 beyond, fitted from x = 3 on: the fit over
    all usable points has a slope between -1 and 0, its tail (the last half decade, extended to the
    last 3 points) is flat."""
    x = np.logspace(0.0, 4.0, 17)
    values = np.vstack([3.0 / np.minimum(x, 100.0)] * 2)
    return x, check_rate_exponent("kink", x, values, -1.0, tolerance=0.05, fit_from=3.0, deterministic=True)


def test_a_fitted_line_spans_the_x_range_its_fit_used(saved: list[Figure], tmp_path: Path) -> None:
    x, verdict = _kinked_rate()
    ev = verdict.evidence
    used = x[np.asarray(ev["used"])]
    tail_used = used[used >= ev["tail"]["x_from"]]
    assert used[0] > x[0] and tail_used.size < used.size  # both fits leave points out
    save_plot(rate_plot("kink", "kink", "", verdict, xlabel="x", ylabel="y"), tmp_path / "kink.png")
    (fig,) = saved
    fits = {line.get_label(): np.asarray(line.get_xdata(), dtype=float)
            for line in fig.axes[0].get_lines() if "slope" in line.get_label()}
    expected = {f"slope {ev['exponent']:.3g}": (used[0], used[-1]),
                f"slope {ev['tail']['exponent']:.3g}": (tail_used[0], tail_used[-1])}
    assert len(fits) == 2
    for slope, (first, last) in expected.items():
        ((label, xdata),) = [(label, xdata) for label, xdata in fits.items() if label.endswith(slope)]
        assert (xdata.min(), xdata.max()) == pytest.approx((first, last), rel=1e-12), label
    # the tail that decides the flattening is in the legend with its slope
    assert any(text.endswith(f"slope {ev['tail']['exponent']:.3g}") for text in _legend_texts(fig))


# ---------------------------------------------------------------- ordering plots: the compared axis


def test_an_experiment_ordering_is_drawn_against_the_rounds_it_compares_at(saved: list[Figure],
                                                                          tmp_path: Path) -> None:
    # the worked example, small: E = 1 and E = 3 compared at their last record round, 40
    text = (ROOT / "examples" / "fedavg_rate.toml").read_text(encoding="utf-8")
    text = text.replace("seeds = 16", "seeds = 2").replace("rounds = 4000", "rounds = 40")
    text = text.replace("log_spaced = 30", "log_spaced = 8").replace("local_steps = [1, 5]", "local_steps = [1, 3]")
    text = text.replace("smaller = {local_steps = 5}", "smaller = {local_steps = 3}")
    path = tmp_path / "small.toml"
    path.write_text(text[: text.index("[[checks]]")] + text[text.index('[[checks]]\nkind = "ordering"'):],
                    encoding="utf-8")
    run_experiment(load_experiment(path), tmp_path / "out", progress=VerifyProgress(["x"], enabled=False))
    (fig,) = saved
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if line.get_label().startswith("local_steps=")]
    assert [c.get_label() for c in curves] == ["local_steps=3", "local_steps=1"]
    rounds = [np.asarray(c.get_xdata(), dtype=float) for c in curves]
    # the same record rounds for both cells (their local steps differ threefold), ending at round 40
    np.testing.assert_array_equal(rounds[0], rounds[1])
    assert rounds[0][-1] == 40.0 and np.all(rounds[0] == np.round(rounds[0]))
    assert "rounds" in ax.get_xlabel()
    (marker,) = [line for line in ax.get_lines() if line.get_label().startswith("compared at")]
    assert set(np.asarray(marker.get_xdata(), dtype=float)) == {40.0}


def test_the_tracking_plot_is_drawn_against_the_block_ends_the_ratio_sums_over(saved: list[Figure],
                                                                              tmp_path: Path) -> None:
    from proofs_check.claims.ding2020.ordering import block_tracking, tracking_plot

    # C = 2 cycles of M = 3 blocks: 6 block ends j = 1..6, block j closing a visit of block (j - 1) mod 3
    gaps = np.random.default_rng(0).uniform(0.1, 1.0, size=(2, 6, 3))
    cyclic, shuffled = block_tracking(gaps, 3), block_tracking(gaps[:, ::-1], 3)
    save_plot(tracking_plot(cyclic, shuffled), tmp_path / "tracking.png")
    (fig,) = saved
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == 4
    for line in lines:
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1.0, 7.0))
    (own,) = [line for line in lines if line.get_label() == "cyclic, block just trained"]
    (others,) = [line for line in lines if line.get_label() == "cyclic, other blocks (mean)"]
    # seed 0's tracking ratio R = sum_j own_j / sum_j others_j over the drawn points
    assert np.sum(own.get_ydata()) / np.sum(others.get_ydata()) == pytest.approx(cyclic.ratio[0])


# ---------------------------------------------------------------- tick labels and titles


def _drawn_tick_labels(axis: Axis) -> Iterator[Text]:
    """The tick labels the last draw showed: non-empty, visible, their tick inside the view."""
    lo, hi = sorted(axis.get_view_interval())
    for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks()),
                        (axis.get_minorticklocs(), axis.get_minor_ticks())):
        for loc, tick in zip(locs, ticks):
            if lo - 1e-9 * (hi - lo) <= loc <= hi + 1e-9 * (hi - lo) and tick.label1.get_visible() \
                    and tick.label1.get_text():
                yield tick.label1


def _overlaps(fig: Figure) -> list[str]:
    FigureCanvasAgg(fig)  # a closed pyplot figure keeps no drawing canvas
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = list(_drawn_tick_labels(axis))
            boxes = [label.get_window_extent(renderer) for label in labels]
            found += [f"{labels[i].get_text()} / {labels[j].get_text()}"
                      for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]
    return found


def _series(x: np.ndarray, y: np.ndarray) -> RateSeries:
    return RateSeries(x, y, 0.8 * y, 1.25 * y)


# Log ranges of the report's figures whose tick labels overlapped: x = gamma + T from 175 to 4100
# (the worked example), t = 2..64 (yu2019.cnn), N T = 8..64 against a band from 0.01 to 0.1
# (yu2019_cnn_rate), gamma + T from 1.4e5 to 2e6 (li2020.thm1), M = 2..8 (ding2020.speedup).
CROWDED = [
    RatePlot("example", "rate exponent -1: local_steps=1", "", (_series(np.geomspace(175, 4100, 30),
                                                                        np.geomspace(0.4, 1e-5, 30)),), "x", "gap"),
    RatePlot("cnn_bound", "bound", "", (_series(np.geomspace(2, 64, 6), np.geomspace(0.056, 0.047, 6)),), "t",
             r"$\frac{1}{t}\sum_\tau \|\nabla f(\bar x_{\tau-1})\|^2$", bound=tuple(np.geomspace(80, 3, 6))),
    RatePlot("cnn_rate", "rate", "", (RateSeries([8, 16, 32, 64], [0.055, 0.056, 0.05, 0.047],
                                                 [0.016, 0.012, 0.018, 0.019], [0.095, 0.1, 0.082, 0.075]),),
             "NT", "grad"),
    RatePlot("counterexample", "thm1", "", (_series(np.geomspace(1.4e5, 2e6, 40), np.geomspace(0.1, 1e-7, 40)),),
             r"$\gamma + T$", "gap"),
    RatePlot("speedup", "speedup", "", (_series(np.array([2.0, 3, 4, 6, 8]), np.geomspace(1.6e-3, 3e-2, 5)),), "M",
             "gap"),
    CurvesPlot("many_decades", "Li et al. Theorem 2 (Scheme I) on the balanced (identical quadratic, N = 10) instance: "
               "gap vs gamma + T with eq. 6", "",
               tuple(Curve(np.geomspace(12, 6e4, 50), np.geomspace(10.0**k, 10.0**(k - 4), 50), f"curve {k}")
                     for k in range(-3, 5)), "t", "gap", logx=True, logy=True),
    BiasPlot("bias", "bias", "", [0.01, 0.02, 0.03, 0.05], [0.035, 0.0355, 0.036, 0.037],
             [0.028, 0.0283, 0.0286, 0.029], r"$\eta$", "share"),
]


@pytest.mark.parametrize("spec", CROWDED, ids=lambda spec: spec.name)
def test_no_two_tick_labels_overlap_and_the_title_fits(spec, saved: list[Figure], tmp_path: Path) -> None:
    save_plot(spec, tmp_path / f"{spec.name}.png")
    (fig,) = saved
    assert _overlaps(fig) == []
    ax = fig.axes[0]
    assert sum(1 for _ in _drawn_tick_labels(ax.xaxis)) >= 2 and sum(1 for _ in _drawn_tick_labels(ax.yaxis)) >= 2
    title = ax.title.get_window_extent(fig.canvas.get_renderer())
    assert fig.bbox.x0 <= title.x0 and title.x1 <= fig.bbox.x1


def test_log_tick_labels_are_decades_over_two_decades_and_plain_numbers_below() -> None:
    import matplotlib.pyplot as plt

    from reports.plots import render

    fig = render(CROWDED[0])
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        # x from 175 to 4100 holds one power of ten: labels at 1, 2, 5 x 10^k, as plain numbers
        assert [t.get_text() for t in _drawn_tick_labels(ax.xaxis)] == ["200", "500", "1000", "2000"]
        # y from 1e-5 to 0.4 holds five: labels at powers of ten only, 2..9 x 10^k ticked unlabelled
        ys = [t.get_position()[1] for t in _drawn_tick_labels(ax.yaxis)]
        assert len(ys) >= 2 and all(math.log10(y) == pytest.approx(round(math.log10(y))) for y in ys)
        assert len(ax.yaxis.get_minorticklocs()) > len(ys)
    finally:
        plt.close(fig)
