"""li2020.eq8 (choice of E): eq. 8's shape and argmin by hand, rounds to target, the location check
(it PASSes a U, FAILs a monotone curve, never PASSes a flat one), the image instance (its data set
resolved, its step scale the pooling identity), and the claim on its quick instance and on the
image instance over the digits, with its planted variants; Fig. 1a's balanced image instance (the
paper's remark that the trade-off does not appear there FAILs on the digits; the MNIST path on small
IDX files written here)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from convergence import Status
from convergence import rounds_to_target
from problems import build_problem, problem_spec, resolve_li_dataset
from proofs_check import VerifySettings, get_claim, select_claim
from proofs_check.claims.li2020.choices import (
    CHOICE_INSTANCES, FIG1A_INSTANCES, IMAGE_SOURCE_PIXELS, LI_CHOICE_INSTANCES, choice_instances,
)
from proofs_check.claims.li2020.eq8 import Li2020Eq8Plan, check_optimum_location
from proofs_check.claims.li2020.eq8_shape import Eq8Constants, eq8_optimal_E, eq8_rounds_shape, fit_scale

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


def test_location_check_carries_the_p_value_of_its_fail_decision() -> None:
    # p_fail = |O| x the one-sided paired t p-value that the best outside point o* needs fewer rounds than the best
    # claimed point c* (scipy's paired t-test, independently), FAIL iff p_fail <= 0.05; 1 when o* is censored
    from scipy import stats

    rounds = _rounds([80.0, 50.0, 30.0, 20.0])
    reached = np.ones_like(rounds, dtype=bool)
    verdict = check_optimum_location("t", E_GRID, rounds, reached)  # claimed: E = 10, 20 (c* = 20); o* = 100
    p = stats.ttest_rel(rounds[2], rounds[3], alternative="greater").pvalue
    assert verdict.p_fail == pytest.approx(min(1.0, 2 * p), rel=1e-9) and verdict.status is Status.FAIL
    flat = 40.0 + np.random.default_rng(2).normal(0, 3, (len(E_GRID), 5))
    undecided = check_optimum_location("t", E_GRID, flat, np.ones_like(flat, dtype=bool))
    assert undecided.p_fail > 0.05 and undecided.status is not Status.FAIL
    reached[3, 0] = False  # o* = 100 missed the target in one seed: its rounds are only a lower bound
    censored = check_optimum_location("t", E_GRID, rounds, reached)
    assert censored.p_fail == 1.0 and censored.status is Status.INCONCLUSIVE


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
    assert tuple(CHOICE_INSTANCES) == FIG1A_INSTANCES == (*LI_CHOICE_INSTANCES, "image balanced")
    assert all(label == inst.label for label, inst in CHOICE_INSTANCES.items())
    # li2020.k-effect's instances (the default labels) stay the three of Fig. 3's setting without balanced MNIST
    assert tuple(i.label for i in choice_instances(None, "digits")) == LI_CHOICE_INSTANCES
    assert tuple(i.label for i in choice_instances(None, "digits", FIG1A_INSTANCES)) == FIG1A_INSTANCES


def test_the_balanced_instance_is_claimed_where_the_plan_says() -> None:
    plan = Li2020Eq8Plan(E_grid=(5, 50, 1000), rounds=10, n_clients=20, participants=6, instance=None)
    assert plan.claimed_at("image balanced") == plan.claimed_at("image unbalanced") == "interior"
    remark = Li2020Eq8Plan(E_grid=(5, 50, 1000), rounds=10, n_clients=20, participants=6, instance=None,
                           balanced_optimum="largest")
    assert remark.claimed_at("image balanced") == "largest" and remark.claimed_at("synthetic(1,1)") == "interior"
    assert plan.workload().runs == 4 * 3 * plan.seeds  # Fig. 1a's four data sets, three E


def test_the_image_instance_names_its_resolved_data_set() -> None:
    (auto,) = choice_instances("image unbalanced", "auto")
    resolved = resolve_li_dataset("auto")
    assert dict(auto.params) == {"balanced": False, "dataset": resolved}
    assert auto.source_pixels == IMAGE_SOURCE_PIXELS[resolved] and auto.batch_size == 64  # App. D.2: b = 64
    (digits,) = choice_instances("image unbalanced", "digits")
    assert digits.spec(20).params["dataset"] == "digits"
    synthetic = choice_instances(None, "digits")[:2]
    assert synthetic == (CHOICE_INSTANCES["synthetic(0,0)"], CHOICE_INSTANCES["synthetic(1,1)"])
    with pytest.raises(ValueError, match="needs its data set"):
        CHOICE_INSTANCES["image unbalanced"].spec(20)  # "auto" would make the run id depend on the machine


def _window_average(side: int, pool: int) -> np.ndarray:
    """P (f, m): feature j = the mean of the pool x pool window j of a side x side image (row-major)."""
    m, cells = side * side, side // pool
    P = np.zeros((cells * cells, m))
    for r in range(side):
        for c in range(side):
            P[(r // pool) * cells + c // pool, r * side + c] = 1.0 / pool**2
    return P


def test_step_scale_is_the_pooling_identity() -> None:
    # The digits pooled 2 x 2 (f = 16 features) against the same rows at full 8 x 8 resolution (m = 64):
    # the feature model W is the pixel model V = P' W (bias row shared), and one SGD step with s = eta m / f
    # on W moves V by -eta Pi G_V, Pi = (m / f) P'P the projector onto window-constant pixel weights
    # (li2020/choices' docstring). On the digits the instance scales by 1024 / 16 = 64: each 8 x 8 cell
    # is itself a 4 x 4 block average of a 32 x 32 bitmap (1024 / 64 = 16 = 4 x 4).
    coarse = build_problem(problem_spec("li_images", dataset="digits", balanced=False, n_clients=20))
    fine = build_problem(problem_spec("li_images", dataset="digits", balanced=False, n_clients=20, pool=1))
    P = _window_average(8, 2)
    f, m = P.shape
    np.testing.assert_allclose(coarse.X[:, :-1], fine.X[:, :-1] @ P.T, rtol=0, atol=1e-15)
    Pi = (m / f) * P.T @ P
    np.testing.assert_allclose(Pi @ Pi, Pi, atol=1e-15)
    W = np.random.default_rng(0).normal(size=(f + 1, 10))
    V = np.vstack([P.T @ W[:-1], W[-1:]])
    rows = np.arange(0, coarse.X.shape[0], 7)
    np.testing.assert_allclose(fine.sample_losses(V.ravel(), rows), coarse.sample_losses(W.ravel(), rows), rtol=1e-13)
    G_W = coarse.sample_gradients(W.ravel(), rows).mean(axis=0).reshape(W.shape)
    G_V = fine.sample_gradients(V.ravel(), rows).mean(axis=0).reshape(V.shape)
    eta = 0.1
    stepped = P.T @ (W[:-1] - eta * (m / f) * G_W[:-1])
    np.testing.assert_allclose(stepped, V[:-1] - eta * Pi @ G_V[:-1], rtol=1e-12, atol=1e-14)
    (digits,) = choice_instances("image unbalanced", "digits")
    assert digits.step_scale(coarse) == 1024 / 16 == (m / f) * 16
    assert CHOICE_INSTANCES["synthetic(0,0)"].step_scale(coarse) == 1.0


# quick_settings (conftest.py): the quick plan, 6 seeds, one run store for the module
# (synthetic(1,1), N = 20, K = 6, E in {5, 50, 1000}, 30 rounds; E = 50 needs about 21 rounds, E = 1000
# about 26, E = 5 misses the target, censored at 31)


def test_claim_passes_on_its_quick_instance_with_eq8_in_the_evidence(quick_settings: VerifySettings) -> None:
    result = get_claim("li2020.eq8").evaluate(quick_settings)
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
def test_planted_variants_fail(quick_settings: VerifySettings, name: str) -> None:
    claim = get_claim("li2020.eq8")
    variant = next(v for v in claim.variants if v.name == name)
    verdict = claim.evaluate_variant(quick_settings, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected, verdict.notes


@pytest.mark.slow
def test_the_image_instance_on_the_digits_has_an_interior_optimum(quick_settings: VerifySettings) -> None:
    # the default plan's image instance on the digits with the E grid's two ends and its E* = 200 (measured
    # on the default grid: mean rounds 36 (censored) / 16.5 / 25.2 at E = 5 / 200 / 1000, eq. 8's E* = 94)
    selection = select_claim("li2020.eq8[instance=image unbalanced,dataset=digits,E_grid=[5,200,1000],rounds=35,"
                             "n_clients=20,participants=6]")
    result = selection.evaluate(quick_settings)
    verdict = result.verdict
    assert verdict.status is Status.PASS and verdict.measured == 200, verdict.notes
    (table,) = verdict.evidence["eq8"]
    assert table["data"].startswith("Li unbalanced digits N=20") and table["eta_0"] == pytest.approx(6.4, rel=1e-15)
    assert table["batch"] == 64 and "on digits" in verdict.notes and "6.4 on its features" in verdict.notes
    (plot,) = result.plots
    assert plot.name == "li2020_eq8_image_unbalanced" and "Li unbalanced digits" in plot.caption


@pytest.mark.slow
def test_default_plan_passes_on_the_synthetic_instances() -> None:
    # the image instance PASSes on the digits (CI's data); on Fashion-MNIST it is INCONCLUSIVE (E = 1000 needs
    # 2.3 more rounds than E* = 200 on average over 6 seeds, not significant): a reported finding
    # (Fig. 1a's balanced instance: E* = 200 inside the grid on the digits, PASS, against the paper's remark)
    verdict = get_claim("li2020.eq8").evaluate(VerifySettings(seeds=4, progress=False)).verdict
    assert len(verdict.checks) == 4
    *synthetic, image, balanced = verdict.checks
    assert all(check.verdict.status is Status.PASS for check in synthetic), verdict.notes
    digits = resolve_li_dataset("auto") == "digits"
    allowed = {Status.PASS} if digits else {Status.PASS, Status.INCONCLUSIVE}
    assert image.verdict.status in allowed, image.verdict.notes
    assert balanced.name == "E* interior (image balanced)" and balanced.verdict.status in allowed


def _write_idx(folder: Path, images: np.ndarray, labels: np.ndarray, prefix: str) -> None:
    """A split as raw IDX files (big-endian header: magic 0x0803 / 0x0801, then the dimensions), uint8 data."""
    header = np.array([0x0803, images.shape[0], 28, 28], dtype=">u4").tobytes()
    (folder / f"{prefix}-images-idx3-ubyte").write_bytes(header + images.astype(np.uint8).tobytes())
    (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(
        np.array([0x0801, labels.size], dtype=">u4").tobytes() + labels.astype(np.uint8).tobytes())


@pytest.fixture
def small_mnist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$FEDBOUND_DATA with MNIST-format files of 11,000 random 28 x 28 images, labels 0..9 in turn (1,100 of
    each: the balanced recipe at N = 20 needs 542 N / 10 = 1,084 of each label), and no Fashion-MNIST."""
    import problems.image_data as image_data

    folder = tmp_path / "mnist"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 10_000), ("t10k", 1_000)):
        _write_idx(folder, rng.integers(0, 256, (n, 28, 28)), np.arange(n) % 10, prefix)
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path))
    monkeypatch.setattr(image_data, "DEBIAN_FASHION_MNIST", tmp_path / "no-fashion-mnist")
    return tmp_path


