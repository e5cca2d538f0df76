"""Claim plans as data: every claim's grid per mode is a frozen dataclass stated in the registry,
the mode chooses it in one place, and an evaluator depends on its plan alone (a claim run in one
mode with another mode's grid gives that mode's verdict)."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest

from proofs_check import CLAIMS, VerifySettings, get_claim
from proofs_check.framework.parameters import MODES, ModePlans, PlanError, parameter, plan_parameters, resolve_plan
from proofs_check.claims.ding2020.theorems import DingTheoremPlan
from proofs_check.claims.yu2019.thm1 import YuTheorem1Plan
from reports.verdicts_json import write_verdicts_json


def _verdict_json(verdict, path: Path) -> dict:
    """A verdict as verdicts.json writes it, without its id (NaN as null, so two runs compare equal)."""
    write_verdicts_json(path, [verdict], {})
    data = json.loads(path.read_text())["claims"][0]
    data.pop("claim_id")
    return data


def test_every_claim_has_a_plan_per_mode_of_one_frozen_class() -> None:
    for claim in CLAIMS.values():
        plan_type = claim.plan.plan_type
        assert dataclasses.is_dataclass(plan_type) and plan_type.__dataclass_params__.frozen
        for mode in MODES:
            plan = claim.plan.select(mode)
            assert type(plan) is plan_type
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(plan, claim.parameters()[0].name, None)


def test_modes_differ_only_in_the_grid_never_in_the_statement() -> None:
    # fields with a class default (the paper's constants, seeds) are the same in every mode's plan; only the
    # grid fields, which every mode must state, may differ
    for claim in CLAIMS.values():
        for f in dataclasses.fields(claim.plan.plan_type):
            values = {repr(getattr(claim.plan.select(mode), f.name)) for mode in MODES}
            if f.default is not dataclasses.MISSING:
                assert values == {repr(f.default)}, (claim.id, f.name)


def test_the_mode_is_chosen_in_one_place() -> None:
    ding = get_claim("ding2020.thm1")
    grids = {mode: resolve_plan(ding.id, ding.plan, VerifySettings(quick=mode == "quick", full=mode == "full",
                                                                   progress=False), {}).K_grid for mode in MODES}
    assert grids == {mode: ding.plan.select(mode).K_grid for mode in MODES}
    assert grids["quick"] == (32, 64, 128, 512) and grids["full"][-1] == 8192
    speedup = get_claim("ding2020.speedup").plan
    assert speedup.select("quick") is speedup.select("full") is speedup.default  # one grid for every mode
    assert VerifySettings(progress=False).mode == "default"
    with pytest.raises(ValueError, match="^mode: "):
        speedup.select("fast")


@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_every_evaluator_takes_the_settings_and_its_plan(claim_id: str) -> None:
    claim = get_claim(claim_id)
    signature = inspect.signature(claim.evaluator)
    assert list(signature.parameters) == ["settings", "plan"]
    assert signature.parameters["plan"].annotation in (claim.plan.plan_type.__name__, claim.plan.plan_type)


@pytest.mark.parametrize("claim_id, quick_grid", [
    ("control.constant-step-rate", {"rounds": 40_000}),
    ("yu2019.thm1", {"clients": (2, 4), "horizons": (1_000, 2_000, 4_000, 16_000)}),
])
def test_an_evaluator_depends_on_its_plan_not_on_the_mode(tmp_path: Path, claim_id: str, quick_grid: dict) -> None:
    # the default mode given the quick grid by name gives the quick mode's verdict, number for number
    store = str(tmp_path / "runs.sqlite")
    quick = VerifySettings(quick=True, seeds=2, jobs=1, progress=False, store=store)
    default = VerifySettings(seeds=2, jobs=1, progress=False, store=store)
    claim = get_claim(claim_id)
    assert claim.plan_for(default, quick_grid) == claim.plan_for(quick, {})
    as_quick = claim.evaluate(default, **quick_grid).verdict
    path = tmp_path / "verdict.json"
    assert _verdict_json(as_quick, path) == _verdict_json(claim.evaluate(quick).verdict, path)


def test_plans_are_checked_when_the_registry_is_built() -> None:
    claim = get_claim("ding2020.thm1")
    with pytest.raises(ValueError, match=r"^full plan: K_grid: claim 'ding2020.thm1' needs a strictly increasing"):
        dataclasses.replace(claim, plan=dataclasses.replace(claim.plan, full=DingTheoremPlan(K_grid=(64, 32))))
    with pytest.raises(TypeError, match="^quick: every mode's plan must be a DingTheoremPlan"):
        ModePlans(default=claim.plan.default, quick=YuTheorem1Plan(clients=(2,), horizons=(1000,)))
    with pytest.raises(ValueError, match="^plan: claim 'ding2020.thm1' needs a ModePlans"):
        dataclasses.replace(claim, plan=claim.plan.default)
    # a plan's own consistency check raises PlanError, which names the field
    with pytest.raises(PlanError, match=r"^clients: N = 16 needs a horizon T >= N\^3 = 4096"):
        YuTheorem1Plan(clients=(16,), horizons=(1_000,))


def test_plan_fields_must_be_declared_parameters_of_a_supported_type() -> None:
    @dataclasses.dataclass(frozen=True)
    class Undeclared:
        E: int = 5

    @dataclasses.dataclass(frozen=True)
    class Listy:
        grid: list = parameter(doc="a list is not a claim parameter")

    with pytest.raises(TypeError, match=r"^Undeclared.E: declare plan fields with"):
        plan_parameters(Undeclared)
    with pytest.raises(TypeError, match=r"^Listy.grid: a plan parameter is an int, float, bool, str"):
        plan_parameters(Listy)
    with pytest.raises(ValueError, match="^doc: "):
        parameter(1)
    specs = {spec.name: spec for spec in plan_parameters(DingTheoremPlan)}
    assert specs["K_grid"].kind is tuple and specs["K_grid"].item is int and specs["seeds"].from_settings == "seeds"
    assert specs["identical_instance"].kind is bool and specs["bound_scale"].expected() == "a finite number > 0"
