"""Plot specs: one frozen dataclass per kind of figure, validated once when built, with a JSON form
that round-trips; the reports draw them by their type."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from convergence import Status, Verdict, check_rate_exponent, check_upper_bound
from proofs_check import ClaimResult
from proofs_check.framework.plot_specs import (
    BiasPlot,
    Curve,
    CurvesPlot,
    FittedPowerLaw,
    RatePlot,
    RateSeries,
    ReferenceRate,
    plot_spec_from_json,
    rate_plot,
)
from reports.plots import draw, save_plot

X = np.array([1.0, 10.0, 100.0, 1000.0])


def _rate() -> RatePlot:
    series = RateSeries(X, 2.0 / X, 1.5 / X, 2.5 / X, "measured (mean over seeds)")
    return RatePlot("rate", "gap vs T", "caption", (series,), "$T$", "gap", bound=5.0 / X,
                    fits=(FittedPowerLaw(-1.0, math.log(2.0), (X[1], X[-1]), "fit"),),
                    reference=ReferenceRate(-1.0, "claimed"))


def _bias() -> BiasPlot:
    return BiasPlot("bias", "bias vs (E-1) eta", "", [0.01, 0.02, 0.03, 0.04], [0.1, 0.2, 0.3, 0.4],
                    [0.05, 0.1, 0.15, 0.2], r"$(E-1)\,\eta$", "bias", groups=(2, 2, 5, 5), group_name="E")


def _curves() -> CurvesPlot:
    return CurvesPlot("curves", "two curves", "", (Curve([1, 2, 3], [3.0, 2.0, 1.0], "down"),
                                                   Curve([1, 2, 3], [1.0, 1.0, 1.0], "flat")), "t", "y",
                      logx=False, logy=True, compared_at=3)


@pytest.mark.parametrize("make", [_rate, _bias, _curves])
def test_every_kind_round_trips_through_strict_json(make) -> None:
    spec = make()
    data = json.loads(json.dumps(spec.to_json(), allow_nan=False))
    assert data["kind"] == type(spec).kind and data["name"] == spec.name
    assert plot_spec_from_json(data) == spec


def test_numbers_are_float_tuples_and_nan_survives_json_as_null() -> None:
    spec = RatePlot("r", "t", "", (RateSeries([1, 2], [np.float64(0.5), math.nan]),), "x", "y")
    assert spec.series[0].x == (1.0, 2.0) and isinstance(spec.series[0].x[0], float)
    data = json.loads(json.dumps(spec.to_json(), allow_nan=False))
    assert data["series"][0]["mean"] == [0.5, None]
    assert math.isnan(plot_spec_from_json(data).series[0].mean[1])


@pytest.mark.parametrize(("make", "field"), [
    (lambda: RateSeries([1.0, 2.0], [1.0]), "mean: length 1 != length of x 2"),
    (lambda: RateSeries([], []), "x: empty"),
    (lambda: RateSeries([1.0], [1.0], lo=[0.5]), "lo, hi: give both or neither"),
    (lambda: RateSeries([1.0], [True]), r"mean\[0\]: expected a number"),
    (lambda: RateSeries([1.0], ["1"]), r"mean\[0\]: expected a number"),
    (lambda: RateSeries("12", [1.0, 2.0]), "x: expected a sequence"),
    (lambda: RateSeries([[1.0, 2.0]], [1.0]), r"x\[0\]: expected a number"),
    (lambda: RateSeries([1.0], [1.0], label=""), "label: empty"),
    (lambda: RatePlot("r", "t", "", (), "x", "y"), "series: a rate plot needs"),
    (lambda: RatePlot("r", "t", "", ({"x": [1.0], "mean": [1.0]},), "x", "y"), r"series\[0\]: expected a RateSeries"),
    (lambda: RatePlot("r", "t", "", (RateSeries([1.0, 2.0], [1.0, 1.0]),), "x", "y", bound=[1.0]),
     "bound: length 1 != length of x 2"),
    (lambda: RatePlot("r", "t", "", (RateSeries([1.0], [1.0]),), "x", "y", fits=((-1.0, 0.0, [1.0]),)),
     r"fits\[0\]: expected a FittedPowerLaw"),
    (lambda: FittedPowerLaw(-1.0, 0.0, (10.0, 1.0)), r"x_range: expected \(first, last\) with 0 < first < last"),
    (lambda: FittedPowerLaw(-1.0, 0.0, (1.0, 2.0, 3.0)), "x_range: expected"),
    (lambda: CurvesPlot("c", "t", "", (Curve([1.0], [1.0], "a"),), "x", "y", logx=True, logy=True,
                        compared_at=math.nan), "compared_at: must be finite"),
    (lambda: RatePlot("a/b", "t", "", (RateSeries([1.0], [1.0]),), "x", "y"), "name: 'a/b' is not a file name"),
    (lambda: ReferenceRate(math.inf, "claimed"), "exponent: must be finite"),
    (lambda: BiasPlot("b", "t", "", [1.0], [1.0], [1.0], "x", "y", groups=(1, 2)), "groups: length 2"),
    (lambda: BiasPlot("b", "t", "", [1.0], [1.0], [1.0], "x", "y", groups=(True,)), "groups: labels are ints"),
    (lambda: BiasPlot("b", "t", "", [1.0], [1.0], [1.0], "x", "y", group_name="E"), "group_name: given without"),
    (lambda: CurvesPlot("c", "t", "", (), "x", "y", logx=True, logy=True), "curves: empty"),
    (lambda: CurvesPlot("c", "t", "", (Curve([1.0], [1.0], "a"),), "x", "y", logx=1, logy=True), "logx"),
    (lambda: plot_spec_from_json({"kind": "pie"}), "kind: expected one of rate, bias, curves"),
])
def test_a_bad_field_is_named_when_the_spec_is_built(make, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}"):
        make()


def test_rate_plot_reads_a_rate_check_and_a_bound_check() -> None:
    values = 3.0 / X**np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    rate = check_rate_exponent("r", X, values, -1.0, tolerance=0.05, fit_from=10.0, deterministic=True)
    spec = rate_plot("r", "t", "", rate, xlabel="T", ylabel="gap", reference=ReferenceRate(-1.0, "claimed"))
    assert spec.series[0].x == tuple(X) and spec.series[0].mean == tuple(rate.evidence["mean"])
    # the fit is drawn over the points it used (x >= fit_from), log y = log 3 - log x; its tail
    # (the last 3 usable points) fitted all of them, so it is the same fit and not drawn twice
    (fit,) = spec.fits
    assert fit.x_range == (10.0, 1000.0) and rate.evidence["tail"]["n_points"] == 3
    assert fit.exponent == pytest.approx(-1.0) and fit.intercept == pytest.approx(math.log(3.0))
    bound = check_upper_bound("b", X, values, 4.0 / X, deterministic=True)
    spec = rate_plot("b", "t", "", bound, xlabel="T", ylabel="gap", bound=bound.evidence["bound"])
    assert spec.fits == () and spec.bound == tuple(4.0 / X) and spec.series[0].lo == bound.evidence["lo"]


def test_rate_plot_carries_the_tail_fit_the_check_decides_on() -> None:
    # exactly 3/x up to x = 100, then flat at 0.03: the tail (the last half decade, x >= 10^3.5,
    # holds 2 points, so it is extended to the last 3) fits slope 0 over x in [10^3, 10^4]
    x = np.logspace(0.0, 4.0, 9)
    values = np.vstack([3.0 / np.minimum(x, 100.0)] * 2)
    rate = check_rate_exponent("r", x, values, -1.0, tolerance=0.05, deterministic=True)
    whole, tail = rate_plot("r", "t", "", rate, xlabel="T", ylabel="gap").fits
    assert whole.x_range == (1.0, 1e4) and whole.exponent == rate.measured
    assert tail.x_range == pytest.approx((10**3.0, 1e4)) and tail.exponent == pytest.approx(0.0, abs=1e-12)
    assert tail.intercept == pytest.approx(math.log(0.03)) and "tail" in tail.label


def test_claim_results_hold_plot_specs_only() -> None:
    v = Verdict("c", Status.PASS, 1.0, 1.0)
    assert ClaimResult(v, [_curves()]).plots == (_curves(),)
    with pytest.raises(ValueError, match=r"^plots\[0\]: expected a plot spec"):
        ClaimResult(v, ({"kind": "curves"},))


def test_draw_dispatches_on_the_spec_type(tmp_path: Path) -> None:
    for spec in (_rate(), _bias(), _curves()):
        figure = draw(spec, "claim", tmp_path)
        assert figure.path == tmp_path / f"{spec.name}.png" and figure.caption == spec.caption
        assert figure.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.path.with_suffix(".svg").is_file()
    with pytest.raises(TypeError, match="^spec: expected a plot spec"):
        save_plot({"kind": "rate"}, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("make", [_rate, _bias, _curves])
def test_a_figure_drawn_twice_is_the_same_bytes(make, tmp_path: Path) -> None:
    """Determinism of the report's files: matplotlib writes the SVG's date and random element ids
    unless told otherwise (``reports.plots._save``); the PNG has neither."""
    first = draw(make(), "claim", tmp_path / "a").path
    second = draw(make(), "claim", tmp_path / "b").path
    assert first.read_bytes() == second.read_bytes()
    svg = first.with_suffix(".svg").read_bytes()
    assert svg == second.with_suffix(".svg").read_bytes()
    assert b"<dc:date>" not in svg
