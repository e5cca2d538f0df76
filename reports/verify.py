"""``verify``: evaluate claims and write the report folder (HTML, Markdown, JSON, PNG/SVG plots).

A report folder is always consistent: every claim card in it was computed with the same mode
(default, ``--quick`` or ``--full``) and the same number of seeds. Running a subset of claims
(``--claim``) into a folder that already holds a report made with the same settings *merges*:
the claims run now replace their old cards and the others are kept (verdicts, figures and grids
read back from ``verdicts.json``). Into a folder whose report was made with other settings it
refuses, and says what to do, rather than mixing the two.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convergence.verdict import Verdict
from proofs_check.claim import Claim, VerifySettings
from proofs_check.registry import CLAIMS

from .meta import run_metadata
from .progress import VerifyProgress
from .render import ReportFigure, write_html, write_markdown, write_verdicts_json

__all__ = ["VerifyOutcome", "verify", "prepare_out"]


@dataclass(frozen=True)
class VerifyOutcome:
    """What ``verify`` wrote: the verdicts in the report (merged ones included), the claims run now,
    the figures, the metadata and the folder."""

    verdicts: tuple[Verdict, ...]
    ran: tuple[str, ...]
    figures: tuple[ReportFigure, ...]
    meta: dict[str, Any]
    out: Path


@dataclass(frozen=True)
class _Card:
    verdict: Verdict
    figures: tuple[ReportFigure, ...]
    grid: tuple[dict[str, Any], ...]


def prepare_out(out: str | Path) -> Path:
    """Create the output directory and prove it is writable (errors name ``--out``)."""
    if str(out) == "":
        raise ValueError("--out: an empty path is not a folder; give a folder name (default ./fedbound-report)")
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".fedbound-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise OSError(f"--out: cannot write to output directory {str(path)!r} ({exc.strerror or exc})") from None
    return path


def verify(claims: Sequence[Claim], settings: VerifySettings, out: Path, command: Sequence[str],
           progress: VerifyProgress) -> VerifyOutcome:
    """Evaluate ``claims`` under ``settings`` (``settings.progress`` should be ``progress``) and
    write ``out/verdicts.json``, ``report.md``, ``index.html`` and the plots, merging with a
    compatible report already in ``out`` (module docstring)."""
    from .figures import draw

    kept = _kept_cards(out, [c.id for c in claims], settings)
    start = time.perf_counter()
    cards: dict[str, _Card] = {}
    for claim in claims:
        progress.claim_started(claim.id, claim.citation)
        claim_start = time.perf_counter()
        result = claim.evaluate(settings)
        figures = tuple(draw(spec, claim.id, out) for spec in result.plots)
        grid = tuple(record.summary() for record in progress.sweeps.get(claim.id, ()))
        cards[claim.id] = _Card(result.verdict, figures, grid)
        progress.claim_finished(claim.id, result.verdict.status.value, time.perf_counter() - claim_start)
    ordered = _in_registry_order({**kept, **cards})
    meta = run_metadata(command, settings, time.perf_counter() - start, list(cards), progress.reused,
                        progress.computed, merged=sorted(kept), out=out,
                        figures=[f for card in ordered for f in card.figures])
    verdicts = [card.verdict for card in ordered]
    figures = [f for card in ordered for f in card.figures]
    grids = {card.verdict.claim_id: list(card.grid) for card in ordered}
    report_claims = {cid: CLAIMS[cid] for cid in grids if cid in CLAIMS}
    write_verdicts_json(out / "verdicts.json", verdicts, meta, figures=figures, grids=grids)
    write_markdown(out / "report.md", verdicts, figures, meta, claims=report_claims, grids=grids)
    write_html(out / "index.html", verdicts, figures, meta, claims=report_claims, grids=grids)
    return VerifyOutcome(tuple(verdicts), tuple(cards), tuple(figures), meta, out)


def _in_registry_order(cards: dict[str, _Card]) -> list[_Card]:
    order = {cid: i for i, cid in enumerate(CLAIMS)}
    return [cards[cid] for cid in sorted(cards, key=lambda cid: (order.get(cid, len(order)), cid))]


def _kept_cards(out: Path, running: Sequence[str], settings: VerifySettings) -> dict[str, _Card]:
    """The cards of the report already in ``out`` that this run keeps (module docstring)."""
    path = out / "verdicts.json"
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        previous = {c["claim_id"]: c for c in document["claims"]}
        mode, seeds = document["meta"]["mode"], document["meta"]["seeds"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--out: {path} is not a report fedbound can read ({exc}); remove it or choose another "
                         "--out") from None
    others = [cid for cid in previous if cid not in running]
    if not others:
        return {}
    if (mode, seeds) != (_mode(settings), settings.seeds):
        raise ValueError(
            f"--out: {out} holds a report of {', '.join(others)} made in {mode} mode with {seeds} seed(s); this run "
            f"({_mode(settings)} mode, {settings.seeds} seed(s)) would leave it inconsistent. Rerun with the same "
            f"mode and --seeds to merge into it, or choose another --out, or remove {out}."
        )
    return {cid: _card_from_json(previous[cid], out) for cid in others}


def _card_from_json(data: dict[str, Any], out: Path) -> _Card:
    """A kept claim card from ``verdicts.json``; its figures must still be in ``out``."""
    verdict = Verdict.from_json(data)
    figures = []
    for fig in data.get("figures", []):
        path = out / fig["png"]
        if not path.is_file():
            raise ValueError(f"--out: figure {path} of claim {verdict.claim_id} is missing; rerun that claim or "
                             "remove the folder")
        figures.append(ReportFigure(verdict.claim_id, path, fig.get("caption", "")))
    return _Card(verdict, tuple(figures), tuple(data.get("grid", [])))


def _mode(settings: VerifySettings) -> str:
    return "quick" if settings.quick else ("full" if settings.full else "default")
