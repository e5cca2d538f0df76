"""Rules every checker shares (``convergence.checks``, ``convergence.bound_checks``) and the claims'
combination of sub-checks (``proofs_check.combine_checks``).

* Seeds and determinism. ``deterministic=True`` declares data without sampling noise (exact
  gradients with full participation, a solved fixed point, a closed form): one row is then the
  expectation itself, and its per-point interval is the point. With S >= 2 rows the statistics
  of each checker are used whatever the flag (identical rows give zero-width intervals). A
  stochastic run (``deterministic=False``, the default) with S < 2 seeds has no seed-to-seed
  variance, so no decision that needs one can be made: the verdict is INCONCLUSIVE, and the note
  says so and what the data alone would give. Never a PASS on a zero-width interval.
* Hypotheses. A check is INCONCLUSIVE, whatever the data say, when a hypothesis of the claim is
  unmet; the note names the unmet hypotheses and what the data alone would give.
* Multiplicity. Every check reports ``Verdict.p_fail``, the p-value of the test whose rejection
  makes it FAIL (it FAILs at level alpha iff p_fail <= alpha). Several checks that decide one
  claim are combined by Holm's step-down procedure over their p_fail (``holm_rejections``; Holm
  1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6): the
  probability that a claim whose every sub-check is true FAILs is at most alpha, under any
  dependence between the sub-checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from .argument_checks import is_real
from .verdict import Hypothesis, Status

__all__ = [
    "check_claim_id", "as_hypotheses", "as_nonnegative", "as_flag", "apply_downgrades", "mean_interval",
    "holm_rejections", "holm_adjusted",
]


def holm_adjusted(p_values: np.ndarray) -> np.ndarray:
    """Holm's adjusted p-values (P,): sort p ascending, p~_(k) = max_{i <= k} min(1, (P - i + 1) p_(i)).
    Point j is rejected at family-wise level alpha iff p~_j <= alpha (Holm 1979)."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * (p.size - np.arange(p.size)))
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def holm_rejections(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections at family-wise level alpha (boolean (P,)): FWER <= alpha under any
    dependence between the P tests."""
    return holm_adjusted(p_values) <= alpha


def mean_interval(values: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds of values (S, P) and its two-sided Student-t interval on S - 1 df (the point
    itself when S = 1)."""
    n_seeds = values.shape[0]
    mean = values.mean(axis=0)
    if n_seeds == 1:
        return mean, mean.copy(), mean.copy()
    half = stats.t.ppf(0.5 + confidence / 2.0, n_seeds - 1) * values.std(axis=0, ddof=1) / math.sqrt(n_seeds)
    return mean, mean - half, mean + half


def check_claim_id(claim_id: str) -> None:
    """A claim id is a non-empty string."""
    if not isinstance(claim_id, str) or not claim_id:
        raise ValueError(f"claim_id: must be a non-empty string, got {claim_id!r}")


def as_hypotheses(hypotheses: Sequence[Hypothesis]) -> tuple[Hypothesis, ...]:
    """The hypotheses as a tuple, each a Hypothesis."""
    items = tuple(hypotheses)
    if not all(isinstance(h, Hypothesis) for h in items):
        raise ValueError("hypotheses: every item must be a convergence.verdict.Hypothesis")
    return items


def as_nonnegative(value: float, name: str) -> float:
    """A finite number >= 0."""
    if not (is_real(value) and value >= 0):
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    return float(value)


def as_flag(value: bool, name: str) -> bool:
    """A bool (numpy bools included), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: must be True or False, got {value!r}")
    return bool(value)


def apply_downgrades(
    status: Status, finding: str, n_seeds: int, deterministic: bool, hypotheses: tuple[Hypothesis, ...], notes: str
) -> tuple[Status, str]:
    """Downgrade to INCONCLUSIVE with a single seed of a stochastic run (no seed-to-seed variance)
    or when a hypothesis is unmet, saying what the data alone give; compose the note (user notes
    first)."""
    if n_seeds < 2 and not deterministic:
        finding = (f"one seed of a stochastic run: no seed-to-seed variance, so no interval to decide on "
                   f"(rerun with 2 or more seeds). The data alone give {status.value}: {finding}")
        status = Status.INCONCLUSIVE
    unmet = [h for h in hypotheses if not h.met]
    if unmet:
        listed = "; ".join(f"{h.name} ({h.detail})" for h in unmet)
        finding = f"hypotheses unmet: {listed}. The data alone give {status.value}: {finding}"
        status = Status.INCONCLUSIVE
    return status, "; ".join(part for part in (notes, finding) if part)
