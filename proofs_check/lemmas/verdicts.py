"""A lemma's verdict: LHS_t <= RHS_t at every point, and the planting of a false constant.

A lemma is an inequality LHS_j <= RHS_j between expectations at points j (local steps, windows,
rounds, blocks). ``upper_bound_verdict`` gives its verdict with ``convergence.check_upper_bound``
(PASS when the interval of the mean over seeds stays below the bound at every point, FAIL when it
is provably above somewhere: Holm over the points, family-wise error rate 5%, INCONCLUSIVE
otherwise), and handles the points where the bound is exactly 0 (E = 1, exact gradients, a zero
step): there the mean measured side must vanish up to rounding, else the lemma FAILs.
``LemmaRow`` is one row of a lemma table (id, status, worst ratio LHS / RHS and its interval).

Planted variants (the power self-test of ``proofs_check.claims.checks.lemmas``): each lemma takes a factor
on its constant; ``attained_scale`` is the largest factor q the data prove too small (some
simultaneous lower limit lo_j > q bound_j), and ``PLANTED_MARGIN`` q shrinks it a little further
(``planted_factor``), so that the planted lemma is false on the instance (at family-wise level 5%)
by a factor 1 / PLANTED_MARGIN beyond what the data resolve; ``attained_offset`` does the same for
an additive constant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from convergence import Hypothesis, Status, Verdict, check_upper_bound

__all__ = [
    "PLANTED_MARGIN",
    "LemmaRow",
    "upper_bound_verdict",
    "attained_scale",
    "planted_factor",
    "attained_offset",
]

PLANTED_MARGIN = 0.9
"""A planted constant is this fraction of the largest one the data prove too small (module docstring)."""
_ROUNDING = 1e-12  # relative size below which a side whose bound is exactly 0 counts as 0


def upper_bound_verdict(
    claim_id: str,
    x: np.ndarray,
    values: np.ndarray,
    bound: np.ndarray,
    hypotheses: Sequence[Hypothesis],
    notes: str,
    *,
    deterministic: bool,
) -> Verdict:
    """``check_upper_bound`` of values (S, P) against bound (P,) at the points where the bound is
    positive (``deterministic`` as there); where it is exactly 0 (E = 1, exact gradients, a zero
    step) the mean measured side must vanish up to 1e-12 (1 + max |values|) rounding, else FAIL."""
    positive = bound > 0
    scale = 1.0 + float(np.max(np.abs(values)))
    zero_ok = bool(np.all(np.abs(values.mean(axis=0)[~positive]) <= _ROUNDING * scale))
    zero_note = f"{int((~positive).sum())} step(s) with bound 0, where the measured side is 0 up to rounding"
    if not np.any(positive):
        status = Status.PASS if zero_ok else Status.FAIL
        verdict = Verdict(claim_id, status, 0.0, 1.0, (0.0, 0.0), tuple(hypotheses),
                          "; ".join(part for part in (notes, zero_note if zero_ok else "bound 0 but measured side > 0") if part),
                          {"x": x.tolist(), "mean": values.mean(axis=0).tolist(), "bound": bound.tolist()})
        return _downgrade(verdict)
    verdict = check_upper_bound(claim_id, x[positive], values[:, positive], bound[positive],
                                hypotheses=hypotheses, notes=notes, deterministic=deterministic)
    if not zero_ok:
        return dataclasses.replace(verdict, status=Status.FAIL, notes=verdict.notes + "; bound 0 but measured side > 0")
    if np.any(~positive):
        return dataclasses.replace(verdict, notes=f"{verdict.notes}; {zero_note}")
    return verdict


def _downgrade(verdict: Verdict) -> Verdict:
    """INCONCLUSIVE when a hypothesis is unmet (as the checkers of convergence do)."""
    if verdict.hypotheses_met:
        return verdict
    unmet = "; ".join(h.name for h in verdict.hypotheses if not h.met)
    return dataclasses.replace(verdict, status=Status.INCONCLUSIVE,
                               notes=f"hypotheses unmet: {unmet}. The data alone give {verdict.status.value}; {verdict.notes}")


def attained_scale(verdict: Verdict) -> float:
    """max_j lo_j / bound_j over the points of an upper-bound verdict: lo_j are the simultaneous
    (Bonferroni, 1 - alpha/P) lower limits of ``check_upper_bound``, so the data prove the bound
    multiplied by any q < attained_scale violated (Holm rejects at that point; exact for a
    deterministic check). <= 0 when no positive factor can be proven too small."""
    evidence = verdict.evidence
    if "lo" not in evidence:
        raise ValueError(f"verdict: {verdict.claim_id} has no positive bound with confidence limits to plant below")
    return float(np.max(np.asarray(evidence["lo"]) / np.asarray(evidence["bound"])))


def planted_factor(verdict: Verdict) -> float:
    """PLANTED_MARGIN * attained_scale(verdict): the factor of a planted constant that is false on the
    instance (module docstring); ValueError when the data prove no positive factor too small."""
    scale = attained_scale(verdict)
    if scale <= 0:
        raise ValueError(f"verdict: no positive constant of {verdict.claim_id} is proven too small on this instance "
                         f"(largest lower limit / bound = {scale:.3g}); the check has no power to plant against")
    return PLANTED_MARGIN * scale


def attained_offset(verdict: Verdict, margin: float) -> float:
    """For an upper bound of the form RHS_j = A_j + c with an additive constant c (the verdict's
    ``bound`` is mean A_j + c): the largest constant the data prove too small is
    c_att = c + max_j (lo_j - bound_j) (lo the simultaneous lower limits of ``check_upper_bound``); the
    planted constant is c_att - (1 - margin) |c_att|, a little below it. ``c`` is read from the
    verdict's ``constant`` evidence."""
    evidence = verdict.evidence
    if "lo" not in evidence or "constant" not in evidence:
        raise ValueError(f"verdict: {verdict.claim_id} has no additive constant with confidence limits to plant below")
    attained = float(evidence["constant"]) + float(np.max(np.asarray(evidence["lo"]) - np.asarray(evidence["bound"])))
    return attained - (1.0 - margin) * abs(attained)



@dataclass(frozen=True)
class LemmaRow:
    """One row of the lemma table: id, status, worst ratio LHS/RHS over the steps and its interval."""

    lemma_id: str
    status: Status
    worst_ratio: float
    interval: tuple[float, float] | None
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        return {"lemma": self.lemma_id, "status": self.status.value, "worst_ratio": self.worst_ratio,
                "interval": None if self.interval is None else list(self.interval), "notes": self.verdict.notes}
