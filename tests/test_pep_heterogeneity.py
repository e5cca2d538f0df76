"""The (G, B)-BGD heterogeneity measure, unequal client weights and FedProx's limit in proofs_check.pep.

Expected values come from PEPit's direct N-client program (solved by PEPit itself, ``direct_worst_case``),
from closed forms stated beside each test (gradient descent's tight rate), or from the inclusion of one
class's program in another's (a larger feasible set has a larger worst case); none is read back from the
code under test.
"""

from __future__ import annotations

import dataclasses

import pytest

from proofs_check.pep import (
    BGD, FedAvgLimitPEP, FedAvgPEP, PEPError, constant_steps, direct_worst_case, fedavg_limit_worst_case,
    fedavg_worst_case, solve_program, weighted_program, worst_case,
)


def _value(result) -> float:
    assert result.solved, f"not solved to tolerance: {result.status}, accuracy {result.accuracy:.2g}"
    return result.value


def _agrees_with_direct(setting: FedAvgPEP) -> None:
    direct = direct_worst_case(setting)
    assert direct.status in ("optimal", "optimal_inaccurate")
    assert _value(worst_case(setting)) == pytest.approx(direct.value, rel=1e-5)


# ------------------------------------------------------------------ (G, B)-BGD
@pytest.mark.parametrize("setting", [
    FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), bgd=BGD(1.0, 2.0)),
    FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), bgd=BGD(1.0, 2.0)),
    FedAvgPEP(3, 2, 2, 1.0, 0.0, constant_steps(0.5, 4), bgd=BGD(0.5, 1.5), metric="gap"),
], ids=["N=2", "N=3", "N=3 convex gap"])
def test_the_bgd_reduced_program_equals_pepits_direct_n_client_program(setting: FedAvgPEP) -> None:
    _agrees_with_direct(setting)


def test_the_bgd_worst_case_lies_between_the_per_client_gradient_bound_and_zeta_at_the_optimum() -> None:
    # BGD's program imposes sum_i p_i ||grad f_i||^2 <= G^2 + B^2 ||grad F||^2 at x* (where it is zeta = G's constraint)
    # and at the server models. Its feasible set grows with B; it contains that of "||grad f_i||^2 <= G^2 at every local
    # iterate (each x_r among them) and zeta = G"; it lies in that of zeta = G alone, and their union over B is dense
    # in it (a server model with grad F != 0 satisfies the constraint for B large enough), so the worst case tends to
    # zeta = G's as B grows. L = 1, mu = 0.1, eta = 0.5, E = R = 2, r0 = 1, G = 1.
    args = (2, 2, 2, 1.0, 0.1, 0.5)
    by_B = [_value(fedavg_worst_case(*args, None, 1.0, bgd=(1.0, B))) for B in (0.0, 0.5, 1.0, 2.0, 100.0)]
    per_client = _value(fedavg_worst_case(*args, 1.0, 1.0, G=1.0))
    at_optimum = _value(fedavg_worst_case(*args, 1.0, 1.0))
    assert per_client <= by_B[0] * (1 + 1e-6)
    assert all(a <= b * (1 + 1e-6) for a, b in zip(by_B, by_B[1:])) and by_B[0] < by_B[-2]
    assert by_B[-1] <= at_optimum * (1 + 1e-6) and by_B[-1] == pytest.approx(at_optimum, rel=1e-5)


@pytest.mark.parametrize("G, B", [(0.0, 1.0), (0.3, 2.0)])
def test_one_local_step_under_bgd_is_gradient_descent_with_its_tight_rate(G: float, B: float) -> None:
    # E = 1 is gradient descent on F, whose worst case (1 - eta mu)^(2R) r0^2 (eta <= 2/(L + mu)) is attained by
    # identical clients mu/2 ||x||^2: no dissimilarity, so sum_i p_i ||grad f_i||^2 = ||grad F||^2 <= G^2 + B^2
    # ||grad F||^2 for B >= 1. The class is in the unconstrained one and contains that instance: the same worst case.
    result = fedavg_worst_case(3, 1, 3, 1.0, 0.1, 0.5, None, 1.0, bgd=(G, B))
    assert _value(result) == pytest.approx(0.95 ** 6, rel=1e-5)


# ------------------------------------------------------------------ unequal client weights
@pytest.mark.parametrize("setting", [
    FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0),
    FedAvgPEP(3, 2, 2, 1.0, 0.25, constant_steps(0.2, 4), Gamma=0.1, G=2.0, metric="gap"),
    FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0, bgd=BGD(1.0, 2.0), mu_prox=0.3),
    FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0, function_class="quadratic"),
], ids=["zeta", "Gamma, G, gap", "BGD, FedProx", "quadratic"])
def test_the_n_client_program_at_equal_weights_equals_the_symmetric_program(setting: FedAvgPEP) -> None:
    solution = solve_program(weighted_program(setting))
    assert solution.solved
    assert solution.value == pytest.approx(_value(worst_case(setting)), rel=1e-5)


