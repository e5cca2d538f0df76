"""MM-PSGD's performance-estimation program (proofs_check.pep.block_cyclic) and its claim pep.ding2020.thm1.

Expected values come from PEPit's direct program with N M functions (solved by PEPit itself, no fedbound code:
proofs_check/pep/block_cyclic_direct.py) and from a closed form stated beside its test; none is read back from
the code under test.
"""

from __future__ import annotations

import dataclasses

import pytest

from convergence import Status
from proofs_check import VerifySettings, get_claim
from proofs_check.pep import (
    ENGINE_TOLERANCE, MMPSGDPEP, PEPError, block_cyclic_direct_worst_case, block_cyclic_engine_check,
    block_cyclic_instance, mm_psgd_worst_case, reduced_clients, worst_case,
)

QUICK = VerifySettings(quick=True, jobs=1, progress=False)
L, MU, B, G = 1.0, 0.5, 1.0, 0.8


def _value(result) -> float:
    assert result.solved, f"not solved to tolerance: {result.status}, accuracy {result.accuracy:.2g}"
    return result.value


@pytest.mark.parametrize("N, M, C, E, I", [
    (2, 2, 1, 1, 2),  # two local steps: the clients' deviations matter (one deviation block per data block)
    (3, 2, 1, 1, 2),  # the same value for every N >= 2
    (2, 1, 1, 2, 2),  # one block: FedAvg with the mini-max gap's metric
    (2, 2, 2, 1, 1),  # two cycles, I = 1
])
def test_the_reduced_program_equals_pepits_direct_program(N: int, M: int, C: int, E: int, I: int) -> None:
    setting = MMPSGDPEP(N, M, C, E, I, L, MU, 0.4, B, G)
    direct = block_cyclic_direct_worst_case(setting)
    assert direct.status.startswith("optimal")
    assert _value(worst_case(setting)) == pytest.approx(direct.value, rel=1e-4)


def test_with_one_local_step_the_worst_case_is_that_of_one_client_per_block() -> None:
    # I = 1: the iterates move by the clients' mean gradient only, so each block's clients can be replaced by
    # their mean (block_cyclic's docstring): PEPit's direct program with two clients per block has the value of
    # the program with one.
    setting = MMPSGDPEP(2, 2, 1, 2, 1, L, MU, 0.4, B, G)
    assert reduced_clients(setting) == 1
    direct = block_cyclic_direct_worst_case(setting)
    assert _value(worst_case(dataclasses.replace(setting, n_clients=1))) == pytest.approx(direct.value, rel=1e-4)
    assert _value(mm_psgd_worst_case(2, 2, 1, 2, 1, L, MU, 0.4, B, G)) == pytest.approx(direct.value, rel=1e-4)


@pytest.mark.parametrize("mu, G_", [(0.5, 1.0), (0.5, 0.5), (0.25, 0.5)])
def test_the_ceiling_is_the_strong_convexity_bound_when_the_ball_does_not_bind(mu: float, G_: float) -> None:
    # Free predictors p_m in the ball: F_m(p) - F_m(x*) <= F_m(p) - min F_m <= ||grad F_m(p)||^2 / (2 mu)
    # <= G^2 / (2 mu); f_m(x) = mu/2 ||x - x*||^2 with ||p - x*|| = G / mu <= 2B (p and x* on opposite sides of
    # the ball) attains it.
    for M in (1, 2):
        ceiling = worst_case(MMPSGDPEP(1, M, 1, 1, 1, L, mu, 1.0, B, G_, anywhere=True))
        assert _value(ceiling) == pytest.approx(G_ ** 2 / (2 * mu), rel=1e-5)


