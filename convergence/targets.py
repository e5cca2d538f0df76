"""Rounds to a target: the first record at which a curve reaches a level (Li et al.'s and Ding et
al.'s "communication rounds to reach a target loss / accuracy": ICLR 2020 eq. 8 and Fig. 1, Table 1
of Ding et al.), censored where it never does."""

from __future__ import annotations

import numpy as np

__all__ = ["rounds_to_target"]


def rounds_to_target(values: np.ndarray, target: float,
                     rounds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first round at which ``values`` (..., P) is <= ``target``, and whether it was reached.

    ``rounds`` (P,) are the rounds of the P records (None: records after every round, r = 0..P-1).
    Returns (first round (...) int64, reached (...) bool); a curve that never reaches the target gets
    ``rounds[-1] + 1``, a lower bound of its rounds to target (censored). For a level to climb to
    (an accuracy), pass the negated curve and target."""
    values = np.asarray(values, dtype=np.float64)
    rounds = np.arange(values.shape[-1]) if rounds is None else np.asarray(rounds, dtype=np.int64)
    if rounds.shape != values.shape[-1:]:
        raise ValueError(f"rounds: expected {values.shape[-1]} record rounds, got shape {rounds.shape}")
    below = values <= target
    reached = below.any(axis=-1)
    first = np.where(reached, rounds[np.argmax(below, axis=-1)], rounds[-1] + 1)
    return first.astype(np.int64), reached
