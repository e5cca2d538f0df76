"""Label-based blocks of a user's classification data: Ding et al.'s Sec. 5 data model on given arrays.

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454, Sec. 5
(``shared/papers/ding2020_block_cyclic.md``): the rows of a labelled data set are split into M
label-based blocks, each dealt to N clients with unbalanced sizes
(``block_partition.block_cyclic_partition``), and every (block, client) becomes a softmax (logistic
for 2 classes) client of a ``block_cyclic.BlockCyclicProblem`` (F_m^i, F_m, F as there, eq. 3, 6).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ._base import LossKind, ProblemError
from .block_cyclic import BlockCyclicProblem
from .block_partition import block_cyclic_partition
from .validation import check_int, check_real

__all__ = ["label_block_partition"]


def label_block_partition(
    X: np.ndarray,
    y: np.ndarray,
    n_blocks: int,
    labels_per_block: int,
    n_clients: int,
    seed: int,
    *,
    l2: float = 1e-4,
    n_classes: int | None = None,
    client_order: str = "by_label",
    name: str = "label blocks",
    source: dict[str, Any] | None = None,
) -> BlockCyclicProblem:
    """Label-based blocks of classification data dealt to N clients, after Ding et al. Sec. 5.

    The rows' blocks and clients are ``block_partition.block_cyclic_partition(y, None, n_blocks,
    n_clients, seed, labels_per_block=..., client_order=...)`` (its docstring states the rule:
    consecutive label sets from floor(m C/M), shared by neighbouring blocks when labels_per_block >
    C/M; a shared label's rows split near-equally; clients fetched in sequence from a block ordered
    by label (``"by_label"``) or shuffled (``"random"``); sizes about Normal(n_m/N, (n_m/(5N))^2)).
    Rows whose label is in no block are left out. Pseudo-client m*N + i holds client i of block m,
    its rows in fetch order.

    Loss: softmax with C = n_classes (default max label + 1), logistic when C = 2; mu = 2 l2
    (l2 weighs ||w||^2, as in ``synthetic``). X is used as given: append a constant-1 column for a
    bias. ``source`` (JSON-able) describes where X, y come from and is recorded in the notes with
    the parameters; the problem has no spec (nothing rebuilds it from parameters alone).
    Shapes: X (n, f), y (n,).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ProblemError(f"X: expected a (rows, features) array matching y's {y.size} labels, got {X.shape}")
    if y.size == 0 or np.any(y != np.round(y)) or y.min() < 0:
        raise ProblemError("y: labels must be non-negative integers")
    labels = y.astype(np.int64)
    C = int(labels.max()) + 1 if n_classes is None else check_int("n_classes", n_classes, minimum=2)
    if C < 2 or labels.max() >= C:
        raise ProblemError(f"n_classes: need >= 2 classes covering every label, got {C} (max label {labels.max()})")
    l2 = check_real("l2", l2, minimum=0.0, strict=True)
    seed = check_int("seed", seed, minimum=0)
    partition = block_cyclic_partition(labels, None, n_blocks, n_clients, seed, labels_per_block=labels_per_block,
                                       n_classes=C, client_order=client_order)
    M, N, per_block = partition.n_blocks, partition.n_clients, len(partition.block_labels[0])
    client_rows = [partition.client_rows(m, i) for m in range(M) for i in range(N)]  # pseudo-client m*N + i
    parts = [(X[rows], y[rows]) for rows in client_rows]
    params = {
        "n_blocks": M,
        "labels_per_block": per_block,
        "n_clients": N,
        "seed": seed,
        "l2": l2,
        "n_classes": C,
        "client_order": client_order,
        "source": source,
    }
    notes = ("Ding et al. 2020, Sec. 5: label-based blocks, client sets fetched in sequence with normal sizes. "
             f"label_block_partition{json.dumps(params, sort_keys=True)}")
    logistic = C == 2
    return BlockCyclicProblem.from_parts(
        f"{name} (M={M}, {per_block} labels/block, N={N}, seed={seed})",
        LossKind.LOGISTIC if logistic else LossKind.SOFTMAX,
        parts,
        M,
        N,
        2.0 * l2,
        1 if logistic else C,
        None,
        notes,
    )
