"""Li et al. (ICLR 2020): the remark of Sec. 3.3 on E = T^a (``li2020.e-growth``) and App. C.2 / Fig. 2b's
decays a as a parameter of li2020.thm4 (``claims.li2020.decay``)."""

from __future__ import annotations

import pytest

import problems
from convergence import Status
from proofs_check import VerifySettings, get_claim, select_claim
from proofs_check.claims.li2020.decay import decay_rounds, decaying_step
from proofs_check.claims.li2020.e_growth import horizon_shape
from proofs_check.framework.evaluation import claim_optimum


@pytest.mark.parametrize("T, a, shape", [
    (4096, 0.5, (64, 64)),       # E = R = sqrt(T)
    (10_000, 0.25, (10, 1000)),  # E = T^(1/4) = 10, R = E^3
    (4096, 0.75, (512, 8)),      # R = T^(1/4) = 8, E = R^3
])
def test_horizon_shape_makes_E_the_power_a_of_T(T: int, a: float, shape: tuple[int, int]) -> None:
    assert horizon_shape(T, a) == shape
    with pytest.raises(ValueError, match="^a: "):
        horizon_shape(T, 1.0)


def test_e_growth_is_one_over_T_up_to_sqrt_T_and_breaks_beyond(quick_settings: VerifySettings) -> None:
    """Exact gradients: the gap is Theta((E/T)^2) = Theta(T^(2a-2)) (module docstring), so the exponents are about
    -1.5, -1 and -0.5 for a = 1/4, 1/2, 3/4; the stated form (a <= 1/2) PASSes."""
    verdict = get_claim("li2020.e-growth").evaluate(quick_settings).verdict
    assert verdict.status is Status.PASS, verdict.notes
    fitted = {row["a"]: row["fitted exponent"] for row in verdict.evidence["constants"]}
    assert fitted[0.25] == pytest.approx(-1.5, abs=0.1)
    assert fitted[0.5] == pytest.approx(-1.0, abs=0.05)
    assert fitted[0.75] == pytest.approx(-0.5, abs=0.1)


def test_e_growth_planted_three_quarters_fails(quick_settings: VerifySettings) -> None:
    claim = get_claim("li2020.e-growth")
    (variant,) = claim.variants
    verdict = claim.evaluate_variant(quick_settings, variant).verdict
    assert verdict.status is Status.FAIL and verdict.as_expected, verdict.notes


@pytest.mark.parametrize("text, field", [
    ("li2020.e-growth[max_horizon=512]", "max_horizon"),  # below the default min_horizon 1024
    ("li2020.e-growth[exponents=[0.75],claimed_up_to=0.5]", "claimed_up_to"),  # nothing left to check
])
def test_e_growth_plan_fields_that_must_fit_together_are_refused(text: str, field: str) -> None:
    selection = select_claim(text)
    with pytest.raises(ValueError, match=f"^{field}: claim 'li2020.e-growth'"):
        selection.claim.plan_for(VerifySettings(progress=False), selection.params)


def test_decays_parameter_is_parsed() -> None:
    selection = select_claim("li2020.thm4[decays=[1e-6, 0.01],decay_span=21]")
    assert selection.params["decays"] == (1e-6, 0.01) and selection.params["decay_span"] == 21.0
    assert get_claim("li2020.thm4").plan.default.decays == (1e-4,)  # the default runs only today's decay
    assert get_claim("li2020.thm4").plan.full.decays == (1e-6, 1e-4, 1e-2)  # App. C.2's set


@pytest.mark.parametrize("text, field", [
    ("li2020.thm4[decays=[0.01,0.0001]]", "decays"),  # not increasing
    ("li2020.thm4[decays=[0]]", "decays"),
    ("li2020.thm4[decays=[2]]", "decays"),  # a <= 1
    ("li2020.thm4[decays=fast]", "decays"),
    ("li2020.thm4[decay_span=5]", "decay_span"),  # less than a decade of step decay
    ("li2020.thm4[decay_max_rounds=0]", "decay_max_rounds"),
])
def test_bad_decay_parameters_name_the_field(text: str, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: claim 'li2020.thm4' needs"):
        select_claim(text)


def test_decay_rounds_keep_the_default_run_and_cap_the_slow_decay() -> None:
    assert decay_rounds(1e-4, 41, 10**7) == 400_000  # the default plan's a = 1e-4 run, as before the parameter
    assert decay_rounds(1e-4, 101, 10**7) == 1_000_000  # --full's, as before
    assert decay_rounds(1e-6, 101, 10**7) == 10**7  # capped: eta_0/eta_T = 11
    assert decay_rounds(1e-2, 11, 10**7) == 1000


def test_a_fast_decay_approaches_w_star_at_the_slow_mode_rate(quick_settings: VerifySettings) -> None:
    """a = 1e-2 on the Appendix C problem: mu_F = 0.00427, so the distance shrinks like x^(-mu_F/(5a)) = x^-0.085,
    far slower than eta_t (the claim would FAIL with -1 claimed); the stated rate PASSes."""
    spec = problems.problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    problem = problems.build_problem(spec)
    optimum, _ = claim_optimum(problem)
    mu_F = problems.problem_constants(problem).mu_global
    assert mu_F == pytest.approx(0.00427, rel=1e-3)
    (name, verdict), _ = decaying_step(quick_settings, 1e-2, decay_rounds(1e-2, 41, 10**7), spec, optimum, mu_F)
    assert name == "decaying step reaches w* (E = 5, a = 0.01)"
    assert verdict.status is Status.PASS, verdict.notes
    assert verdict.theoretical == pytest.approx(-mu_F / 0.05)
    assert -0.2 < verdict.measured < -0.085
