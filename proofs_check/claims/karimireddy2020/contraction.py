"""Linear convergence in rounds as a rate check: the per-round contraction factor of a curve.

A linearly convergent quantity, E q(r) <= C rho^r with rho < 1 (r = the round), is a power law in
x = exp(r / r_scale): rho^r = x^a with a = r_scale ln rho. So the claim "q contracts at least by
``max_contraction`` per round" is ``convergence.check_rate_exponent``'s claim "E q decays at least
like x^a" with a = r_scale ln(max_contraction) and no tolerance: the same fits (OLS of the log of
the mean over seeds against r, over all usable points and over the tail), the same interval (the
delete-one jackknife over seeds, Student t on S - 1 df; with one deterministic curve the OLS
Student-t interval, a measure of its misfit) and the same decision (FAIL when either fit's lower
limit at 1 - alpha/2 lies above the threshold, Bonferroni over the two fits; PASS when the whole
fit's 95% interval lies at or below it and the tail's exponent does too). A curve that stalls at a
floor above ``floor`` (FedAvg's distance to w* at its biased limit) has a tail factor of 1 and
FAILs. The verdict reports the factor, rho = exp(a / r_scale), and its interval in place of the
exponent (a monotone map: the decision is unchanged); r_scale is the last record round.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import convergence

if TYPE_CHECKING:
    from convergence.verdict import Hypothesis, Verdict

__all__ = ["check_contraction"]

TAIL_SHARE = 1 / 3
"""The tail fit covers the last third of the record rounds (at least the last 3 usable points)."""


def check_contraction(
    claim_id: str,
    rounds: np.ndarray,
    values: np.ndarray,
    max_contraction: float,
    *,
    floor: float,
    deterministic: bool,
    hypotheses: Sequence[Hypothesis] = (),
    notes: str = "",
) -> Verdict:
    """Check "E q(r) contracts by at most ``max_contraction`` (< 1) per round" from values (S, P)
    at record rounds (P,) >= 0, strictly increasing (module docstring); points whose mean is <=
    ``floor`` (the rounding level) are left out. measured = the fitted factor rho, theoretical =
    ``max_contraction``, interval = rho's 95% interval; evidence: check_rate_exponent's, plus
    ``rounds``, ``contraction``, ``contraction_interval`` and the tail's ``tail_contraction``.

    Raises:
        ValueError: naming ``max_contraction`` (not in (0, 1)) or ``rounds`` (not increasing, or
            negative), or a check_rate_exponent argument.
    """
    if not (isinstance(max_contraction, (int, float)) and 0.0 < max_contraction < 1.0):
        raise ValueError(f"max_contraction: must be a number in (0, 1), got {max_contraction!r}")
    rounds = np.asarray(rounds, dtype=np.float64)
    if rounds.ndim != 1 or rounds.size < 2 or rounds[0] < 0 or np.any(np.diff(rounds) <= 0):
        raise ValueError(f"rounds: must be a strictly increasing 1-D array of rounds >= 0, got {rounds!r}")
    scale = float(rounds[-1])
    x = np.exp(rounds / scale)
    span = float(rounds[-1] - rounds[0]) / scale
    verdict = convergence.check_rate_exponent(
        claim_id, x, values, claimed_exponent=scale * math.log(max_contraction),
        tolerance=0.0,  # the claim is the factor itself: "at most max_contraction per round"
        deterministic=deterministic, floor=floor, tail_decades=TAIL_SHARE * span / math.log(10.0),
        hypotheses=hypotheses, notes=notes,
    )
    if verdict.interval is None:  # too few points above the floor to fit: INCONCLUSIVE as it stands
        return verdict.with_evidence(rounds=rounds.tolist())

    def factor(exponent: float) -> float:
        return math.exp(exponent / scale)

    lo, hi = (factor(a) for a in verdict.interval)
    tail = factor(verdict.evidence["tail"]["exponent"])
    measured = factor(verdict.measured)
    shown = dataclasses.replace(
        verdict, measured=measured, theoretical=float(max_contraction), interval=(lo, hi),
        notes=(f"{verdict.notes}; the fit is in x = exp(r / {scale:g}), so the per-round factor is rho = "
               f"exp(exponent / {scale:g}) = {measured:.6g} in [{lo:.6g}, {hi:.6g}] (claimed <= "
               f"{max_contraction:g}), tail {tail:.6g}"),
    )
    return shown.with_evidence(rounds=rounds.tolist(), contraction=measured, contraction_interval=[lo, hi],
                               tail_contraction=tail)
