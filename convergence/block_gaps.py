"""Optimality gaps of a block-cyclic run, per block (Ding et al., arXiv 2002.07454, Thm 1-2).

A block-cyclic run's common metrics measure the global model on F = (1/M) sum_m F_m; Ding et
al.'s theorems are about each block's F_m and about the per-block predictors, measured here from
the exact optima x* (of F) and x_m* (of each F_m) computed without cross-check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from problems import BlockCyclicProblem, exact_optimum

from .algorithms import BlockCyclicExtras, RunResult

__all__ = ["BlockCyclicGaps", "block_cyclic_gaps"]


@dataclass(frozen=True, eq=False)
class BlockCyclicGaps:
    """Optimality gaps of a result (S seeds, P record points, M blocks).

    global_gap (S, P) = F(x_bar) - F(x*); global_block_gap (S, P, M) = F_m(x_bar) - F_m(x_m*);
    minimax_gap (S, P) = (1/M) sum_m F_m(p_m) - F(x*) (Thm 1, 2: the predictors' "mini-max
    optimal error") and block_gap (S, P, M) = F_m(p_m) - F_m(x_m*) (Thm 2, eq. 20), both None
    without predictors. Gaps are not clipped at 0 (the predictors' can be negative).
    """

    global_gap: np.ndarray
    global_block_gap: np.ndarray
    minimax_gap: np.ndarray | None
    block_gap: np.ndarray | None


def block_cyclic_gaps(problem: BlockCyclicProblem, result: RunResult[BlockCyclicExtras]) -> BlockCyclicGaps:
    """F and F_m gaps of the recorded models, with x*, x_m* from ``exact_optimum`` (no cross-check)."""
    F_star = exact_optimum(problem.combined, crosscheck=False).F_star
    block_star = np.array([exact_optimum(problem.block(m), crosscheck=False).F_star for m in range(problem.n_blocks)])
    values = np.apply_along_axis(problem.block_objectives, -1, result.iterates)  # (S, P, M)
    global_gap = values.mean(axis=-1) - F_star
    if result.extras.predictors is None:
        return BlockCyclicGaps(global_gap, values - block_star, None, None)
    M = problem.n_blocks
    pred_values = np.apply_along_axis(problem.block_objectives, -1, result.extras.predictors)  # (S, P, M, M)
    own = pred_values[..., np.arange(M), np.arange(M)]  # F_m(p_m), (S, P, M)
    return BlockCyclicGaps(global_gap, values - block_star, own.mean(axis=-1) - F_star, own - block_star)
