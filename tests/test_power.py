"""The power self-test (`fedbound verify --power`): planted false variants must FAIL next to the
true claims that must PASS, and the report shows it (JSON, Markdown, HTML, printed table); the
tightness of bound checks in the summaries; the errors of a bad variant.

The expected statuses come from the instance: Yu et al.'s Theorem 1 bound is loose by about 3x
on the PR-SGD instance (tightness 0.28 in quick mode, 0.35 by default), so 0.2 times it lies
below the measured average squared gradient norm (ratio about 1.4) and must FAIL; Corollary 2's
exponent in N T is about -0.5, so a claimed -1 must FAIL; the constant-step control FAILs
(Theorem 4) while Li's decaying step (Theorem 1) PASSes the same rate check.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from convergence import Status, Verdict, check_upper_bound
from proofs_check import CLAIMS, PlantedVariant, VerifySettings, combine_checks, get_claim, variant_id
from reports.cli import build_parser, main
from reports.power import PowerRow, power_summary
from reports.report_content import power_alarms
from reports.progress import VerifyProgress
from reports.markdown import render_markdown
from reports.report_document import report_document
from reports.text_table import format_power_table, format_verdict_table
from reports.verify import verify

YU = ("yu2019.thm1", "yu2019.cor2", "control.constant-step-rate")


def _settings(tmp_path: Path, progress: VerifyProgress, seeds: int = 4) -> VerifySettings:
    # 4 seeds: with 2, Holm over 12 record points on 1 degree of freedom cannot reject (README)
    return VerifySettings(seeds=seeds, quick=True, jobs=1, progress=progress, store=str(tmp_path / "runs.sqlite"))


def test_planted_variants_fail_next_to_true_claims_and_the_report_shows_it(tmp_path: Path) -> None:
    out = tmp_path / "report"
    claims = [get_claim(cid) for cid in YU]
    progress = VerifyProgress(list(YU), enabled=False)
    outcome = verify(claims, _settings(tmp_path, progress), out, power=True, command=["verify", "--power"])

    got = {(r.verdict_id, r.expected, r.got) for r in outcome.power}
    assert got == {
        ("yu2019.thm1", Status.PASS, Status.PASS),
        ("yu2019.thm1[bound_scale=0.2]", Status.FAIL, Status.FAIL),
        ("yu2019.cor2", Status.PASS, Status.PASS),
        ("yu2019.cor2[claimed_exponent=-1.0]", Status.FAIL, Status.FAIL),
        ("control.constant-step-rate", Status.FAIL, Status.FAIL),
        ("control.constant-step-rate[step=li]", Status.PASS, Status.PASS),
    }
    assert outcome.power == outcome.power_ran and all(r.as_expected for r in outcome.power)
    bound = next(r for r in outcome.power if r.verdict_id == "yu2019.thm1[bound_scale=0.2]")
    assert bound.measured > 1 and bound.failed_checks  # measured / (0.2 bound) above 1 at some N
    # a variant changes only the check: its runs all come from the store
    for cid in ("yu2019.thm1[bound_scale=0.2]", "yu2019.cor2[claimed_exponent=-1.0]"):
        (record,) = progress.sweeps[cid]
        assert record.reused == len(record.configs) > 0

    document = json.loads((out / "verdicts.json").read_text())
    rows = document["power"]
    assert [r["verdict_id"] for r in rows][:2] == ["yu2019.thm1", "yu2019.thm1[bound_scale=0.2]"]
    assert rows[1]["params"] == {"bound_scale": 0.2} and rows[1]["as_expected"] is True
    assert [PowerRow.from_json(r) for r in rows] == list(outcome.power)
    assert "power untested" not in document["meta"]["power"]
    thm1 = next(c for c in document["claims"] if c["claim_id"] == "yu2019.thm1")
    assert thm1["evidence"]["tightness"] == thm1["measured"] and thm1["evidence"]["tightness_label"] == "upper bound"
    assert [c["claim_id"] for c in document["claims"]] == list(YU)  # variants are not claim cards

    md = (out / "report.md").read_text()
    assert "## Power self-test" in md and "power self-test: 3 claim(s) as stated (3 as expected), 3 planted" in md
    assert "| yu2019.thm1 | bound x 0.2 (bound_scale=0.2) | FAIL | FAIL | ✓ |" in md
    assert f"| {thm1['evidence']['tightness']:.3g} (upper bound) |" in md  # summary: tightness column
    assert "| tightness | finding |" in md  # sub-check tables too
    page = (out / "index.html").read_text()
    assert 'id="power"' in page and 'title="as expected">✓' in page and "✗" not in page
    text = format_verdict_table(list(outcome.verdicts), outcome.power)
    assert "as expected" in text and "(claimed_exponent=-1.0)" in text and "(upper bound)" in text

    # running a claim again without --power drops its (now stale) power rows and keeps the others
    progress = VerifyProgress(["yu2019.cor2"], enabled=False)
    again = verify([get_claim("yu2019.cor2")], _settings(tmp_path, progress), out, command=["verify"])
    assert {r.claim_id for r in again.power} == {"yu2019.thm1", "control.constant-step-rate"}
    assert len(json.loads((out / "verdicts.json").read_text())["power"]) == 4


def test_a_variant_that_is_not_false_is_an_alarm_and_exit_status_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # bound_scale 0.9 keeps Theorem 1 true on the instance (tightness about 0.3): it must not FAIL,
    # so a row expecting FAIL is not as expected, which --power reports and signals with exit 1.
    claim = get_claim("yu2019.thm1")
    loose = PlantedVariant("not false", "0.9 times the bound: still above the measurements", {"bound_scale": 0.9},
                           sub_check="explicit bound")
    monkeypatch.setitem(CLAIMS, claim.id, dataclasses.replace(claim, variants=(loose,)))
    out = tmp_path / "report"
    # 4 seeds: with 2, the gamma upper limit of a skewed mean cannot certify any bound (INCONCLUSIVE, not PASS).
    argv = ["verify", "--quick", "--seeds", "4", "--power", "--claim", claim.id, "--out", str(out), "--no-progress"]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert "ALARM: yu2019.thm1[bound_scale=0.9]: planted variant expected FAIL, got PASS" in printed
    assert "✗ NO" in printed and "1 NOT" in printed
    assert "ALARM: 1 planted variant(s)" in (out / "report.md").read_text()
    assert '<strong class="unmet" title="NOT as expected">✗ NO</strong>' in (out / "index.html").read_text()


def test_cli_power_on_the_control_prints_the_power_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["verify", "--power"]).power is True
    assert build_parser().parse_args(["verify"]).power is False
    argv = ["verify", "--quick", "--power", "--claim", "control.constant-step-rate", "--out", str(tmp_path / "r"),
            "--no-progress"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "true counterpart: decaying step (step=li)  PASS      PASS  ✓" in printed
    assert "power self-test: 1 claim(s) as stated (1 as expected), 1 planted variant(s) (1 as expected)" in printed


def test_power_refuses_claims_without_variants_and_bad_parameters_before_running(tmp_path: Path) -> None:
    claim = get_claim("yu2019.thm1")
    progress = VerifyProgress([claim.id], enabled=False)
    settings = _settings(tmp_path, progress)
    bare = dataclasses.replace(claim, variants=(), no_variant="a test's claim without variants")
    with pytest.raises(ValueError, match=r"^--power: none of the selected claims \(yu2019.thm1\) has a planted variant"):
        verify([bare], settings, tmp_path / "a", power=True, command=["verify"])
    # a variant's parameters are checked when its claim is built, so a misspelt one never reaches a run
    with pytest.raises(ValueError, match=r"claim 'yu2019.thm1' has no parameter 'bound_sclae' \(it takes clients, "
                                         r"horizons, seeds, bound_scale\)"):
        dataclasses.replace(claim, variants=(PlantedVariant("typo", "a misspelt parameter", {"bound_sclae": 0.2},
                                                            sub_check="explicit bound"),))
    with pytest.raises(ValueError, match=r"^bound_scale: claim 'yu2019.thm1' needs a finite number > 0, got -0.2"):
        dataclasses.replace(claim, variants=(PlantedVariant("negative", "a negative scale", {"bound_scale": -0.2},
                                                            sub_check="explicit bound"),))
    assert not (tmp_path / "a" / "verdicts.json").exists()
    assert progress.computed == 0  # refused before any run
    with pytest.raises(ValueError, match=r"claim 'yu2019.cor2' has no parameter 'exponent'"):
        get_claim("yu2019.cor2").evaluate(settings, exponent=-1.0)


def test_every_registered_variant_is_accepted_by_its_evaluator() -> None:
    with_variants = {c.id for c in CLAIMS.values() if c.variants}
    assert set(YU) <= with_variants
    for claim in CLAIMS.values():
        for variant in claim.variants:
            claim.check_params(variant.params)
            assert variant.id_for(claim.id).startswith(claim.id + "[")


def test_planted_variant_and_its_id() -> None:
    assert variant_id("ding2020.thm1", {"bound_scale": 0.5}) == "ding2020.thm1[bound_scale=0.5]"
    assert variant_id("x", {"a": 1e-5, "flag": True, "step": "li"}) == "x[a=1e-05,flag=True,step=li]"
    assert variant_id("x", {}) == "x"
    v = PlantedVariant("n", "d", {"bound_scale": 0.5}, sub_check="explicit bound")
    assert v.expected is Status.FAIL and v.id_for("c") == "c[bound_scale=0.5]"
    with pytest.raises(TypeError):
        v.params["bound_scale"] = 1.0  # frozen: the registry's variants cannot be changed in place
    for params, field in (({}, "params"), ({"not an id": 1}, "params"), ({"c": float("nan")}, "params.c"),
                          ({"c": [1]}, "params.c")):
        with pytest.raises(ValueError, match=f"^{field}: "):
            PlantedVariant("n", "d", params, sub_check="explicit bound")
    with pytest.raises(ValueError, match="^variants: claim 'yu2019.thm1' lists the same parameters twice"):
        dataclasses.replace(get_claim("yu2019.thm1"),
                            variants=(v, PlantedVariant("m", "e", {"bound_scale": 0.5}, sub_check="explicit bound")))


def test_summary_shows_the_tightness_of_bound_sub_checks_when_the_headline_is_a_rate() -> None:
    # li2020.thm1's shape: a rate headline and an explicit-bound sub-check. mean 0.5 under a bound of
    # 1 at every point is an upper bound of tightness 0.5 (< 0.9: not "tight").
    x = np.array([1.0, 2.0, 4.0])
    bound = check_upper_bound("c/bound", x, np.full((1, 3), 0.5), np.ones(3), deterministic=True)
    rate = Verdict("c/rate", Status.PASS, -1.2, -1.0, (-1.3, -1.1))
    claim = combine_checks("c", [("explicit bound", bound), ("rate", rate)], headline=rate)
    assert claim.tightness is None and "tightness" not in claim.to_json()["evidence"]  # the headline is a rate
    md = render_markdown(report_document([claim]))
    assert "| explicit bound: 0.5 (upper bound) |" in md  # summary cell
    assert "| explicit bound | PASS | 0.5 | 1 |" in md and "| 0.5 (upper bound) |" in md  # sub-check table
    assert "1 bound sub-check(s): 0.5..0.5 (upper bound)" in format_verdict_table([claim])
    headline = combine_checks("d", [("explicit bound", bound)], headline=bound)
    assert headline.tightness.ratio == 0.5 and headline.tightness.label == "upper bound"


def _sub(name: str, status: Status, p_fail: float | None = None, n_seeds: int = 4) -> tuple[str, Verdict]:
    return name, Verdict(name, status, 1.0, 1.0, evidence={"n_seeds": n_seeds}, p_fail=p_fail)


_BOUND = PlantedVariant("bound x 0.1", "the bound divided by 10", {"bound_scale": 0.1}, sub_check="explicit bound")
_STATED = combine_checks("c", [_sub("explicit bound, N = 2", Status.PASS, 1.0), _sub("rate in N T", Status.PASS, 1.0)])


def test_a_variant_counts_only_when_its_planted_sub_check_fails() -> None:
    # The claim FAILs through an unrelated sub-check: no power of the planted check is shown.
    elsewhere = combine_checks("c[bound_scale=0.1]", [_sub("explicit bound, N = 2", Status.PASS, 1.0),
                                                     _sub("rate in N T", Status.FAIL, 0.0)])
    row = PowerRow.from_verdict("c", elsewhere, _BOUND, stated=_STATED)
    assert row.got is Status.FAIL and row.planted_status is Status.PASS
    assert not row.as_expected and row.alarm
    planted = combine_checks("c[bound_scale=0.1]", [_sub("explicit bound, N = 2", Status.FAIL, 0.0),
                                                   _sub("rate in N T", Status.PASS, 1.0)])
    assert PowerRow.from_verdict("c", planted, _BOUND, stated=_STATED).as_expected


def test_power_is_untested_when_the_planted_sub_check_fails_as_stated() -> None:
    stated = combine_checks("c", [_sub("explicit bound, N = 2", Status.FAIL, 0.0), _sub("rate in N T", Status.PASS)])
    row = PowerRow.from_verdict("c", stated, _BOUND, stated=stated)
    assert row.untested.startswith("power untested: the planted sub-check 'explicit bound' FAILs already as stated")
    assert not row.as_expected and not row.alarm
    assert "1 power untested" in power_summary([row])


def test_a_variant_naming_a_sub_check_the_verdict_lacks_is_an_alarm() -> None:
    verdict = combine_checks("c[bound_scale=0.1]", [_sub("rate in N T", Status.FAIL, 0.0)])
    row = PowerRow.from_verdict("c", verdict, _BOUND, stated=_STATED)
    assert row.alarm and row.planted_status is None
    assert "plants the sub-check 'explicit bound', which this verdict does not have" in row.notes


def test_an_inconclusive_planted_sub_check_says_how_many_seeds_would_reach_power() -> None:
    # p_fail 0.2 with 4 seeds, Holm over 2 sub-checks at 5%: S' = 4 (z_{1-0.0125} / z_{1-0.1})^2 = 4 (2.241/1.2816)^2
    # = 12.2, so 13 seeds (normal approximation).
    verdict = combine_checks("c[bound_scale=0.1]", [_sub("explicit bound, N = 2", Status.INCONCLUSIVE, 0.2),
                                                   _sub("rate in N T", Status.PASS, 1.0)])
    row = PowerRow.from_verdict("c", verdict, _BOUND, stated=_STATED)
    assert row.alarm and "about 13 seeds would reach power after Holm over 2 sub-check(s)" in row.advice
    long_notes = "x" * 500 + " the end of a long description"
    alarm = power_alarms([dataclasses.replace(row, notes=long_notes)])[0]
    assert alarm.endswith("the end of a long description)")  # never cut
    assert row.advice in alarm


def test_the_printed_power_table_never_cuts_a_description_or_an_alarm() -> None:
    # issue 28: the text table (verify --power) left the descriptions out; every message is printed whole.
    verdict = combine_checks("c[bound_scale=0.1]", [_sub("explicit bound, N = 2", Status.INCONCLUSIVE, 0.2),
                                                   _sub("rate in N T", Status.PASS, 1.0)])
    description = "the bound divided by 10, " + "so that the measured gap lies above it " * 12 + "(the end)"
    notes = "y" * 400 + " the end of the notes"
    row = dataclasses.replace(PowerRow.from_verdict("c", verdict, _BOUND, stated=_STATED), description=description,
                              notes=notes)
    stated = PowerRow.from_verdict("c", _STATED)
    text = format_power_table([stated, row])
    assert f"  c[bound_scale=0.1]: {description}" in text.splitlines()
    (alarm,) = [line for line in text.splitlines() if line.startswith("ALARM: ")]
    assert alarm == f"ALARM: {power_alarms([row])[0]}" and alarm.endswith(f"({notes})")
    assert "bound x 0.1 (bound_scale=0.1)" in text  # the variant's cell, whole


def test_a_variant_must_name_its_sub_check() -> None:
    with pytest.raises(ValueError, match="^sub_check: planted variant 'n' must name the sub-check it plants"):
        PlantedVariant("n", "d", {"bound_scale": 0.5}, sub_check=" ")
    with pytest.raises(TypeError):
        PlantedVariant("n", "d", {"bound_scale": 0.5})  # type: ignore[call-arg]


def test_a_claim_that_fails_as_stated_is_a_finding_not_an_alarm() -> None:
    stated = combine_checks("c", [_sub("explicit bound, N = 2", Status.FAIL, 0.0)])
    row = PowerRow.from_verdict("c", stated)
    assert not row.as_expected and not row.alarm
    assert "1 not PASS: a finding about the statement" in power_summary([row])
    control = PowerRow.from_verdict("c", dataclasses.replace(stated, status=Status.PASS, expected=Status.FAIL))
    assert control.alarm  # a negative control that does not FAIL is an alarm
