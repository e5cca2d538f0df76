"""Progress of a whole ``fedbound verify``: per-sweep reports, an overall line with an ETA, and
the count of runs reused from the store versus computed.

On a terminal (stdout and stderr both ttys) each sweep shows a transient tqdm bar; otherwise
(a log file, CI, a pipe) every finished sweep and claim prints one line, never ``\\r`` frames.
The ETA weighs the claims by their typical cost: seconds measured for each claim in a default
``fedbound verify`` on a 2-core machine (``TYPICAL_SECONDS``; ``--quick`` runs take about half
of that; a claim run with parameters, ``li2020.thm1[E=10]``, weighs as the claim), scaled by how
fast this run has gone so far.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["ProgressTally", "SweepRecord", "VerifyProgress", "TYPICAL_SECONDS", "typical_seconds"]

TYPICAL_SECONDS: dict[str, float] = {
    "li2020.thm4": 21.0,
    "li2020.thm1": 56.3,
    "li2020.thm2": 22.4,
    "li2020.thm3": 14.9,
    "ding2020.thm1": 23.2,
    "ding2020.thm2": 2.8,
    "ding2020.speedup": 4.6,
    "ding2020.ordering": 1.5,
    "ding2020.fig2": 71.5,
    "ding2020.table1": 12.8,
    "ding2020.fig4": 6.9,
    "ding2020.fig5": 11.5,
    "yu2019.thm1": 5.3,
    "yu2019.cor2": 1.0,
    "yu2019.cnn": 56.2,
    "yu2019icml.thm3": 3.2,  # measured 2026-11-28 on a warm Numba cache (the PR-SGD kernel yu2019.thm1 compiles)
    "yu2019icml.cor4": 9.2,
    "assumptions.constants": 1.3,
    "lemmas": 11.0,
    "control.constant-step-rate": 1.6,
    "li2020.schemes": 53.6,
    "li2020.eq8": 26.3,
    "li2020.k-effect": 5.8,
}
"""CPU seconds (the process and its workers) each claim took in a default ``fedbound verify`` from a fresh install
with only the bundled digits (2 cores, claims one after the other, kernels compiled on first use, later claims
reusing the runs of earlier ones), measured 2026-11-23 (412.6 s in all): the ETA's weights and the order in which
``reports.claim_pool`` starts the claims (longest first). CPU, not wall, seconds: the machine was shared and busy."""
_UNKNOWN_CLAIM_SECONDS = 5.0


def typical_seconds(claim_id: str) -> float:
    """The typical cost of ``claim_id`` (``TYPICAL_SECONDS``; a claim run with parameters weighs as the claim,
    an unknown one ``_UNKNOWN_CLAIM_SECONDS``): the ETA's weights and the order of ``reports.claim_pool``."""
    return TYPICAL_SECONDS.get(claim_id.partition("[")[0], _UNKNOWN_CLAIM_SECONDS)


@dataclass(frozen=True)
class ProgressTally:
    """What a ``VerifyProgress`` saw in a worker process of ``reports.claim_pool`` (picklable): the sweeps
    by claim or variant id, the runs reused and computed, and the lines it printed into a stream that
    does not reach the parent's (``text``; empty when they went to the parent's file at once)."""

    sweeps: dict[str, list[SweepRecord]]
    reused: int
    computed: int
    text: str


@dataclass(frozen=True)
class SweepRecord:
    """One sweep a claim ran: its description, the JSON config of every run, how many were reused."""

    description: str
    configs: tuple[Mapping[str, Any], ...]
    reused: int

    def summary(self) -> dict[str, Any]:
        """JSON summary of the grid: the settings every run shares (``fixed``, dotted keys), the
        ones that vary with their distinct values (``varying``), the number of runs and reused."""
        flat = [dict(_flatten(c)) for c in self.configs]
        keys = list(dict.fromkeys(k for f in flat for k in f))
        fixed, varying = {}, {}
        for key in keys:
            values = list(dict.fromkeys(_text(f.get(key)) for f in flat))
            if len(values) == 1:
                fixed[key] = values[0]
            else:
                varying[key] = values
        return {"description": self.description, "runs": len(self.configs), "reused": self.reused,
                "fixed": fixed, "varying": varying}


