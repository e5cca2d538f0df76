"""Exact worst cases of FedAvg (proofs_check.pep) and the two claims that use them.

Expected values come from closed forms stated beside each test (gradient descent's tight rates:
Taylor, Hendrickx, Glineur 2017; Drori and Teboulle 2014), from PEPit's direct N-client program
(solved by PEPit itself, no fedbound code), or from the ordering of classes (a larger class has a
larger worst case); none is read back from the code under test.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pytest

from convergence import MissingRunError, RunStore, Status
from proofs_check import VerifySettings, get_claim
from proofs_check.pep import (
    FedAvgLimitPEP, FedAvgPEP, PEPError, check_against_worst_case, constant_steps, direct_worst_case, engine_check,
    fedavg_limit_worst_case, fedavg_worst_case, quadratic_instance, worst_case,
)

QUICK = VerifySettings(quick=True, jobs=1, progress=False)


def _value(result) -> float:
    assert result.solved, f"not solved to tolerance: {result.status}, accuracy {result.accuracy:.2g}"
    return result.value


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("mu, eta, rounds, server", [(0.1, 0.5, 3, 1.0), (0.25, 1.0, 4, 1.0), (0.2, 0.8, 2, 0.5)])
def test_one_local_step_is_gradient_descent_with_its_tight_rate(mu: float, eta: float, rounds: int, server: float) -> None:
    # E = 1: every client starts at x_r, so the mean of the clients' steps is s eta grad F(x_r): gradient descent on
    # F with step s eta, whatever the heterogeneity. For step h <= 2/(L + mu) its tight worst case of ||x_R - x*||^2
    # is (1 - h mu)^(2R) r0^2 (each step contracts by max|1 - h lambda| over [mu, L] = 1 - h mu; f = mu/2 x^2
    # attains it). L = 1, r0 = 1.
    result = fedavg_worst_case(2, 1, rounds, 1.0, mu, eta, 1.0, 1.0, server_step=server)
    assert _value(result) == pytest.approx((1 - server * eta * mu) ** (2 * rounds), rel=1e-5)


def test_gradient_descent_function_gap_on_smooth_convex_functions() -> None:
    # mu = 0, E = 1, step 1/L: Drori and Teboulle (2014), Theorem 3.1 (h = 1, tight): F(x_R) - F* <= L r0^2 / (4R + 2).
    # L = 2, r0 = 1.5, R = 3: 2 * 2.25 / 14.
    result = fedavg_worst_case(1, 1, 3, 2.0, 0.0, 0.5, None, 1.5, metric="gap")
    assert _value(result) == pytest.approx(2.0 * 2.25 / 14, rel=1e-5)


@pytest.mark.parametrize("E, R", [(2, 2), (3, 2)])
def test_clients_sharing_their_minimiser_contract_like_e_r_gradient_steps(E: int, R: int) -> None:
    # zeta = 0: every grad f_i(x*) = 0, so each local step contracts the distance to x* by 1 - eta mu (eta <= 2/(L+mu)),
    # the clients' average too (convexity of the norm): ||x_R - x*||^2 <= (1 - eta mu)^(2 E R) r0^2, attained by
    # identical quadratics mu/2 ||x||^2. L = 1, mu = 0.2, eta = 0.6.
    result = fedavg_worst_case(3, E, R, 1.0, 0.2, 0.6, 0.0, 1.0)
    assert _value(result) == pytest.approx(0.88 ** (2 * E * R), rel=1e-5)


# ------------------------------------------------------------------ the symmetric reduction
@pytest.mark.parametrize("setting", [
    FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0),
    FedAvgPEP(3, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0),
    FedAvgPEP(2, 2, 2, 1.0, 0.0, constant_steps(0.5, 4), zeta=1.0, metric="gap"),
    FedAvgPEP(2, 3, 2, 1.0, 0.2, (0.3, 0.3, 0.3, 0.2, 0.2, 0.2), zeta=0.5, server_step=0.7),
    FedAvgPEP(3, 2, 2, 1.0, 0.25, constant_steps(0.2, 4), Gamma=0.1, G=2.0, metric="gap"),
], ids=["N=2", "N=3", "convex gap", "schedule, server step", "N=3 Gamma, G"])
def test_the_reduced_program_equals_pepits_direct_n_client_program(setting: FedAvgPEP) -> None:
    # PEPit's program with one function per client, built and solved by PEPit (proofs_check.pep.direct).
    direct = direct_worst_case(setting)
    assert direct.status in ("optimal", "optimal_inaccurate")
    assert _value(worst_case(setting)) == pytest.approx(direct.value, rel=1e-5)


def test_the_worst_case_is_the_same_for_every_number_of_clients_from_two() -> None:
    two = fedavg_worst_case(2, 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0)
    five = fedavg_worst_case(5, 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0)
    assert five.setting.n_clients == 5 and five.value == two.value and five.cached
    one = fedavg_worst_case(1, 2, 2, 1.0, 0.1, 0.5, 1.0, 1.0)  # one client: no heterogeneity, gradient descent
    assert _value(one) == pytest.approx(0.95 ** 8, rel=1e-5) and one.value < two.value


def test_the_quadratic_class_program_equals_pepits_direct_quadratic_program() -> None:
    # PEPit's SmoothStronglyConvexQuadraticFunction per client (Bousselmi, Hendrickx, Glineur 2023), solved by SCS.
    setting = FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0, function_class="quadratic")
    direct = direct_worst_case(setting, "SCS", eps=1e-9, max_iters=100_000)
    assert _value(worst_case(setting)) == pytest.approx(direct.value, rel=1e-5)


# ------------------------------------------------------------------ FedProx
@pytest.mark.parametrize("E, R", [(2, 1), (3, 2)])
def test_fedprox_clients_sharing_their_minimiser_have_a_closed_form_worst_case(E: int, R: int) -> None:
    # zeta = 0 (every grad f_i(x*) = 0), one FedProx round from x_r: y_(e+1) - x* = [(1 - eta mu_prox)(y_e - x*) -
    # eta (grad f(y_e) - grad f(x*))] + eta mu_prox (x_r - x*); the bracket is a gradient step of size
    # eta / (1 - eta mu_prox) scaled by 1 - eta mu_prox, of norm <= a ||y_e - x*||, a = max over [mu, L] of
    # |1 - eta (lambda + mu_prox)| = 1 - eta (mu + mu_prox) when eta (L + mu + 2 mu_prox) <= 2. So
    # ||y_E - x*|| <= p ||x_r - x*||, p = a^E + b (1 - a^E) / (1 - a), b = eta mu_prox (the recursion
    # p_(e+1) = a p_e + b, p_0 = 1), the clients' average too (convexity of the norm), and every inequality is an
    # equality for identical quadratics mu/2 ||x||^2 (all vectors collinear): the worst case of ||x_R - x*||^2 is
    # p^(2R) r0^2. L = 1, mu = 0.2, eta = 0.6, mu_prox = 0.5: eta (L + mu + 2 mu_prox) = 1.32.
    a, b = 1 - 0.6 * 0.7, 0.6 * 0.5
    p = a ** E + b * (1 - a ** E) / (1 - a)
    result = fedavg_worst_case(3, E, R, 1.0, 0.2, 0.6, 0.0, 1.0, mu_prox=0.5)
    assert _value(result) == pytest.approx(p ** (2 * R), rel=1e-5)


@pytest.mark.parametrize("n_clients", [2, 3])
def test_fedprox_reduced_program_equals_pepits_direct_n_client_program(n_clients: int) -> None:
    setting = FedAvgPEP(n_clients, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0, mu_prox=0.3)
    direct = direct_worst_case(setting)
    assert direct.status in ("optimal", "optimal_inaccurate")
    assert _value(worst_case(setting)) == pytest.approx(direct.value, rel=1e-5)


def test_fedprox_with_no_proximal_term_is_fedavg() -> None:
    fedavg = FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0)
    zero = dataclasses.replace(fedavg, mu_prox=0.0)
    assert zero.to_json() == fedavg.to_json() and "mu_prox" not in fedavg.to_json()  # FedAvg's cache key, unchanged
    # the proximal branch of the program tends to FedAvg's as mu_prox -> 0 (the worst case is continuous in it)
    tiny = _value(worst_case(dataclasses.replace(fedavg, mu_prox=1e-7)))
    assert tiny == pytest.approx(_value(worst_case(fedavg)), rel=1e-5)
    # E = 1: y_i^0 = x_r, so the proximal term is zero and FedProx is gradient descent, (1 - eta mu)^(2R)
    assert _value(fedavg_worst_case(2, 1, 3, 1.0, 0.1, 0.5, 1.0, 1.0, mu_prox=2.0)) == pytest.approx(0.95 ** 6, rel=1e-5)


# ------------------------------------------------------------------ the worst-case instance through the engine
@pytest.mark.parametrize("setting", [
    FedAvgPEP(2, 1, 3, 1.0, 0.1, constant_steps(0.5, 3), zeta=1.0),
    FedAvgPEP(2, 2, 3, 1.0, 0.1, constant_steps(0.5, 6), zeta=1.0),
    FedAvgPEP(2, 3, 2, 1.0, 0.25, constant_steps(0.3, 6), Gamma=0.1, G=2.0, metric="gap", server_step=0.8),
], ids=["E=1", "E=2", "E=3 gap, Gamma, G, server step"])
def test_the_worst_quadratic_instance_reproduces_its_value_through_the_engine(setting: FedAvgPEP, tmp_path) -> None:
    quadratic = dataclasses.replace(setting, function_class="quadratic")
    check = engine_check(quadratic_instance(quadratic), data_dir=tmp_path)
    assert check.agrees, (check.simulated, check.instance.value)
    smooth, over_quadratics = _value(worst_case(setting)), _value(worst_case(quadratic))
    if setting.local_steps == 1:
        # gradient descent: its worst case is a quadratic's (mu/2 x^2), so both classes give (1 - eta mu)^(2R)
        assert over_quadratics == pytest.approx(smooth, rel=1e-5)
    else:
        # with E > 1 local steps the smooth class's worst case is no quadratic's: 0.672 against 0.625 (E = 2), and
        # 0.0991 against 0.0759 (E = 3); quadratics are a subclass, never above
        assert over_quadratics < smooth * 0.95


def test_fedprox_worst_quadratic_instance_reproduces_its_value_through_the_engines_fedprox(tmp_path) -> None:
    # The engine's FedProx (convergence.FedProxConfig, its own local step) on the program's worst quadratic instance:
    # measured 1.3e-6 relative (ENGINE_TOLERANCE 1e-3).
    setting = FedAvgPEP(2, 2, 3, 1.0, 0.1, constant_steps(0.5, 6), zeta=1.0, function_class="quadratic", mu_prox=0.5)
    check = engine_check(quadratic_instance(setting), data_dir=tmp_path)
    assert check.agrees, (check.simulated, check.instance.value)


# ------------------------------------------------------------------ monotonicity
def test_the_worst_case_grows_with_the_heterogeneity_and_the_initial_distance() -> None:
    # A larger zeta or r0 is a larger class: its worst case cannot be smaller.
    by_zeta = [_value(fedavg_worst_case(2, 3, 2, 1.0, 0.1, 0.4, zeta, 1.0)) for zeta in (0.0, 0.5, 1.0, 2.0)]
    assert all(a < b for a, b in zip(by_zeta, by_zeta[1:]))
    by_r0 = [_value(fedavg_worst_case(2, 3, 2, 1.0, 0.1, 0.4, 0.5, r0, metric="gap")) for r0 in (0.5, 1.0, 2.0)]
    assert all(a < b for a, b in zip(by_r0, by_r0[1:]))


def test_without_heterogeneity_the_worst_case_decreases_with_the_rounds() -> None:
    # zeta = 0: every round contracts towards x* (the closed form above), so R -> worst case is decreasing.
    values = [_value(fedavg_worst_case(2, 2, R, 1.0, 0.2, 0.6, 0.0, 1.0)) for R in (1, 2, 3)]
    assert values[0] > values[1] > values[2]


# ------------------------------------------------------------------ the limit program
def test_the_limit_is_reached_by_the_rounds_program_started_at_the_optimum() -> None:
    # Started at x* (r0 = 0), x_R -> w~ with ||x_R - w~|| <= rho^R ||x* - w~||, rho = (1 - eta mu)^E the round map's
    # contraction (s = 1, eta <= 2/(L+mu)), so (1 - rho^R)^2 W^2 <= worst case after R rounds <= (1 + rho^R)^2 W^2,
    # W^2 the limit program's worst case. L = 1, mu = 0.5, eta = 0.5, E = 2: rho = 0.5625, rho^8 = 0.0100.
    limit = _value(fedavg_limit_worst_case(2, 2, 1.0, 0.5, 0.5, 1.0))
    after = _value(fedavg_worst_case(2, 2, 8, 1.0, 0.5, 0.5, 1.0, 0.0))
    rho = 0.75 ** 2
    assert (1 - rho ** 8) ** 2 * limit <= after <= (1 + rho ** 8) ** 2 * limit
    # E = 1: the limit of gradient descent is x* itself.
    assert fedavg_limit_worst_case(2, 1, 1.0, 0.5, 0.5, 1.0).value == pytest.approx(0.0, abs=1e-7)


# ------------------------------------------------------------------ solver status, caching, errors
def test_a_program_not_solved_to_tolerance_gives_an_inconclusive_check() -> None:
    setting = FedAvgPEP(2, 2, 2, 1.0, 0.1, constant_steps(0.5, 4), zeta=1.0)
    stopped = worst_case(setting, max_iter=2)
    assert not stopped.solved and stopped.status == "user_limit"
    solved = worst_case(setting)
    # A bound far above the worst case: PASS when solved, INCONCLUSIVE when any point is not, FAIL when violated.
    assert check_against_worst_case("c", [1], [solved], [10.0], upper=True).status is Status.PASS
    assert check_against_worst_case("c", [1, 2], [solved, stopped], [10.0, 10.0], upper=True).status is Status.INCONCLUSIVE
    assert check_against_worst_case("c", [1], [solved], [solved.value / 2], upper=True).status is Status.FAIL
    within = solved.value * (1 - 1e-4)  # inside the value's tolerance (1e-3): cannot be told apart
    assert check_against_worst_case("c", [1], [solved], [within], upper=True).status is Status.INCONCLUSIVE


def test_solved_programs_are_stored_and_read_back(tmp_path) -> None:
    setting = FedAvgPEP(2, 1, 2, 1.0, 0.1, constant_steps(0.5, 2), zeta=1.0)
    with RunStore(tmp_path / "runs.sqlite") as store:
        first = worst_case(setting, store=store)
        again = worst_case(setting, store=store)
    assert not first.cached and again.cached
    assert (again.value, again.status, again.iterations) == (first.value, first.status, first.iterations)
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        assert worst_case(setting, store=store).cached
        with pytest.raises(MissingRunError):
            worst_case(FedAvgPEP(2, 1, 3, 1.0, 0.1, constant_steps(0.5, 3), zeta=1.0), store=store)


@pytest.mark.parametrize("build, field", [
    (lambda: FedAvgPEP(2, 0, 1, 1.0, 0.1, ()), "local_steps"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 1.0, (0.5,)), "mu"),
    (lambda: FedAvgPEP(2, 1, 2, 1.0, 0.1, (0.5,)), "steps"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (math.nan,)), r"steps\[0\]"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), zeta=-1.0), "zeta"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), metric="loss"), "metric"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,), mu_prox=-0.1), "mu_prox"),
    (lambda: FedAvgLimitPEP(2, 2, 1.0, 0.1, 2.5, 1.0), "step"),
    (lambda: FedAvgLimitPEP(2, 2, 1.0, 0.0, 0.5, 1.0), "mu"),
    (lambda: FedAvgLimitPEP(2, 2, 1.0, 0.1, 0.5, None), "zeta"),
    (lambda: FedAvgPEP(2, 1, 1, 1.0, 0.0, (0.5,), function_class="quadratic"), "function_class"),
    (lambda: quadratic_instance(FedAvgPEP(2, 1, 1, 1.0, 0.1, (0.5,))), "setting"),
    (lambda: fedavg_worst_case(2, 1, 1, 1.0, 0.1, True, 1.0, 1.0), "steps"),
])
def test_bad_input_names_the_field(build, field: str) -> None:
    with pytest.raises(PEPError, match=rf"^{field}:"):
        build()


def test_the_command_line_solves_a_program_and_names_a_bad_field(capsys: pytest.CaptureFixture[str]) -> None:
    from reports.cli import main

    assert main(["pep", "--clients", "4", "--local-steps", "1", "--rounds", "3", "--mu", "0.1", "--step", "0.5",
                 "--zeta", "1"]) == 0
    assert f"{0.95 ** 6:.6f}"[:7] in capsys.readouterr().out  # gradient descent's (1 - eta mu)^(2R)
    assert main(["pep", "--local-steps", "2", "--mu", "0.1", "--step", "0.5"]) == 2
    assert "--rounds: required unless --limit" in capsys.readouterr().err
    assert main(["pep", "--local-steps", "2", "--limit", "--mu", "0.1", "--step", "3", "--zeta", "1"]) == 2
    assert "step: must be < 2/L" in capsys.readouterr().err
    assert main(["pep", "--local-steps", "3", "--rounds", "2", "--mu", "0.2", "--step", "0.6", "--zeta", "0",
                 "--mu-prox", "0.5"]) == 0
    assert "mu_prox = 0.5" in capsys.readouterr().out  # the closed form's value: test_fedprox_clients_sharing...
    assert main(["pep", "--clients", "2", "--local-steps", "2", "--limit", "--mu", "0.1", "--step", "0.5", "--zeta",
                 "1", "--weights", "0.3", "0.7"]) == 2
    assert "--weights: the limit program has equal weights" in capsys.readouterr().err


def test_importing_the_package_loads_neither_pepit_nor_cvxpy() -> None:
    code = ("import sys, proofs_check.pep as pep; pep.FedAvgPEP; pep.worst_case\n"
            "print(sorted(m for m in ('PEPit', 'cvxpy', 'scipy') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


# ------------------------------------------------------------------ the claims
@pytest.mark.parametrize("claim_id", ["pep.li2020.thm1", "pep.li2020.thm4", "pep.yu2019.drift"])
def test_the_claims_pass_as_stated_and_their_planted_variants_fail(claim_id: str) -> None:
    claim = get_claim(claim_id)
    assert claim.evaluate(QUICK).verdict.status is Status.PASS
    for variant in claim.variants:
        verdict = claim.evaluate(QUICK, **variant.params).verdict
        assert verdict.status is Status.FAIL
        assert any(variant.sub_check in c.name and c.verdict.status is Status.FAIL for c in verdict.checks)


def test_a_claim_whose_programs_are_not_solved_is_inconclusive() -> None:
    verdict = get_claim("pep.li2020.thm4").evaluate(QUICK, max_iter=2).verdict
    assert verdict.status is Status.INCONCLUSIVE
    assert all(not s["solved"] for c in verdict.checks for s in c.verdict.evidence["solver"])
