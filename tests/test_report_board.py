"""The verdict board and the summary rows: which sub-check decides a claim, and every row's figures
about the one quantity it names (``reports.verdict_rows``), in the HTML board, the HTML and Markdown
summaries and the folded claim cards."""

from __future__ import annotations

import re

from markupsafe import escape

from convergence import Status, Uninformative, Verdict
from proofs_check import combine_checks
from reports.html_report import render_html
from reports.markdown import render_markdown
from reports.report_content import VERDICT_LEGEND, checks_table, headline, summary_table
from reports.report_document import report_document
from reports.verdict_rows import deciding_check, quantity_row, why_line


def _check(name: str, status: Status, measured: float, interval: tuple[float, float] | None,
           p_fail: float | None) -> tuple[str, Verdict]:
    return name, Verdict(f"c/{name}", status, measured, 0.0, interval, notes=f"{name} notes", p_fail=p_fail)


def _failing_with_passing_headline() -> Verdict:
    """ding2020.speedup's shape: the headline (first) sub-check PASSes, two later ones FAIL, the second of
    them with the smaller p-value (so it is the one Holm's step-down rejects first)."""
    return combine_checks("x.speedup", [
        _check("linear speedup", Status.PASS, -1.03, (-1.1, -0.96), 1.0),
        _check("no growth, MC", Status.FAIL, 1.12, (1.01, 1.23), 7.7e-7),
        _check("no growth, MM", Status.FAIL, 2.10, (2.07, 2.14), 7.0e-13),
    ])


def test_a_fail_whose_headline_passes_shows_the_failing_sub_check() -> None:
    v = _failing_with_passing_headline()
    assert v.status is Status.FAIL and v.measured == -1.03  # the headline alone looks like a PASS
    deciding = deciding_check(v)
    assert deciding is not None and deciding.name == "no growth, MM"  # smallest p_fail, not the first FAIL listed
    row = quantity_row(v)
    assert (row.name, row.status, row.measured, row.interval) == ("no growth, MM", Status.FAIL, 2.10, (2.07, 2.14))
    assert why_line(v, row) == "no growth, MM: measured 2.1; theoretical 0; interval [2.07, 2.14]"
    table = summary_table([v], {})
    assert table.rows[0][:6] == ("x.speedup", "FAIL", "deciding sub-check: no growth, MM", "2.1", "0", "[2.07, 2.14]")
    assert "| x.speedup | FAIL | deciding sub-check: no growth, MM | 2.1 | 0 | [2.07, 2.14] |" in render_markdown(
        report_document([v]))
    page = render_html(report_document([v]))
    assert ">no growth, MM</td>" in page and "-1.03" not in page.split('id="verdicts"')[0]  # the board
    checks = checks_table(v)
    assert [r[0] for r in checks.rows] == ["no growth, MM", "no growth, MC", "linear speedup"]  # deciding first


def test_inconclusive_is_decided_by_its_first_sub_check_that_does_not_pass() -> None:
    demoted = combine_checks("x.fig", [  # FAILs alone (p = 0.04) but not after Holm over 2 (0.08 > 0.05)
        _check("above", Status.PASS, 0.17, (0.13, 0.21), 1.0),
        _check("shuffled", Status.FAIL, -0.03, (-0.05, -0.01), 0.04),
        _check("other", Status.INCONCLUSIVE, 0.01, (-0.1, 0.1), 0.5),
    ])
    assert demoted.status is Status.INCONCLUSIVE
    row = quantity_row(demoted)
    assert row.name == "shuffled" and row.measured == -0.03
    assert why_line(demoted, row).startswith("shuffled (FAILs alone, not after Holm's correction): measured -0.03")
    trivial = Verdict("x/apart", Status.PASS, -0.1, 1.0, notes="gap <= 0")
    skipped = Uninformative.of("bound, apart", trivial, "the gap is <= 0")
    untested = combine_checks("x.bound", [], uninformative=[skipped])
    assert untested.status is Status.INCONCLUSIVE
    assert why_line(untested, quantity_row(untested)).startswith(
        "every sub-check is uninformative; bound, apart: the gap is <= 0: measured -0.1")
    passing = combine_checks("x.ok", [_check("a", Status.PASS, 0.2, (0.1, 0.3), 1.0)])
    assert deciding_check(passing) is None and quantity_row(passing).name == "a"


def test_an_interval_of_another_statistic_is_never_shown_as_the_measured_values() -> None:
    # li2020.eq8's shape: the measured E* = 50 with the interval of the paired difference of rounds that decided it
    v = combine_checks("x.eq8", [("E* interior", Verdict("x/E", Status.PASS, 50.0, 797.0, (1.63, 8.37), p_fail=1.0))])
    row = quantity_row(v)
    assert row.interval is None and row.other_interval == (1.63, 8.37)
    cells = summary_table([v], {}).rows[0]
    assert cells[3:6] == ("50", "797", "n/a: [1.63, 8.37] is of another statistic than the measured value "
                                       "(see the card's evidence)")
    assert headline(v) == ("measured 50; theoretical 797; interval [1.63, 8.37] of another statistic than the "
                           "measured value (see the card's evidence)")
    assert "interval [1.63, 8.37] is of another statistic" in why_line(v, row)
    inside = quantity_row(Verdict("y", Status.PASS, 5.0, 797.0, (1.63, 8.37)))
    assert inside.interval == (1.63, 8.37) and inside.other_interval is None


def test_the_board_lists_every_verdict_with_the_legend_and_folded_cards_and_no_script() -> None:
    verdicts = [
        _failing_with_passing_headline(),
        combine_checks("x.ok", [_check("a", Status.PASS, 0.2, (0.1, 0.3), 1.0)]),
        Verdict("x.single", Status.INCONCLUSIVE, 0.5, 1.0, (0.1, 0.9), notes="one seed"),
        Verdict("control.x", Status.FAIL, -0.01, -1.0, (-0.03, 0.01), expected=Status.FAIL),
    ]
    doc = report_document(verdicts)
    assert [r.claim_id for r in doc.board] == [v.claim_id for v in verdicts]
    page = render_html(doc)
    board = page[page.index('<section id="board"'):page.index("</section>")]
    for v in verdicts:
        assert f'href="#claim-{v.claim_id}"' in board
    assert "; one seed</td>" in board  # a single check that does not PASS: its notes say why
    assert len(re.findall(r"<tr(?: class=\"alarm-row\")?>\n<td class=\"status\">", board)) == len(verdicts)
    for _, meaning in VERDICT_LEGEND:  # each verdict defined once, on the board
        assert page.count(str(escape(meaning))) == 1 and str(escape(meaning)) in board
    assert page.count('<details class="card">') == len(verdicts) and "<details class=\"card\" open" not in page
    assert page.index('id="board"') < page.index('id="verdicts"') < page.index('<details class="card">') \
        < page.index('id="run"')
    assert not re.search(r"<script\b|\bon[a-z]+=", page, re.IGNORECASE)


def test_the_terminal_table_shows_the_same_quantity_as_the_reports() -> None:
    """The table `fedbound verify` prints takes its rows from ``quantity_row`` too: the FAIL whose
    headline passes shows its deciding sub-check's figures, named, not the headline's -1.03."""
    from reports.text_table import format_verdict_table

    table = format_verdict_table([_failing_with_passing_headline()])
    header, _, row = table.splitlines()[:3]
    assert header.split()[:4] == ["claim", "status", "quantity", "measured"]
    assert re.search(r"x\.speedup\s+FAIL\s+no growth, MM\s+2\.1\s+0\s+\[2\.07, 2\.14\]", row), row
    assert "-1.03" not in table
