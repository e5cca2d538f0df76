"""The claims that cut across the papers: the assumption constants, the lemma table and the negative control.
Data of the registry (``proofs_check.framework.registry``)."""

from __future__ import annotations

from convergence.verdict import Status

from .framework.claim import Claim, PlantedVariant
from .framework.parameters import ModePlans
from .plans import (
    ConstantsPlan,
    LemmasPlan,
)
from .framework.references import DING2020, LI2020, LIU2022_NOTE, YU2019

__all__ = ["CROSS_CLAIMS"]

CROSS_CLAIMS = (
    Claim(
        "assumptions.constants", (LI2020, LIU2022_NOTE), "Assumptions 1-4 (Li et al.); σ_G², (G, B)-BGD (Liu)",
        "For each default problem: μ-strong convexity and L-smoothness of every F_k, σ_k² ≥ E‖∇F_k(w, ξ) − "
        "∇F_k(w)‖², G² ≥ E‖∇F_k(w, ξ)‖², σ_G² ≥ (1/N) Σ‖∇f_i − ∇f‖², Γ = F* − Σ p_k F_k* ≥ 0, and the (G, B)-BGD "
        "pair, each never violated at sampled points of the region.",
        "the number of sampled violations of the reported inequalities on the first problem (must be 0)",
        "proofs_check.constants_claim:evaluate_constants",
        plan=ModePlans(default=ConstantsPlan()),
        variants=(
            PlantedVariant("L 10% off", "max_k L_k reported at 0.9 of its value (an exact constant on the counterexample)", {"planted": "L"},
                           sub_check="validation (samples and witnesses)"),
            PlantedVariant("mu 10% off", "mu_k reported at 1/0.9 of its value (too large)", {"planted": "mu"},
                           sub_check="validation (samples and witnesses)"),
            PlantedVariant("sigma_k^2 10% off", "sigma_k^2 reported at 0.9 of its sup over the ball", {"planted": "sigma_k^2"},
                           sub_check="validation (samples and witnesses)"),
            PlantedVariant("G^2 10% off", "G^2 reported at 0.9 of its sup over the ball", {"planted": "G^2"},
                           sub_check="validation (samples and witnesses)"),
            PlantedVariant("sigma_G^2 10% off", "sigma_G^2 reported at 0.9 of its sup over the ball", {"planted": "sigma_G^2"},
                           sub_check="validation (samples and witnesses)"),
        ),
        order=160,
    ),
    Claim(
        "lemmas", (LI2020, DING2020, YU2019),
        "Li et al. Lemmas 1-3; Ding et al. Lemmas 2, 3, 6, 8, 9; Yu et al. client drift",
        "Both sides of each lemma along recorded trajectories, e.g. Li's Lemma 3: E Σ_k p_k ‖w̄_t − w_t^k‖² ≤ "
        "4 η_t² (E−1)² G²; expectations over seeds.",
        "the largest ratio LHS / RHS over every counted lemma and step (must be ≤ 1); Ding's Lemmas 8 (true by the "
        "selection rule) and 9 (implied by L-smoothness once B covers x_m*) cannot fail and are listed as uninformative",
        "proofs_check.lemmas_claim:evaluate_lemmas",
        plan=ModePlans(quick=LemmasPlan(rounds=10), default=LemmasPlan(rounds=30)),
        variants=(
            PlantedVariant("li2020.lemma1", "Li Lemma 1 with its right-hand side scaled to 0.9 of the largest scale the run proves too small",
                           {"planted": "li2020.lemma1"}, sub_check="li2020.lemma1"),
            PlantedVariant("li2020.lemma2", "Li Lemma 2 with sum_k p_k^2 sigma_k^2 scaled to 0.9 of what the realised noise proves too small",
                           {"planted": "li2020.lemma2"}, sub_check="li2020.lemma2"),
            PlantedVariant("li2020.lemma3", "Li Lemma 3 with the constant 4 shrunk to 0.9 of the value the drift proves too small",
                           {"planted": "li2020.lemma3"}, sub_check="li2020.lemma3"),
            PlantedVariant("yu2019.drift", "Yu's drift bound with the constant 4 shrunk to 0.9 of the value the drift proves too small",
                           {"planted": "yu2019.drift"}, sub_check="yu2019.drift"),
            PlantedVariant("ding2020.lemma2", "Ding Lemma 2 with sigma^2/N shrunk to 0.9 of the value the noise proves too small",
                           {"planted": "ding2020.lemma2"}, sub_check="ding2020.lemma2"),
            PlantedVariant("ding2020.lemma3", "Ding Lemma 3 with the constant 4 shrunk to 0.9 of the value the drift proves too small",
                           {"planted": "ding2020.lemma3"}, sub_check="ding2020.lemma3"),
            PlantedVariant("ding2020.lemma6", "Ding Lemma 6 with its additive constant lowered below the largest measured window gap",
                           {"planted": "ding2020.lemma6"}, sub_check="ding2020.lemma6"),
        ),
        order=170,
    ),
)

LEGACY_CLAIMS = CROSS_CLAIMS
