"""The claims of Yu, Yang, Zhu (AAAI 2019) as restated in J. Liu's lecture note: Theorem 1, Corollary 2 and
the CNN form. Data of the registry (``proofs_check.framework.registry``)."""

from __future__ import annotations

from .framework.claim import Claim, PlantedVariant
from .framework.parameters import ModePlans
from .plans import (
    YuCNNPlan,
    YuCorollary2Plan,
    YuTheorem1Plan,
)
from .framework.references import LIU2022_NOTE, YU2019

__all__ = ["YU2019_CLAIMS"]

_YU_QUICK = dict(clients=(2, 4), horizons=(1_000, 2_000, 4_000, 16_000))
_YU_DEFAULT = dict(clients=(2, 4, 8), horizons=(1_000, 4_000, 16_000, 64_000))
_YU_FULL = dict(clients=(2, 4, 8, 16), horizons=(1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000))

YU2019_CLAIMS = (
    Claim(
        "yu2019.thm1", (YU2019, LIU2022_NOTE), "Theorem 1 (as restated in Liu's lecture note)",
        "Parallel restarted SGD, identical data, f L-smooth, step s ∈ (0, 1/L], sync every K steps: "
        "(1/T) Σ_t E‖∇f(x̄_{t−1})‖² ≤ 2/(sT) · (f(x̄₀) − f*) + 4 s² K² G² L² + (L/N) s σ².",
        "the largest ratio measured / bound over the record points (must be ≤ 1)",
        "proofs_check.yu2019:evaluate_thm1",
        plan=ModePlans(quick=YuTheorem1Plan(**_YU_QUICK), default=YuTheorem1Plan(**_YU_DEFAULT),
                       full=YuTheorem1Plan(**_YU_FULL)),
        variants=(
            PlantedVariant("bound x 0.2", "Theorem 1's right-hand side multiplied by 0.2, below the measured average "
                           "squared gradient norm (tightness about 0.3): false on the instance", {"bound_scale": 0.2},
                           sub_check="explicit bound"),
        ),
        order=130,
    ),
    Claim(
        "yu2019.cor2", (YU2019, LIU2022_NOTE), "Corollary 2 (as restated in Liu's lecture note)",
        "s = √N/(L√T) and K ≤ T^(1/4)/N^(3/4) ⇒ (1/T) Σ_t E‖∇f(x̄_{t−1})‖² = O(1/√(NT)): linear speedup in N.",
        "the fitted exponent of the average squared gradient norm in N T at the smallest N (claimed ≤ −1/2)",
        "proofs_check.yu2019:evaluate_cor2",
        plan=ModePlans(quick=YuCorollary2Plan(**_YU_QUICK), default=YuCorollary2Plan(**_YU_DEFAULT),
                       full=YuCorollary2Plan(**_YU_FULL)),
        variants=(
            PlantedVariant("rate O(1/(NT))", "claimed exponent -1 in N T (and in N) instead of -1/2: steeper than the "
                           "measured about -0.5", {"claimed_exponent": -1.0}, sub_check="rate in N T"),
        ),
        order=140,
    ),
    Claim(
        "yu2019.cnn", (YU2019, LIU2022_NOTE), "Theorem 1 and Corollary 2 (as restated in Liu's lecture note), on a CNN",
        "Parallel restarted SGD on a CNN (the digits net on N copies of the same bundled 8x8 digits: identical data), "
        "s = √N/(L√T) with L estimated along a pilot run, K ≤ T^(1/4)/N^(3/4): (1/T) Σ_t E‖∇f(x̄_{t−1})‖² = "
        "O(1/√(NT)), and linear speedup in N; Theorem 1's bound 2/(sT)(f(x̄₀) − f*) + 4 s² K² G² L² + (L/N) s σ² "
        "with L, G², σ² ESTIMATED along each run and f* ≥ 0 reported as evidence, not counted (the loss is only "
        "piecewise smooth and the constants are not certified). Hypothesis: f L-smooth, unmet on the ReLU / max-pool "
        "net, so the claim is INCONCLUSIVE with what the data alone give in its notes.",
        "the fitted exponent of the final average squared gradient norm in N T at the smallest N (claimed ≤ −1/2)",
        "proofs_check.yu2019_cnn:evaluate_cnn",
        plan=ModePlans(
            quick=YuCNNPlan(clients=(1, 2), horizons=(8, 16, 32, 64), speedup_clients=(1, 2, 4)),
            default=YuCNNPlan(clients=(1, 2), horizons=(32, 64, 128, 256), speedup_clients=(1, 2, 4)),
            full=YuCNNPlan(clients=(1, 2, 4), horizons=(64, 256, 1024, 4096, 16384), speedup_clients=(1, 2, 4, 8)),
        ),
        order=150,
    ),
)

LEGACY_CLAIMS = YU2019_CLAIMS
