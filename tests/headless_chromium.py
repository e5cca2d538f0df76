"""Lay out an HTML page in headless Chromium and measure it (for tests of the HTML report).

``measure_page`` opens a copy of the page with one measuring script appended (the page itself has
none), at a window ``width`` x ``height`` CSS pixels, and reads back from the DOM Chromium dumps:
the document's scroll height and width, the viewport's client width, the bottom of the verdict
board and how many ``<details>`` are open (a link to a folded card's anchor opens it); the same
Chromium run can write a screenshot of the first screen. Chromium runs with a fresh profile and
without network, sync, GPU or sandbox (``CHROMIUM_FLAGS``). ``CHROMIUM`` is Debian's
``/usr/bin/chromium`` (package ``chromium``), or the one named by ``$FEDBOUND_CHROMIUM``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = os.environ.get("FEDBOUND_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync")
_MARK = "fedbound-layout"
_SCRIPT = f"""<script>window.addEventListener("load", function () {{
  var d = document.documentElement, board = document.getElementById("board");
  var r = board && board.getBoundingClientRect();
  var m = document.createElement("pre"); m.id = "{_MARK}";
  m.textContent = JSON.stringify({{height: d.scrollHeight, width: d.scrollWidth, client_width: d.clientWidth,
    board_bottom: r ? r.bottom + window.scrollY : null,
    open_details: document.querySelectorAll("details[open]").length}});
  document.body.appendChild(m);
}});</script>"""


@dataclass(frozen=True)
class PageLayout:
    """CSS pixels of a laid-out page: ``height`` and ``width`` (the document's scroll size),
    ``client_width`` (the viewport's), ``board_bottom`` (the verdict board's bottom edge, None without
    a board) and ``open_details``, the number of unfolded ``<details>``."""

    height: int
    width: int
    client_width: int
    board_bottom: float | None
    open_details: int


def chromium_available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


def _run(args: list[str], profile: str, timeout: float) -> str:
    done = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{CHROMIUM} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def measure_page(page: Path, width: int = 1400, height: int = 900, fragment: str = "",
                 screenshot: Path | None = None, timeout: float = 60.0) -> PageLayout:
    """The layout of ``page`` in a ``width`` x ``height`` window (module docstring), opened at
    ``#fragment`` when given; with ``screenshot``, the first screen is written there as a PNG by the
    same Chromium run."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.html"
        text = page.read_text(encoding="utf-8")
        probe.write_text(text.replace("</body>", _SCRIPT + "</body>"), encoding="utf-8")
        url = probe.as_uri() + (f"#{fragment}" if fragment else "")
        shot = [] if screenshot is None else [f"--screenshot={screenshot}"]
        dom = _run([f"--window-size={width},{height}", *shot, "--dump-dom", url], str(Path(tmp) / "profile"),
                   timeout)
    if screenshot is not None and not screenshot.is_file():
        raise RuntimeError(f"{CHROMIUM} wrote no screenshot to {screenshot}")
    found = re.search(rf'<pre id="{_MARK}">([^<]*)</pre>', dom)
    if found is None:
        raise RuntimeError(f"no layout measured in the DOM Chromium dumped ({len(dom)} characters)")
    return PageLayout(**json.loads(found.group(1).replace("&quot;", '"')))
