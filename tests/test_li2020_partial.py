"""li2020.thm2 / li2020.thm3 (Li et al. ICLR 2020, Theorems 2-3): eq. 6's constants by hand, the claims
PASS on their instances, every planted variant FAILs, Scheme II's hypothesis fails on unbalanced data
(reported not applicable, never PASS), and a bound too loose to fail is not counted."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status
from problems import build_problem
from proofs_check import (
    LiConstants,
    Li2020SamplingPlan,
    VerifySettings,
    get_claim,
    li_sampling_C,
    li_theorem1_bound,
    li_transform_factors,
    li_transformed_constants,
    select_claim,
)
from proofs_check.li2020_partial import BALANCED, UNBALANCED, balanced_weights_hypothesis, sampling_schedule

CLAIM_IDS = ("li2020.thm2", "li2020.thm3")


def _hand_constants() -> LiConstants:
    """L = 2, mu = 1 (kappa 2, gamma = max{16, E = 2}), sigma_k^2 = (1, 2, 3, 4), G^2 = 5, Gamma = 0.1,
    balanced weights: B = (1/16)(1+2+3+4) + 6*2*0.1 + 8*1*5 = 0.625 + 1.2 + 40 = 41.825."""
    return LiConstants(2.0, 1.0, 2.0, 16.0, 2, np.array([1.0, 2.0, 3.0, 4.0]), 5.0, 0.1, 41.825, 3.0, 1.0, "hand")


def test_sampling_C_by_hand():
    # Theorem 2: (4/K) E^2 G^2 = 4/2 * 9 * 5 = 90; Theorem 3: (N-K)/(N-1) of it = 3/4 * 90 = 67.5.
    assert li_sampling_C("scheme_i", 2, 5, 3, 5.0) == pytest.approx(90.0, rel=1e-15)
    assert li_sampling_C("scheme_ii", 2, 5, 3, 5.0) == pytest.approx(67.5, rel=1e-15)
    assert li_sampling_C("scheme_ii", 5, 5, 3, 5.0) == 0.0  # K = N: every client, no sampling term
    assert li_sampling_C("scheme_i", 5, 5, 3, 5.0) == pytest.approx(36.0, rel=1e-15)  # with replacement it stays


@pytest.mark.parametrize("args, field", [
    (("scheme_iii", 1, 5, 1, 1.0), "scheme"),
    (("scheme_ii", 6, 5, 1, 1.0), "participants"),
    (("scheme_i", 0, 5, 1, 1.0), "participants"),
    (("scheme_i", 1, 5, 1, -1.0), "G_sq"),
])
def test_sampling_C_names_bad_input(args, field):
    with pytest.raises(ValueError, match=field):
        li_sampling_C(*args)


def test_bound_with_C_by_hand():
    # eq. 6 at T = 0 and 8: kappa/(gamma + T) (2(B + C)/mu + mu gamma/2 ||w_1 - w*||^2), C = 10:
    # 2/16 (2*51.825 + 8*3) = 15.95625 and 2/24 (127.65) = 10.6375; C = 0 is eq. 4.
    c = _hand_constants()
    assert li_theorem1_bound(c, np.array([0.0, 8.0]), 10.0) == pytest.approx([15.95625, 10.6375], rel=1e-14)
    assert li_theorem1_bound(c, np.array([0.0]), 0.0) == pytest.approx([2 / 16 * (2 * 41.825 + 24)], rel=1e-14)


def test_transformed_constants_by_hand():
    # p = (0.1, 0.2, 0.3, 0.4): nu = 1.6, varsigma = 0.4; L~ = 3.2, mu~ = 0.4, kappa~ = 8, gamma~ = 64;
    # sigma~^2 = 1.6 sigma^2, G~^2 = 8; B~ = (1/16) 1.6 * 10 + 6 * 3.2 * 0.1 + 8 * 1 * 8 = 1 + 1.92 + 64.
    p = np.array([0.1, 0.2, 0.3, 0.4])
    assert li_transform_factors(p) == pytest.approx((1.6, 0.4), rel=1e-15)
    t = li_transformed_constants(_hand_constants(), p)
    assert (t.L, t.mu, t.kappa, t.gamma, t.G_sq) == pytest.approx((3.2, 0.4, 8.0, 64.0, 8.0), rel=1e-14)
    assert t.sigma_sq == pytest.approx(1.6 * np.array([1.0, 2.0, 3.0, 4.0]), rel=1e-15)
    assert t.B == pytest.approx(66.92, rel=1e-14)
    assert (t.Gamma, t.init_dist_sq, t.radius, t.local_steps) == (0.1, 3.0, 1.0, 2)
    with pytest.raises(ValueError, match="weights"):
        li_transformed_constants(_hand_constants(), np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="weights"):
        li_transform_factors(np.array([0.0, 0.5, 0.5]))


def test_balanced_hypothesis_and_transformed_schedule():
    balanced, unbalanced = build_problem(BALANCED.spec), build_problem(UNBALANCED.spec)
    assert balanced_weights_hypothesis(balanced.weights).met
    h = balanced_weights_hypothesis(unbalanced.weights)
    assert not h.met and "N max p_k = 1.90" in h.detail
    # transformed Scheme II runs Li's schedule of the transformed problem: varsigma mu and gamma~ = 8 nu L/(varsigma mu)
    nu, varsigma = li_transform_factors(unbalanced.weights)
    schedule = sampling_schedule(unbalanced, "transformed_scheme_ii")
    assert schedule.mu == pytest.approx(varsigma * 1.0, rel=1e-12)
    assert schedule.gamma == pytest.approx(8 * nu * 1.5 / varsigma, rel=1e-12)
    assert sampling_schedule(unbalanced, "scheme_ii").gamma == pytest.approx(12.0, rel=1e-12)


def test_plan_names_a_bad_participant_count():
    with pytest.raises(ValueError, match="participants"):
        select_claim("li2020.thm2[participants=[1,11]]")
    with pytest.raises(ValueError, match="seeds"):
        select_claim("li2020.thm3[seeds=8]")
    assert Li2020SamplingPlan(horizon=1.0, participants=(1, 5), unbalanced_participants=(2,)).seeds == 128


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    """Quick plans, one store: the variants change constants only, so they reuse the claims' runs."""
    store = tmp_path_factory.mktemp("li_partial") / "runs.sqlite"
    s = VerifySettings(quick=True, seeds=2, jobs=1, progress=False, store=str(store))
    yield s
    s.close()


