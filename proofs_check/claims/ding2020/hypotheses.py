"""The hypotheses of Ding et al.'s Theorems 1-2 on a configuration (I <= T^{1/4}/N^{3/4}, for MC-PSGD
(T/M)^{1/4}/N^{3/4}, and K > C M N; THEOREMS.md, ding2020.thm1/thm2), the largest I they allow, and
what they say of the paper's own Sec. 5 experiment (which meets neither)."""

from __future__ import annotations

import numpy as np

from convergence.verdict import Hypothesis

__all__ = ["PAPER_SETTING", "ding_hypotheses", "largest_local_steps", "paper_hypotheses", "paper_setting_note"]

PAPER_SETTING = {"N": 100, "M": 5, "C": 10, "E": 200, "I": 10}
"""Sec. 5: N = 100 clients, M = 5 blocks, C = 10 cycles, E = 200 rounds per block, I = 10."""


def ding_hypotheses(algorithm: str, N: int, M: int, T: int, K: int, I: int, label: str = "",
                    C: int | None = None) -> tuple[Hypothesis, ...]:
    """I <= T^{1/4}/N^{3/4} (MC: (T/M)^{1/4}/N^{3/4}) and K > C M N, with the values.

    C is the configuration's number of cycles; None takes it from T = C M K (Ding et al. Sec. 2),
    which must then divide exactly. Raises ValueError naming ``C`` or ``T`` on a C that is not a
    positive integer or a T that is not C M K.
    """
    if C is None:
        if T % (M * K):
            raise ValueError(f"T: T = {T} is not C M K for an integer C (M = {M}, K = {K}); pass C")
        C = T // (M * K)
    if isinstance(C, bool) or not isinstance(C, (int, np.integer)) or C < 1:
        raise ValueError(f"C: the number of cycles must be an integer >= 1, got {C!r}")
    horizon = T if algorithm == "mm" else T / M
    limit = horizon**0.25 / N**0.75
    prefix = f"[{label}] " if label else ""
    what = "T^(1/4)/N^(3/4)" if algorithm == "mm" else "(T/M)^(1/4)/N^(3/4)"
    return (
        Hypothesis(f"{prefix}I <= {what}", I <= limit + 1e-12, f"I = {I}, {what} = {limit:.4g} (N = {N}, M = {M}, T = {T})"),
        Hypothesis(f"{prefix}K > C M N", K > C * M * N, f"K = {K}, C M N = {C * M * N} with C = {C}"),
    )


def largest_local_steps(algorithm: str, N: int, M: int, T: int) -> int:
    """The largest I the theorem allows at (N, M, T): floor(T^{1/4}/N^{3/4}) for MM-PSGD ("mm") and
    floor((T/M)^{1/4}/N^{3/4}) for MC-PSGD ("mc"), at least 1."""
    horizon = T if algorithm == "mm" else T / M
    return max(1, int(np.floor(horizon**0.25 / N**0.75 + 1e-12)))


def paper_hypotheses(algorithm: str) -> tuple[Hypothesis, ...]:
    """Both hypotheses of the theorem on the paper's own experiment (Sec. 5), with its C = 10."""
    p = PAPER_SETTING
    T, K = p["C"] * p["M"] * p["E"] * p["I"], p["E"] * p["I"]
    return ding_hypotheses(algorithm, p["N"], p["M"], T, K, p["I"], "Sec. 5", C=p["C"])


def paper_setting_note(algorithm: str) -> str:
    p = PAPER_SETTING
    T = p["C"] * p["M"] * p["E"] * p["I"]
    hypotheses = paper_hypotheses(algorithm)
    unmet = [h for h in hypotheses if not h.met]
    needed = p["N"] ** 3 * p["I"] ** 4 * (1 if algorithm == "mm" else p["M"])
    which = "neither hypothesis" if len(unmet) == 2 else f"{len(hypotheses) - len(unmet)} of the 2 hypotheses"
    return (f"The paper's own experiment (Sec. 5: N = {p['N']}, M = {p['M']}, C = {p['C']}, E = {p['E']}, "
            f"I = {p['I']}, so T = C M E I = {T}, K = E I = {p['E'] * p['I']}) meets {which}: "
            + "; ".join(f"{h.name.removeprefix('[Sec. 5] ')} fails: {h.detail}" for h in unmet)
            + f" (I = {p['I']} would need T >= {'N^3 I^4' if algorithm == 'mm' else 'M N^3 I^4'} = {needed:.0e}).")