def test_the_balanced_instance_runs_on_mnist_files_when_present(small_mnist: Path, tmp_path: Path) -> None:
    (balanced,) = choice_instances("image balanced", "auto", FIG1A_INSTANCES)
    assert dict(balanced.params) == {"balanced": True, "dataset": "mnist"} and balanced.source_pixels == 784
    problem = build_problem(balanced.spec(20))
    assert np.all(np.diff(problem.offsets) == 542)  # Table 2: 542 rows a device on balanced MNIST
    assert balanced.step_scale(problem) == 784 / 49  # 4 x 4 pooling to 7 x 7 features: x16
    settings = VerifySettings(seeds=6, jobs=1, progress=False, store=str(tmp_path / "runs.sqlite"))
    result = select_claim("li2020.eq8[instance=image balanced,dataset=auto,E_grid=[1,2,4],rounds=3,n_clients=20,"
                          "participants=6]").evaluate(settings)
    (table,) = result.verdict.evidence["eq8"]
    assert table["data"].startswith("Li balanced mnist N=20") and table["eta_0"] == pytest.approx(1.6, rel=1e-15)
    assert "on mnist" in result.verdict.notes and "1.6 on its features" in result.verdict.notes
    (plot,) = result.plots
    assert plot.name == "li2020_eq8_image_balanced" and "Li balanced mnist" in plot.caption


def test_the_paper_remark_on_balanced_data_fails_on_the_digits(quick_settings: VerifySettings) -> None:
    # Fig. 1a's balanced curve falls monotonically (the authors' plot/plot_E.py); on the digits the quick grid's
    # mean rounds are 31 (censored) / 17.3 / 27.2 at E = 5 / 50 / 1000: E = 50 beats the largest E
    claim = get_claim("li2020.eq8")
    variant = next(v for v in claim.variants if v.name == "no trade-off on balanced data")
    assert dict(variant.params) == {"balanced_optimum": "largest", "instance": "image balanced"}
    planted = select_claim("li2020.eq8[instance=image balanced,dataset=digits,balanced_optimum=largest]").evaluate(
        quick_settings).verdict
    assert planted.status is Status.FAIL, planted.notes
    (check,) = planted.checks
    assert check.name == "E* largest (image balanced)" and "plot/plot_E.py" in planted.notes
    stated = select_claim("li2020.eq8[instance=image balanced,dataset=digits]").evaluate(quick_settings).verdict
    assert stated.status is Status.PASS and stated.measured == 50, stated.notes