@pytest.fixture(scope="module")
def results(settings):
    return {claim_id: get_claim(claim_id).evaluate(settings) for claim_id in CLAIM_IDS}


@pytest.mark.parametrize("claim_id", CLAIM_IDS)
def test_claim_passes_with_its_tightness(results, claim_id):
    result = results[claim_id]
    v = result.verdict
    assert v.status is Status.PASS, v.notes
    # the bound bites: a few percent of it is used at K = 1 on the balanced instance, never above 1
    assert 0.005 < v.measured < 1
    runs = v.evidence["constants"]
    assert all(0 < t["bound tightness (max gap/bound)"] < 1 for t in runs if t["applicable"])
    assert all(t["gap/bound at T"] for t in runs)
    assert {s.name.split(",")[0] for s in v.checks} == {"explicit bound (eq. 6)", "rate exponent <= -1"}
    assert len(result.plots) == 2


def test_scheme_ii_on_unbalanced_data_is_not_applicable(results):
    v = results["li2020.thm3"].verdict
    (skipped,) = v.uninformative
    assert "scheme_ii, K = 1, unbalanced" in skipped.name and "not applicable" in skipped.reason
    assert skipped.verdict.status is Status.INCONCLUSIVE
    unmet = [h for h in skipped.verdict.hypotheses if not h.met]
    assert [h.name.split("] ")[1] for h in unmet] == ["Assumption 6 (Scheme II): balanced data p_k = 1/N"]
    # counted checks never include it; transformed Scheme II on the same data is counted
    assert not any("scheme_ii, K = 1, unbalanced" in s.name and "transformed" not in s.name for s in v.checks)
    assert any(s.name.startswith("explicit bound (eq. 6), transformed_scheme_ii") for s in v.checks)


@pytest.mark.parametrize("claim_id, variant", [(c, v) for c in CLAIM_IDS for v in get_claim(c).variants])
def test_planted_variant_fails(settings, claim_id, variant):
    result = get_claim(claim_id).evaluate_variant(settings, variant)
    assert result.verdict.status is Status.FAIL, variant.name
    assert result.verdict.as_expected
    assert result.verdict.evidence["planted"] == dict(variant.params)


def test_bound_too_loose_to_fail_is_not_counted(settings):
    # x 1e4 puts eq. 6 above L R^2/2, the largest gap in the ball the iterates visit, at every T
    v = select_claim("li2020.thm2[bound_scale=10000.0]").evaluate(settings).verdict
    assert v.uninformative and all("could not fail" in u.reason for u in v.uninformative)
    assert not any(s.name.startswith("explicit bound") for s in v.checks)
    assert all(u.verdict.status is Status.INCONCLUSIVE for u in v.uninformative)
