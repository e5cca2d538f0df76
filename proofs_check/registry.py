"""The registry of claims that `fedbound verify` and `fedbound list` know.

Claims are data here; each names its evaluator by import path, so ``fedbound list`` and
``fedbound --help`` load no numerical library. Statements use the notation of the cited papers
(Li et al.: E local steps per round, T total local steps, w* the optimum; Ding et al.: M blocks,
C cycles, K = E I iterations per block, T = C M K; Yu et al.: K the sync interval).
"""

from __future__ import annotations

from .claim import Claim, UnknownClaimError
from convergence.verdict import Status

from .references import DING2020, LI2020, LIU2022_NOTE, YU2019

__all__ = ["CLAIMS", "get_claim", "default_claims"]

_CLAIMS = (
    Claim(
        "li2020.thm4", (LI2020,), "Theorem 4/5 and Lemma 6 (Appendix C)",
        "Appendix C problem (N = 5, p = 4, μ = 2e-4), exact local gradients, constant η, E > 1: FedAvg converges "
        "to w̃* with ‖w̃* − w*‖ ≥ (E−1) η/16 · ‖(A₁+μI)(A₂+μI) w*‖; with E = 1 it converges to w*; with a "
        "decaying step it converges to w* for any E.",
        "the smallest ratio ‖w̃* − w*‖ / lower bound over the (η, E) grid (must be ≥ 1)",
        "proofs_check.li2020_thm4:evaluate",
    ),
    Claim(
        "li2020.thm1", (LI2020,), "Theorem 1 (eq. 4-5)",
        "Assumptions 1-4, κ = L/μ, γ = max{8κ, E}, η_t = 2/(μ(γ+t)): E F(w_T) − F* ≤ κ/(γ+T−1) · "
        "(2B/μ + μγ/2 · E‖w₁ − w*‖²), B = Σ p_k² σ_k² + 6LΓ + 8(E−1)²G²; hence O(1/T).",
        "the fitted exponent of the gap E F(w_T) − F* in γ + T on the counterexample, over the last decade (claimed ≤ −1)",
        "proofs_check.li2020_thm1:evaluate",
    ),
    Claim(
        "ding2020.thm1", (DING2020,), "Theorem 1 (MM-PSGD), explicit form from Lemmas 4-6",
        "F_m^i μ-strongly convex, L-smooth, variance ≤ σ², E‖∇f‖² ≤ G², ‖x‖² ≤ B²; γ = √N/(L√T), "
        "I ≤ T^(1/4)/N^(3/4), K > CMN ⇒ (1/M) Σ_m E F_m(x̃_m) − F(x*) ≤ O(1/√(NT)), with the explicit "
        "constant of eq. 16, 17, 33.",
        "the largest ratio mini-max gap / explicit bound over the T grid (must be ≤ 1)",
        "proofs_check.ding2020:evaluate_thm1",
    ),
    Claim(
        "ding2020.thm2", (DING2020,), "Theorem 2 (MC-PSGD)",
        "As Theorem 1 with η = √(NM)/(L√T), I ≤ (T/M)^(1/4)/N^(3/4), K > CMN ⇒ the same O(1/√(NT)) for the "
        "predictors ũ_m, and for every block m: E F_m(ũ_m) − F_m(x_m*) ≤ O(√M/√(NT)).",
        "the largest ratio mini-max gap / explicit bound over the T grid (must be ≤ 1)",
        "proofs_check.ding2020:evaluate_thm2",
    ),
    Claim(
        "ding2020.speedup", (DING2020,), "Sec. 3.2 and Theorems 1-2",
        "Linear speedup: at fixed T the error falls like N^(−1/2); the rate depends on M at most through Thm 2's "
        "√M; MC-PSGD sends about 2 M^(1/4) times MM-PSGD's traffic.",
        "the fitted exponent of MC-PSGD's per-block error in N at fixed T (claimed ≤ −1/2)",
        "proofs_check.ding2020:evaluate_speedup",
    ),
    Claim(
        "ding2020.ordering", (DING2020,), "Sec. 5 (Fig. 2)",
        "On blocks far apart: MM-/MC-PSGD's block predictors beat FedAvg's single model on their blocks; "
        "MC-PSGD is at least as good as MM-PSGD per block; FedAvg on block-cyclic data oscillates across blocks.",
        "the mean over seeds of FedAvg's per-block gap minus MM-PSGD's (claimed > 0)",
        "proofs_check.ding2020:evaluate_ordering",
    ),
    Claim(
        "yu2019.thm1", (YU2019, LIU2022_NOTE), "Theorem 1 (as restated in Liu's lecture note)",
        "Parallel restarted SGD, identical data, f L-smooth, step s ∈ (0, 1/L], sync every K steps: "
        "(1/T) Σ_t E‖∇f(x̄_{t−1})‖² ≤ 2/(sT) · (f(x̄₀) − f*) + 4 s² K² G² L² + (L/N) s σ².",
        "the largest ratio measured / bound over the record points (must be ≤ 1)",
        "proofs_check.yu2019:evaluate_thm1",
    ),
    Claim(
        "yu2019.cor2", (YU2019, LIU2022_NOTE), "Corollary 2 (as restated in Liu's lecture note)",
        "s = √N/(L√T) and K ≤ T^(1/4)/N^(3/4) ⇒ (1/T) Σ_t E‖∇f(x̄_{t−1})‖² = O(1/√(NT)): linear speedup in N.",
        "the fitted exponent of the average squared gradient norm in N T at the smallest N (claimed ≤ −1/2)",
        "proofs_check.yu2019:evaluate_cor2",
    ),
    Claim(
        "assumptions.constants", (LI2020, LIU2022_NOTE), "Assumptions 1-4 (Li et al.); σ_G², (G, B)-BGD (Liu)",
        "For each default problem: μ-strong convexity and L-smoothness of every F_k, σ_k² ≥ E‖∇F_k(w, ξ) − "
        "∇F_k(w)‖², G² ≥ E‖∇F_k(w, ξ)‖², σ_G² ≥ (1/N) Σ‖∇f_i − ∇f‖², Γ = F* − Σ p_k F_k* ≥ 0, and the (G, B)-BGD "
        "pair, each never violated at sampled points of the region.",
        "the number of sampled violations of the reported inequalities on the first problem (must be 0)",
        "proofs_check.report_items:evaluate_constants",
    ),
    Claim(
        "lemmas", (LI2020, DING2020, YU2019),
        "Li et al. Lemmas 1-3; Ding et al. Lemmas 2, 3, 6, 8, 9; Yu et al. client drift",
        "Both sides of each lemma along recorded trajectories, e.g. Li's Lemma 3: E Σ_k p_k ‖w̄_t − w_t^k‖² ≤ "
        "4 η_t² (E−1)² G²; expectations over seeds.",
        "the largest ratio LHS / RHS over every lemma and step, Ding's Lemma 8 aside (must be ≤ 1)",
        "proofs_check.report_items:evaluate_lemmas",
    ),
    Claim(
        "control.constant-step-rate", (LI2020,), "negative control: Theorem 4 makes it false",
        "False claim: FedAvg with a constant step and E > 1 converges at O(1/T) on the Appendix C problem "
        "(it converges to a biased limit, so the gap levels off).",
        "the fitted exponent of the gap in T (claimed −1; a working checker must FAIL it)",
        "proofs_check.controls:evaluate_constant_step",
        expected=Status.FAIL,
    ),
)

CLAIMS: dict[str, Claim] = {c.id: c for c in _CLAIMS}


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; UnknownClaimError lists the known ids otherwise."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(f"claim: unknown claim id {claim_id!r}; known ids: {', '.join(CLAIMS)}") from None


def default_claims() -> list[Claim]:
    """The claims `fedbound verify` runs when none is named."""
    return [c for c in CLAIMS.values() if c.default]
