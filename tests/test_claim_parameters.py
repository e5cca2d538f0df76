"""Claims with other parameters: ``ID[name=value,...]`` on the command line and in Python, one
mechanism for plan overrides and planted variants, one clear error per bad parameter, hypotheses
re-checked for the new values, the verdict's id showing them, and ``fedbound list`` showing every
parameter with its default."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from convergence import Status
from proofs_check import (
    CLAIMS,
    ClaimSelection,
    VerifySettings,
    get_claim,
    parse_claim_text,
    select_claim,
    variant_id,
)
from proofs_check.framework.claim_text import param_text
from reports.cli import main
from reports.progress import VerifyProgress
from reports.verify import verify

QUICK = VerifySettings(quick=True, seeds=2, jobs=1, progress=False)


# ------------------------------------------------------------------------------- the text form
@pytest.mark.parametrize("params", [
    {}, {"E": 10, "seeds": 16}, {"bound_scale": 1e-05}, {"K_grid": (32, 128, 512)}, {"eta_grid": (0.001, 0.3)},
    {"identical_instance": False, "claimed_exponent": -1.5}, {"step": "li"},
])
def test_ids_read_back_as_the_parameters_they_show(params: dict) -> None:
    text = variant_id("c.x", params)
    claim_id, pairs = parse_claim_text(text)
    assert claim_id == "c.x" and [name for name, _ in pairs] == list(params)
    assert [value for _, value in pairs] == [param_text(v) for v in params.values()]
    assert text == ("c.x" if not params else f"c.x[{','.join(f'{k}={v}' for k, v in pairs)}]")


@pytest.mark.parametrize("text", ["", "li2020.thm1[E=10", "li2020.thm1[]", "li2020.thm1[E]", "li2020.thm1[E=]",
                                  "li2020.thm1[E=1,E=2]", "li2020.thm1[K=[1,2]", "li2020.thm1]", "li2020.thm1[1x=2]"])
def test_malformed_claim_text_is_one_error_naming_claim(text: str) -> None:
    with pytest.raises(ValueError, match="^claim: "):
        parse_claim_text(text)


def test_selection_converts_text_by_the_parameter_type_and_normalises_the_id() -> None:
    selection = select_claim(" li2020.thm1[E=10, seeds=16 ,bound_scale=1e-5] ")
    assert dict(selection.params) == {"E": 10, "seeds": 16, "bound_scale": 1e-05}
    assert type(selection.params["E"]) is int and type(selection.params["bound_scale"]) is float
    assert selection.id == "li2020.thm1[E=10,seeds=16,bound_scale=1e-05]"
    grid = select_claim("ding2020.thm1[K_grid=[32, 128,512],identical_instance=False]")
    assert grid.params["K_grid"] == (32, 128, 512) and grid.params["identical_instance"] is False
    assert select_claim(grid.id) == grid  # the id reads back as the same selection
    assert select_claim("lemmas").params == {} and select_claim(get_claim("lemmas")).id == "lemmas"
    # a float parameter given an integer holds the float; Python callers get the same checks as the CLI
    assert ClaimSelection(get_claim("li2020.thm1"), {"horizon_scale": 1}).params["horizon_scale"] == 1.0


@pytest.mark.parametrize("text, message", [
    ("li2020.thm1[F=1]", r"^params: claim 'li2020.thm1' has no parameter 'F' \(it takes horizon_scale, recursion_steps, E,"),
    ("li2020.thm1[E=0]", r"^E: claim 'li2020.thm1' needs an integer >= 1, got 0$"),
    ("li2020.thm1[E=2.5]", r"^E: claim 'li2020.thm1' needs an integer >= 1, got '2.5'$"),
    ("li2020.thm1[bound_scale=-1]", r"^bound_scale: claim 'li2020.thm1' needs a finite number > 0, got -1.0$"),
    ("li2020.thm1[claimed_exponent=nan]", r"^claimed_exponent: claim 'li2020.thm1' needs a finite number, got nan$"),
    ("li2020.thm1[seeds=many]", r"^seeds: claim 'li2020.thm1' needs an integer >= 1, got 'many'$"),
    ("li2020.thm1[recursion_seeds=8]", r"^recursion_seeds: claim 'li2020.thm1' needs an integer >= 32, got 8$"),
    ("lemmas[seeds=4]", r"^seeds: claim 'lemmas' needs an integer >= 16, got 4$"),
    ("ding2020.thm1[identical_instance=yes]", r"^identical_instance: claim 'ding2020.thm1' needs True or False"),
    ("ding2020.thm1[K_grid=[64,32]]", r"^K_grid: claim 'ding2020.thm1' needs a strictly increasing tuple of integers"),
    ("ding2020.thm1[K_grid=32]", r"^K_grid: claim 'ding2020.thm1' needs a strictly increasing tuple"),
    ("li2020.thm4[E_grid=[1,2]]", r"^E_grid: claim 'li2020.thm4' needs a strictly increasing tuple of integers >= 2"),
    ("control.constant-step-rate[step=cosine]", r"^step: claim 'control.constant-step-rate' needs one of constant, li"),
    ("assumptions.constants[planted=Gamma]", r"^planted: claim 'assumptions.constants' needs one of L, mu"),
])
def test_bad_parameters_are_one_error_naming_the_field_and_the_claim(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_claim(text)


def test_python_values_are_checked_like_text() -> None:
    claim = get_claim("yu2019.thm1")
    for params, field in (({"bound_scale": True}, "bound_scale"), ({"bound_scale": math.inf}, "bound_scale"),
                          ({"clients": (2, 2)}, "clients"), ({"clients": []}, "clients"), ({"seeds": 2.0}, "seeds")):
        with pytest.raises(ValueError, match=f"^{field}: claim 'yu2019.thm1' needs "):
            claim.evaluate(QUICK, **params)


def test_fields_that_must_fit_together_are_checked_for_the_mode_before_any_run(tmp_path: Path) -> None:
    # N = 16 needs a horizon T >= 16^3 = 4096 (Corollary 2's K = 1 <= T^(1/4)/N^(3/4)): the quick horizons reach
    # 16000, so yu2019.cor2[clients=[2,16],horizons=[1000,2000]] fits in no mode, and the error names the field.
    selection = select_claim("yu2019.cor2[clients=[2,16],horizons=[1000,2000]]")  # each value is valid alone
    with pytest.raises(ValueError, match=r"^clients: claim 'yu2019.cor2': N = 16 needs a horizon T >= N\^3 = 4096"):
        selection.claim.plan_for(QUICK, selection.params)
    progress = VerifyProgress([selection.id], enabled=False)
    settings = VerifySettings(quick=True, seeds=2, jobs=1, progress=progress, store=str(tmp_path / "runs.sqlite"))
    with pytest.raises(ValueError, match="^clients: claim 'yu2019.cor2'"):
        verify(["control.constant-step-rate", selection], settings, tmp_path / "out")
    assert progress.computed == 0 and not (tmp_path / "out" / "verdicts.json").exists()  # refused before any run


def test_seeds_come_from_the_settings_raised_to_what_the_check_needs_unless_given() -> None:
    settings = VerifySettings(quick=True, seeds=3, progress=False)
    thm1 = get_claim("li2020.thm1")
    plan = thm1.plan_for(settings, {})
    assert (plan.seeds, plan.recursion_seeds) == (3, 32)  # eq. 13 needs at least 32 seeds
    assert thm1.plan_for(settings, {"seeds": 16}).seeds == 16
    assert thm1.plan_for(VerifySettings(seeds=40, progress=False), {}).recursion_seeds == 40
    assert get_claim("lemmas").plan_for(settings, {}).seeds == 16
    assert get_claim("ding2020.ordering").plan_for(VerifySettings(seeds=1, progress=False), {}).seeds == 2
    assert get_claim("li2020.thm4").plan_for(settings, {}) == get_claim("li2020.thm4").plan.quick  # no seeds field
    with pytest.raises(ValueError, match=r"^params: claim 'li2020.thm4' has no parameter 'seeds'"):
        select_claim("li2020.thm4[seeds=4]")  # deterministic: no seeds to change, and nothing is silently ignored


# ----------------------------------------------------------------------- a claim with other values
def test_other_values_rerun_the_hypotheses_and_show_in_the_verdict_id() -> None:
    # eta = 0.3 >= 1/(4 + mu): the lower bound's hypothesis (App. C.4) is unmet for the new grid, and reported
    selection = select_claim("li2020.thm4[eta_grid=[0.001,0.01,0.3]]")
    verdict = selection.evaluate(QUICK).verdict
    assert verdict.claim_id == "li2020.thm4[eta_grid=[0.001,0.01,0.3]]"
    small = {h.name: h for h in verdict.hypotheses}["eta < 1/(4 + mu) (Appendix C.4)"]
    assert not small.met and "max eta = 0.3" in small.detail
    assert verdict.status is not Status.PASS
    lower = next(c.verdict for c in verdict.checks if c.name == "lower bound (eq. 34)")
    assert lower.status is Status.INCONCLUSIVE and not lower.hypotheses_met
    # the claim as stated meets it (its quick grid stops at eta = 0.03)
    stated = get_claim("li2020.thm4").evaluate(QUICK).verdict
    assert stated.claim_id == "li2020.thm4" and all(h.met for h in stated.hypotheses)


def test_li_thm1_with_another_E_checks_the_step_size_conditions_for_it(tmp_path: Path) -> None:
    settings = VerifySettings(quick=True, seeds=2, jobs=1, progress=False, store=str(tmp_path / "runs.sqlite"))
    verdict = select_claim("li2020.thm1[E=10,horizon_scale=0.05,recursion_steps=20]").evaluate(settings).verdict
    assert verdict.claim_id == "li2020.thm1[E=10,horizon_scale=0.05,recursion_steps=20]"
    hypotheses = {h.name: h for h in verdict.hypotheses}
    for label in ("counterexample", "synthetic(1,1)"):
        gamma = hypotheses[f"[{label}] gamma = max{{8 kappa, E}}"]
        assert gamma.met and "E = 10" in gamma.detail
        assert hypotheses[f"[{label}] eta_1 <= 1/(4L)"].met
    assert [row["E"] for row in verdict.evidence["constants"]] == [10, 10, 1]  # the eq. 13 instance keeps E = 1


# ---------------------------------------------------------------------------------- the command line
def test_cli_runs_a_claim_with_parameters_beside_the_claim_as_stated(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    argv = ["verify", "--quick", "--seeds", "2", "--no-progress", "--out", str(out), "--claim",
            "control.constant-step-rate", "--claim", "control.constant-step-rate[rounds=20000]"]
    assert main(argv) == 0
    assert (f"Run store {out / 'runs.sqlite'} holds the verification of control.constant-step-rate, "
            "control.constant-step-rate[rounds=20000] (quick mode, 2 seed(s)); `fedbound report") in capsys.readouterr().out
    document = json.loads((out / "verdicts.json").read_text())
    claims = {c["claim_id"]: c for c in document["claims"]}
    assert list(claims) == ["control.constant-step-rate", "control.constant-step-rate[rounds=20000]"]
    assert claims["control.constant-step-rate"]["evidence"]["x"][-1] == 200_000  # 40000 rounds of E = 5
    assert claims["control.constant-step-rate[rounds=20000]"]["evidence"]["x"][-1] == 100_000
    pngs = [f["png"] for c in claims.values() for f in c["figures"]]
    assert len(set(pngs)) == 2 and all((out / png).is_file() for png in pngs)  # figures do not overwrite each other
    assert document["meta"]["claims"] == list(claims)
    assert "control.constant-step-rate[rounds=20000]" in (out / "report.md").read_text()


@pytest.mark.parametrize("claim, field", [
    ("li2020.thm1[E=0]", "E: claim 'li2020.thm1' needs an integer >= 1, got 0"),
    ("li2020.thm1[bogus=1]", "params: claim 'li2020.thm1' has no parameter 'bogus'"),
    ("li2020.thm1[E=10", "claim: 'li2020.thm1[E=10' is not ID or ID[name=value,...]"),
    ("nope[E=1]", "unknown claim id 'nope'"),
])
def test_cli_bad_parameters_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    claim: str, field: str) -> None:
    assert main(["verify", "--quick", "--claim", claim, "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedbound: error: ") and field in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r" / "verdicts.json").exists()


def test_list_shows_every_parameter_with_its_default_and_mode_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    sections = dict(zip(CLAIMS, out.split("\n\n")))
    for claim_id, claim in CLAIMS.items():
        text = sections[claim_id]
        assert text.startswith(claim_id) and f"parameters (default mode, as {claim_id}[name=value,...]):" in text
        for spec in claim.parameters():
            assert f"\n      {spec.name} = " in text and spec.doc in text
    assert "K_grid = [32,64,128,256,512,1024,2048]; quick: [32,64,128,512]; full: [32,64,128,256,512,1024,2048,4096," \
           "8192]" in sections["ding2020.thm1"]
    assert "E = 5  (" in sections["li2020.thm1"] and "recursion_seeds = --seeds, at least 32" in sections["li2020.thm1"]
    assert "bound_scale = 1.0  (" in sections["yu2019.thm1"] and "seeds = --seeds, at least 16" in sections["lemmas"]


# ------------------------------------------------------------------ one mechanism: variants are parameters
def test_planted_variants_are_parameters_of_the_plan_and_their_ids_read_back() -> None:
    for claim in CLAIMS.values():
        names = {spec.name for spec in claim.parameters()}
        for variant in claim.variants:
            assert set(variant.params) <= names
            assert select_claim(variant.id_for(claim.id)).params == dict(claim.check_params(variant.params))
