"""yu2019icml.cor4 on the smooth network (``cor4_smooth``): Corollary 4's first bullet as stated (s =
sqrt(N/T), K = 1) on digits_tanh_mlp over label-sorted clients, the exponent in N T on the default
instance (N = 2, T = 512, 2,048, 8,192), the planted O(1/(NT)) FAILing it, the rule that makes a range
the bound cannot bite uninformative, and the plan's switch."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status
from proofs_check import get_claim
from proofs_check.claims.yu2019icml import cor4_smooth
from proofs_check.framework.parameters import PlanError

CLAIM = get_claim("yu2019icml.cor4")
SMOOTH = "rate in N T, digits_tanh_mlp, N = 2"


@pytest.fixture(scope="module")
def smooth_verdicts(quick_settings):
    """The claim with the default smooth instance on the quick convex grid, as stated and planted."""
    return (CLAIM.evaluate(quick_settings, smooth_horizon=8_192).verdict,
            CLAIM.evaluate(quick_settings, smooth_horizon=8_192, claimed_exponent=-1.0).verdict)


def test_plans_switch_the_smooth_network() -> None:
    plans = CLAIM.plan
    assert plans.quick.smooth_horizon == 0 and not plans.quick.smooth_on
    assert plans.default.smooth_horizons == (512, 2_048, 8_192) and plans.default.smooth_clients == (2,)
    assert plans.full.smooth_horizons == (1_024, 4_096, 16_384, 65_536) and plans.full.smooth_clients == (2, 4, 8)
    with pytest.raises(PlanError, match="smooth_n_train"):
        type(plans.default)(clients=(2,), horizons=(1, 2, 3), smooth_horizon=8_192, smooth_horizon_count=3,
                            smooth_clients=(2, 5))
    with pytest.raises(PlanError, match="smooth_horizon"):
        type(plans.default)(clients=(2,), horizons=(1, 2, 3), smooth_horizon=8, smooth_horizon_count=3,
                            smooth_clients=(2,))


def test_smooth_rate_passes_on_the_default_instance(smooth_verdicts) -> None:
    verdict, _ = smooth_verdicts
    [check] = [c.verdict for c in verdict.checks if c.name == SMOOTH]
    assert check.status is Status.PASS, check.notes
    assert -0.56 < check.measured < -0.45
    assert all(h.met for h in check.hypotheses)
    rows = verdict.evidence["smooth_network"]
    assert [r["T"] for r in rows] == [512, 2_048, 8_192] and all(r["K"] == 1 for r in rows)
    assert [r["s"] for r in rows] == pytest.approx([np.sqrt(2 / T) for T in (512, 2_048, 8_192)])
    # the rule bites: Theorem 3's bound at the largest T lies below the average measured at the smallest
    assert rows[-1]["bound (estimated constants, L at N)"] < rows[0]["mean final average"]
    # no speedup check with a single N
    assert not [u for u in verdict.uninformative if "digits_tanh_mlp" in u.name]


def test_planted_steeper_rate_fails_on_the_smooth_network(smooth_verdicts) -> None:
    _, planted = smooth_verdicts
    assert planted.status is Status.FAIL
    [check] = [c.verdict for c in planted.checks if c.name == SMOOTH]
    assert check.status is Status.FAIL, check.notes


def test_flat_range_is_uninformative() -> None:
    c = cor4_smooth.SmoothConstants(L=2.0, G_sq=2.0, sigma_sq=0.7, sigma_G_sq=1.0, f0=2.3)
    small = cor4_smooth.SmoothPoint(2, 512, np.sqrt(2 / 512), np.array([0.05, 0.06]), c)
    large = cor4_smooth.SmoothPoint(2, 2_048, np.sqrt(2 / 2_048), np.array([0.03, 0.03]), c)
    # bound at T = 2048: 2 f0 / (s T) alone is 2 * 2.3 / 64 = 0.072 > 0.055 measured at T = 512
    assert cor4_smooth.bound_at(large, 2.0) > 0.072
    assert "pre-asymptotic" in cor4_smooth.flat_reason(large, small, 2.0)
    assert cor4_smooth.flat_reason(large, cor4_smooth.SmoothPoint(2, 512, 0.0625, np.array([1.0]), c), 2.0) is None
