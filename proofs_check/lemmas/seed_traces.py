"""The traced runs a lemma table reads: one trace per seed (``convergence.FedAvgTrace``,
``convergence.BlockCyclicTrace``), stacked by array name."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SeedTraces"]


class SeedTraces:
    """Base of the lemma tables' data (``fedavg.LemmaData``, ``ding2020.DingLemmaData``): ``traces``
    holds one trace per seed, in the order of the seeds."""

    traces: tuple[Any, ...]

    def stack(self, name: str) -> np.ndarray:
        """One trace array stacked over the seeds, shape (S, ...)."""
        return np.stack([getattr(trace, name) for trace in self.traces])
