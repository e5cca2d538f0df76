"""ding2020.thm2: Theorem 2 of Ding et al. (2020, arXiv:2002.07454), MC-PSGD on block-cyclic data.

As Theorem 1 (``thm1``) with the block step eta = sqrt(NM)/(L sqrt(T)) and I <= (T/M)^{1/4}/N^{3/4}:

    (1/M) sum_m E F_m(u~_m) - F(x*) <= O(1/sqrt(NT))          (eq. 19),

and for every block m, E F_m(u~_m) - F_m(x_m*) <= O(sqrt(M)/sqrt(NT))   (eq. 20).
The same explicit form as Theorem 1's bounds MC-PSGD's mini-max gap: by Lemma 8 (eq. 48-49) the
selected model's average loss at each communication iteration is at most the block-mixed chain's,
which is MM-PSGD's chain with the same gamma, so eq. 18's chain of inequalities carries over to u~_m.
Eq. 20 bounds every per-block gap of MC-PSGD by O(sqrt(M/(NT))), exponent -1/2 in N T at fixed M,
and their mean, the excess over the floor, with it: on blocks far apart those are rate checks
(``theorems``, its docstring). The plan and planted variants are shared with ding2020.thm1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...framework.claim import Claim
from ...framework.references import DING2020
from .theorems import THEOREM_PLANS, THEOREM_VARIANTS, DingTheoremPlan, evaluate_theorem

if TYPE_CHECKING:
    from ...framework.claim import ClaimResult
    from ...framework.settings import VerifySettings

__all__ = ["CLAIM", "evaluate"]


def evaluate(settings: VerifySettings, plan: DingTheoremPlan) -> ClaimResult:
    """Theorem 2 (MC-PSGD), with the plan of ``thm1.evaluate``; ``claimed_exponent`` applies to eq.
    20's per-block rates as well."""
    return evaluate_theorem("mc", settings, plan)


CLAIM = Claim(
    "ding2020.thm2", (DING2020,), "Theorem 2 (MC-PSGD)",
    "As Theorem 1 with η = √(NM)/(L√T), I ≤ (T/M)^(1/4)/N^(3/4), K > CMN ⇒ the same O(1/√(NT)) for the "
    "predictors ũ_m, and for every block m: E F_m(ũ_m) − F_m(x_m*) ≤ O(√M/√(NT)).",
    "the largest ratio mini-max gap / explicit bound over the T grid on the identical-block instance (F_m = F, "
    "where the gap is ≥ 0 and the bound bites; must be ≤ 1)",
    evaluate,
    plan=THEOREM_PLANS,
    variants=THEOREM_VARIANTS,
    order=60,
)
