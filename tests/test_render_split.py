"""The report modules, one concept each: formatting shared by every format, the content every format
shows, and Markdown / HTML / text / JSON laid out from it; no private name crosses a module."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from convergence import Status, Tightness, Uninformative, Verdict, check_upper_bound
from proofs_check import combine_checks
from reports.formatting import claim_tightness, format_figure, format_interval, format_tightness, format_value
from reports.html_report import render_html
from reports.markdown import render_markdown
from reports.report_document import report_document
from reports.report_content import checks_table, evidence_items, meta_items
from reports.text_table import format_verdict_table
from reports.verdicts_json import write_verdicts_json

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def _claim() -> Verdict:
    x = np.array([1.0, 2.0, 4.0])
    bound = check_upper_bound("c/bound", x, np.full((1, 3), 0.5), np.ones(3), deterministic=True)
    rate = Verdict("c/rate", Status.INCONCLUSIVE, float("nan"), -1.0, None, notes="too few points")
    trivial = Verdict("c/apart", Status.PASS, -0.1, 1.0, notes="gap <= 0")
    skipped = Uninformative.of("bound, blocks apart", trivial, "the gap is <= 0")
    claim = combine_checks("c", [("explicit bound", bound), ("rate", rate)], uninformative=[skipped])
    return claim.with_evidence(constants=[{"instance": "a", "L": 2.0}])


def test_no_private_name_is_imported_across_report_modules() -> None:
    for path in sorted(REPORTS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_the_public_api_resolves_and_the_old_modules_are_gone() -> None:
    import reports

    for name in reports.__all__:
        assert getattr(reports, name) is not None
    for old in ("reports.render", "reports.figures", "reports.meta"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


@pytest.mark.parametrize(("value", "text"), [
    (0.000123, "1.23e-4"), (12345.0, "1.23e4"), (0.5, "0.5"), (-2.0, "-2"), (0.0, "0"), (float("nan"), "nan"),
    (float("-inf"), "-inf"), (None, "n/a"), (True, "yes"), (np.int64(3), "3"), (Status.PASS, "PASS"),
    ({"a": 0.25, "b": [1, 2]}, "a=0.25, b=1, 2"), ((1.0, 2.0), "1, 2"),
])
def test_format_value(value, text: str) -> None:
    # 3 significant digits; scientific below 1e-3 and from 1e4 on, the exponent without padding
    assert format_value(value) == text


def test_figures_intervals_and_tightness() -> None:
    assert format_figure(float("nan")) == "n/a" and format_figure(0.25) == "0.25"
    assert format_interval(None) == "n/a" and format_interval((0.1, float("inf"))) == "[0.1, inf]"
    assert format_interval((0.1, float("inf")), format_figure) == "[0.1, n/a]"
    assert format_tightness(Tightness(0.5, "upper bound")) == "0.5 (upper bound)"
    assert format_tightness(None) == ""
    claim = _claim()  # its headline is the bound check: the claim's own tightness
    assert claim_tightness(claim) == claim_tightness(claim, compact=True) == "0.5 (upper bound)"
    rate_first = combine_checks("d", [(c.name, c.verdict) for c in claim.checks], headline=claim.checks[1].verdict)
    assert claim_tightness(rate_first) == "explicit bound: 0.5 (upper bound)"  # each bound sub-check's
    assert claim_tightness(rate_first, compact=True) == "1 bound sub-check(s): 0.5..0.5 (upper bound)"


def test_the_content_tables_read_the_typed_sub_checks() -> None:
    claim = _claim()
    table = checks_table(claim)
    assert table.headers == ("sub-check", "status", "measured", "theoretical", "interval", "tightness", "finding")
    # the deciding (INCONCLUSIVE) sub-check first, then the PASSing one
    assert table.rows[0][:6] == ("rate", "INCONCLUSIVE", "n/a", "-1", "n/a", "n/a")
    assert table.rows[1][:6] == ("explicit bound", "PASS", "0.5", "1", "[0.5, 0.5]", "0.5 (upper bound)")
    scalars, tables = evidence_items(claim)
    assert ("tightness_label", "upper bound") in scalars
    assert tables[0].headers == ("sub-check", "status", "reason", "the data alone")  # uninformative rows first
    assert tables[0].rows == (("bound, blocks apart", "INCONCLUSIVE", "the gap is <= 0", "PASS: gap <= 0"),)
    assert tables[1].headers == ("instance", "L")
    assert checks_table(claim.checks[0].verdict) is None
    assert [k for k, _ in meta_items({"files": [], "seeds": 2, "command": "fedbound verify"})] == [
        "command", "seeds", "files"]


def test_every_format_shows_the_sub_checks_and_the_uninformative_ones() -> None:
    claim = _claim()
    md = render_markdown(report_document([claim]))
    assert "| explicit bound | PASS | 0.5 | 1 | [0.5, 0.5] | 0.5 (upper bound) |" in md
    assert "| bound, blocks apart | INCONCLUSIVE | the gap is <= 0 | PASS: gap <= 0 |" in md
    page = render_html(report_document([claim]))
    assert "<h4>Sub-checks</h4>" in page and "bound, blocks apart" in page and "the gap is &lt;= 0" in page
    text = format_verdict_table([claim])  # the row is about the deciding (INCONCLUSIVE) rate: no tightness
    assert text.splitlines()[2].split()[:3] == ["c", "INCONCLUSIVE", "rate"] and "upper bound" not in text


def test_a_report_rebuilt_from_verdicts_json_is_the_same(tmp_path: Path) -> None:
    claim = _claim()
    path = write_verdicts_json(tmp_path / "verdicts.json", [claim], {"seeds": 2})
    (stored,) = json.loads(path.read_text(encoding="utf-8"))["claims"]
    back = Verdict.from_json(stored)
    assert back.checks[0] == claim.checks[0] and back.uninformative == claim.uninformative
    assert back.checks[1].name == "rate" and back.checks[1].verdict.notes == "too few points"  # NaN != NaN
    assert render_markdown(report_document([back])) == render_markdown(report_document([claim]))
    assert render_html(report_document([back])) == render_html(report_document([claim]))
