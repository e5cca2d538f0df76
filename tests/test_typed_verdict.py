"""An immutable Verdict built once: typed sub-checks, read-only evidence, with_evidence, and a
JSON form that round-trips (sub-checks and uninformative entries included) with the keys of
verdicts.json."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from convergence import Hypothesis, Status, SubCheck, Tightness, Uninformative, Verdict, check_upper_bound
from proofs_check import combine_checks

X = np.array([1.0, 2.0, 4.0, 8.0])


def _bound_check() -> Verdict:
    # mean 0.5 under a bound of 1 at every point, exact data: PASS with tightness 0.5 ("upper bound")
    return check_upper_bound("c/bound", X, np.full((1, 4), 0.5), np.ones(4), deterministic=True)


def _claim() -> Verdict:
    """A combined verdict with a bound sub-check (per-point evidence), a rate sub-check, an
    uninformative sub-check and evidence added afterwards."""
    ok = Hypothesis("eta <= 1/L", True, "0.1 <= 0.5")
    rate = Verdict("c/rate", Status.PASS, -1.2, -1.0, (-1.3, -1.1), (ok,), "fitted", {"x": [1.0, 2.0], "n_seeds": 2})
    trivial = Verdict("c/apart", Status.PASS, -0.1, 1.0, (-0.2, 0.0), notes="gap <= 0")
    skipped = Uninformative.of("bound, blocks apart", trivial, "the gap is <= 0, so the bound holds trivially")
    claim = combine_checks("c", [("explicit bound", _bound_check()), ("rate", rate)], headline=rate,
                           notes="headline: the rate", uninformative=[skipped])
    return claim.with_evidence(constants=[{"instance": "a", "L": 2.0}], planted={"bound_scale": 1.0})


def test_evidence_is_read_only_at_every_level() -> None:
    source = {"x": [1.0, 2.0], "fit": {"exponent": -1.0, "points": [1, 2]}}
    v = Verdict("c", Status.PASS, 1.0, 1.0, evidence=source)
    source["x"].append(3.0)  # the verdict holds its own copy
    source["extra"] = 1
    assert v.evidence["x"] == (1.0, 2.0) and "extra" not in v.evidence
    with pytest.raises(TypeError):
        v.evidence["x"] = (0.0,)  # type: ignore[index]
    with pytest.raises(TypeError):
        v.evidence["fit"]["exponent"] = 0.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        v.evidence["fit"]["points"].append(3)  # type: ignore[attr-defined]
    arrays = Verdict("c", Status.PASS, 1.0, 1.0, evidence={"mean": np.array([[1.0, 2.0], [3.0, 4.0]])})
    assert arrays.evidence["mean"] == ((1.0, 2.0), (3.0, 4.0))


def test_checkers_return_immutable_verdicts() -> None:
    v = _bound_check()
    assert v.evidence["bound"] == (1.0, 1.0, 1.0, 1.0) and v.evidence["test"]["n_points"] == 4
    with pytest.raises(TypeError):
        v.evidence["tightness"] = 2.0  # type: ignore[index]


def test_with_evidence_builds_a_new_verdict_and_never_replaces_a_key() -> None:
    v = _bound_check()
    w = v.with_evidence(constant=0.25)
    assert w.evidence["constant"] == 0.25 and "constant" not in v.evidence
    assert list(w.evidence)[-1] == "constant" and list(w.evidence)[:-1] == list(v.evidence)
    assert (w.status, w.measured, w.checks) == (v.status, v.measured, v.checks)
    with pytest.raises(ValueError, match=r"^evidence\.bound: already set"):
        v.with_evidence(bound=1.0)
    with pytest.raises(ValueError, match=r"^evidence\.tightness: the typed field Verdict\.tightness holds it"):
        v.with_evidence(tightness=1.0)  # a typed field, written into the JSON evidence by to_json


def test_tightness_is_typed_and_round_trips_through_json() -> None:
    v = _bound_check()
    assert v.tightness == Tightness(v.measured, "upper bound") and "tightness" not in v.evidence
    data = v.to_json()
    assert (data["evidence"]["tightness"], data["evidence"]["tightness_label"]) == (v.measured, "upper bound")
    assert Verdict.from_json(data) == v
    with pytest.raises(ValueError, match=r"^tightness_label: expected one of"):
        Tightness(0.5, "loose")


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"evidence": {"checks": []}}, r"evidence\.checks"),
    ({"evidence": {"uninformative": []}}, r"evidence\.uninformative"),
    ({"evidence": {"bad": object()}}, r"evidence\.bad"),
    ({"evidence": {"nested": {"deep": [1.0, {1, 2}]}}}, r"evidence\.nested\.deep\[1\]"),
    ({"evidence": {1: 2.0}}, "evidence"),
    ({"evidence": [1.0]}, "evidence"),
    ({"checks": (Verdict("s", Status.PASS, 1.0, 1.0),)}, r"checks\[0\]"),
    ({"uninformative": (SubCheck("s", Verdict("s", Status.PASS, 1.0, 1.0)),)}, r"uninformative\[0\]"),
    ({"hypotheses": ("eta <= 1/L",)}, r"hypotheses\[0\]"),
    ({"status": "PASS"}, "status"),
    ({"expected": "FAIL"}, "expected"),
])
def test_bad_fields_are_named(kwargs: dict, field: str) -> None:
    base = {"claim_id": "c", "status": Status.PASS, "measured": 1.0, "theoretical": 1.0}
    with pytest.raises(ValueError, match=f"^{field}"):
        Verdict(**{**base, **kwargs})


def test_uninformative_is_shown_inconclusive_with_its_reason() -> None:
    trivial = Verdict("x", Status.PASS, -0.1, 1.0, notes="gap <= 0")
    u = Uninformative.of("bound", trivial, "the gap is <= 0")
    assert u.verdict.status is Status.INCONCLUSIVE and u.alone == "PASS: gap <= 0"
    assert u.verdict.notes == "uninformative: the gap is <= 0. The data alone give PASS: gap <= 0"
    with pytest.raises(ValueError, match="^verdict: .* must be shown INCONCLUSIVE"):
        Uninformative("bound", "the gap is <= 0", "PASS", trivial)
    with pytest.raises(ValueError, match="^name"):
        SubCheck("", trivial)


def test_combine_checks_keeps_the_sub_checks_as_typed_fields() -> None:
    claim = _claim()
    assert [c.name for c in claim.checks] == ["explicit bound", "rate"]
    assert claim.checks[0].verdict == _bound_check()
    assert [u.name for u in claim.uninformative] == ["bound, blocks apart"]
    assert claim.status is Status.PASS and claim.measured == -1.2  # the headline: the rate
    assert "tightness" not in claim.evidence  # the headline is not a bound check
    assert "Not counted (uninformative), bound, blocks apart" in claim.notes


def test_json_round_trips_with_sub_checks_and_uninformative_entries() -> None:
    claim = _claim()
    data = json.loads(json.dumps(claim.to_json(), allow_nan=False))
    assert Verdict.from_json(data) == claim
    # the keys of verdicts.json (README): sub-checks first in the evidence, then the verdict's own keys
    assert list(data) == ["claim_id", "status", "measured", "theoretical", "interval", "hypotheses", "notes",
                          "evidence", "expected", "hypotheses_met", "p_fail", "cannot_fail"]
    assert list(data["evidence"]) == ["checks", "uninformative", "constants", "planted"]
    bound = data["evidence"]["checks"][0]
    assert bound["name"] == "explicit bound" and bound["claim_id"] == "c/bound" and bound["status"] == "PASS"
    assert bound["evidence"]["tightness"] == 0.5 and bound["evidence"]["tightness_label"] == "upper bound"
    entry = data["evidence"]["uninformative"][0]
    assert set(entry) == {"sub-check", "status", "reason", "the data alone", "verdict"}
    assert entry["status"] == "INCONCLUSIVE" and entry["the data alone"] == "PASS: gap <= 0"
    assert entry["verdict"]["claim_id"] == "c/apart" and entry["verdict"]["measured"] == -0.1


def test_json_of_a_claim_with_only_uninformative_sub_checks() -> None:
    trivial = Verdict("x", Status.PASS, math.nan, 1.0, (math.nan, math.inf), notes="no fit")
    alone = combine_checks("x", [], uninformative=[Uninformative.of("rate", trivial, "no power law")])
    data = json.loads(json.dumps(alone.to_json(), allow_nan=False))
    assert data["evidence"]["checks"] == [] and data["measured"] is None and data["interval"] == [None, None]
    back = Verdict.from_json(data)
    assert back.checks == () and back.uninformative[0].name == "rate" and back.uninformative[0].reason == "no power law"
    assert math.isnan(back.measured) and math.isnan(back.uninformative[0].verdict.interval[1])
    # a leaf verdict writes no sub-check keys at all
    assert "checks" not in _bound_check().to_json()["evidence"]


def test_json_without_the_uninformative_verdict_is_refused() -> None:
    data = _claim().to_json()
    del data["evidence"]["uninformative"][0]["verdict"]  # the form written before sub-checks were typed
    with pytest.raises(KeyError, match="verdict"):
        Verdict.from_json(data)


def test_frame_and_notebook_card_read_the_typed_fields() -> None:
    claim = _claim()
    frame = claim.to_frame()
    assert list(frame["check"]) == ["c", "explicit bound", "rate", "bound, blocks apart"]
    assert list(frame["status"]) == ["PASS", "PASS", "PASS", "INCONCLUSIVE"]
    assert frame["measured"].iloc[1] == 0.5 and frame["lo"].iloc[2] == -1.3
    assert frame["notes"].iloc[3].startswith("uninformative: the gap is <= 0")
    card = claim._repr_html_()
    assert "<td>explicit bound</td><td>PASS</td><td>0.5</td>" in card
    assert "Not counted (uninformative)" in card and "the gap is &lt;= 0, so the bound holds trivially" in card
