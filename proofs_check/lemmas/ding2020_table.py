"""Ding et al. (2020)'s lemma table: every lemma of ``proofs_check.lemmas.ding2020`` on one
block-cyclic config, as (label, verdict) rows and as ``LemmaRow``s (the lemmas claim and the table of
``fedbound verify``)."""

from __future__ import annotations

from collections.abc import Sequence

from convergence import MCPSGDConfig, MMPSGDConfig, Verdict
from problems import BlockCyclicProblem

from ..framework.settings import VerifySettings
from .ding2020 import DingLemmaData, collect_ding, ding_lemma2, ding_lemma3, ding_lemma6, ding_lemma8, ding_lemma9
from .ding2020_descent import descent_terms, ding_lemma1, ding_lemma4, ding_lemma5, ding_lemma7
from .verdicts import LemmaRow

__all__ = ["check_ding_lemmas", "ding_rows", "ding_lemma_table"]


def check_ding_lemmas(
    problem: BlockCyclicProblem, config: MMPSGDConfig | MCPSGDConfig, seeds: Sequence[int] | None = None, *,
    settings: VerifySettings | None = None,
) -> list[tuple[str, Verdict]]:
    """(label, verdict) of Lemmas 1, 2, 3 (max and mean over clients), 4, 5, 6, 7 and 8 (MC-PSGD only) and 9 on one
    config, each seed of ``seeds`` (``config.seeds`` when None) traced once (``collect_ding``)."""
    return ding_rows(collect_ding(problem, config, seeds, settings=settings))


def ding_rows(data: DingLemmaData) -> list[tuple[str, Verdict]]:
    """(label, verdict) of the lemmas of ``check_ding_lemmas`` on collected data."""
    terms = descent_terms(data)
    rows = [
        ("Lemma 1: F_m(xbar_t) - F_m(x*) + (||xbar_t+1 - x*||^2 - A_2 - ||xbar_t - x*||^2)/(2 gamma) <= eq. 13's error terms",
         ding_lemma1(data, terms=terms)),
        ("Lemma 2: E||g_t - gbar_t||^2 <= sigma^2/N", ding_lemma2(data)),
        ("Lemma 3: E max_i ||xbar_t - x_t^i||^2 <= 4 gamma^2 I^2 G^2", ding_lemma3(data)),
        ("Lemma 3: E mean_i ||xbar_t - x_t^i||^2 <= 4 gamma^2 I^2 G^2", ding_lemma3(data, over="mean")),
        ("Lemma 4: window mean ||grad F_m(xbar_t)||^2 <= 2 (loss drop)/(gamma K) + 4 gamma^2 I^2 G^2 L^2 + L gamma sigma^2/N",
         ding_lemma4(data, terms=terms)),
        ("Lemma 5: average gap to F_m(x*) + ||xbar_T - x*||^2/(2 gamma T) <= eq. 35's right side", ding_lemma5(data, terms=terms)),
        ("Lemma 6: comm-iteration average loss <= all-iteration average + 2 gamma^3 I^3 G^2 L^2 + gamma^2 sigma^2 I L/(2N)",
         ding_lemma6(data)),
    ]
    if data.mc:
        rows.append(("Lemma 7 (eq. 54): Lemma 6 on each block-separate chain, with eta", ding_lemma7(data)))
        rows.append(("Lemma 8: loss(u_bar) <= min(loss(x_bar), loss(y_bar)) every round", ding_lemma8(data)))
    rows.append(("Lemma 9: F_m(x) - F_m(y) <= 2B^2L^2 + 2B^2 + 2B^2L on V", ding_lemma9(data)))
    return rows


def ding_lemma_table(
    problem: BlockCyclicProblem, config: MMPSGDConfig | MCPSGDConfig, seeds: Sequence[int] | None = None, *,
    settings: VerifySettings | None = None,
) -> tuple[LemmaRow, ...]:
    """Rows (claim id, status, worst ratio LHS/RHS, interval) of ``check_ding_lemmas``."""
    return tuple(LemmaRow(v.claim_id, v.status, v.measured, v.interval, v)
                 for _, v in check_ding_lemmas(problem, config, seeds, settings=settings))
