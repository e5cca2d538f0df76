"""Yu et al.'s Theorem 1 bound: the closed form against a hand-computed value, the claim's bound
built from it with the constants it reports, and the planted bound_scale that scales it."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status
from proofs_check import VerifySettings, get_claim
from proofs_check.claims.yu2019.sweep import yu_theorem1_bound

evaluate_thm1 = get_claim("yu2019.thm1").evaluate  # the mode's plan, parameters by name
evaluate_cor2 = get_claim("yu2019.cor2").evaluate


def test_closed_form_against_a_hand_computed_value() -> None:
    # Theorem 1 (liu_lecture_fl_fedavg.md): 2 f0/(s T) + 4 s^2 K^2 G^2 L^2 + (L/N) s sigma^2 with
    # s = 0.01, T = 100, f0 = 5, K = 3, G^2 = 4, L = 2, N = 4, sigma^2 = 9:
    #   2 * 5 / (0.01 * 100)        = 10
    #   4 * 0.01^2 * 3^2 * 4 * 2^2  = 4e-4 * 9 * 16 = 0.0576
    #   (2 / 4) * 0.01 * 9          = 0.045
    # total 10.1026; at T = 200 the first term halves: 5.1026.
    rhs = yu_theorem1_bound(np.array([100.0, 200.0]), s=0.01, K=3, N=4, L=2.0, G_sq=4.0, sigma_sq=9.0, f0=5.0)
    np.testing.assert_allclose(rhs, [10.1026, 5.1026], rtol=1e-14)
    # the drift term grows as K^2 and the noise term falls as 1/N (linear speedup)
    wide = yu_theorem1_bound(100.0, s=0.01, K=6, N=8, L=2.0, G_sq=4.0, sigma_sq=9.0, f0=5.0)
    assert float(wide) == pytest.approx(10 + 4 * 0.0576 + 0.0225, rel=1e-14)


def test_the_claim_checks_the_closed_form_with_its_reported_constants(tmp_path) -> None:
    # 4 seeds: with 3 or fewer the gamma method cannot certify a skewed mean's upper limit (no PASS possible)
    settings = VerifySettings(seeds=4, quick=True, progress=False, store=str(tmp_path / "runs.sqlite"))
    verdict = evaluate_thm1(settings).verdict
    scaled = evaluate_thm1(settings, bound_scale=0.5).verdict  # same runs, from the store
    for consts, check, half in zip(verdict.evidence["constants"], verdict.checks, scaled.checks):
        ev = check.verdict.evidence
        rhs = yu_theorem1_bound(np.array(ev["x"]), s=consts["s"], K=consts["K"], N=consts["N"], L=consts["L"],
                                G_sq=consts["G^2"], sigma_sq=consts["sigma^2"], f0=consts["f(x_0) - f*"])
        np.testing.assert_allclose(ev["bound"], rhs, rtol=1e-12)
        np.testing.assert_allclose(half.verdict.evidence["bound"], 0.5 * rhs, rtol=1e-12)
        assert half.verdict.evidence["mean"] == ev["mean"]  # a variant changes the check, not the runs
    assert verdict.status is Status.PASS and verdict.tightness.label == "upper bound"
    assert scaled.measured == pytest.approx(2 * verdict.measured, rel=1e-12)
    assert "Planted variant: the bound multiplied by 0.5" in scaled.notes


def test_a_bound_above_the_gradient_ceiling_cannot_fail_and_is_listed_uninformative(tmp_path) -> None:
    # every averaged model lies in ||x|| <= B, where ||grad f||^2 <= (||grad f(0)|| + L B)^2: Theorem 1's first term
    # 2 f0/(s t) exceeds that at the first record points (named), and x 1e4 at every point (uninformative, never PASS)
    settings = VerifySettings(seeds=2, quick=True, progress=False, store=str(tmp_path / "runs.sqlite"))
    verdict = evaluate_thm1(settings).verdict
    for consts, check in zip(verdict.evidence["constants"], verdict.checks):
        ev = check.verdict.evidence
        assert ev["ceiling"]["value"] == pytest.approx(consts["ceiling of ||grad f||^2"])
        assert 0 < len(ev["unfailable_points"]) < len(ev["x"])  # the first points only: the check is counted
        assert max(ev["mean"]) <= ev["ceiling"]["value"]  # the ceiling bounds what was measured
    loose = evaluate_thm1(settings, bound_scale=1e4).verdict
    assert loose.status is Status.INCONCLUSIVE and loose.checks == ()
    assert len(loose.uninformative) == len(verdict.checks)
    assert all("(||grad f(c)|| + L R)^2" in u.reason for u in loose.uninformative)


@pytest.mark.parametrize(("call", "field"), [
    (lambda s: evaluate_thm1(s, bound_scale=0.0), "bound_scale"),
    (lambda s: evaluate_thm1(s, bound_scale=float("nan")), "bound_scale"),
    (lambda s: evaluate_thm1(s, bound_scale=True), "bound_scale"),
    (lambda s: evaluate_cor2(s, claimed_exponent="-1"), "claimed_exponent"),
    (lambda s: get_claim("control.constant-step-rate").evaluate(s, step="cosine"), "step"),
])
def test_bad_planted_parameters_name_the_field(call, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        call(VerifySettings(seeds=2, quick=True, progress=False))
