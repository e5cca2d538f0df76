"""The worst-case client drift of FedAvg (proofs_check.pep.drift, DriftPEP) and its claim pep.yu2019.drift.

Expected values are the closed forms derived in proofs_check/pep/drift.py's docstring (an upper bound from
the gradient bound and the triangle inequality, attained by linear clients): client 1's drift
4 (1 - 1/N)^2 s^2 K^2 G^2, the clients' average drift s^2 K^2 G^2; and PEPit's own solve of the same
N-client class (no fedbound code between PEPit and the solver).
"""

from __future__ import annotations

import pytest

from proofs_check.pep import DriftPEP, PEPError, worst_case


def _value(result) -> float:
    assert result.solved, f"not solved to tolerance: {result.status}, accuracy {result.accuracy:.2g}"
    return result.value


@pytest.mark.parametrize("N", [2, 3, 4])
@pytest.mark.parametrize("K", [1, 2, 3])
def test_client_drift_worst_case_is_four_one_minus_one_over_n_squared_s2_k2_g2(N: int, K: int) -> None:
    # ||x_1 - xbar|| = ||(1 - 1/N) a_1 - (1/N) sum_(j>1) a_j|| <= 2 (1 - 1/N) s K G (||a_i|| <= s K G), attained by
    # f_1 = G <e, x>, f_j = -G <e, x>. L = 1, s = 0.1, G = 1.
    expected = 4 * (1 - 1 / N) ** 2 * (0.1 * K) ** 2
    assert _value(worst_case(DriftPEP(N, K, 1.0, 0.1, 1.0))) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("L, step, G", [(0.01, 0.5, 3.0), (10.0, 0.02, 0.5)])
def test_the_drift_worst_case_does_not_depend_on_l_and_scales_as_s_k_g_squared(L: float, step: float, G: float) -> None:
    # linear clients are L-smooth for every L, and the upper bound uses the gradient bound only. N = 3, K = 2.
    expected = 4 * (2 / 3) ** 2 * (step * 2 * G) ** 2
    assert _value(worst_case(DriftPEP(3, 2, L, step, G))) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("N", [2, 3, 5])
def test_average_drift_worst_case_is_s2_k2_g2(N: int) -> None:
    # (1/N) sum_i ||x_i - xbar||^2 = (1/N) sum_i ||a_i||^2 - ||abar||^2 <= (s K G)^2, attained by linear clients
    # whose gradients sum to zero (a regular simplex of N unit vectors). K = 2, s = 0.1, G = 1.
    assert _value(worst_case(DriftPEP(N, 2, 1.0, 0.1, 1.0, "average"))) == pytest.approx(0.04, rel=1e-6)


def test_the_drift_program_equals_pepits_own_solve_of_the_n_client_class() -> None:
    # The same class written with PEPit's gradient calls and solved by PEPit's cvxpy wrapper (no fedbound code).
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    N, K, L, s, G = 3, 2, 1.0, 0.1, 1.0
    problem = PEP()
    functions = [problem.declare_function(SmoothFunction, L=L) for _ in range(N)]
    start = problem.set_initial_point()
    ends = []
    for f in functions:
        x = start
        for _ in range(K):
            g = f.gradient(x)
            problem.add_constraint(g ** 2 <= G ** 2)
            x = x - s * g
        ends.append(x)
    mean = sum(ends[1:], ends[0]) / N
    problem.set_performance_metric((ends[0] - mean) ** 2)
    pepit_value = problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    assert _value(worst_case(DriftPEP(N, K, L, s, G))) == pytest.approx(pepit_value, rel=1e-5)


@pytest.mark.parametrize("build, field", [
    (lambda: DriftPEP(1, 2, 1.0, 0.1, 1.0), "n_clients"),
    (lambda: DriftPEP(2, 0, 1.0, 0.1, 1.0), "local_steps"),
    (lambda: DriftPEP(2, 2, 1.0, 0.0, 1.0), "step"),
    (lambda: DriftPEP(2, 2, 1.0, 0.1, -1.0), "G"),
    (lambda: DriftPEP(2, 2, 1.0, 0.1, 1.0, "max"), "metric"),
])
def test_bad_drift_input_names_the_field(build, field: str) -> None:
    with pytest.raises(PEPError, match=rf"^{field}:"):
        build()
