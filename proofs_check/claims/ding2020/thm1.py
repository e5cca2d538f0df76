"""ding2020.thm1: Theorem 1 of Ding et al. (2020, arXiv:2002.07454), MM-PSGD on block-cyclic data.

With F_m^i mu-strongly convex and L-smooth, stochastic gradients of variance <= sigma^2 and second
moment <= G^2, iterates in ||x||^2 <= B^2, gamma = sqrt(N)/(L sqrt(T)), I <= T^{1/4}/N^{3/4} and
K > C M N (T = C M K, K = E I),

    (1/M) sum_m E F_m(x~_m) - F(x*) <= O(1/sqrt(NT))          (eq. 11),

with the explicit constant of eq. 16, 17, 33 (THEOREMS.md, from Lemmas 4-6), evaluated with every
constant computed for the instance (``constants.DingConstants``). Checked on identical blocks (F_m = F,
where the mini-max gap is >= 0 and the bound bites), on different blocks that share their minimiser
(x_m* = x*: the gap is >= 0 with heterogeneous blocks, and the bound bites too) and on blocks far apart, where the gap is below
its floor and the sub-checks are uninformative (``theorems``, its docstring: what each instance can
show); there MM-PSGD's excess over the floor and per-block gaps are measured evidence, Theorem 1
giving them no rate. The plan and planted variants are shared with ding2020.thm2 (``theorems``).
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
    """Theorem 1 (MM-PSGD) on ``plan``. Planted false variants: ``claimed_exponent`` < -1/2 (a faster
    rate than claimed), ``bound_scale`` < 1 (a smaller explicit bound); ``identical_instance=False`` with
    ``shared_minimiser=False`` keeps only the blocks far apart, where every sub-check is uninformative
    (INCONCLUSIVE)."""
    return evaluate_theorem("mm", settings, plan)


CLAIM = Claim(
    "ding2020.thm1", (DING2020,), "Theorem 1 (MM-PSGD), explicit form from Lemmas 4-6",
    "F_m^i μ-strongly convex, L-smooth, variance ≤ σ², E‖∇f‖² ≤ G², ‖x‖² ≤ B²; γ = √N/(L√T), "
    "I ≤ T^(1/4)/N^(3/4), K > CMN ⇒ (1/M) Σ_m E F_m(x̃_m) − F(x*) ≤ O(1/√(NT)), with the explicit "
    "constant of eq. 16, 17, 33.",
    "the largest ratio mini-max gap / explicit bound over the T grid on the identical-block instance (F_m = F, "
    "where the gap is ≥ 0 and the bound bites; must be ≤ 1); the same on different blocks sharing their "
    "minimiser (x_m* = x*, gap ≥ 0) as a sub-check",
    evaluate,
    plan=THEOREM_PLANS,
    variants=THEOREM_VARIANTS,
    order=50,
)
