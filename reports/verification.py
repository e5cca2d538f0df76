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
``{"kind": "fedbound verification", "version": 1, "mode": ..., "seeds": ..., "claims": [...], "power": [...],
"runs": {claim id: [run keys]}}``. ``runs`` names the runs each claim read (``claim_runs``), for the
``claim`` column of ``fedbound export``; a record written before it existed has none.

``fedbound run`` records instead which experiment file the store holds the runs of (record
``"experiment"``: ``{"kind": "fedbound experiment", "version": 1, "source": path, "name": ..., "runs":
{experiment name: [run keys]}}``, ``ExperimentRecord``), so that ``fedbound report`` on it points to
``fedbound run`` rather than to a verification of every shipped claim.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convergence.config import config_digest

if TYPE_CHECKING:
    from convergence import RunStore

    from .progress import SweepRecord

__all__ = ["ExperimentRecord", "VerificationRecord", "RECORD_NAME", "claim_runs", "no_verification_error",
           "read_experiment", "read_verification", "record_experiment", "record_verification", "recorded_runs"]

RECORD_NAME = "verification"
EXPERIMENT_RECORD = "experiment"
_KIND = "fedbound verification"
_EXPERIMENT_KIND = "fedbound experiment"
_VERSION = 1
_MODES = ("quick", "default", "full")


