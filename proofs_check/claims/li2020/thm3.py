"""li2020.thm3: FedAvg with partial participation by Scheme II (and, on unbalanced data, transformed
Scheme II) converges as O(1/T).

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), Sec. 3.3,
Theorem 3 and the transformation of Sec. 3.3 (proofs in App. B). Scheme II (K clients uniformly without
replacement, w <- (N/K) sum_{k in S} p_k w_k) under Assumptions 1-4 and 6 (balanced data p_k = 1/N),
with Theorem 1's kappa, gamma, B and eta_t = 2/(mu (gamma + t)) decayed per local iteration, satisfies
eq. 6 (``thm2``) with C = (N-K)/(N-1) (4/K) E^2 G^2; for unbalanced data, transformed Scheme II
(F~_k = N p_k F_k, simple average) satisfies it with L, mu, sigma_k, G replaced by nu L, varsigma mu,
sqrt(nu) sigma_k, sqrt(nu) G, nu = N max p_k, varsigma = N min p_k. Scheme II itself is not covered on
unbalanced data: that run is reported not applicable (its hypothesis p_k = 1/N checked), never PASS.
E > 1 (``plan.E``: 2, 5, 10) on the balanced instance and the proof steps that carry E are checked as in
li2020.thm2 (``sampling_steps``).
The instances, the plan (shared with li2020.thm2) and its variants: ``sampling``; the sub-checks and
what they measured: ``sampling_checks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...framework.claim import Claim, ClaimResult
from ...framework.references import LI2020
from .sampling import BALANCED, SAMPLING_PLANS, SAMPLING_VARIANTS, UNBALANCED, SamplingRun, image_instances
from .sampling_checks import evaluate_sampling

if TYPE_CHECKING:
    from ...framework.settings import VerifySettings
    from .sampling import Li2020SamplingPlan

__all__ = ["CLAIM", "evaluate"]


def evaluate(settings: VerifySettings, plan: Li2020SamplingPlan) -> ClaimResult:
    """li2020.thm3: Scheme II on BALANCED for each K of ``plan.participants`` (bound and rate);
    transformed Scheme II on UNBALANCED for each K of ``plan.unbalanced_participants`` (bound); and
    Scheme II on UNBALANCED at the smallest of them, where p_k = 1/N is unmet (not applicable, reported
    uninformative with its instability); the image instances; Scheme II on BALANCED at the first K for each
    E > 1 of ``plan.E`` (bound); and the proof steps that carry E (``sampling_steps``)."""
    balanced, unbalanced = image_instances(plan)
    K = plan.image_participants
    runs = (tuple(SamplingRun(BALANCED, "scheme_ii", K, True) for K in plan.participants)
            + tuple(SamplingRun(UNBALANCED, "transformed_scheme_ii", K, False) for K in plan.unbalanced_participants)
            + (SamplingRun(UNBALANCED, "scheme_ii", min(plan.unbalanced_participants), False),
               SamplingRun(balanced, "scheme_ii", K, True), SamplingRun(unbalanced, "transformed_scheme_ii", K, False),
               SamplingRun(unbalanced, "scheme_ii", K, False))
            + tuple(SamplingRun(BALANCED, "scheme_ii", plan.participants[0], False, E) for E in plan.E))
    return evaluate_sampling("li2020.thm3", "Theorem 3 (Scheme II)", runs, settings, plan, "scheme_ii")


CLAIM = Claim(
    "li2020.thm3", (LI2020,), "Theorem 3 and the transformation of Sec. 3.3, App. B",
    "Assumptions 1-4 and 6 (Scheme II: K clients uniformly without replacement, w ← (N/K) Σ_{k∈S} p_k w_k, "
    "balanced data p_k = 1/N), η_t = 2/(μ(γ+t)) per local iteration: eq. 6 with C = (N−K)/(N−1) · (4/K) E² G²; "
    "on unbalanced data, transformed Scheme II (F̃_k = N p_k F_k, simple average) satisfies it with L, μ, σ_k, G "
    "replaced by νL, ςμ, √ν σ_k, √ν G, ν = N max p_k, ς = N min p_k. Scheme II itself is not covered on "
    "unbalanced data (its hypothesis is checked).",
    "the largest ratio mean gap / eq. 6 over T on the balanced instance at the first K of the grid, K = 1 (must "
    "be ≤ 1; tightness per run and T in the evidence)",
    evaluate,
    plan=SAMPLING_PLANS,
    variants=SAMPLING_VARIANTS,
    order=40,
)
