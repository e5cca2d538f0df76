"""An experiment file compiles into a claim (issue 24): ``proofs_check.experiments.compile_experiment``,
and the runner of ``fedbound verify`` with a claim checked as several statements (``ClaimResults``:
one card each, in the evaluator's order). The worked example through ``fedbound run`` is
tests/test_experiment.py's."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from convergence import Status, Verdict
from proofs_check.experiments import compile_experiment, load_experiment
from proofs_check.framework.claim import Claim, ClaimResult, ClaimResults
from proofs_check.framework.parameters import ModePlans, fixed, parameter, plan_parameters
from proofs_check.framework.references import LI2020
from proofs_check.framework.settings import VerifySettings
from reports.verify import verify

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fedavg_rate.toml"


@dataclass(frozen=True)
class _ToyPlan:
    first: str = parameter("b", "the name of the first statement")


def _two_statements(settings: VerifySettings, plan: _ToyPlan) -> ClaimResults:
    return ClaimResults((ClaimResult(Verdict(f"toy/{plan.first}", Status.PASS, 1.0, 1.0)),
                         ClaimResult(Verdict("toy/a", Status.FAIL, 2.0, 1.0))))


TOY = Claim("toy", (LI2020,), "nowhere", "two statements", "a number", _two_statements, plan=ModePlans(_ToyPlan()),
            default=False, no_variant="a test claim")


def test_the_example_compiles_into_one_claim_with_a_run_request_per_grid_cell() -> None:
    experiment = load_experiment(EXAMPLE)
    claim = compile_experiment(experiment)
    assert claim.id == "fedavg-rate" and claim.parameters() == () and not claim.default
    plan = claim.plan_for(VerifySettings(), {})
    assert plan.experiment is experiment
    assert [r.config.label for r in plan.requests] == ["local_steps=1", "local_steps=5"]
    assert [r.config.algorithm.local_steps for r in plan.requests] == [1, 5]
    assert all(r.config.algorithm.seeds == tuple(range(16)) for r in plan.requests)  # seeds = 16 in the file
    assert "fedavg-rate/Theorem 1, eq. 4: " in claim.statement
    with pytest.raises(ValueError, match="params: claim 'fedavg-rate' has no parameter 'seeds'"):
        claim.plan_for(VerifySettings(), {"seeds": 4})


def test_a_claim_checked_as_several_statements_gets_one_card_each_in_its_order(tmp_path: Path) -> None:
    outcome = verify([TOY], VerifySettings(progress=False), tmp_path)
    assert [v.claim_id for v in outcome.verdicts] == ["toy/b", "toy/a"]  # the evaluator's order, not sorted
    assert outcome.ran == ("toy/b", "toy/a")
    document = json.loads((tmp_path / "verdicts.json").read_text(encoding="utf-8"))
    assert [(c["claim_id"], c["status"]) for c in document["claims"]] == [("toy/b", "PASS"), ("toy/a", "FAIL")]
    assert document["meta"]["claims"] == ["toy/b", "toy/a"]


def test_evaluate_refuses_several_statements_and_evaluate_all_names_each_with_the_params() -> None:
    with pytest.raises(ValueError, match=r"claim 'toy' is checked as 2 statements \(toy/b, toy/a\); evaluate it "
                                         "with evaluate_all"):
        TOY.evaluate(VerifySettings(progress=False))
    results = TOY.evaluate_all(VerifySettings(progress=False), first="c")
    assert isinstance(results, ClaimResults)
    assert [r.verdict.claim_id for r in results.results] == ["toy/c[first=c]", "toy/a[first=c]"]


def test_results_that_are_not_claim_results_are_refused() -> None:
    with pytest.raises(ValueError, match="results: a claim checked as several statements gives at least one result"):
        ClaimResults(())
    with pytest.raises(ValueError, match=r"results\[0\]: expected a ClaimResult, got Verdict"):
        ClaimResults((Verdict("toy/a", Status.PASS, 1.0, 1.0),))  # type: ignore[arg-type]
    listed = dataclasses.replace(TOY, evaluator=lambda settings, plan: list(_two_statements(settings, plan).results))
    with pytest.raises(ValueError, match="evaluator: claim 'toy' must return a ClaimResult or ClaimResults, got list"):
        listed.evaluate_all(VerifySettings(progress=False))


def test_a_fixed_plan_field_is_not_a_parameter() -> None:
    @dataclass(frozen=True)
    class Plan:
        grid: Any = fixed("what the plan was made with")
        n: int = parameter(1, "a parameter")

    assert [spec.name for spec in plan_parameters(Plan)] == ["n"]
    with pytest.raises(ValueError, match="doc: a fixed plan field needs a one-line description"):
        fixed(" ")
