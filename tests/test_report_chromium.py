"""The HTML report laid out in headless Chromium at 1400 px (``headless_chromium``): the verdict board of
every registered claim fits the first 900 px screen, the page with its cards folded is at most 15
screens, nothing overflows the viewport horizontally (with a power table of long rows, and with a
card opened by following its board link).

The report is built from hand-made verdicts (three sub-checks each, with long names and the claims'
own metadata: statements, what "measured" is, references) and one small figure per claim, so the
test renders in well under a second and Chromium's two runs take a few seconds. CI installs
Debian's ``chromium`` (``.ci/run``); elsewhere the test is skipped without it, naming the package."""

from __future__ import annotations

from pathlib import Path

import pytest
from headless_chromium import chromium_available, measure_page
from PIL import Image

from convergence import Status, Tightness, Verdict
from proofs_check import combine_checks
from proofs_check.framework.registry import CLAIMS
from reports.html_report import write_html
from reports.power import PowerRow
from reports.report_document import ReportDocument, report_document
from reports.report_files import ReportFigure

pytestmark = pytest.mark.skipif(not chromium_available(),
                                reason="needs headless Chromium: install Debian's package `chromium`")

WIDTH, SCREEN = 1400, 900


def _claim_verdict(claim_id: str, status: Status, expected: Status | None) -> Verdict:
    """A claim of three sub-checks with long names, the last deciding a FAIL or INCONCLUSIVE."""
    name = "explicit bound (eq. 6), scheme_ii, K = 1, balanced (identical quadratic, N = 10), every record point"
    bound = Verdict(f"{claim_id}/a", Status.PASS, 0.0311, 1.0, (0.0208, 0.0362), p_fail=1.0,
                    tightness=Tightness(0.0311, "upper bound"))
    rate = Verdict(f"{claim_id}/b", Status.PASS, -1.02, -1.0, (-1.05, -0.986), p_fail=1.0)
    last = Verdict(f"{claim_id}/c", status, 2.10 if status is Status.FAIL else -0.03, 0.0, (-0.0807, 0.0207)
                   if status is not Status.FAIL else (2.07, 2.14), p_fail=1e-12 if status is Status.FAIL else 0.3,
                   notes="paired t over seeds at level 0.95; " * 4)
    return combine_checks(claim_id, [(name, bound), ("rate exponent <= -1 with minibatch noise, Scheme II", rate),
                                     ("the paper's sentence: no growth in M at fixed T, MM-PSGD", last)],
                          expected=expected)


def _document(tmp_path: Path) -> tuple[ReportDocument, int]:
    png = tmp_path / "plot.png"
    Image.new("RGB", (320, 240), (240, 244, 248)).save(png)
    statuses = [Status.FAIL] + [Status.INCONCLUSIVE] * 5 + [Status.PASS] * 21  # the default quick report's counts
    claims = [cid for cid in CLAIMS if not cid.startswith("control.")]
    controls = [cid for cid in CLAIMS if cid.startswith("control.")]
    verdicts = [_claim_verdict(cid, statuses[i % len(statuses)], None) for i, cid in enumerate(claims)]
    verdicts += [_claim_verdict(cid, Status.FAIL, Status.FAIL) for cid in controls]
    figures = [ReportFigure(v.claim_id, png, "gap against T, 4 seeds") for v in verdicts]
    power = [PowerRow(v.claim_id, f"{v.claim_id}[bound_scale=0.2,exponent_shift=0.5]", "bound x 0.2",
                      "the explicit bound scaled by 0.2, below the measured gap at every record point " * 3,
                      Status.FAIL, Status.FAIL, 5.0, 1.0, (4.2, 5.9), {"bound_scale": 0.2, "exponent_shift": 0.5},
                      Tightness(5.0, "violated"), planted_status=Status.FAIL, sub_check="explicit bound")
             for v in verdicts[:6]]
    meta = {"command": "fedbound verify --quick", "files": [f"figure_{i:02d}_with_a_long_name.png" for i in range(45)]}
    return report_document(verdicts, figures, meta, claims=dict(CLAIMS), power=power), len(verdicts)


def test_the_board_fits_one_screen_and_the_folded_page_fifteen(tmp_path: Path) -> None:
    doc, n = _document(tmp_path)
    assert len(doc.board) == n == len(CLAIMS)
    page = write_html(tmp_path / "index.html", doc)
    shot = tmp_path / "first_screen.png"
    layout = measure_page(page, WIDTH, SCREEN, screenshot=shot)
    assert layout.open_details == 0  # the cards folded
    assert layout.board_bottom is not None and layout.board_bottom <= SCREEN, layout
    assert layout.height <= 15 * SCREEN, layout
    assert layout.width <= layout.client_width <= WIDTH, layout  # no horizontal overflow of the page
    opened = measure_page(page, WIDTH, SCREEN, fragment=f"claim-{doc.board[0].claim_id}")
    assert opened.open_details == 1 and opened.width <= opened.client_width, opened  # a board link opens its card
    with Image.open(shot) as image:
        assert image.size == (WIDTH, SCREEN)
