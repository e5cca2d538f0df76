"""The paired threshold check of ding2020.fig4 and ding2020.fig5 (``proofs_check.claims.ding2020.sec5``) on
hand-made per-seed values: PASS, FAIL and INCONCLUSIVE, its intervals against the Student-t closed
form, and the Bonferroni side of the FAIL decision.

Every case uses 4 seeds v = m + s z with z = (-1.5, -0.5, 0.5, 1.5) / sqrt(5/3) (sample mean 0, sample
sd 1), so the mean is m and the standard error s / 2; the Student-t interval at level c is
m -+ t_{3, (1+c)/2} s / 2, with t_{3, 0.975} = 3.182 and, for k = 3 sub-checks, t_{3, 1 - 0.025/3} = 4.857.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from convergence import Status
from proofs_check.claims.ding2020.sec5 import FAMILY_ALPHA, check_paired_threshold

Z = np.array([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(5 / 3)


def values(mean: float, sd: float) -> np.ndarray:
    """4 per-seed values with this sample mean and sample sd."""
    return mean + sd * Z


def test_the_construction_has_the_stated_moments() -> None:
    v = values(0.3, 0.02)
    assert v.mean() == pytest.approx(0.3) and v.std(ddof=1) == pytest.approx(0.02)


@pytest.mark.parametrize("mean,sd,above,status", [
    (0.005, 0.006, False, Status.PASS),   # E v < 0.02: hi = 0.005 + 3.182 * 0.003 = 0.0145 < 0.02
    (0.10, 0.006, False, Status.FAIL),    # lo = 0.10 - 4.857 * 0.003 = 0.085 > 0.02 even with Bonferroni
    (0.02, 0.006, False, Status.INCONCLUSIVE),  # the interval straddles the margin
    (0.005, 0.04, False, Status.INCONCLUSIVE),  # a small mean drop but a wide interval: not a PASS
    (0.05, 0.006, True, Status.PASS),     # E v > 0.02: lo = 0.05 - 0.0095 > 0.02
    (-0.05, 0.006, True, Status.FAIL),
])
def test_statuses_on_hand_made_values(mean: float, sd: float, above: bool, status: Status) -> None:
    verdict = check_paired_threshold("x/drop", values(mean, sd), 0.02, above=above, family_size=3, what="drop")
    assert verdict.status is status
    half = stats.t.ppf(1 - FAMILY_ALPHA / 2, 3) * sd / 2
    assert verdict.measured == pytest.approx(mean) and verdict.theoretical == 0.02
    np.testing.assert_allclose(verdict.interval, (mean - half, mean + half), rtol=1e-12)
    half_k = stats.t.ppf(1 - FAMILY_ALPHA / 6, 3) * sd / 2
    np.testing.assert_allclose(verdict.evidence["bonferroni_interval"], (mean - half_k, mean + half_k), rtol=1e-12)


def test_fail_needs_the_bonferroni_interval() -> None:
    # mean / se = 4, between t_{3, 0.975} = 3.18 and t_{3, 1 - 0.025/3} = 4.86: the 95% interval lies above 0,
    # so "E v < 0" would FAIL as one check alone (k = 1), but as one of 3 sub-checks it is INCONCLUSIVE
    v = values(0.04, 0.02)
    assert check_paired_threshold("x", v, 0.0, above=False, family_size=1, what="v").status is Status.FAIL
    assert check_paired_threshold("x", v, 0.0, above=False, family_size=3, what="v").status is Status.INCONCLUSIVE
    # PASS is decided on the 95% interval whatever k (an intersection-union test needs no correction)
    assert check_paired_threshold("x", -v, 0.0, above=False, family_size=3, what="v").status is Status.PASS


def test_one_seed_is_inconclusive() -> None:
    verdict = check_paired_threshold("x", np.array([0.5]), 0.02, above=False, family_size=2, what="v")
    assert verdict.status is Status.INCONCLUSIVE and "one seed" in verdict.notes


@pytest.mark.parametrize("kwargs,field", [
    ({"family_size": 0}, "family_size"),
    ({"family_size": 2.0}, "family_size"),
    ({"family_size": True}, "family_size"),
])
def test_bad_input_is_named(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        check_paired_threshold("x", values(0.0, 0.01), 0.02, above=False, what="v", **kwargs)


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        check_paired_threshold("x", np.array([0.1, np.nan]), 0.02, above=False, family_size=2, what="v")