@pytest.mark.parametrize("weights", [(0.2, 0.8), (0.1, 0.3, 0.6)])
@pytest.mark.parametrize("fields", [
    dict(mu=0.1, step=0.5, zeta=1.0), dict(mu=0.25, step=0.2, Gamma=0.1, G=2.0, metric="gap"),
    dict(mu=0.1, step=0.5, zeta=0.5, bgd=BGD(1.0, 1.5)),
], ids=["zeta", "Gamma, G, gap", "zeta, BGD"])
def test_the_weighted_program_equals_pepits_direct_weighted_program(weights: tuple[float, ...], fields: dict) -> None:
    fields = dict(fields)
    mu, step = fields.pop("mu"), fields.pop("step")
    _agrees_with_direct(FedAvgPEP(len(weights), 2, 2, 1.0, mu, constant_steps(step, 4), weights=weights, **fields))


def test_equal_weights_are_the_symmetric_programs_request() -> None:
    plain = FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0)
    equal = dataclasses.replace(plain, weights=(1 / 3, 1 / 3, 1 / 3))
    assert equal.weights is None and equal.to_json() == plain.to_json() and "weights" not in plain.to_json()


@pytest.mark.parametrize("weights", [(0.25, 0.25, 0.5), (0.1, 0.2, 0.3, 0.4)])
def test_weights_none_above_a_half_give_the_equal_weight_worst_case(weights: tuple[float, ...]) -> None:
    # weighted.py: W(p) <= W (copies of clients) and W(p) >= W when max p_i <= 1/2 (the symmetric solution lifted with
    # unit vectors e_i, sum_i p_i e_i = 0): the N-client program solved as it is equals the symmetric program.
    setting = FedAvgPEP(len(weights), 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0, weights=weights)
    equal = _value(worst_case(dataclasses.replace(setting, weights=None)))
    assert _value(worst_case(setting)) == pytest.approx(equal, rel=1e-5)
    shortcut = fedavg_worst_case(len(weights), 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0, weights=weights)  # the symmetric solve
    assert shortcut.setting.weights == setting.weights and shortcut.value == pytest.approx(equal, rel=1e-9)


def test_a_client_with_more_than_half_the_weight_lowers_the_worst_case() -> None:
    # W(p) <= W for every p (copies of clients); with p = (1/3, 2/3) no lift of the symmetric solution exists and the
    # worst case is below it (0.759958 against 0.760080), solved by the N-client program.
    weighted = fedavg_worst_case(2, 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0, weights=(1 / 3, 2 / 3))
    equal = fedavg_worst_case(2, 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0)
    assert _value(weighted) < _value(equal) * (1 - 1e-4)


def test_clients_of_equal_weight_reduce_to_their_group() -> None:
    # weighted.py: a group of n_a >= 2 clients of equal weight is symmetric, and the worst case depends on its total
    # weight, not on n_a: two clients of 0.2 and four of 0.1 beside one of 0.6 (the N-client program, N = 3 and 5).
    base = FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), r0=0.3, zeta=1.0, weights=(0.2, 0.2, 0.6))
    five = dataclasses.replace(base, n_clients=5, weights=(0.1, 0.1, 0.1, 0.1, 0.6))
    assert _value(worst_case(base)) == pytest.approx(_value(worst_case(five)), rel=1e-4)


# ------------------------------------------------------------------ FedProx's limit
@pytest.mark.parametrize("mu_prox", [0.3, 1.0])
def test_fedprox_limit_is_reached_by_the_rounds_program_started_at_the_optimum(mu_prox: float) -> None:
    # Started at x* (r0 = 0), x_R -> w~ with ||x_R - w~|| <= c^R ||x* - w~||, c = q^E + b (1 - q^E)/(1 - q) the round
    # map's contraction (setting.py: q = max{|1 - eta (mu + mu_prox)|, |1 - eta (L + mu_prox)|}, b = eta mu_prox), so
    # (1 - c^R)^2 W <= the worst case after R rounds <= (1 + c^R)^2 W, W the limit program's worst case. L = 1,
    # mu = 0.5, eta = 0.5, E = 2, R = 10: c = 0.6 and 0.6875, c^R = 0.006 and 0.024.
    eta, E, R = 0.5, 2, 10
    q = max(abs(1 - eta * (0.5 + mu_prox)), abs(1 - eta * (1.0 + mu_prox)))
    c = q ** E + eta * mu_prox * (1 - q ** E) / (1 - q)
    limit = _value(fedavg_limit_worst_case(2, E, 1.0, 0.5, eta, 1.0, mu_prox=mu_prox))
    after = _value(fedavg_worst_case(2, E, R, 1.0, 0.5, eta, 1.0, 0.0, mu_prox=mu_prox))
    assert (1 - c ** R) ** 2 * limit <= after <= (1 + c ** R) ** 2 * limit
    # E = 1: FedProx's one step starts at the anchor (no proximal pull): gradient descent, whose limit is x*.
    assert fedavg_limit_worst_case(2, 1, 1.0, 0.5, eta, 1.0, mu_prox=mu_prox).value == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("E", [2, 5])
