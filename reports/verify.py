"""``verify``: evaluate claims and write the report folder (HTML, Markdown, JSON, PNG/SVG plots).

A report folder is always consistent: every claim card in it was computed with the same mode
(default, ``--quick`` or ``--full``) and the same number of seeds. Running a subset of claims
(``--claim``) into a folder that already holds a report made with the same settings *merges*:
the claims run now replace their old cards and the others are kept (verdicts, figures and grids
read back from ``verdicts.json``). Into a folder whose report was made with other settings it
refuses, and says what to do, rather than mixing the two.

With ``power=True`` (``fedbound verify --power``) every selected claim that lists planted variants
(``Claim.variants``) is also evaluated once per variant, with the variant's evaluator parameters
(``Claim.evaluate_variant``), and the report gets the power table (``reports.power.PowerRow``: the
claim as stated, expected PASS or a control's expected status, and each variant, expected FAIL
unless it says otherwise). A variant changes only the check, so its runs have the claim's configs
and come from the run store (``settings.store``; without a store they are recomputed). Variant
verdicts appear only in the power table and in ``verdicts.json["power"]``, not as claim cards.
Power rows of claims kept from an earlier report are kept with them; those of claims run now
without ``power`` are dropped (they would describe another run).
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

from .html_report import write_html
from .markdown import write_markdown
from .power import PowerRow
from .progress import VerifyProgress
from .report_files import ReportFigure
from .run_metadata import run_metadata
from .verdicts_json import write_verdicts_json

__all__ = ["VerifyOutcome", "verify", "prepare_out"]


@dataclass(frozen=True)
class VerifyOutcome:
    """What ``verify`` wrote: the verdicts in the report (merged ones included), the claims run now,
    the figures, the metadata, the folder, the power rows in the report (merged ones included) and
    the power rows computed now (``power_ran``)."""

    verdicts: tuple[Verdict, ...]
    ran: tuple[str, ...]
    figures: tuple[ReportFigure, ...]
    meta: dict[str, Any]
    out: Path
    power: tuple[PowerRow, ...] = ()
    power_ran: tuple[PowerRow, ...] = ()


@dataclass(frozen=True)
class _Card:
    verdict: Verdict
    figures: tuple[ReportFigure, ...]
    grid: tuple[dict[str, Any], ...]
    power: tuple[PowerRow, ...] = ()


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
           progress: VerifyProgress, *, power: bool = False) -> VerifyOutcome:
    """Evaluate ``claims`` under ``settings`` (``settings.progress`` should be ``progress``) and
    write ``out/verdicts.json``, ``report.md``, ``index.html`` and the plots, merging with a
    compatible report already in ``out``; with ``power``, also each claim's planted variants
    (module docstring). ValueError, before anything runs, when ``power`` is set and no selected
    claim has a variant, or a variant names a parameter its claim's evaluator does not take."""
    from .plots import draw

    if power:
        _check_power(claims)
    kept = _kept_cards(out, [c.id for c in claims], settings)
    start = time.perf_counter()
    cards: dict[str, _Card] = {}
    for claim in claims:
        progress.claim_started(claim.id, claim.citation)
        claim_start = time.perf_counter()
        result = claim.evaluate(settings)
        figures = tuple(draw(spec, claim.id, out) for spec in result.plots)
        grid = tuple(record.summary() for record in progress.sweeps.get(claim.id, ()))
        rows = _power_rows(claim, result.verdict, settings, progress) if power and claim.variants else ()
        cards[claim.id] = _Card(result.verdict, figures, grid, rows)
        progress.claim_finished(claim.id, result.verdict.status.value, time.perf_counter() - claim_start)
    ordered = _in_registry_order({**kept, **cards})
    meta = run_metadata(command, settings, time.perf_counter() - start, list(cards), progress.reused,
                        progress.computed, merged=sorted(kept), out=out,
                        figures=[f for card in ordered for f in card.figures])
    if power:
        meta["power"] = _power_meta(claims)
    verdicts = [card.verdict for card in ordered]
    power_rows = [row for card in ordered for row in card.power]
    figures = [f for card in ordered for f in card.figures]
    grids = {card.verdict.claim_id: list(card.grid) for card in ordered}
    report_claims = {cid: CLAIMS[cid] for cid in grids if cid in CLAIMS}
    write_verdicts_json(out / "verdicts.json", verdicts, meta, figures=figures, grids=grids, power=power_rows)
    write_markdown(out / "report.md", verdicts, figures, meta, claims=report_claims, grids=grids, power=power_rows)
    write_html(out / "index.html", verdicts, figures, meta, claims=report_claims, grids=grids, power=power_rows)
    return VerifyOutcome(tuple(verdicts), tuple(cards), tuple(figures), meta, out, tuple(power_rows),
                         tuple(row for card in cards.values() for row in card.power))


def _check_power(claims: Sequence[Claim]) -> None:
    """Refuse a power run with nothing to test, or with a variant its evaluator cannot take."""
    if not any(c.variants for c in claims):
        with_variants = [c.id for c in CLAIMS.values() if c.variants]
        raise ValueError(
            f"--power: none of the selected claims ({', '.join(c.id for c in claims)}) has a planted variant; claims "
            f"with planted variants: {', '.join(with_variants) or 'none'}")
    for claim in claims:
        for variant in claim.variants:
            claim.check_params(variant.params)


def _power_rows(claim: Claim, verdict: Verdict, settings: VerifySettings,
                progress: VerifyProgress) -> tuple[PowerRow, ...]:
    """The claim as stated and each of its planted variants, evaluated now."""
    rows = [PowerRow.from_verdict(claim.id, verdict)]
    for variant in claim.variants:
        variant_id = variant.id_for(claim.id)
        progress.variant_started(variant_id, variant.description)
        start = time.perf_counter()
        result = claim.evaluate_variant(settings, variant)
        rows.append(PowerRow.from_verdict(claim.id, result.verdict, variant))
        progress.variant_finished(variant_id, result.verdict.status.value, variant.expected.value,
                                  time.perf_counter() - start)
    return tuple(rows)


def _power_meta(claims: Sequence[Claim]) -> str:
    """One line for the report's metadata: what the power self-test covered and what it did not."""
    tested = [c for c in claims if c.variants]
    text = (f"{sum(len(c.variants) for c in tested)} planted variant(s) of {len(tested)} claim(s) run with --power "
            "(variants reuse their claim's runs from the run store)")
    untested = [c.id for c in claims if not c.variants]
    if untested:
        text += f"; no planted variant registered (power untested): {', '.join(untested)}"
    return text


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
        power = [PowerRow.from_json(row) for row in document.get("power", [])]
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
    return {cid: _card_from_json(previous[cid], out, tuple(r for r in power if r.claim_id == cid)) for cid in others}


def _card_from_json(data: dict[str, Any], out: Path, power: tuple[PowerRow, ...] = ()) -> _Card:
    """A kept claim card from ``verdicts.json`` with its power rows; its figures must still be in ``out``."""
    verdict = Verdict.from_json(data)
    figures = []
    for fig in data.get("figures", []):
        path = out / fig["png"]
        if not path.is_file():
            raise ValueError(f"--out: figure {path} of claim {verdict.claim_id} is missing; rerun that claim or "
                             "remove the folder")
        figures.append(ReportFigure(verdict.claim_id, path, fig.get("caption", "")))
    return _Card(verdict, tuple(figures), tuple(data.get("grid", [])), power)


def _mode(settings: VerifySettings) -> str:
    return "quick" if settings.quick else ("full" if settings.full else "default")
