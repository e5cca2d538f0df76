"""ding2020.fig4 (Ding et al. Sec. 5, Fig. 4: the M sweep) and ding2020.fig5 (Fig. 5: the
participation sweep) on the bundled digits: the quick claims end to end (sub-checks, notes with the
paper's numbers, plots), their planted false variants FAIL, bad plan values are named, and both appear
in a quick `fedbound verify`'s verdicts.

The evaluations share one run store (module fixture, 4 seeds as the CLI's default), so a planted
variant and the CLI re-read the claims' runs instead of computing them again."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from convergence import Status
from proofs_check import VerifySettings, get_claim
from reports.cli import main

SEEDS = 4


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("ding-fig45") / "runs.sqlite")


@pytest.fixture(scope="module")
def quick(store: str) -> VerifySettings:
    return VerifySettings(quick=True, seeds=SEEDS, jobs=1, progress=False, store=store)


def statuses(verdict) -> dict[str, Status]:
    """Sub-check id -> status."""
    return {c.verdict.claim_id: c.verdict.status for c in verdict.checks}


def test_fig4_quick_claim_finds_fedavg_cyclic_degrading(quick: VerifySettings) -> None:
    """FedAvg-cyclic's last-cycle accuracy falls from M = 2 to M = 5 (it forgets every block but the last, and
    at M = 5 that is one label pair of five), far beyond any noise; the predictors' checks may be undecided at
    the quick scale but must not FAIL."""
    result = get_claim("ding2020.fig4").evaluate(quick)
    verdict, found = result.verdict, statuses(result.verdict)
    assert found["ding2020.fig4/fedavg_cyclic_degrades"] is Status.PASS
    assert found["ding2020.fig4/mm_stable"] is not Status.FAIL and found["ding2020.fig4/mc_stable"] is not Status.FAIL
    assert verdict.status is not Status.FAIL
    assert verdict.measured > 0.1 and verdict.interval[0] > 0  # headline: FedAvg-cyclic's drop
    assert "61%" in verdict.notes and "digits" in verdict.notes and "M E = 10" in verdict.notes
    assert "Abest (best A(r) over the last cycle, checked" in verdict.notes  # the paper's metric
    assert "Abar (last-cycle mean, evidence)" in verdict.notes
    (plot,) = result.plots
    assert [c.label for c in plot.curves] == ["MM-PSGD predictors", "MC-PSGD predictors",
                                              "FedAvg on block-cyclic data", "FedAvg on shuffled data"]
    assert all(c.x == (2.0, 5.0) for c in plot.curves)
    drop = verdict.checks[0].verdict
    assert plot.curves[2].y[0] - plot.curves[2].y[1] == pytest.approx(drop.measured)  # the plot is the checked data


def test_fig4_planted_variant_predictors_degrade_fails(quick: VerifySettings) -> None:
    claim = get_claim("ding2020.fig4")
    (variant,) = claim.variants
    verdict = claim.evaluate_variant(quick, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected
    assert statuses(verdict)["ding2020.fig4/fedavg_cyclic_stable"] is Status.FAIL
    assert "PLANTED" in verdict.notes


def test_fig5_quick_claim_runs_and_reports_the_paper(quick: VerifySettings) -> None:
    result = get_claim("ding2020.fig5").evaluate(quick)
    verdict = result.verdict
    assert set(statuses(verdict)) == {"ding2020.fig5/mm_robust", "ding2020.fig5/mc_robust"}
    assert verdict.status is not Status.FAIL
    assert "60-61%" in verdict.notes and "K = 1, 4 per round" in verdict.notes
    assert "Abest (best A(r)" in verdict.notes and "Abar (last-cycle mean, evidence)" in verdict.notes
    (plot,) = result.plots
    assert [c.x for c in plot.curves] == [(5.0, 20.0)] * 2
    mm = verdict.checks[0].verdict
    assert plot.curves[0].y[1] - plot.curves[0].y[0] == pytest.approx(mm.measured)  # drop D, 20% minus 5%


def test_fig5_planted_variant_accuracy_proportional_to_the_rate_fails(quick: VerifySettings) -> None:
    claim = get_claim("ding2020.fig5")
    (variant,) = claim.variants
    verdict = claim.evaluate_variant(quick, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected
    assert set(statuses(verdict).values()) == {Status.FAIL}


def test_fig5_full_plan_runs_the_papers_1000_clients_per_block_on_every_image() -> None:
    from convergence.budget import DEFAULT_MAX_CPU_HOURS, check_workload

    plan = get_claim("ding2020.fig5").plan.full
    # Sec. 5: "the number of total clients to 1000", the pool each round's fraction is drawn from, in place of
    # the default N = 100 clients a block; every Fashion-MNIST image (about 12 a client, as CIFAR-10's 50,000 over
    # 5 x 1,000 gives 10), not the former 12,000 (2.4 a client)
    assert plan.clients_per_block == 1000 and plan.n_train == plan.n_test == 0 and plan.dataset == "fashion-mnist"
    assert plan.participants() == (50, 200)  # 5% and 20% of 1,000
    work = plan.workload()
    # C M E rounds x I local steps x (MM-PSGD's K + MC-PSGD's two chains, 2K) x seeds, summed over K
    assert work.client_steps == 10 * 5 * 10 * 10 * 3 * (50 + 200) * plan.seeds
    check_workload(work, "ding2020.fig5 --full", "clients_per_block", limit_hours=DEFAULT_MAX_CPU_HOURS)
    four_rates = dataclasses.replace(plan, rates=(0.05, 0.1, 0.15, 0.2), rounds_per_block=20)
    assert four_rates.workload().client_steps == 4 * work.client_steps  # the paper's four rates at E = 20


@pytest.mark.parametrize("claim_id,params,field", [
    ("ding2020.fig4", {"blocks_grid": (2,)}, "blocks_grid"),
    ("ding2020.fig4", {"blocks_grid": (2, 10)}, "blocks_grid"),  # one label per block: could not fail
    ("ding2020.fig4", {"rounds_per_cycle": 7}, "rounds_per_cycle"),
    ("ding2020.fig4", {"margin": -0.01}, "margin"),
    ("ding2020.fig4", {"claimed_degrading": "mm"}, "claimed_degrading"),
    ("ding2020.fig4", {"seeds": 1}, "seeds"),
    ("ding2020.fig5", {"rates": (0.2,)}, "rates"),
    ("ding2020.fig5", {"rates": (0.05, 0.07)}, "rates"),  # 0.07 of N = 20 is not a whole client
    ("ding2020.fig5", {"rates": (0.5, 1.5)}, "rates"),
    ("ding2020.fig5", {"claimed": "linear"}, "claimed"),
    ("ding2020.fig5", {"n_blocks": 1}, "n_blocks"),
])
def test_bad_plan_values_are_named(quick: VerifySettings, claim_id: str, params: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        get_claim(claim_id).evaluate(quick, **params)


def test_quick_verify_reports_both_claims(store: str, tmp_path: Path, quick: VerifySettings) -> None:
    out = tmp_path / "report"
    args = ["verify", "--quick", "--claim", "ding2020.fig4", "--claim", "ding2020.fig5", "--store", store,
            "--seeds", str(SEEDS), "--jobs", "1", "--out", str(out), "--no-progress"]
    assert main(args) == 0  # the report was written
    claims = {c["claim_id"]: c for c in json.loads((out / "verdicts.json").read_text())["claims"]}
    assert set(claims) == {"ding2020.fig4", "ding2020.fig5"}
    for claim_id, claim in claims.items():
        assert claim["status"] == get_claim(claim_id).evaluate(quick).verdict.status.value  # from the store
    assert (out / "ding2020_fig4.png").exists() and (out / "ding2020_fig5.png").exists()