class VerifyProgress:
    """A ``convergence.SweepMonitor`` for one ``verify`` over ``claim_ids``, plus claim events.

    ``reused`` and ``computed`` count the runs read from the store and the runs computed;
    ``sweeps[claim_id]`` lists the sweeps each claim ran (what the report shows as its grid).
    """

    def __init__(self, claim_ids: Sequence[str], *, enabled: bool = True, stream: TextIO | None = None,
                 interactive: bool | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled
        self._interactive = (sys.stdout.isatty() and self._stream.isatty()) if interactive is None else interactive
        self._weights = {cid: typical_seconds(cid) for cid in claim_ids}
        self._done_weight = 0.0
        self._claims_done = 0
        self._start = time.perf_counter()
        self._claim = ""
        self._bar: Any = None
        self.reused = 0
        self.computed = 0
        self.sweeps: dict[str, list[SweepRecord]] = {}

    # ---------------------------------------------------------------- claim events (verify)
    def claim_started(self, claim_id: str, citation: str) -> None:
        self._claim = claim_id
        self._print(f"[fedbound] {claim_id}: {citation}")

    def claim_finished(self, claim_id: str, status: str, seconds: float) -> None:
        self._done_weight += self._weights.get(claim_id, _UNKNOWN_CLAIM_SECONDS)
        self._claims_done += 1
        self._print(f"[fedbound] {claim_id}: {status} ({seconds:.1f} s); {self.overall()}")

    def variant_started(self, variant_id: str, description: str) -> None:
        """A planted variant of the current claim starts (``verify --power``); its sweeps are recorded
        under ``variant_id``, apart from the claim's grid, and it does not count as a claim."""
        self._claim = variant_id
        self._print(f"[fedbound]   power: {variant_id}: {description}")

    def variant_finished(self, variant_id: str, status: str, expected: str, seconds: float) -> None:
        outcome = "as expected" if status == expected else "NOT as expected"
        self._print(f"[fedbound]   power: {variant_id}: {status} (expected {expected}, {outcome}; {seconds:.1f} s)")

    def overall(self) -> str:
        """E.g. ``overall 4/11 claims, 36% of the estimated work, 0:52 elapsed, ETA 1:31``."""
        total = sum(self._weights.values())
        fraction = self._done_weight / total if total else 1.0
        elapsed = time.perf_counter() - self._start
        eta = elapsed * (1 - fraction) / fraction if fraction > 0 else float("nan")
        return (f"overall {self._claims_done}/{len(self._weights)} claims, {100 * fraction:.0f}% of the estimated "
                f"work, {_clock(elapsed)} elapsed, ETA {_clock(eta)}")

    # ---------------------------------------------------------------- claims in worker processes
    def for_worker(self, claim_ids: Sequence[str]) -> VerifyProgress:
        """A progress for ``claim_ids`` evaluated in a forked worker (``reports.claim_pool``): line by line,
        never bars (two processes share the terminal), into this progress's stream when it is an open
        file (the worker inherits it, so lines appear as they happen), else into a buffer that ``absorb``
        copies into this stream when the claim is done."""
        live = _is_os_file(self._stream)
        return VerifyProgress(claim_ids, enabled=self._enabled, stream=self._stream if live else io.StringIO(),
                              interactive=False)

    def tally(self) -> ProgressTally:
        """What this progress saw, to hand to the parent's ``absorb``."""
        text = self._stream.getvalue() if isinstance(self._stream, io.StringIO) else ""
        return ProgressTally(self.sweeps, self.reused, self.computed, text)

    def absorb(self, tally: ProgressTally) -> None:
        """Count in the sweeps and runs of a claim evaluated in a worker (and print its buffered lines)."""
        for claim_id, records in tally.sweeps.items():
            self.sweeps.setdefault(claim_id, []).extend(records)
        self.reused += tally.reused
        self.computed += tally.computed
        if tally.text:
            self._stream.write(tally.text)
            self._stream.flush()

    # ---------------------------------------------------------------- SweepMonitor
    def sweep_started(self, description: str, configs: Sequence[Mapping[str, Any]], cached: int) -> None:
        self.reused += cached
        self.sweeps.setdefault(self._claim, []).append(SweepRecord(description, tuple(configs), cached))
        if self._enabled and self._interactive:
            from tqdm import tqdm

            self._bar = tqdm(total=len(configs), initial=cached, desc=f"{self._claim}: {description}", unit="run",
                             leave=False, file=self._stream)

    def run_finished(self) -> None:
        self.computed += 1
        if self._bar is not None:
            self._bar.update()

    def sweep_finished(self, description: str, total: int, cached: int, seconds: float) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._enabled:
            self._print(f"[fedbound]   {self._claim}: {description}: {total} run(s), {cached} reused, "
                        f"{total - cached} computed, {seconds:.1f} s")

    # ---------------------------------------------------------------- helpers
    def _print(self, line: str) -> None:
        if self._enabled:
            print(line, file=self._stream, flush=True)


def _is_os_file(stream: TextIO) -> bool:
    """Whether ``stream`` writes to an operating-system file (which a forked process shares)."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.StringIO raises io.UnsupportedOperation (an OSError)
        return False
    return True


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            items += _flatten(value, f"{prefix}{key}.")
        else:
            items.append((f"{prefix}{key}", value))
    return items


def _text(value: Any) -> str:
    """A config value as short text; a long list of numbers as its length and range."""
    if isinstance(value, (list, tuple)) and len(value) > 6 and all(isinstance(v, (int, float)) for v in value):
        return f"{len(value)} values, {min(value)}..{max(value)}"
    return str(value)


def _clock(seconds: float) -> str:
    """m:ss (or h:mm:ss), '?' when unknown."""
    if seconds != seconds or seconds < 0:
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
