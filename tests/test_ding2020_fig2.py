"""ding2020.fig2 (Ding et al. Sec. 5, Fig. 2) on the bundled digits: the quick claim's sub-checks,
the planted variant, the metric on hand-made accuracies, and bad plan values named.

The claim's evaluations share one run store (module fixture), so the planted variant re-reads the
runs of the claim."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status
from proofs_check import VerifySettings, get_claim
from proofs_check.claims.ding2020.sec5_runs import fig2_curves


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> VerifySettings:
    store = tmp_path_factory.mktemp("ding-fig2") / "runs.sqlite"
    return VerifySettings(quick=True, seeds=3, jobs=1, progress=False, store=str(store))


def statuses(verdict) -> dict[str, Status]:
    """Sub-check id -> status."""
    return {c.verdict.claim_id: c.verdict.status for c in verdict.checks}


def test_the_metric_on_hand_made_accuracies() -> None:
    # 1 seed, M = 2 blocks, M E = 2 rounds per cycle, 3 cycles: recorded at the block ends 0, 1, 2, 3 and
    # at every round 5, 6 of the last cycle (rounds 4 is a block end too, left out here)
    rounds = np.array([0, 1, 2, 3, 5, 6])
    per_block = np.array([[[0.0, 0.0], [0.2, 0.4], [0.4, 0.2], [0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]])
    curves = fig2_curves(per_block, rounds, 2)
    np.testing.assert_allclose(curves.average, [[0.0, 0.3, 0.3, 0.5, 0.5, 0.5]])
    np.testing.assert_allclose(curves.last_cycle_average, [0.5])  # rounds 5, 6
    # the paper's "best test accuracy": the largest A(r) over the recorded rounds (0.5, reached at round 3)
    np.testing.assert_allclose(fig2_curves(per_block[:, :5], rounds[:5], 1).best, [0.5])
    np.testing.assert_allclose(fig2_curves(per_block * [1.0, 0.0], rounds, 2).best, [0.9 / 2])  # round 5's A(r)
    np.testing.assert_allclose(curves.oscillation, [(0.6 + 0.6) / 2])  # each block's range over rounds 5, 6
    level = fig2_curves(np.full((2, 6, 3), 0.5), rounds, 2)
    np.testing.assert_array_equal(level.oscillation, [0.0, 0.0])


ROUNDS = np.arange(5)


@pytest.mark.parametrize("per_block,rounds,cycle_rounds,field", [
    (np.zeros((1, 5, 2)), ROUNDS, 0, "cycle_rounds"),
    (np.zeros((1, 5, 2)), ROUNDS, 2.0, "cycle_rounds"),
    (np.zeros((1, 5, 2)), np.array([0, 2, 1, 3, 4]), 2, "rounds"),
    (np.zeros((1, 5, 2)), ROUNDS.astype(float), 2, "rounds"),
    (np.zeros((1, 4, 2)), np.array([0, 1, 2, 4]), 2, "rounds"),  # round 3 of the last cycle missing
    (np.zeros((2, 5)), ROUNDS, 2, "per_block"),
    (np.zeros((1, 4, 2)), ROUNDS, 2, "per_block"),
    (np.full((1, 5, 2), 1.5), ROUNDS, 2, "per_block"),
    (np.full((1, 5, 2), np.nan), ROUNDS, 2, "per_block"),
])
def test_the_metric_names_bad_input(per_block, rounds, cycle_rounds, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        fig2_curves(per_block, rounds, cycle_rounds)


def test_quick_claim_confirms_the_predictors_and_the_oscillation_but_not_shuffled_below(quick) -> None:
    """On the digits the predictors beat FedAvg-cyclic and FedAvg-cyclic oscillates, but FedAvg on
    shuffled data is at least as accurate as the predictors (the small net saturates the digits): at the
    quick plan's 3 seeds neither "above shuffled" sub-check PASSes on the paper's metric, the best accuracy
    (on the last-cycle mean "MM-PSGD above shuffled" FAILed on its own), so the claim is INCONCLUSIVE.
    Every sub-check is a test with its p-value, so Holm applies to all six."""
    result = get_claim("ding2020.fig2").evaluate(quick)
    verdict, found = result.verdict, statuses(result.verdict)
    assert found["ding2020.fig2/fedavg_cyclic<mm"] is Status.PASS
    assert found["ding2020.fig2/fedavg_cyclic<mc"] is Status.PASS
    assert found["ding2020.fig2/oscillation"] is Status.PASS
    assert found["ding2020.fig2/fedavg_cyclic<shuffled"] is Status.PASS
    assert found["ding2020.fig2/shuffled<mm"] is not Status.PASS
    assert found["ding2020.fig2/shuffled<mc"] is not Status.PASS
    assert all(c.verdict.p_fail is not None for c in verdict.checks) and len(verdict.checks) == 6
    assert verdict.status is Status.INCONCLUSIVE and "Abar (last-cycle mean, evidence)" in verdict.notes
    assert verdict.measured > 0 and verdict.interval[0] > 0  # headline: MM - FedAvg-cyclic
    assert "65%" in verdict.notes and "digits" in verdict.notes and "C = 4" in verdict.notes
    assert "exponential predictor for MM-PSGD and MC-PSGD" in verdict.notes
    (plot,) = result.plots
    assert len(plot.curves) == 4 and all(c.x == tuple(range(0, 41, 5)) for c in plot.curves)  # block ends


def test_planted_variant_fedavg_cyclic_beats_the_predictors_fails(quick) -> None:
    claim = get_claim("ding2020.fig2")
    (variant,) = [v for v in claim.variants if v.params == {"claimed_winner": "fedavg_cyclic"}]
    verdict = claim.evaluate_variant(quick, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected
    assert statuses(verdict)["ding2020.fig2/mm<fedavg_cyclic"] is Status.FAIL


@pytest.mark.parametrize("params,field", [
    ({"dataset": "svhn"}, "dataset"),
    ({"cycles": 1}, "cycles"),
    ({"seeds": 1}, "seeds"),
    ({"claimed_winner": "shuffled"}, "claimed_winner"),
    ({"step_size": 0.0}, "step_size"),
    ({"labels_per_block": 11}, "labels_per_block"),
])
def test_bad_plan_values_are_named(quick, params, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        get_claim("ding2020.fig2").evaluate(quick, **params)
