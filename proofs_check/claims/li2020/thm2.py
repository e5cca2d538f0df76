"""li2020.thm2: FedAvg with partial participation by Scheme I converges as O(1/T).

Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020), Sec. 3.3,
Theorem 2 (proof in App. B). Under Assumptions 1-5, with Theorem 1's kappa, gamma = max{8 kappa, E},
the step eta_t = 2/(mu (gamma + t)) decayed per local iteration and
B = sum_k p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2, Scheme I (K clients drawn with replacement by
p_k, simple average) satisfies

    E F(w_T) - F* <= kappa / (gamma + T - 1) * (2 (B + C)/mu + mu gamma/2 ||w_1 - w*||^2),      (6)

with C = (4/K) E^2 G^2, for every K. Checked on the synthetic instances (balanced N = 10 at each K of
``plan.participants``: bound and rate; unbalanced N = 4 at each K of ``plan.unbalanced_participants``:
bound), on Li's two image instances at K = ``plan.image_participants``, and at E in ``plan.E`` (2, 5, 10) on the
balanced instance (bound), with the proof steps that carry E (Lemmas 3 and 5) on a traced run at the largest E
(``sampling_steps``: eq. 6 without its drift term or with C's E^2 written E cannot fail, these steps can). The
instances, the plan
(shared with li2020.thm3) and its variants: ``sampling``; the sub-checks and what they measured:
``sampling_checks``.
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
    """li2020.thm2: Scheme I on BALANCED for each K of ``plan.participants`` (bound and rate), on
    UNBALANCED for each K of ``plan.unbalanced_participants`` (bound), on the image instances, on BALANCED
    at the first K for each E > 1 of ``plan.E`` (bound), and the proof steps that carry E (``sampling_steps``)."""
    balanced, unbalanced = image_instances(plan)
    K = plan.image_participants
    runs = tuple(SamplingRun(BALANCED, "scheme_i", K, True) for K in plan.participants) + tuple(
        SamplingRun(UNBALANCED, "scheme_i", K, False) for K in plan.unbalanced_participants) + (
        SamplingRun(balanced, "scheme_i", K, True), SamplingRun(unbalanced, "scheme_i", K, False)) + tuple(
        SamplingRun(BALANCED, "scheme_i", plan.participants[0], False, E) for E in plan.E)
    return evaluate_sampling("li2020.thm2", "Theorem 2 (Scheme I)", runs, settings, plan, "scheme_i")


CLAIM = Claim(
    "li2020.thm2", (LI2020,), "Theorem 2 (eq. 6), Sec. 3.3 and App. B",
    "Assumptions 1-5 (Scheme I: K clients drawn with replacement by p_k, simple average), κ, γ, B as in "
    "Theorem 1, η_t = 2/(μ(γ+t)) decayed per local iteration: E F(w_T) − F* ≤ κ/(γ+T−1) · (2(B+C)/μ + μγ/2 · "
    "E‖w₁ − w*‖²), C = (4/K) E² G²; hence O(1/T), for every K.",
    "the largest ratio mean gap / eq. 6 over T on the balanced instance at the first K of the grid, K = 1 (must "
    "be ≤ 1; tightness per run and T in the evidence)",
    evaluate,
    plan=SAMPLING_PLANS,
    variants=SAMPLING_VARIANTS,
    order=30,
)
