"""ding2020.table1 (Ding et al. Sec. 5, Table 1) on the bundled digits: the rounds-to-target metric and
the checks on hand-made per-seed rounds (PASS, FAIL, INCONCLUSIVE, censoring), the quick claim end to
end with its report, the planted variant, determinism over job counts, and bad plan values named.

The claim's evaluations share one run store (module fixture), so the planted variant and the report
re-read the runs of the claim."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from convergence import Status
from proofs_check import VerifySettings, combine_checks, get_claim
from proofs_check.claims.ding2020.table1_rounds import (
    ALPHA, RoundsToTarget, check_rounds_fall, rounds_to_accuracy, algorithm_test_count,
)
from reports.verify import verify


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> VerifySettings:
    store = tmp_path_factory.mktemp("ding-table1") / "runs.sqlite"
    # 4 seeds: with 3 the planted "rise" of MM-PSGD (p_fail 0.031) does not survive Holm over the two
    # algorithms' (a) sub-checks (adjusted 0.063); with 4 both FAIL (p_fail 0.005 and 0.001)
    return VerifySettings(quick=True, seeds=4, jobs=1, progress=False, store=str(store))


def measured(rounds, reached=None, grid=None, horizon: int = 100) -> RoundsToTarget:
    """Hand-made rounds (J, S) on the grid (default 5, 10, ..), every run reached unless said."""
    rounds = np.asarray(rounds, dtype=np.int64)
    reached = np.ones(rounds.shape, dtype=bool) if reached is None else np.asarray(reached, dtype=bool)
    grid = tuple(5 * (j + 1) for j in range(rounds.shape[0])) if grid is None else grid
    return RoundsToTarget(grid, rounds, reached, 0.5, 0.1, 0.6, horizon)


def statuses(found) -> dict[str, Status]:
    return {name: verdict.status for name, verdict in found.checks}


# ---------------------------------------------------------------------------------------------- the metric


def test_rounds_to_accuracy_follows_the_target_rule_and_censors_misses() -> None:
    # J = 2 values of I, S = 2 seeds, recorded at rounds 0, 2, 4, 6 (record_every = 2, horizon 6)
    records = np.array([0, 2, 4, 6])
    average = np.array([
        [[0.1, 0.3, 0.5, 0.7], [0.1, 0.2, 0.4, 0.5]],   # I = 5: mean curve 0.1, 0.25, 0.45, 0.6 (best 0.6)
        [[0.1, 0.6, 0.8, 0.9], [0.1, 0.7, 0.9, 0.9]],   # I = 20: best mean 0.9
    ])
    found = rounds_to_accuracy(average, records, (5, 20), 0.5)
    # A0 = 0.1, A_low = min(0.6, 0.9) = 0.6, target = 0.1 + 0.5 (0.6 - 0.1) = 0.35
    assert found.initial == pytest.approx(0.1) and found.lowest_best == pytest.approx(0.6)
    assert found.target == pytest.approx(0.35)
    # first recorded round with A >= 0.35: I = 5: rounds 4 and 4; I = 20: rounds 2 and 2
    np.testing.assert_array_equal(found.rounds, [[4, 4], [2, 2]])
    assert found.reached.all() and found.censored_fraction == 0.0
    high = rounds_to_accuracy(average, records, (5, 20), 1.0)  # target 0.6: seed 1 of I = 5 peaks at 0.5
    np.testing.assert_array_equal(high.rounds, [[6, 7], [2, 2]])  # censored at horizon + 1 = 7
    np.testing.assert_array_equal(high.reached, [[True, False], [True, True]])
    assert high.censored_fraction == pytest.approx(0.25)


@pytest.mark.parametrize("average,records,fraction,field", [
    (np.zeros((2, 2, 3)), np.array([1, 2, 3]), 0.5, "record_rounds"),
    (np.zeros((2, 2, 3)), np.array([0, 2, 1]), 0.5, "record_rounds"),
    (np.zeros((2, 2, 3)), np.array([0.0, 1.0, 2.0]), 0.5, "record_rounds"),
    (np.zeros((3, 2, 3)), np.array([0, 1, 2]), 0.5, "average"),
    (np.zeros((2, 2, 4)), np.array([0, 1, 2]), 0.5, "average"),
    (np.full((2, 2, 3), 1.5), np.array([0, 1, 2]), 0.5, "average"),
    (np.full((2, 2, 3), np.nan), np.array([0, 1, 2]), 0.5, "average"),
    (np.zeros((2, 2, 3)), np.array([0, 1, 2]), 0.0, "fraction"),
    (np.zeros((2, 2, 3)), np.array([0, 1, 2]), 1.5, "fraction"),
])
def test_rounds_to_accuracy_names_bad_input(average, records, fraction, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        rounds_to_accuracy(average, records, (5, 20), fraction)


# ---------------------------------------------------------------------------------------------- the checks

FALLING = [[40, 44, 38, 42], [30, 33, 29, 31], [24, 27, 22, 25], [20, 22, 19, 21]]
"""Rounds on I = 5, 10, 15, 20 falling in every seed."""


def test_a_consistent_fall_passes_with_the_bonferroni_interval() -> None:
    found = check_rounds_fall("t", "MM-PSGD", measured(FALLING), n_tests=8)
    assert all(s is Status.PASS for s in statuses(found).values()) and found.uninformative == ()
    assert len(found.checks) == 4  # (a) and the 3 neighbours
    name, first = found.checks[0]
    assert name == "(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"
    # paired differences I = 5 minus I = 20: 20, 22, 19, 21; two-sided confidence 1 - 2 alpha / 8 (Bonferroni)
    d = np.array([20, 22, 19, 21], dtype=float)
    half = stats.t.ppf(1 - ALPHA / 8, 3) * d.std(ddof=1) / 2
    assert first.measured == pytest.approx(20.5)
    assert first.interval == pytest.approx((20.5 - half, 20.5 + half))


def test_a_rise_fails_and_a_flat_noisy_grid_is_inconclusive() -> None:
    rising = measured(FALLING[::-1])
    assert statuses(check_rounds_fall("t", "MM-PSGD", rising))["(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"] \
        is Status.FAIL
    flat = measured([[30, 20, 40, 25], [25, 35, 30, 28], [33, 22, 27, 31], [28, 30, 24, 35]])
    found = statuses(check_rounds_fall("t", "MM-PSGD", flat))
    assert found["(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"] is Status.INCONCLUSIVE
    assert Status.FAIL not in found.values()


def test_a_significant_rise_between_neighbours_fails_even_when_the_ends_fall() -> None:
    # I = 10 -> 15 rises by 10 in every seed, while the ends fall (40 -> 20)
    bump = measured([[40, 44, 38, 42], [30, 31, 29, 30], [40, 41, 39, 40], [20, 22, 19, 21]])
    found = statuses(check_rounds_fall("t", "MM-PSGD", bump))
    assert found["(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"] is Status.PASS
    assert found["(b) MM-PSGD: no significant rise from I = 10 to I = 15"] is Status.FAIL
    # ties between neighbours are allowed (the paper's MM-PSGD: 1610 at I = 15 and at I = 20)
    tie = measured([[40, 44, 38, 42], [30, 33, 29, 31], [20, 22, 19, 21], [20, 22, 19, 21]])
    assert statuses(check_rounds_fall("t", "MM-PSGD", tie))["(b) MM-PSGD: no significant rise from I = 15 to I = 20"] \
        is Status.PASS


def test_censored_rounds_decide_only_in_the_conservative_direction() -> None:
    name = "(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"
    # censored at the smallest I (45 = horizon + 1): a fall is only understated, so the PASS stands
    left = measured([[45, 45, 38, 42], *FALLING[1:]], [[False, False, True, True], *[[True] * 4] * 3], horizon=44)
    found = check_rounds_fall("t", "MM-PSGD", left)
    assert statuses(found)[name] is Status.PASS
    # but no rise after I = 5 can be shown: that neighbour check is uninformative, not counted
    assert [u.name for u in found.uninformative] == ["(b) MM-PSGD: no significant rise from I = 5 to I = 10"]
    # horizon 30, I = 5, 20 (one test: confidence 1 - 2 alpha = 0.9): seed 3 censored (31) at both I. The t-test
    # alone passes (differences 18, 17, 16, 0: mean 12.75, t = 3.0 > t_0.95(3) = 2.35), but the largest I's
    # rounds are then lower bounds that may overstate the fall: no PASS
    right = measured([[28, 29, 27, 31], [10, 12, 11, 31]], [[True, True, True, False], [True, True, True, False]],
                     grid=(5, 20), horizon=30)
    verdict = check_rounds_fall("t", "MM-PSGD", right).checks[0][1]
    assert verdict.interval[0] > 0 and verdict.status is Status.INCONCLUSIVE and "Not a PASS" in verdict.notes
    # the mirror image: a significant rise (differences -10, -11, -10, 0) while the smallest I is censored is no FAIL
    rise = measured([[10, 11, 9, 31], [20, 22, 19, 31]], [[True, True, True, False], [True, True, True, False]],
                    grid=(5, 20), horizon=30)
    verdict = check_rounds_fall("t", "MM-PSGD", rise).checks[0][1]
    assert verdict.interval[1] < 0 and verdict.status is Status.INCONCLUSIVE and "Not a FAIL" in verdict.notes
    # most runs censored: INCONCLUSIVE, never PASS, even with a significant fall
    most = measured([[101] * 4, [101] * 4, [101] * 4, [20, 22, 19, 21]], [[False] * 4] * 3 + [[True] * 4])
    found = check_rounds_fall("t", "MM-PSGD", most)
    assert statuses(found)[name] is Status.INCONCLUSIVE and "75% of the runs" in found.checks[0][1].notes


def test_a_target_met_at_once_or_never_raised_cannot_pass() -> None:
    # every run at the target from the first record (e.g. no I improved on the initial accuracy, so the target
    # is not above it): the differences are all 0 and no fall can show, INCONCLUSIVE, never PASS
    flat = np.full((4, 3, 5), 0.3)  # J = 4, S = 3, P = 5: no learning
    found = rounds_to_accuracy(flat, np.arange(5), (5, 10, 15, 20), 0.9)
    assert found.target == pytest.approx(0.3) and not found.rounds.any() and found.reached.all()
    verdicts = check_rounds_fall("t", "MM-PSGD", found)
    assert verdicts.checks[0][1].status is Status.INCONCLUSIVE and verdicts.checks[0][1].interval == (0.0, 0.0)
    # the neighbours show no rise (PASS), but (a) keeps the combined claim INCONCLUSIVE
    assert combine_checks("t", list(verdicts.checks)).status is Status.INCONCLUSIVE


def test_the_rise_claim_reverses_the_grid() -> None:
    found = statuses(check_rounds_fall("t", "MM-PSGD", measured(FALLING), claimed="rise"))
    assert found["(a) MM-PSGD: more rounds at I = 20 than at I = 5"] is Status.FAIL
    assert found["(b) MM-PSGD: no significant fall from I = 15 to I = 10"] is Status.FAIL


def test_check_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="^claimed:"):
        check_rounds_fall("t", "MM-PSGD", measured(FALLING), claimed="flat")
    with pytest.raises(ValueError, match="^n_tests:"):
        check_rounds_fall("t", "MM-PSGD", measured(FALLING), n_tests=3)
    with pytest.raises(ValueError, match="^measured:"):
        check_rounds_fall("t", "MM-PSGD", measured([[30], [20]]))
    assert algorithm_test_count(2) == 1 and algorithm_test_count(4) == 4


# ---------------------------------------------------------------------------------------------- the claim


def test_quick_claim_runs_end_to_end_with_the_paper_beside_it(quick) -> None:
    result = get_claim("ding2020.table1").evaluate(quick)
    verdict = result.verdict
    # quick plan: I = 5, 20 on 400 digits: MM-PSGD falls significantly; MC-PSGD learns little in 30 rounds and
    # some of its I = 5 seeds miss the target, so it cannot decide
    found = {c.name: c.verdict.status for c in verdict.checks}
    assert found["(a) MM-PSGD: fewer rounds at I = 20 than at I = 5"] is Status.PASS
    assert Status.FAIL not in found.values() and verdict.status is not Status.FAIL
    assert verdict.measured > 0 and verdict.interval[0] > 0  # headline: MM-PSGD's rounds at I = 5 minus at I = 20
    assert "3210, I = 10: 2010" in verdict.notes and "digits" in verdict.notes and "C = 3" in verdict.notes
    evidence = verdict.evidence["rounds_to_target"]["MM-PSGD"]
    assert evidence["I"] == (5, 20) and evidence["paper"] == (3210, 1610)
    assert all(0 <= r <= 31 for row in evidence["rounds"] for r in row)  # horizon C M E = 30, censored at 31
    rounds_plot, mm, mc = result.plots
    assert [s.x for s in rounds_plot.series[:2]] == [(5.0, 20.0)] * 2
    assert rounds_plot.series[2].mean == (3210.0, 2010.0, 1610.0, 1610.0)
    assert len(mm.curves) == 3 and mm.curves[0].x == tuple(float(r) for r in range(31))  # every round, and the target


def test_planted_variant_rounds_rise_with_I_fails(quick) -> None:
    claim = get_claim("ding2020.table1")
    (variant,) = claim.variants
    verdict = claim.evaluate_variant(quick, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected
    found = {c.name: c.verdict.status for c in verdict.checks}
    assert found["(a) MM-PSGD: more rounds at I = 20 than at I = 5"] is Status.FAIL
    assert "PLANTED FALSE VARIANT" in verdict.notes


def test_the_report_and_verdicts_json_contain_the_claim(quick, tmp_path) -> None:
    verify(["ding2020.table1"], quick, tmp_path)
    claims = json.loads((tmp_path / "verdicts.json").read_text())["claims"]
    assert [c["claim_id"] for c in claims] == ["ding2020.table1"]
    assert "ding2020.table1" in (tmp_path / "report.md").read_text()
    assert all((tmp_path / f"{name}.png").exists() for name in ("ding2020_table1", "ding2020_table1_mm", "ding2020_table1_mc"))


def test_same_seeds_give_identical_rounds_on_one_and_two_jobs() -> None:
    small = dict(n_train=200, n_test=100, cycles=2, local_steps_grid=(2, 5), seeds=3)
    one = get_claim("ding2020.table1").evaluate(VerifySettings(quick=True, jobs=1, progress=False), **small)
    two = get_claim("ding2020.table1").evaluate(VerifySettings(quick=True, jobs=2, progress=False), **small)
    assert one.verdict.evidence["rounds_to_target"] == two.verdict.evidence["rounds_to_target"]
    assert one.verdict.measured == two.verdict.measured or (math.isnan(one.verdict.measured)
                                                             and math.isnan(two.verdict.measured))


@pytest.mark.parametrize("params,field", [
    ({"local_steps_grid": (5,)}, "local_steps_grid"),
    ({"local_steps_grid": (10, 5)}, "local_steps_grid"),
    ({"claimed_direction": "flat"}, "claimed_direction"),
    ({"target_fraction": 0.0}, "target_fraction"),
    ({"target_fraction": 1.5}, "target_fraction"),
    ({"seeds": 2}, "seeds"),
    ({"record_every": 0}, "record_every"),
    ({"dataset": "svhn"}, "dataset"),
])
def test_bad_plan_values_are_named(quick, params, field) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        get_claim("ding2020.table1").evaluate(quick, **params)
