"""The kernels' vectorised exp (``problems/models/vector_exp.py``) against NumPy's exp.

The expected values are NumPy's exp (correctly rounded to within 1 ulp); the module's error
budget is the degree-13 Taylor remainder (< 6e-18 relative) plus the rounding of ~30 operations,
so 2 ulp is the bound for normal results; below 2^-1022 the result is a subnormal whose absolute
error is at most one subnormal step (2^-1074) after the extra rounding of the split 2^k.
"""

from __future__ import annotations

import numpy as np

from problems.models.vector_exp import exp_inplace


def _exp(x: np.ndarray) -> np.ndarray:
    y = np.array(x, dtype=np.float64)
    exp_inplace(y, y.size)
    return y


def _ulps(x: np.ndarray) -> float:
    with np.errstate(over="ignore", under="ignore"):
        ref = np.exp(x)
    return float(np.max(np.abs(_exp(x) - ref) / np.spacing(ref)))


def test_within_two_ulp_over_the_normal_range() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-708.0, 709.7, 200_001), rng.uniform(-40.0, 0.0, 100_000),
                        rng.normal(scale=1e-3, size=10_000)])
    assert _ulps(x) <= 2.0


def test_special_values_and_the_ends_of_the_range() -> None:
    x = np.array([0.0, -0.0, 1.0, -np.inf, np.inf, np.nan, 709.78, 709.79, 1e300, -745.0, -746.0, -1e300])
    y = _exp(x)
    assert y[0] == 1.0 and y[1] == 1.0 and abs(y[2] - np.e) <= np.spacing(np.e)
    assert y[3] == 0.0 and y[4] == np.inf and np.isnan(y[5])
    assert np.isfinite(y[6]) and abs(y[6] - np.exp(709.78)) <= 2 * np.spacing(np.exp(709.78))
    assert y[7] == np.inf and y[8] == np.inf  # ln(largest double) = 709.7827...
    assert y[9] == np.exp(-745.0) == 2.0**-1074 and y[10] == 0.0 and y[11] == 0.0  # the smallest subnormal, then 0
    sub = np.linspace(-745.0, -708.5, 1001)  # subnormal results
    assert np.max(np.abs(_exp(sub) - np.exp(sub))) <= 2.0**-1074


def test_only_the_first_n_entries_change() -> None:
    x = np.array([0.0, 1.0, 2.0, 3.0])
    exp_inplace(x, 2)
    assert x[0] == 1.0 and x[2:].tolist() == [2.0, 3.0]


def test_a_truncated_polynomial_would_fail_the_bound() -> None:
    """Planted variant: exp(r) to degree 11 only (two terms dropped) is off by far more than 2 ulp
    near |r| = ln2/2, so the 2-ulp test can fail."""
    r = np.log(2.0) / 2
    truncated = sum(r**i / np.prod(np.arange(1, i + 1, dtype=float)) for i in range(12))
    assert abs(truncated - np.exp(r)) / np.spacing(np.exp(r)) > 2.0
