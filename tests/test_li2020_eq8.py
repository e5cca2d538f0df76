"""li2020.eq8 (choice of E): eq. 8's shape and argmin by hand, rounds to target, the location check
(it PASSes a U, FAILs a monotone curve, never PASSes a flat one), and the claim on its quick
instance with its planted variants."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convergence import Status
from proofs_check import VerifySettings, get_claim
from proofs_check.li2020_choices import CHOICE_INSTANCES, rounds_to_target
from proofs_check.li2020_eq8 import Eq8Constants, check_optimum_location, eq8_optimal_E, eq8_rounds_shape, fit_scale
from proofs_check.plans import LI_CHOICE_INSTANCES, Li2020Eq8Plan

# K = 4, sum p^2 sigma^2 = 1, L = 2, Gamma = 0.5, kappa = 10, G^2 = 2:
# A = 1 + 2 * 0.5 + 10 * 2 = 22, (1 + 1/4) G^2 = 2.5, E* = sqrt(22 / 2.5) = sqrt(8.8) = 2.96648...
HAND = Eq8Constants(K=4, sum_p2_sigma2=1.0, L=2.0, Gamma=0.5, kappa=10.0, G_sq=2.0)


def test_eq8_argmin_matches_a_hand_computation() -> None:
    assert HAND.A == 22.0
    assert eq8_optimal_E(HAND) == pytest.approx(math.sqrt(8.8), rel=1e-15)
    # h(E) = 2.5 E + 22 / E + 2: h(1) = 26.5, h(11) = 31.5; at E*, h = 2 sqrt(2.5 * 22) + 2
    assert eq8_rounds_shape(np.array([1.0, 11.0]), HAND) == pytest.approx([26.5, 31.5], rel=1e-15)
    star = eq8_optimal_E(HAND)
    assert eq8_rounds_shape(star, HAND) == pytest.approx(2 * math.sqrt(55.0) + 2, rel=1e-14)
    grid = np.linspace(0.5, 20, 4001)
    assert abs(grid[np.argmin(eq8_rounds_shape(grid, HAND))] - star) < 0.005


def test_scale_fit_recovers_a_multiple_and_measures_the_misfit() -> None:
    shape = eq8_rounds_shape(np.array([1.0, 2.0, 5.0, 10.0]), HAND)
    exact = fit_scale(3.5 * shape, shape)
    assert exact.scale == pytest.approx(3.5, rel=1e-14) and exact.relative_residual < 1e-14
    # a constant against (1, -1): c = 0 and the residual is the whole vector
    misfit = fit_scale(np.array([1.0, 1.0]), np.array([1.0, -1.0]))
    assert misfit.scale == 0.0 and misfit.relative_residual == pytest.approx(1.0, rel=1e-15)
    with pytest.raises(ValueError, match="measured/shape"):
        fit_scale(np.array([1.0, 2.0]), np.zeros(2))


def test_rounds_to_target_is_the_first_round_below_and_censors_misses() -> None:
    gap = np.array([[3.0, 2.0, 1.0, 0.5], [3.0, 2.5, 2.0, 1.5], [0.9, 2.0, 0.1, 0.1]])
    rounds, reached = rounds_to_target(gap, 1.0)
    assert rounds.tolist() == [2, 4, 0] and reached.tolist() == [True, False, True]


E_GRID = (1, 5, 20, 100)


def _rounds(means: list[float], noise: float = 1.0, seeds: int = 6) -> np.ndarray:
    """Rounds (n_E, S): the means plus a seed effect shared by every E and a small independent part."""
    rng = np.random.default_rng(0)
    shared = rng.normal(0, 5, seeds)
    return np.array(means)[:, None] + shared[None, :] + noise * rng.normal(0, 1, (len(means), seeds))


def test_location_check_passes_a_u_and_fails_the_wrong_claims() -> None:
    rounds = _rounds([60.0, 30.0, 25.0, 45.0])
    reached = np.ones_like(rounds, dtype=bool)
    u = check_optimum_location("t", E_GRID, rounds, reached)
    assert u.status is Status.PASS and u.measured == 20 and tuple(u.evidence["claimed_E"]) == (5, 20)
    assert check_optimum_location("t", E_GRID, rounds, reached, "smallest").status is Status.FAIL
    assert check_optimum_location("t", E_GRID, rounds, reached, "largest").status is Status.FAIL


def test_location_check_fails_a_monotone_curve() -> None:
    rounds = _rounds([80.0, 50.0, 30.0, 20.0])
    verdict = check_optimum_location("t", E_GRID, rounds, np.ones_like(rounds, dtype=bool))
    assert verdict.status is Status.FAIL and verdict.measured == 100
    assert "E = 100, outside the claimed set" in verdict.notes


def test_location_check_never_passes_a_flat_curve() -> None:
    # E* picked among the interior on the same seeds: Bonferroni over the candidates keeps a flat
    # curve from looking U-shaped; over 200 flat instances with pure noise at most ~5% may PASS
    rng = np.random.default_rng(1)
    passes = 0
    for _ in range(200):
        rounds = 40.0 + rng.normal(0, 3, (len(E_GRID), 5))
        passes += check_optimum_location("t", E_GRID, rounds, np.ones_like(rounds, dtype=bool)).status is Status.PASS
    assert passes <= 10


def test_censored_rounds_decide_only_in_the_conservative_direction() -> None:
    rounds = _rounds([60.0, 30.0, 25.0, 45.0])
    reached = np.ones_like(rounds, dtype=bool)
    reached[2, 0] = False  # E* = 20 missed the target in one seed: its rounds are only a lower bound
    assert check_optimum_location("t", E_GRID, rounds, reached).status is Status.INCONCLUSIVE
    reached = np.ones_like(rounds, dtype=bool)
    reached[0] = False  # the smallest E, claimed worse, missed the target: still a PASS
    assert check_optimum_location("t", E_GRID, rounds, reached).status is Status.PASS


def test_bad_inputs_are_named() -> None:
    rounds = _rounds([60.0, 30.0, 25.0, 45.0])
    with pytest.raises(ValueError, match="^rounds: "):
        check_optimum_location("t", E_GRID[:3], rounds, np.ones_like(rounds, dtype=bool))
    with pytest.raises(ValueError, match="^reached: "):
        check_optimum_location("t", E_GRID, rounds, np.ones(rounds.shape))
    with pytest.raises(ValueError, match="^claimed: "):
        check_optimum_location("t", E_GRID, rounds, np.ones_like(rounds, dtype=bool), "middle")
    with pytest.raises(ValueError, match="^E_grid: "):
        Li2020Eq8Plan(E_grid=(5, 50), rounds=10, n_clients=20, participants=6, instance=None)


def test_every_plan_instance_has_a_problem() -> None:
    assert tuple(CHOICE_INSTANCES) == LI_CHOICE_INSTANCES
    assert all(label == inst.label for label, inst in CHOICE_INSTANCES.items())


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> VerifySettings:
    store = tmp_path_factory.mktemp("eq8") / "runs.sqlite"
    # the quick plan: synthetic(1,1), N = 20, K = 6, E in {5, 50, 1000}, 30 rounds, 6 seeds; E = 50 needs
    # about 21 rounds, E = 1000 about 26, E = 5 misses the target (censored at 31)
    return VerifySettings(quick=True, seeds=6, jobs=1, progress=False, store=str(store))


def test_claim_passes_on_its_quick_instance_with_eq8_in_the_evidence(settings: VerifySettings) -> None:
    result = get_claim("li2020.eq8").evaluate(settings)
    verdict = result.verdict
    assert verdict.status is Status.PASS, verdict.notes
    assert verdict.measured == 50
    (table,) = verdict.evidence["eq8"]
    assert verdict.theoretical == table["eq. 8 E*"]
    assert table["measured E*"] == 50 and table["eq. 8 E*"] > 0 and 0 <= table["relative residual of c h(E)"] < 1
    assert table["eq. 8 E* / measured E*"] == pytest.approx(table["eq. 8 E*"] / 50)
    (plot,) = result.plots
    assert "first decrease and then increase" in plot.caption and "fedbound: PASS" in plot.caption


@pytest.mark.parametrize("name", ["E* = smallest E", "rounds fall monotonically in E"])
def test_planted_variants_fail(settings: VerifySettings, name: str) -> None:
    claim = get_claim("li2020.eq8")
    variant = next(v for v in claim.variants if v.name == name)
    verdict = claim.evaluate_variant(settings, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected, verdict.notes


@pytest.mark.slow
def test_default_plan_passes_on_both_instances() -> None:
    verdict = get_claim("li2020.eq8").evaluate(VerifySettings(seeds=4, progress=False)).verdict
    assert verdict.status is Status.PASS, verdict.notes
    assert len(verdict.checks) == 2