@pytest.mark.parametrize("N, M, C, E, I", [(1, 2, 1, 2, 1), (2, 2, 1, 1, 2)])
def test_quadratics_stay_below_the_smooth_class_and_their_worst_instance_runs_through_the_engine(
        N: int, M: int, C: int, E: int, I: int) -> None:
    # Quadratics are a subclass: their worst case is at most the smooth class's (here strictly below: quadratics
    # do not attain MM-PSGD's worst case). The worst quadratic instance, written as least squares per client and
    # block and run by the engine's MM-PSGD (exact gradients, eq. 7's predictors), reproduces the program's value:
    # the program writes the method fedbound runs (block order, averaging, predictors). G = 1.5 as the claim's.
    setting = MMPSGDPEP(N, M, C, E, I, L, MU, 0.4, B, 1.5, function_class="quadratic")
    smooth = _value(worst_case(dataclasses.replace(setting, function_class="smooth")))
    instance = block_cyclic_instance(setting)
    assert instance.solved and instance.value < smooth * (1 - 1e-3)
    assert instance.hessians.shape[:2] == (M, reduced_clients(setting))
    check = block_cyclic_engine_check(instance)
    assert check.agrees and check.relative_difference < ENGINE_TOLERANCE


@pytest.mark.parametrize("build, field", [
    (lambda: MMPSGDPEP(0, 2, 1, 1, 1, L, MU, 0.4, B, G), "n_clients"),
    (lambda: MMPSGDPEP(2, 0, 1, 1, 1, L, MU, 0.4, B, G), "blocks"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 0, L, MU, 0.4, B, G), "local_steps"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 1, L, 0.0, 0.4, B, G), "mu"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 1, L, MU, 0.0, B, G), "step"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 1, L, MU, 0.4, -1.0, G), "B"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 1, L, MU, 0.4, B, G, anywhere=1), "anywhere"),
    (lambda: MMPSGDPEP(2, 2, 1, 1, 1, L, MU, 0.4, B, G, function_class="convex"), "function_class"),
    (lambda: block_cyclic_instance(MMPSGDPEP(2, 2, 1, 1, 1, L, MU, 0.4, B, G)), "setting"),
])
def test_bad_input_names_the_field(build, field: str) -> None:
    with pytest.raises(PEPError, match=rf"^{field}:"):
        build()


def test_the_claim_passes_as_stated_and_its_planted_variant_fails() -> None:
    claim = get_claim("pep.ding2020.thm1")
    verdict = claim.evaluate(QUICK).verdict
    assert verdict.status is Status.PASS
    assert 0 < verdict.measured < 1
    for variant in claim.variants:
        planted = claim.evaluate(QUICK, **variant.params).verdict
        assert planted.status is Status.FAIL
        assert any(variant.sub_check in c.name and c.verdict.status is Status.FAIL for c in planted.checks)


def test_a_bound_above_the_ceiling_everywhere_is_uninformative_never_pass() -> None:
    # T = 10: the explicit bound (5.5) is above the class's ceiling G^2/(2 mu) capped by the ball (1.75): it
    # cannot fail, so the claim is INCONCLUSIVE with the sub-check listed as uninformative.
    verdict = get_claim("pep.ding2020.thm1").evaluate(QUICK, M_grid=(1,), K_grid=(10,)).verdict
    assert verdict.status is Status.INCONCLUSIVE
    assert [u.name for u in verdict.uninformative] == ["bound >= worst case, M = 1"]


def test_the_command_line_solves_mm_psgds_program_and_names_a_missing_field(capsys: pytest.CaptureFixture[str]) -> None:
    from reports.cli import main

    setting = MMPSGDPEP(2, 2, 1, 1, 2, L, MU, 0.4, B, G)
    expected = block_cyclic_direct_worst_case(setting).value  # PEPit's own direct program
    assert main(["pep", "--blocks", "2", "--rounds", "1", "--local-steps", "2", "--clients", "5", "--mu", str(MU),
                 "--step", "0.4", "--B", str(B), "--G", str(G), "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["setting"]["n_clients"] == 5
    assert out["value"] == pytest.approx(expected, rel=1e-4)  # the same for every N >= 2
    assert main(["pep", "--blocks", "2", "--rounds", "1", "--local-steps", "2", "--mu", "0.5", "--step", "0.4",
                 "--G", "1"]) == 2
    assert "--B: required with --blocks" in capsys.readouterr().err
