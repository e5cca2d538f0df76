"""Reports: verdicts.json, report.md, index.html, the terminal table and the PNG plots.

The verdicts are built by hand: one of each status, a negative control that FAILs as expected
and one that PASSes although it is expected to FAIL (the alarm case).
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from convergence.verdict import Hypothesis, Status, SubCheck, Verdict
from proofs_check.framework.plot_specs import BiasPlot, Curve, CurvesPlot, FittedPowerLaw, RatePlot, RateSeries
from reports.html_report import render_html, write_html
from reports.markdown import render_markdown, write_markdown
from reports.report_document import report_document
from reports.plots import save_plot
from reports.report_files import ReportFigure
from reports.text_table import format_verdict_table
from reports.verdicts_json import write_verdicts_json

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SCRIPT_NOTE = "bound from eq. (5) <script>alert('x')</script> & a|b"
T = np.logspace(1, 4, 40)


def _verdicts() -> list[Verdict]:
    ok = Hypothesis("eta_1 <= 1/(4L)", True, "eta_1 = 0.0625 <= 1/(4L) = 0.0625")
    unmet = Hypothesis("I <= T^(1/4)/N^(3/4)", False, "I = 10 > T^(1/4)/N^(3/4) = 0.56")
    return [
        Verdict("li2020.thm1", Status.PASS, -1.02, -1.0, (-1.08, -0.97), (ok,), "decays as 1/T",
                {"T": T, "gap": 3.0 / T, "bound": 5.0 / T, "fit": {"exponent": -1.02, "n_seeds": 8}}),
        Verdict("yu2019.thm1", Status.FAIL, 1.7, 1.0, (1.4, 2.1), (ok, unmet), SCRIPT_NOTE,
                {"ratio": [0.5, 1.7, 1.2], "case": ["a|b", "c", "d"]}),
        Verdict("ding2020.thm1", Status.INCONCLUSIVE, math.nan, -0.5, (math.nan, math.inf), (),
                "too few points", {"values": [1.0, math.nan], "per_seed": [[1.0, 2.0], [3.0, 4.0]]}),
        Verdict("control.constant-step", Status.FAIL, 0.0, -1.0, None, (ok,), "",
                {}, expected=Status.FAIL),
        Verdict("control.no-decay", Status.PASS, -1.1, -1.0, (-1.2, -1.0), (ok,), "",
                {}, expected=Status.FAIL),
    ]


META = {"command": "fedbound verify --all", "seeds": [0, 1, 2], "wall_time_s": 12.5,
        "versions": {"numpy": np.__version__}, "machine": "test-box", "tolerance": math.nan}


@pytest.fixture()
def figure(tmp_path: Path) -> ReportFigure:
    path = save_plot(CurvesPlot("rate", "rate", "", (Curve(T, 3.0 / T, "gap"),), xlabel="T", ylabel="gap", logx=True,
                                logy=True), tmp_path / "figs" / "rate.png")
    return ReportFigure("li2020.thm1", path, "gap against T, 8 seeds")


def _strict_load(path: Path) -> dict:
    def reject(token: str) -> None:
        raise AssertionError(f"non-JSON constant {token} in {path.name}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=reject)


def test_json_round_trips_the_verdicts_with_nan_as_null(tmp_path: Path) -> None:
    verdicts = _verdicts()
    out = write_verdicts_json(tmp_path / "verdicts.json", verdicts, META)
    doc = _strict_load(out)
    assert set(doc) == {"fedbound_version", "created", "meta", "claims", "power"}
    assert doc["power"] == []  # the power self-test's rows, written only by verify --power
    assert doc["meta"]["seeds"] == [0, 1, 2] and doc["meta"]["tolerance"] is None
    assert [c["claim_id"] for c in doc["claims"]] == [v.claim_id for v in verdicts]
    for claim, v in zip(doc["claims"], verdicts):
        assert Status(claim["status"]) is v.status
        assert claim["expected"] == (v.expected.value if v.expected else None)
        assert [(h["name"], h["met"], h["detail"]) for h in claim["hypotheses"]] == [
            (h.name, h.met, h.detail) for h in v.hypotheses]
        assert claim["hypotheses_met"] is v.hypotheses_met
    thm1, _, ding = doc["claims"][:3]
    assert thm1["measured"] == -1.02 and thm1["interval"] == [-1.08, -0.97]
    assert thm1["evidence"]["T"] == pytest.approx(T.tolist())
    assert ding["measured"] is None and ding["interval"] == [None, None]
    assert ding["evidence"]["values"] == [1.0, None]
    assert doc["claims"][3]["interval"] is None
    assert [p.name for p in tmp_path.iterdir()] == ["verdicts.json"]


def test_json_write_is_atomic_and_names_a_bad_field(tmp_path: Path) -> None:
    path = write_verdicts_json(tmp_path / "verdicts.json", _verdicts(), META)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=r"meta\.bad"):
        write_verdicts_json(path, _verdicts(), {**META, "bad": object()})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdicts.json"]


def test_markdown_lists_claims_controls_and_the_alarm(tmp_path: Path, figure: ReportFigure) -> None:
    out = write_markdown(tmp_path / "report.md", report_document(_verdicts(), [figure], META))
    text = out.read_text(encoding="utf-8")
    for v in _verdicts():
        assert v.claim_id in text
    alarm = text.index("ALARM")
    assert alarm < text.index("## Verdicts"), "the alarm must come before the tables"
    assert "control.no-decay" in text[alarm:text.index("## Run")]
    assert "negative control: expected FAIL, got FAIL (as expected)" in text
    assert "negative control: expected FAIL, got PASS (NOT as expected)" in text
    assert "## Negative controls" in text
    assert "**UNMET**: `I <= T^(1/4)/N^(3/4)`: I = 10 > T^(1/4)/N^(3/4) = 0.56" in text
    assert "](figs/rate.png)" in text and "*gap against T, 8 seeds*" in text
    assert "15 of 40 rows shown" in text
    assert "| li2020.thm1 | PASS | headline figure | -1.02 | -1 | [-1.08, -0.97] | yes (1/1) |" in text
    assert "a\\|b" in text, "a pipe in a table cell must be escaped"
    assert "fedbound verify --all" in text and "numpy=" in text


def test_markdown_without_alarm_has_none() -> None:
    text = render_markdown(report_document([v for v in _verdicts() if v.claim_id != "control.no-decay"]))
    assert "ALARM" not in text and "all as expected" in text


def test_html_is_self_contained_escaped_and_badged(tmp_path: Path, figure: ReportFigure) -> None:
    out = write_html(tmp_path / "index.html", report_document(_verdicts(), [figure], META))
    page = out.read_text(encoding="utf-8")
    assert "data:image/png;base64," + base64.b64encode(figure.path.read_bytes()).decode() in page
    assert not re.search(r"https?://", page)
    assert not re.search(r"<(script|link|iframe)\b", page, re.IGNORECASE)
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; a|b" in page  # autoescaped by Jinja2 (MarkupSafe)
    for status in ("pass", "fail", "inconclusive"):
        assert f'<span class="badge {status}">{status.upper()}</span>' in page
    assert 'class="alarm"' in page and "NOT as expected" in page
    assert "UNMET" in page


def test_html_names_a_missing_figure(tmp_path: Path) -> None:
    missing = ReportFigure("li2020.thm1", tmp_path / "nope.png", "")
    with pytest.raises(FileNotFoundError, match="li2020.thm1"):
        render_html(report_document(_verdicts(), [missing]))


def test_inputs_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="figures"):
        render_markdown(report_document(_verdicts(), [ReportFigure("unknown.claim", tmp_path / "a.png")]))
    with pytest.raises(ValueError, match="duplicate"):
        render_html(report_document(_verdicts() * 2))
    with pytest.raises(ValueError, match="path"):
        ReportFigure("li2020.thm1", tmp_path / "a.svg")


def test_text_table_lists_every_claim_in_fixed_columns() -> None:
    verdicts = _verdicts() + [Verdict("tiny", Status.PASS, 1.23456e-7, 25000.0)]
    table = format_verdict_table(verdicts)
    assert "\x1b" not in table
    lines = table.splitlines()
    for v in verdicts:
        assert any(line.startswith(v.claim_id + " ") for line in lines[2:])
    status_col = lines[0].index("status")
    assert all(line[status_col:].split()[0] in Status.__members__ for line in lines[2:2 + len(verdicts)])
    assert "1.23e-7" in table and "2.5e4" in table
    assert "ALARM: control.no-decay" in table
    assert format_verdict_table([]) == "no verdicts"


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 1000 and data[:8] == PNG_MAGIC


def test_plots_write_png_even_with_non_positive_values(tmp_path: Path) -> None:
    mean = 3.0 / T
    mean[0], mean[5] = 0.0, -1.0
    lo, hi = 0.8 * mean, 1.25 * mean
    lo[3] = math.nan
    control = RateSeries(T, 0.05 * T**-0.2, 0.04 * T**-0.2, 0.06 * T**-0.2, "negative control")
    main = RateSeries(T, mean, lo, hi)
    _assert_png(save_plot(RatePlot("rate", "rate", "", (main, control), "T", "gap", bound=5.0 / T,
                                   fits=(FittedPowerLaw(-1.02, math.log(3.0), (T[10], T[-1])),)),
                          tmp_path / "rate.png"))
    _assert_png(save_plot(RatePlot("series", "s", "", (control,), "T", "gap"), tmp_path / "series.png"))
    e = np.repeat([1, 2, 5], 4)
    x = (e - 1) * np.tile([1e-3, 3e-3, 1e-2, 3e-2], 3)
    _assert_png(save_plot(BiasPlot("bias", "bias", "", x, 0.1 * x, 0.05 * x, "x", "bias", groups=tuple(e.tolist()),
                                   group_name="E"), tmp_path / "bias.png"))
    _assert_png(save_plot(BiasPlot("bias1", "bias", "", x, 0.1 * x, 0.05 * x, "x", "bias"), tmp_path / "bias1.png"))
    steps = np.arange(50.0)
    curves = (Curve(steps, 1 / (1 + steps), "decaying"), Curve(steps, 0 * steps, "zero"))
    _assert_png(save_plot(CurvesPlot("curves", "schedules", "", curves, "round", "gap", logx=True, logy=True),
                          tmp_path / "curves.png"))
    _assert_png(save_plot(CurvesPlot("none", "nothing positive", "", (Curve(steps, -1 - steps, "negative"),), "round",
                                     "gap", logx=False, logy=True), tmp_path / "none.png"))


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda p: save_plot(RatePlot("r", "t", "", (RateSeries([], []),), "T", "y"), p), "x"),
        (lambda p: save_plot(RatePlot("r", "t", "", (), "T", "y"), p), "series"),
        (lambda p: save_plot(RatePlot("r", "t", "", (RateSeries([1, 2], [1, 2], [1], [2, 3]),), "T", "y"), p), "lo"),
        (lambda p: save_plot(RatePlot("r", "t", "", (RateSeries([1], []),), "T", "y"), p), "mean"),
        (lambda p: save_plot(BiasPlot("b", "t", "", [1.0], [], [1.0], "x", "y"), p), "measured"),
        (lambda p: save_plot(BiasPlot("b", "t", "", [1.0], [1.0], [1.0], "x", "y", groups=(1, 2)), p), "groups"),
        (lambda p: save_plot(CurvesPlot("c", "t", "", (), "x", "y", logx=True, logy=True), p), "curves"),
        (lambda p: save_plot(CurvesPlot("c", "t", "", (Curve([], [], "a"),), "x", "y", logx=True, logy=True), p), "x"),
    ],
)
def test_plots_reject_empty_or_mismatched_input(tmp_path: Path, call, argument: str) -> None:
    # a plot spec checks its fields when it is built, so nothing is drawn
    with pytest.raises(ValueError, match=f"^{argument}"):
        call(tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_sub_checks_are_rendered_as_a_table(tmp_path) -> None:
    from proofs_check import combine_checks

    passing = Verdict("c/one", Status.PASS, 0.5, 1.0, (0.4, 0.6), notes="first finding")
    failing = Verdict("c/two", Status.FAIL, 2.0, 1.0, (1.8, 2.2), notes="second finding")
    claim = combine_checks("c", [("bound", passing), ("rate", failing)], headline=failing)
    assert claim.status is Status.FAIL  # one failing sub-check fails the claim
    md = render_markdown(report_document([claim]))
    assert "**Sub-checks**" in md and "| rate | FAIL |" in md and "second finding" in md
    assert "Sub-checks" in render_html(report_document([claim]))


def test_verdict_to_frame_and_html_show_the_sub_checks() -> None:
    from convergence import Hypothesis, Status, Verdict

    sub = Verdict("x/sub", Status.FAIL, 2.0, 1.0, (1.5, 2.5), notes="bound broken")
    top = Verdict("x", Status.FAIL, 2.0, 1.0, (1.5, 2.5), (Hypothesis("h", False, "a > b"),),
                  checks=(SubCheck("bound", sub),))
    frame = top.to_frame()
    assert list(frame["check"]) == ["x", "bound"]
    assert list(frame["status"]) == ["FAIL", "FAIL"] and frame["hi"].iloc[1] == 2.5
    page = top._repr_html_()
    assert "UNMET" in page and "bound" in page and "FAIL" in page
    assert Verdict.from_json(top.to_json()) == top
