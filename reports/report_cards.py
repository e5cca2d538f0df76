"""The cards of a report folder: one per verdict, with its figures, grid and power rows; the cards a
``verify`` keeps from the report already in its folder (``kept_cards``), and the order a report
lists them in (``in_report_order``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convergence.verdict import Status, Verdict
from proofs_check.framework.claim_text import parse_claim_text
from proofs_check.framework.registry import CLAIMS
from proofs_check.framework.settings import VerifySettings

from .power import PowerRow
from .report_files import ReportFigure

__all__ = ["Card", "ClaimCards", "base_id", "kept_cards", "in_report_order"]


@dataclass(frozen=True)
class Card:
    """One verdict's card: the verdict, its figures, the grid of the sweeps behind it, its power rows,
    and ``part_of``, the id of the claim (``Claim.id``) whose several results it is one of ("" for a
    claim's own card; ``ClaimResults``)."""

    verdict: Verdict
    figures: tuple[ReportFigure, ...]
    grid: tuple[dict[str, Any], ...]
    power: tuple[PowerRow, ...] = ()
    part_of: str = ""


@dataclass(frozen=True)
class ClaimCards:
    """One selected claim evaluated: its cards by verdict id, one, or one per result of a claim checked
    as several statements (a compiled experiment: one per check)."""

    cards: tuple[tuple[str, Card], ...]

    @property
    def status(self) -> Status:
        """FAIL if a card FAILs, PASS if all PASS, else INCONCLUSIVE (what the progress reports)."""
        statuses = {card.verdict.status for _, card in self.cards}
        if Status.FAIL in statuses:
            return Status.FAIL
        return Status.PASS if statuses == {Status.PASS} else Status.INCONCLUSIVE


def base_id(claim_id: str) -> str:
    """The registered id of a claim id that may carry parameters (``li2020.thm1[E=10]`` -> ``li2020.thm1``)."""
    return parse_claim_text(claim_id)[0]


def in_report_order(cards: dict[str, Card]) -> list[Card]:
    """The cards in the registry's order of their claims (then by id; the results of one claim in the
    order its evaluator gave them)."""
    order = {cid: i for i, cid in enumerate(CLAIMS)}

    def key(cid: str) -> tuple[int, str]:
        part_of = cards[cid].part_of  # an id as registered, with no parameters to strip
        return (order.get(part_of, len(order)), part_of) if part_of else (order.get(base_id(cid), len(order)), cid)

    return [cards[cid] for cid in sorted(cards, key=key)]


def kept_cards(out: Path, running: Sequence[str], settings: VerifySettings) -> dict[str, Card]:
    """The cards of the report already in ``out`` that a ``verify`` of the claims ``running`` keeps
    (``reports.verify``'s module docstring): ValueError naming ``--out`` for a report that cannot be
    read, or one made with another mode or number of seeds."""
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
    if (mode, seeds) != (settings.mode, settings.seeds):
        raise ValueError(
            f"--out: {out} holds a report of {', '.join(others)} made in {mode} mode with {seeds} seed(s); this run "
            f"({settings.mode} mode, {settings.seeds} seed(s)) would leave it inconsistent. Rerun with the same "
            f"mode and --seeds to merge into it, or choose another --out, or remove {out}."
        )
    return {cid: _card_from_json(previous[cid], out, tuple(r for r in power if r.claim_id == cid)) for cid in others}


def _card_from_json(data: dict[str, Any], out: Path, power: tuple[PowerRow, ...] = ()) -> Card:
    """A kept claim card from ``verdicts.json`` with its power rows; its figures must still be in ``out``."""
    verdict = Verdict.from_json(data)
    figures = []
    for fig in data.get("figures", []):
        path = out / fig["png"]
        if not path.is_file():
            raise ValueError(f"--out: figure {path} of claim {verdict.claim_id} is missing; rerun that claim or "
                             "remove the folder")
        figures.append(ReportFigure(verdict.claim_id, path, fig.get("caption", "")))
    return Card(verdict, tuple(figures), tuple(data.get("grid", [])), power)
