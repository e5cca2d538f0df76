"""The verification a run store holds: what ``fedbound report STORE`` rebuilds a report from.

``fedbound verify`` writes into its run store (``--store``, default ``OUT/runs.sqlite``) a record
of the verification whose runs the store holds: the mode (quick / default / full) and the seeds,
which fix every claim's plan, the ids of the claims with their parameters
(``li2020.thm1[E=10,seeds=16]``), and those run with the power self-test. A later verification
into the same store with the same mode and seeds adds its claims to the record (as a report folder
merges them); one with other settings replaces the record (the older runs stay in the store as a
cache, but the store now holds the newer verification).

The record is the store's JSON record ``"verification"`` (``convergence.RunStore.update_record``: two
verifications into one store at once both end up in it), checksummed like a run:
``{"kind": "fedbound verification", "version": 1, "mode": ..., "seeds": ..., "claims": [...], "power": [...]}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convergence import RunStore

__all__ = ["VerificationRecord", "RECORD_NAME", "read_verification", "record_verification"]

RECORD_NAME = "verification"
_KIND = "fedbound verification"
_VERSION = 1
_MODES = ("quick", "default", "full")


@dataclass(frozen=True)
class VerificationRecord:
    """A verification: ``mode`` ("quick", "default" or "full"), ``seeds`` (``--seeds``), the ids of its
    ``claims`` with their parameters, in the order they ran, and the ids run with ``--power`` (a subset)."""

    mode: str
    seeds: int
    claims: tuple[str, ...]
    power: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ValueError(f"mode: expected one of {', '.join(_MODES)}, got {self.mode!r}")
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, int) or self.seeds < 1:
            raise ValueError(f"seeds: expected an integer >= 1, got {self.seeds!r}")
        for name in ("claims", "power"):
            ids = getattr(self, name)
            if isinstance(ids, str) or not all(isinstance(i, str) and i for i in ids):
                raise ValueError(f"{name}: expected claim ids, got {ids!r}")
            object.__setattr__(self, name, tuple(dict.fromkeys(ids)))
        if not self.claims:
            raise ValueError("claims: a verification runs at least one claim")
        if not set(self.power) <= set(self.claims):
            raise ValueError(f"power: {sorted(set(self.power) - set(self.claims))} are not claims of the verification")

    def describe(self) -> str:
        """E.g. ``li2020.thm4, lemmas (quick mode, 2 seeds; --power: li2020.thm4)``."""
        power = f"; --power: {', '.join(self.power)}" if self.power else ""
        return f"{', '.join(self.claims)} ({self.mode} mode, {self.seeds} seed(s){power})"

    def merged(self, later: VerificationRecord) -> VerificationRecord:
        """This record followed by ``later``: with the same mode and seeds, the claims of both (a claim
        run again takes ``later``'s power flag); with other settings, ``later`` alone."""
        if (self.mode, self.seeds) != (later.mode, later.seeds):
            return later
        kept = [cid for cid in self.claims if cid not in later.claims]
        power = [cid for cid in self.power if cid in kept] + list(later.power)
        return VerificationRecord(self.mode, self.seeds, tuple(kept) + later.claims, tuple(power))

    def to_json(self) -> dict[str, Any]:
        return {"kind": _KIND, "version": _VERSION, "mode": self.mode, "seeds": self.seeds,
                "claims": list(self.claims), "power": list(self.power)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerificationRecord:
        """The record of ``to_json``; ValueError naming the field for anything else."""
        if not isinstance(data, Mapping) or data.get("kind") != _KIND:
            raise ValueError(f"kind: not a fedbound verification record: {data!r}")
        if data.get("version") != _VERSION:
            raise ValueError(f"version: a verification record of version {data.get('version')!r}; this fedbound "
                             f"reads version {_VERSION}")
        try:
            return cls(data["mode"], data["seeds"], tuple(data["claims"]), tuple(data["power"]))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"verification record: missing or malformed field ({exc})") from None


def read_verification(store: RunStore) -> VerificationRecord | None:
    """The verification ``store`` holds, or None when it holds no record (a store filled by an older
    fedbound, or by sweeps of your own); ValueError naming the store for a record it cannot read."""
    data = store.record(RECORD_NAME)
    return None if data is None else _record_of(store, data)


def _record_of(store: RunStore, data: Mapping[str, Any]) -> VerificationRecord:
    """The verification record of ``store``'s JSON ``data``; ValueError naming the store for one it cannot read."""
    try:
        return VerificationRecord.from_json(data)
    except ValueError as exc:
        raise ValueError(f"{store.field}: {str(store.path)!r} holds a verification record fedbound cannot read "
                         f"({exc})") from None


def record_verification(store: RunStore, mode: str, seeds: int, claims: Sequence[str],
                        power: Sequence[str] = ()) -> VerificationRecord:
    """Add this verification to ``store``'s record (``VerificationRecord.merged``) and return the record written."""
    later = VerificationRecord(mode, seeds, tuple(claims), tuple(power))

    def merged(earlier: dict[str, Any] | None) -> dict[str, Any]:  # read and written in one transaction
        return later.to_json() if earlier is None else _record_of(store, earlier).merged(later).to_json()

    return VerificationRecord.from_json(store.update_record(RECORD_NAME, merged))
