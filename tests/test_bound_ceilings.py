"""The ceilings of Li's and Yu's explicit bounds (proofs_check.constants.bound_ceilings): their closed forms, that they
bound the quantity over the ball, and that a bound above them is reported uninformative, never PASS."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status, check_upper_bound
from proofs_check import combine_checks
from proofs_check.constants.bound_ceilings import gap_ceiling, gradient_ceiling


def test_ceilings_are_their_closed_forms() -> None:
    assert gap_ceiling(3.0, 2.0, "SGD").value == pytest.approx(3.0 * 2.0**2 / 2)  # L R^2 / 2
    assert gradient_ceiling(10.0, 1.5, 0.75, "the ball").value == pytest.approx((1.5 + 10.0 * 0.75) ** 2)
    assert "SGD need not decrease F" in gap_ceiling(3.0, 2.0, "SGD").reason


def test_ceilings_bound_the_gap_and_the_gradient_of_a_quadratic_over_the_ball() -> None:
    # F(w) = 1/2 (w - w*)' A (w - w*), L = lambda_max(A) = 4: F - F* <= L R^2 / 2 on the ball of radius R around
    # w*, with equality at w* + R v_max; ||grad F||^2 <= (||grad F(c)|| + L R)^2 on the ball around any c
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    A = Q @ np.diag([0.5, 1.0, 2.0, 4.0]) @ Q.T
    w_star, c, R = rng.standard_normal(4), rng.standard_normal(4), 0.7

    def ball(centre: np.ndarray) -> np.ndarray:
        u = rng.standard_normal((2000, 4))
        return centre + R * rng.uniform(size=(2000, 1)) ** 0.25 * u / np.linalg.norm(u, axis=1, keepdims=True)

    near = ball(w_star) - w_star
    assert np.max(0.5 * np.einsum("ni,ij,nj->n", near, A, near)) <= gap_ceiling(4.0, R, "SGD").value
    top = R * Q[:, 3]
    assert 0.5 * top @ A @ top == pytest.approx(gap_ceiling(4.0, R, "SGD").value)  # attained: the ceiling is sharp
    grad_sq = np.sum(((ball(c) - w_star) @ A) ** 2, axis=1)
    assert grad_sq.max() <= gradient_ceiling(4.0, float(np.linalg.norm(A @ (c - w_star))), R, "the ball").value


@pytest.mark.parametrize("call, field", [
    (lambda: gap_ceiling(0.0, 1.0, "x"), "L"),
    (lambda: gap_ceiling(1.0, float("nan"), "x"), "radius"),
    (lambda: gradient_ceiling(1.0, -1.0, 1.0, "x"), "centre_gradient_norm"),
])
def test_bad_input_names_the_field(call, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        call()


def test_a_bound_above_the_ceiling_is_listed_uninformative_and_a_planted_one_below_is_counted() -> None:
    # li2020.thm1's counterexample: eq. 4 is at least 2,625 at every record point, the gap at most L R^2/2 = 11.8
    x = np.array([10.0, 100.0, 1000.0])
    gaps = np.array([[0.09, 0.01, 0.001]])
    ceiling = gap_ceiling(3.6827, 2.5297, "FedAvg with E = 5")
    loose = check_upper_bound("thm1/bound", x, gaps, np.array([9e4, 9e3, 2625.0]), deterministic=True, ceiling=ceiling)
    assert loose.status is Status.INCONCLUSIVE and "L R^2/2 = 11.78" in loose.cannot_fail
    claim = combine_checks("thm1", [("explicit bound (eq. 4)", loose)])
    assert claim.status is Status.INCONCLUSIVE and claim.checks == ()
    assert [u.name for u in claim.uninformative] == ["explicit bound (eq. 4)"]
    planted = check_upper_bound("thm1/bound", x, gaps, 1e-7 * np.array([9e4, 9e3, 2625.0]), deterministic=True,
                                ceiling=ceiling)
    assert planted.status is Status.FAIL and not planted.cannot_fail
