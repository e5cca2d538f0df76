"""Verdicts: what a checker or a claim returns.

Semantics (DESIGN.md, "Contracts"): an upper-bound claim PASSes when the measured quantity stays
below the bound with its confidence interval (or decays at least as fast as the claimed
exponent), FAILs when the data show it provably does not, and is INCONCLUSIVE when the data
cannot tell (too few points, an interval too wide, unmet hypotheses).
"""

from __future__ import annotations

import enum
import html
import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Status", "Hypothesis", "Verdict"]


class Status(str, enum.Enum):
    """Outcome of a check."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a claim, evaluated on a configuration.

    ``detail`` states the predicate with the values it was evaluated on, for example
    ``"eta_1 = 0.0625 <= 1/(4L) = 0.0625"``.
    """

    name: str
    met: bool
    detail: str


@dataclass(frozen=True)
class Verdict:
    """The evidence-backed result of one check or claim.

    ``measured`` and ``theoretical`` are the headline figures (for a rate check: the fitted and
    the claimed exponent; for a bound check: the worst ratio measured / bound and 1);
    ``interval`` is the confidence interval of ``measured`` (None when not applicable);
    ``evidence`` holds JSON-able per-point data (record points, values, bounds).
    """

    claim_id: str
    status: Status
    measured: float
    theoretical: float
    interval: tuple[float, float] | None = None
    hypotheses: tuple[Hypothesis, ...] = ()
    notes: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    expected: Status | None = None

    @property
    def hypotheses_met(self) -> bool:
        """True when every declared hypothesis holds on the configuration."""
        return all(h.met for h in self.hypotheses)

    @property
    def as_expected(self) -> bool:
        """For negative controls: did the check come out as the control expects?"""
        return self.expected is None or self.status is self.expected

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict: id, status, measured, theoretical, interval, hypotheses, notes."""
        data = asdict(self)
        data["status"] = self.status.value
        data["expected"] = None if self.expected is None else self.expected.value
        data["hypotheses_met"] = self.hypotheses_met
        data["measured"] = _finite_or_none(self.measured)
        data["theoretical"] = _finite_or_none(self.theoretical)
        if self.interval is not None:
            data["interval"] = [_finite_or_none(v) for v in self.interval]
        return data

    def to_frame(self) -> Any:
        """A pandas DataFrame of the verdict and its sub-checks (one row each: ``check``,
        ``status``, ``measured``, ``theoretical``, ``lo``, ``hi``, ``notes``); the first row is the
        verdict itself. Needs pandas (``pip install 'fedbound[data]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas: pip install 'fedbound[data]'") from None
        rows = [_frame_row(self.claim_id, self.to_json())]
        rows += [_frame_row(str(c.get("name", c.get("claim_id"))), c) for c in self.evidence.get("checks", [])]
        return pd.DataFrame(rows, columns=["check", "status", "measured", "theoretical", "lo", "hi", "notes"])

    def _repr_html_(self) -> str:
        """The verdict as a small HTML card for notebooks: status, figures, hypotheses, sub-checks."""
        e = html.escape
        interval = "n/a" if self.interval is None else f"[{self.interval[0]:.4g}, {self.interval[1]:.4g}]"
        out = [f"<p><b>{e(self.claim_id)}</b>: <b>{self.status.value}</b> &mdash; measured {self.measured:.4g}, "
               f"theoretical {self.theoretical:.4g}, interval {interval}</p>"]
        if self.hypotheses:
            out.append("<ul>" + "".join(f"<li>{'met' if h.met else '<b>UNMET</b>'}: {e(h.name)}: {e(h.detail)}</li>"
                                        for h in self.hypotheses) + "</ul>")
        checks = self.evidence.get("checks", [])
        if checks:
            out.append("<table><tr><th>sub-check</th><th>status</th><th>measured</th><th>theoretical</th></tr>"
                       + "".join(f"<tr><td>{e(str(c.get('name')))}</td><td>{e(str(c.get('status')))}</td>"
                                 f"<td>{e(str(c.get('measured')))}</td><td>{e(str(c.get('theoretical')))}</td></tr>"
                                 for c in checks) + "</table>")
        if self.notes:
            out.append(f"<p>{e(self.notes)}</p>")
        return "".join(out)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        """The verdict ``to_json`` wrote (null figures read back as NaN); KeyError/ValueError on
        a malformed object."""
        interval = data.get("interval")
        expected = data.get("expected")
        return cls(
            claim_id=str(data["claim_id"]),
            status=Status(data["status"]),
            measured=_float_or_nan(data["measured"]),
            theoretical=_float_or_nan(data["theoretical"]),
            interval=None if interval is None else (_float_or_nan(interval[0]), _float_or_nan(interval[1])),
            hypotheses=tuple(Hypothesis(str(h["name"]), bool(h["met"]), str(h["detail"])) for h in data["hypotheses"]),
            notes=str(data.get("notes", "")),
            evidence=dict(data.get("evidence") or {}),
            expected=None if expected is None else Status(expected),
        )


def _frame_row(name: str, data: dict[str, Any]) -> tuple[Any, ...]:
    interval = data.get("interval") or [None, None]
    return (name, data.get("status"), _float_or_nan(data.get("measured")), _float_or_nan(data.get("theoretical")),
            _float_or_nan(interval[0]), _float_or_nan(interval[1]), data.get("notes", ""))


def _float_or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _finite_or_none(value: float) -> float | None:
    """JSON has no NaN/inf: map them to null."""
    value = float(value)
    return value if math.isfinite(value) else None
