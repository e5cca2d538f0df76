"""Verdicts: what a checker or a claim returns.

Semantics (DESIGN.md, "Contracts"): an upper-bound claim PASSes when the measured quantity stays
below the bound with its confidence interval (or decays at least as fast as the claimed
exponent), FAILs when the data show it provably does not, and is INCONCLUSIVE when the data
cannot tell (too few points, an interval too wide, unmet hypotheses).

A ``Verdict`` is immutable and built once. A claim made of several checks holds them as typed
fields: ``checks`` (``SubCheck``: a named verdict that counts towards the claim's status) and
``uninformative`` (``Uninformative``: a sub-check that could not have failed on its instance, listed
with the reason and never counted as a PASS). ``evidence`` holds the per-point data (record
points, means, bounds, constants) as a read-only mapping: nested mappings are read-only too and
sequences are tuples, so ``verdict.evidence["x"] = ...`` raises; an evaluator that adds figures
builds a new verdict with ``Verdict.with_evidence``.

JSON form (``to_json``, read back by ``from_json``; the keys of ``verdicts.json``'s claims):
``claim_id``, ``status``, ``measured``, ``theoretical``, ``interval``, ``hypotheses`` (``name``,
``met``, ``detail``), ``notes``, ``evidence``, ``expected``, ``hypotheses_met``, ``p_fail``,
``cannot_fail``. A combined verdict
writes its sub-checks into the evidence, first: ``evidence.checks`` (each sub-check's own verdict
object plus its ``name``) and, when some sub-check was uninformative, ``evidence.uninformative``
(``sub-check``, ``status``, ``reason``, ``the data alone`` and its ``verdict``).
"""

from __future__ import annotations

import dataclasses
import enum
import html
import math
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Status", "Hypothesis", "Tightness", "Verdict", "SubCheck", "Uninformative"]

_TYPED_KEYS = ("checks", "uninformative", "tightness", "tightness_label")
"""Evidence keys that are typed fields of a Verdict, written into the JSON evidence by ``to_json``."""


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


TIGHTNESS_LABELS = ("tight", "upper bound", "lower bound", "violated")
"""What a bound check's tightness says (``convergence.bound_checks``): "tight" when the measured
quantity reaches the bound to within its tight ratio, "violated" beyond the bound, else "upper bound"
or "lower bound" (a valid bound, that far from the data)."""


@dataclass(frozen=True)
class Tightness:
    """How close a bound check's data come to the bound: ``ratio`` is the extreme over the record
    points of measured / bound (its largest for an upper bound, smallest for a lower bound) and
    ``label`` one of ``TIGHTNESS_LABELS``. In JSON it is the evidence keys ``tightness`` (the ratio)
    and ``tightness_label``."""

    ratio: float
    label: str

    def __post_init__(self) -> None:
        if isinstance(self.ratio, bool) or not isinstance(self.ratio, (int, float)):
            raise ValueError(f"tightness: expected a number, got {self.ratio!r}")
        if self.label not in TIGHTNESS_LABELS:
            raise ValueError(f"tightness_label: expected one of {TIGHTNESS_LABELS}, got {self.label!r}")
        object.__setattr__(self, "ratio", float(self.ratio))


