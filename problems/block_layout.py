"""What every block-cyclic problem is over its combined problem: M blocks of N clients.

Ding et al. (2020), "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454, Sec. 2
(``shared/papers/ding2020_block_cyclic.md``): in block m client i draws from D_m^i, and

    F_m = (1/N) sum_i F_m^i,        F = (1/M) sum_m F_m        (eq. 3, 6).

A block-cyclic problem holds this as one ``combined`` problem of M*N pseudo-clients, pseudo-client
m*N + i = (block m, client i), every weight 1/(M N), so the combined F is F. ``BlockLayout`` is that
shared part of ``block_cyclic.BlockCyclicProblem`` (linear models) and
``block_cyclic_images.BlockCyclicImageProblem`` (CNNs): the checks of the layout, the block sizes
n_mi (M, N) and objectives (F_1, ..., F_M), and Sec. 5's "shuffled data" deal of the pooled rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .spec import ProblemSpec, ViewSpec
from .validation import ProblemError, check_int

__all__ = ["BlockLayout"]


class BlockLayout:
    """Mixin of a frozen dataclass with fields ``combined`` (a problem with ``n_clients``,
    ``weights``, ``client_sizes``, ``dim`` and ``local_objectives``), ``n_blocks`` (M),
    ``n_clients`` (N) and ``spec`` (a ``ProblemSpec`` or None)."""

    combined: Any
    n_blocks: int
    n_clients: int
    spec: ProblemSpec | None

    def _check_layout(self, combined_type: type, type_error: str) -> None:
        """Check M, N >= 1, ``combined`` (an instance of ``combined_type``, else ProblemError
        ``type_error``), ``spec``, M*N pseudo-clients of weight 1/(M N) (eq. 3, 6); store M, N as ints."""
        M = check_int("n_blocks", self.n_blocks, minimum=1)
        N = check_int("n_clients", self.n_clients, minimum=1)
        combined = self.combined
        if not isinstance(combined, combined_type):
            raise ProblemError(type_error)
        if self.spec is not None and not isinstance(self.spec, ProblemSpec):
            raise ProblemError(f"spec: expected a ProblemSpec or None, got {type(self.spec).__name__}")
        if combined.n_clients != M * N:
            raise ProblemError(
                f"combined: has {combined.n_clients} pseudo-clients, expected n_blocks * n_clients = {M * N}"
            )
        if not np.allclose(combined.weights, 1.0 / (M * N), rtol=1e-12, atol=0.0):
            raise ProblemError("combined: pseudo-client weights must all be 1/(n_blocks n_clients) (eq. 3, 6)")
        object.__setattr__(self, "n_blocks", M)
        object.__setattr__(self, "n_clients", N)

    @property
    def dim(self) -> int:
        """d, the number of parameters (of the linear model or the network)."""
        return self.combined.dim

    def block_sizes(self) -> np.ndarray:
        """n_mi, the rows (images) of client i in block m, shape (M, N)."""
        return self.combined.client_sizes.reshape(self.n_blocks, self.n_clients)

    def block_objectives(self, w: np.ndarray) -> np.ndarray:
        """(F_1(w), ..., F_M(w)), shape (M,), float64: F_m = (1/N) sum_i F_m^i."""
        return self.combined.local_objectives(w).reshape(self.n_blocks, self.n_clients).mean(axis=1)

    def _shuffled_deal(self, n_rows: int, seed: Any) -> tuple[int, np.ndarray, np.ndarray]:
        """(seed, order (n_rows,), sizes (N,)): Sec. 5's "shuffled data" deal of all rows pooled,
        permuted by ``default_rng(seed)`` and cut into N contiguous chunks whose sizes differ by at
        most one (the first n_rows mod N chunks one row more). ProblemError naming ``seed``."""
        seed = check_int("seed", seed, minimum=0)
        N = self.n_clients
        order = np.random.default_rng(seed).permutation(n_rows)
        sizes = np.full(N, n_rows // N) + (np.arange(N) < n_rows % N)
        return seed, order, sizes

    def _view(self, view: str, **params: int) -> ProblemSpec | None:
        """The spec of this problem's ``view`` with ``params``; None when this problem has no spec."""
        return None if self.spec is None else ViewSpec(view, params, self.spec)