@dataclass(frozen=True)
class VerificationRecord:
    """A verification: ``mode`` ("quick", "default" or "full"), ``seeds`` (``--seeds``), the ids of its
    ``claims`` with their parameters, in the order they ran, the ids run with ``--power`` (a subset),
    and the keys of the ``runs`` each claim read (claim id -> keys; a claim without an entry: not
    recorded)."""

    mode: str
    seeds: int
    claims: tuple[str, ...]
    power: tuple[str, ...] = ()
    runs: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

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
        object.__setattr__(self, "runs", _runs_map(self.runs, self.claims))

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
        runs = {cid: keys for cid, keys in self.runs.items() if cid in kept}
        return VerificationRecord(self.mode, self.seeds, tuple(kept) + later.claims, tuple(power),
                                  {**runs, **later.runs})

    def to_json(self) -> dict[str, Any]:
        return {"kind": _KIND, "version": _VERSION, "mode": self.mode, "seeds": self.seeds,
                "claims": list(self.claims), "power": list(self.power),
                "runs": {cid: list(keys) for cid, keys in self.runs.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerificationRecord:
        """The record of ``to_json``; ValueError naming the field for anything else."""
        if not isinstance(data, Mapping) or data.get("kind") != _KIND:
            raise ValueError(f"kind: not a fedbound verification record: {data!r}")
        if data.get("version") != _VERSION:
            raise ValueError(f"version: a verification record of version {data.get('version')!r}; this fedbound "
                             f"reads version {_VERSION}")
        try:
            return cls(data["mode"], data["seeds"], tuple(data["claims"]), tuple(data["power"]), data.get("runs", {}))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"verification record: missing or malformed field ({exc})") from None


@dataclass(frozen=True)
class ExperimentRecord:
    """The experiment whose runs a store holds (``fedbound run``): the file it came from (``source``,
    as given on the command line; empty for an experiment made in Python), its ``name`` and the keys of
    the runs it read."""

    source: str
    name: str
    runs: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": _EXPERIMENT_KIND, "version": _VERSION, "source": self.source, "name": self.name,
                "runs": {self.name: list(self.runs)}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExperimentRecord:
        """The record of ``to_json``; ValueError naming the field for anything else."""
        if not isinstance(data, Mapping) or data.get("kind") != _EXPERIMENT_KIND or data.get("version") != _VERSION:
            raise ValueError(f"kind: not a fedbound experiment record of version {_VERSION}: {data!r}")
        source, name, runs = data.get("source"), data.get("name"), data.get("runs")
        if not isinstance(source, str) or not isinstance(name, str) or not isinstance(runs, Mapping):
            raise ValueError("experiment record: missing or malformed field (source, name or runs)")
        return cls(source, name, _runs_map(runs, (name,)).get(name, ()))


def claim_runs(sweeps: Mapping[str, Sequence[SweepRecord]], claims: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The keys of the runs each of ``claims`` read, from the sweeps a ``VerifyProgress`` saw: a run's
    store key is the digest of its sweep task's JSON config (``convergence.sweep_runs.seed_task``)."""
    return {cid: tuple(dict.fromkeys(config_digest(config) for sweep in sweeps.get(cid, ()) for config in sweep.configs))
            for cid in claims}


def _runs_map(runs: Any, claims: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``runs`` (claim id -> run keys) checked: ValueError naming ``runs`` for anything else, or a claim not in ``claims``."""
    if not isinstance(runs, Mapping) or not all(
            cid in claims and not isinstance(keys, str) and all(isinstance(k, str) for k in keys) for cid, keys in runs.items()):
        raise ValueError(f"runs: expected claim ids of {list(claims)} mapped to run keys, got {runs!r}"[:300])
    return {cid: tuple(keys) for cid, keys in runs.items()}


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
                        power: Sequence[str] = (), runs: Mapping[str, tuple[str, ...]] | None = None
                        ) -> VerificationRecord:
    """Add this verification to ``store``'s record (``VerificationRecord.merged``) and return the record written."""
    later = VerificationRecord(mode, seeds, tuple(claims), tuple(power), runs or {})

    def merged(earlier: dict[str, Any] | None) -> dict[str, Any]:  # read and written in one transaction
        return later.to_json() if earlier is None else _record_of(store, earlier).merged(later).to_json()

    return VerificationRecord.from_json(store.update_record(RECORD_NAME, merged))


def record_experiment(store: RunStore, record: ExperimentRecord) -> None:
    """Record in ``store`` that it holds the runs of the experiment ``record`` (replacing an earlier one)."""
    store.put_record(EXPERIMENT_RECORD, record.to_json())


def read_experiment(store: RunStore) -> ExperimentRecord | None:
    """The experiment ``store`` holds the runs of (``fedbound run``), or None; ValueError naming the store
    for a record it cannot read."""
    data = store.record(EXPERIMENT_RECORD)
    if data is None:
        return None
    try:
        return ExperimentRecord.from_json(data)
    except ValueError as exc:
        raise ValueError(f"{store.field}: {str(store.path)!r} holds an experiment record fedbound cannot read "
                         f"({exc})") from None


def recorded_runs(store: RunStore) -> dict[str, tuple[str, ...]]:
    """Claim (or experiment) id -> the keys of the runs it read, as the store's records say (empty
    when it has none: a store of an older fedbound, or of sweeps of your own)."""
    verification, experiment = read_verification(store), read_experiment(store)
    runs = dict(verification.runs) if verification is not None else {}
    if experiment is not None:
        runs[experiment.name] = experiment.runs
    return runs


def no_verification_error(store: RunStore) -> ValueError:
    """The error of ``fedbound report`` on a store that holds no verification: for an experiment's store
    (``ExperimentRecord``) the ``fedbound run`` command that rewrites its report, else both commands that
    fill a store."""
    path, experiment = shlex.quote(str(store.path)), read_experiment(store)
    if experiment is not None:
        source = shlex.quote(experiment.source) if experiment.source else "EXPERIMENT.toml"
        return ValueError(f"{store.field}: {str(store.path)!r} holds the runs of the experiment {experiment.name!r} "
                          f"(`fedbound run`), not a verification of the shipped claims; `fedbound run {source} --store "
                          f"{path}` rewrites its report, reading every run back")
    return ValueError(f"{store.field}: {str(store.path)!r} holds no verification record (it was not filled by `fedbound "
                      f"verify --store` or `fedbound run`, or it was by an older fedbound); `fedbound verify --store "
                      f"{path}` runs every shipped claim into it, `fedbound run EXPERIMENT.toml --store {path}` an "
                      "experiment of yours")