@dataclass(frozen=True)
class Verdict:
    """The evidence-backed result of one check or claim.

    ``measured`` and ``theoretical`` are the headline figures (for a rate check: the fitted and
    the claimed exponent; for a bound check: the worst ratio measured / bound and 1);
    ``interval`` is the confidence interval of ``measured`` (None when not applicable);
    ``evidence`` holds JSON-able per-point data (record points, values, bounds), read-only
    (module docstring); ``expected`` is set for negative controls; ``checks`` are the named
    sub-checks a claim combined and ``uninformative`` those it listed without counting them
    (``proofs_check.combine_checks``). ``p_fail`` is the p-value of the test whose rejection makes
    the verdict FAIL (it FAILs at level alpha iff p_fail <= alpha; None for a verdict that is no
    test), which Holm's procedure reads when a claim combines several checks
    (``convergence.check_rules``); ``cannot_fail`` is non-empty, the reason, when the check could
    not have failed on its instance (its status is then INCONCLUSIVE and a claim lists it as
    uninformative).

    Raises:
        ValueError: naming the field: a status that is not a Status, a hypothesis that is not a
            Hypothesis, a sub-check that is not a SubCheck / Uninformative, evidence that is not a
            mapping of JSON-able values or that holds ``checks`` / ``uninformative``.
    """

    claim_id: str
    status: Status
    measured: float
    theoretical: float
    interval: tuple[float, float] | None = None
    hypotheses: tuple[Hypothesis, ...] = ()
    notes: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    expected: Status | None = None
    checks: tuple[SubCheck, ...] = ()
    uninformative: tuple[Uninformative, ...] = ()
    p_fail: float | None = None
    cannot_fail: str = ""
    tightness: Tightness | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            raise ValueError(f"status: expected a Status, got {self.status!r}")
        if self.p_fail is not None:
            if isinstance(self.p_fail, bool) or not isinstance(self.p_fail, (int, float)) or not 0.0 <= self.p_fail <= 1.0:
                raise ValueError(f"p_fail: expected None or a probability in [0, 1], got {self.p_fail!r}")
            object.__setattr__(self, "p_fail", float(self.p_fail))
        if not isinstance(self.cannot_fail, str):
            raise ValueError(f"cannot_fail: expected a string (the reason, or empty), got {self.cannot_fail!r}")
        if self.cannot_fail and self.status is not Status.INCONCLUSIVE:
            raise ValueError(f"cannot_fail: a check that could not have failed is INCONCLUSIVE, got {self.status.value}")
        if self.expected is not None and not isinstance(self.expected, Status):
            raise ValueError(f"expected: expected None or a Status, got {self.expected!r}")
        if self.tightness is not None and not isinstance(self.tightness, Tightness):
            raise ValueError(f"tightness: expected None or a Tightness, got {type(self.tightness).__name__}")
        object.__setattr__(self, "hypotheses", _typed_tuple("hypotheses", self.hypotheses, Hypothesis))
        object.__setattr__(self, "checks", _typed_tuple("checks", self.checks, SubCheck))
        object.__setattr__(self, "uninformative", _typed_tuple("uninformative", self.uninformative, Uninformative))
        if not isinstance(self.evidence, Mapping):
            raise ValueError(f"evidence: expected a mapping, got {type(self.evidence).__name__}")
        for key in _TYPED_KEYS:
            if key in self.evidence:
                raise ValueError(f"evidence.{key}: the typed field Verdict.{key.removesuffix('_label')} holds it, "
                                 "not evidence")
        object.__setattr__(self, "evidence", _frozen(self.evidence, "evidence"))

    @property
    def hypotheses_met(self) -> bool:
        """True when every declared hypothesis holds on the configuration."""
        return all(h.met for h in self.hypotheses)

    @property
    def as_expected(self) -> bool:
        """For negative controls: did the check come out as the control expects?"""
        return self.expected is None or self.status is self.expected

    def with_evidence(self, **extra: Any) -> Verdict:
        """This verdict with ``extra`` added to its evidence (after the keys it has). A key it
        already has is a ValueError naming it: evidence is added, never replaced."""
        for key in extra:
            if key in self.evidence:
                raise ValueError(f"evidence.{key}: already set on {self.claim_id!r}; with_evidence only adds keys")
        return dataclasses.replace(self, evidence={**self.evidence, **extra})

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (module docstring); non-finite headline figures become None."""
        evidence: dict[str, Any] = {}
        if self.checks or self.uninformative:
            evidence["checks"] = [c.to_json() for c in self.checks]
        if self.uninformative:
            evidence["uninformative"] = [u.to_json() for u in self.uninformative]
        evidence.update(_thawed(self.evidence))
        if self.tightness is not None:
            evidence.update(tightness=_finite_or_none(self.tightness.ratio), tightness_label=self.tightness.label)
        return {
            "claim_id": self.claim_id,
            "status": self.status.value,
            "measured": _finite_or_none(self.measured),
            "theoretical": _finite_or_none(self.theoretical),
            "interval": None if self.interval is None else [_finite_or_none(v) for v in self.interval],
            "hypotheses": [dataclasses.asdict(h) for h in self.hypotheses],
            "notes": self.notes,
            "evidence": evidence,
            "expected": None if self.expected is None else self.expected.value,
            "hypotheses_met": self.hypotheses_met,
            "p_fail": self.p_fail,
            "cannot_fail": self.cannot_fail,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Verdict:
        """The verdict ``to_json`` wrote (null figures read back as NaN), sub-checks included;
        KeyError/ValueError on a malformed object."""
        interval = data.get("interval")
        expected = data.get("expected")
        evidence = dict(data.get("evidence") or {})
        checks = evidence.pop("checks", [])
        uninformative = evidence.pop("uninformative", [])
        ratio, label = evidence.pop("tightness", None), evidence.pop("tightness_label", None)
        return cls(
            claim_id=str(data["claim_id"]),
            status=Status(data["status"]),
            measured=_float_or_nan(data["measured"]),
            theoretical=_float_or_nan(data["theoretical"]),
            interval=None if interval is None else (_float_or_nan(interval[0]), _float_or_nan(interval[1])),
            hypotheses=tuple(Hypothesis(str(h["name"]), bool(h["met"]), str(h["detail"])) for h in data["hypotheses"]),
            notes=str(data.get("notes", "")),
            evidence=evidence,
            expected=None if expected is None else Status(expected),
            checks=tuple(SubCheck.from_json(c) for c in checks),
            uninformative=tuple(Uninformative.from_json(u) for u in uninformative),
            p_fail=None if data.get("p_fail") is None else float(data["p_fail"]),
            cannot_fail=str(data.get("cannot_fail", "")),
            tightness=None if label is None else Tightness(_float_or_nan(ratio), str(label)),
        )

    def to_frame(self) -> Any:
        """A pandas DataFrame of the verdict and its sub-checks (one row each: ``check``,
        ``status``, ``measured``, ``theoretical``, ``lo``, ``hi``, ``notes``): the verdict itself,
        its counted sub-checks, then its uninformative ones (INCONCLUSIVE, the reason in the notes).
        Needs pandas (``pip install 'fedbound[data]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas: pip install 'fedbound[data]'") from None
        named = [(self.claim_id, self)] + [(c.name, c.verdict) for c in self.checks]
        named += [(u.name, u.verdict) for u in self.uninformative]
        rows = [(name, v.status.value, float(v.measured), float(v.theoretical),
                 *(v.interval if v.interval is not None else (math.nan, math.nan)), v.notes) for name, v in named]
        return pd.DataFrame(rows, columns=["check", "status", "measured", "theoretical", "lo", "hi", "notes"])

    def _repr_html_(self) -> str:
        """The verdict as a small HTML card for notebooks: status, figures, hypotheses, sub-checks
        (counted, then uninformative with their reasons)."""
        e = html.escape
        out = [f"<p><b>{e(self.claim_id)}</b>: <b>{self.status.value}</b> &mdash; measured {self.measured:.4g}, "
               f"theoretical {self.theoretical:.4g}, interval {_interval_text(self.interval)}</p>"]
        if self.hypotheses:
            out.append("<ul>" + "".join(f"<li>{'met' if h.met else '<b>UNMET</b>'}: {e(h.name)}: {e(h.detail)}</li>"
                                        for h in self.hypotheses) + "</ul>")
        if self.checks:
            out.append("<table><tr><th>sub-check</th><th>status</th><th>measured</th><th>theoretical</th></tr>"
                       + "".join(f"<tr><td>{e(c.name)}</td><td>{c.verdict.status.value}</td>"
                                 f"<td>{c.verdict.measured:.4g}</td><td>{c.verdict.theoretical:.4g}</td></tr>"
                                 for c in self.checks) + "</table>")
        if self.uninformative:
            out.append("<p>Not counted (uninformative):</p><ul>"
                       + "".join(f"<li>{e(u.name)}: {e(u.reason)}</li>" for u in self.uninformative) + "</ul>")
        if self.notes:
            out.append(f"<p>{e(self.notes)}</p>")
        return "".join(out)


@dataclass(frozen=True)
class SubCheck:
    """One named sub-check of a combined verdict, counted towards its status: ``name`` says what
    it checks in the claim ("explicit bound (eq. 5)"), ``verdict`` is the check's own verdict."""

    name: str
    verdict: Verdict

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: a sub-check needs a non-empty name, got {self.name!r}")
        if not isinstance(self.verdict, Verdict):
            raise ValueError(f"verdict: sub-check {self.name!r} needs a Verdict, got {type(self.verdict).__name__}")

    def to_json(self) -> dict[str, Any]:
        """The verdict's JSON object with ``name`` added."""
        return {**self.verdict.to_json(), "name": self.name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubCheck:
        """The sub-check ``to_json`` wrote; KeyError/ValueError on a malformed object."""
        return cls(str(data["name"]), Verdict.from_json(data))


@dataclass(frozen=True)
class Uninformative:
    """A sub-check that cannot confirm its statement on the instance it ran: its name, the reason
    (e.g. "the gap is <= 0, so the bound holds trivially"), what the data alone gave, and the
    verdict shown for it (INCONCLUSIVE; its notes are the reason, then the data alone). It is kept
    in the claim's verdict (``Verdict.uninformative``) and never counted as a PASS."""

    name: str
    reason: str
    alone: str
    verdict: Verdict

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: an uninformative sub-check needs a non-empty name, got {self.name!r}")
        if not isinstance(self.reason, str) or not self.reason:
            raise ValueError(f"reason: uninformative sub-check {self.name!r} needs a reason")
        if not isinstance(self.verdict, Verdict):
            raise ValueError(f"verdict: uninformative sub-check {self.name!r} needs a Verdict, got "
                             f"{type(self.verdict).__name__}")
        if self.verdict.status is not Status.INCONCLUSIVE:
            raise ValueError(f"verdict: uninformative sub-check {self.name!r} must be shown INCONCLUSIVE, got "
                             f"{self.verdict.status.value}")

    @classmethod
    def of(cls, name: str, verdict: Verdict, reason: str) -> Uninformative:
        """``verdict`` recast as INCONCLUSIVE because on this instance it is uninformative for ``reason``."""
        alone = f"{verdict.status.value}: {verdict.notes}"
        shown = dataclasses.replace(verdict, status=Status.INCONCLUSIVE,
                                    notes=f"uninformative: {reason}. The data alone give {alone}")
        return cls(name, reason, alone, shown)

    @classmethod
    def of_check(cls, name: str, verdict: Verdict) -> Uninformative:
        """A check that found itself uninformative (``verdict.cannot_fail`` set, e.g. a bound beyond
        the quantity's ceiling: ``convergence.Ceiling``), listed under ``name`` with its own reason."""
        if not verdict.cannot_fail:
            raise ValueError(f"verdict: {name!r} did not find itself uninformative (cannot_fail is empty)")
        prefix = "The data alone give "
        alone = verdict.notes.split(prefix, 1)[1] if prefix in verdict.notes else verdict.notes
        return cls(name, verdict.cannot_fail, alone, verdict)

    def to_json(self) -> dict[str, Any]:
        """``sub-check``, ``status``, ``reason``, ``the data alone`` and the shown ``verdict``."""
        return {"sub-check": self.name, "status": self.verdict.status.value, "reason": self.reason,
                "the data alone": self.alone, "verdict": self.verdict.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Uninformative:
        """The entry ``to_json`` wrote; KeyError/ValueError on a malformed object."""
        return cls(str(data["sub-check"]), str(data["reason"]), str(data["the data alone"]),
                   Verdict.from_json(data["verdict"]))


def _typed_tuple(name: str, items: Sequence[Any], kind: type) -> tuple[Any, ...]:
    """``items`` as a tuple, each a ``kind``; ValueError naming the field and the position otherwise."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise ValueError(f"{name}: expected a sequence of {kind.__name__}, got {type(items).__name__}")
    out = tuple(items)
    for i, item in enumerate(out):
        if not isinstance(item, kind):
            raise ValueError(f"{name}[{i}]: expected a {kind.__name__}, got {type(item).__name__}")
    return out


def _frozen(value: Any, where: str) -> Any:
    """A read-only copy of JSON-able data: mappings become read-only mappings (string keys),
    lists, tuples and NumPy arrays tuples; scalars (None, bool, numbers, strings, enums) stay.
    NumPy is not imported here: a NumPy value exists only once its caller has imported it."""
    numpy = sys.modules.get("numpy")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: keys must be strings, got {key!r}")
            out[key] = _frozen(item, f"{where}.{key}")
        return types.MappingProxyType(out)
    if numpy is not None and isinstance(value, numpy.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item, f"{where}[{i}]") for i, item in enumerate(value))
    if value is None or isinstance(value, (bool, int, float, str, enum.Enum)):
        return value
    if numpy is not None and isinstance(value, numpy.generic):
        return value
    raise ValueError(f"{where}: evidence must be JSON-able data, got a {type(value).__name__}")


def _thawed(value: Any) -> Any:
    """The plain (dict / list) form of ``_frozen`` data, for JSON."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thawed(item) for item in value]
    return value


def _interval_text(interval: tuple[float, float] | None) -> str:
    return "n/a" if interval is None else f"[{interval[0]:.4g}, {interval[1]:.4g}]"


def _float_or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _finite_or_none(value: float) -> float | None:
    """JSON has no NaN/inf: map them to null."""
    value = float(value)
    return value if math.isfinite(value) else None