def test_the_limits_bgd_worst_case_grows_with_b_to_zeta_at_the_optimum(E: int) -> None:
    # The limit program imposes BGD at x* (zeta = G's constraint) and at w~: its feasible set grows with B, lies in
    # zeta = G's, and their union over B is dense in it (as for the rounds program above). L = 1, mu = 0.5, eta = 0.5.
    by_B = [_value(fedavg_limit_worst_case(2, E, 1.0, 0.5, 0.5, None, bgd=(1.0, B))) for B in (0.0, 1.0, 100.0)]
    at_optimum = _value(fedavg_limit_worst_case(2, E, 1.0, 0.5, 0.5, 1.0))
    assert by_B[0] < by_B[1] * (1 - 1e-4) and by_B[1] <= by_B[2] * (1 + 1e-6)
    assert by_B[2] == pytest.approx(at_optimum, rel=1e-5)
    # E = 1: gradient descent's limit is x* under any heterogeneity
    assert fedavg_limit_worst_case(2, 1, 1.0, 0.5, 0.5, None, bgd=(1.0, 2.0)).value == pytest.approx(0.0, abs=1e-7)


def test_fedprox_limit_with_no_proximal_term_is_fedavgs_request() -> None:
    fedavg = FedAvgLimitPEP(2, 2, 1.0, 0.5, 0.5, 1.0)
    assert dataclasses.replace(fedavg, mu_prox=0.0).to_json() == fedavg.to_json() and "mu_prox" not in fedavg.to_json()
    # the contraction needs eta < 2/(L + 2 mu_prox): 0.8 >= 2/3 with mu_prox = 1 (FedAvg's 2/L admits it)
    with pytest.raises(PEPError, match=r"^step: must be < 2/\(L \+ 2 mu_prox\) = 0.666667"):
        dataclasses.replace(fedavg, step=0.8, mu_prox=1.0)


# ------------------------------------------------------------------ errors and the command line
@pytest.mark.parametrize("build, field", [
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), bgd=(1.0, 2.0)), "bgd"),
    (lambda: BGD(1.0, -1.0), "bgd.B"),
    (lambda: fedavg_worst_case(2, 1, 1, 1.0, 0.1, 0.5, None, 1.0, bgd=(1.0,)), "bgd"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), weights=(0.2, 0.3, 0.5)), "weights"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), weights=(0.2, 0.7)), "weights"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), weights=(1.5, -0.5)), r"weights\[1\]"),
    (lambda: FedAvgLimitPEP(2, 2, 1.0, 0.1, 0.8, 1.0, mu_prox=1.0), "step"),
    (lambda: FedAvgLimitPEP(2, 2, 1.0, 0.1, 0.5, None, bgd=[1.0, 2.0]), "bgd"),
])
def test_bad_input_names_the_field(build, field: str) -> None:
    with pytest.raises(PEPError, match=rf"^{field}:"):
        build()


def test_the_command_line_takes_bgd_weights_and_fedprox_limits(capsys: pytest.CaptureFixture[str]) -> None:
    from reports.cli import main

    assert main(["pep", "--clients", "3", "--local-steps", "1", "--rounds", "3", "--mu", "0.1", "--step", "0.5",
                 "--bgd", "0.3", "2", "--weights", "0.2", "0.3", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "B = 2" in out and "weights 0.2, 0.3, 0.5" in out and f"{0.95 ** 6:.6f}"[:7] in out  # GD's rate, as above
    assert main(["pep", "--local-steps", "2", "--limit", "--mu", "0.5", "--step", "0.5", "--zeta", "1",
                 "--mu-prox", "0.3"]) == 0
    assert "FedProx mu_prox = 0.3" in capsys.readouterr().out
    assert main(["pep", "--local-steps", "2", "--limit", "--mu", "0.5", "--step", "0.5", "--bgd", "1", "2"]) == 0
    assert "of the limit (E = 2, eta = 0.5, (G, B)-BGD G = 1, B = 2)" in capsys.readouterr().out
    assert main(["pep", "--clients", "2", "--local-steps", "1", "--rounds", "1", "--mu", "0.1", "--step", "0.5",
                 "--weights", "0.2", "0.3", "0.5"]) == 2
    assert "weights: expected one weight per client" in capsys.readouterr().err


# ------------------------------------------------------------------ pep.li2020.thm1 with unequal weights
def test_li_theorem_1_with_unequal_weights_holds_and_its_planted_quarter_fails() -> None:
    from convergence import Status
    from proofs_check import VerifySettings, get_claim

    claim, quick = get_claim("pep.li2020.thm1"), VerifySettings(quick=True, jobs=1, progress=False)
    grid = dict(E_grid=(1,), T_grid=(2,), weighted_T_grid=(2,))
    for scale, expected in ((1.0, Status.PASS), (0.25, Status.FAIL)):  # looseness 2.1 at E = 1, T = 2
        verdict = claim.evaluate(quick, bound_scale=scale, **grid).verdict
        (weighted,) = [c.verdict for c in verdict.checks if "unequal p_k" in c.name]
        assert weighted.status is expected and verdict.evidence["weighted"][0]["solved"]
    with pytest.raises(ValueError, match="^weights: claim 'pep.li2020.thm1': needs at least 2 client weights"):
        claim.evaluate(quick, weights=(0.2, 0.3), **grid)
