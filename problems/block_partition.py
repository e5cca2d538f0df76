"""Ding et al.'s block-cyclic partition of labelled data (Sec. 5) and the paper's block metric.

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454,
Sec. 5 (``shared/papers/ding2020_block_cyclic.md``): "we first partition both the training and
test sets into M heterogeneous blocks based on labels, where a block contains images of several
labels, and different blocks may contain partially crossed labels. Each data block is further
distributed among N = 100 clients in a non-i.i.d. and unbalanced way, where the local training
sets on the clients are fetched from the block in sequence, and the sizes of the local training
sets roughly follow the normal distribution with a mean of 50000/(MN) and a variance of
(10000/(MN))^2. [...] test each block-specific predictor on the corresponding block's test set,
and calculate an average of the test accuracies."

``block_cyclic_partition(labels, test_labels, M, N, seed, labels_per_block= | block_labels=)``
realises it as follows (``BlockCyclicPartition`` holds the result):

* **Label sets** L_1..L_M: given (``block_labels``: M non-empty sets of distinct labels, in the
  order their rows are fetched), or by the rule ``labels_per_block`` = k: L_m = {floor(m C / M) +
  j mod C : j < k} -- consecutive labels from evenly spread starts, so neighbouring blocks share
  labels when k > C / M and every label is in some block when k >= ceil(C / M). Rows whose label is
  in no block are left out (block -1).
* **Rows of a shared label**: the training rows of a label that k blocks hold are shuffled and
  split into k near-equal consecutive parts (``np.array_split``), one per block in block order, so
  every used row lies in exactly one block. The test rows are split the same way, by a separate
  random stream, so the test set is partitioned into the same M blocks by label.
* **Fetched in sequence**: block m's training rows are laid out label by label in L_m's order (the
  rows of one label in their shuffled order); client 0 takes the first n_m0 rows, client 1 the
  next n_m1, and so on to client N - 1, which ends exactly at the block's last row. A client thus
  holds one or two labels (three when a client's set spans a whole small label): non-i.i.d.
  ``client_order="random"`` shuffles the block first instead (i.i.d. clients, a control).
* **Sizes**: draws s_i ~ Normal(n_m / N, (n_m / (5 N))^2), clipped at 1, for i < N (the paper's
  mean 50000/(MN) and sd 10000/(MN) when the M blocks have equal sizes n_m = n / M, as on
  CIFAR-10 with equal label counts; with unequal blocks the mean is the block's own n_m / N, so
  the block's rows are used exactly once). They are made to sum to n_m: each client gets one row
  and the other n_m - N rows are shared in proportion to the draws, floor(share) each, the rows
  left over going one each to the largest fractional parts (ties to the lower client index). So
  every n_mi >= 1, sum_i n_mi = n_m, the mean is exactly n_m / N and the sd is the draws' sd times
  (n_m - N) / sum_i s_i, about n_m / (5 N) (rounding adds a variance of about 1/12). Needs n_m >= N.

Randomness: ``default_rng(seed)`` draws, in this order, the training label splits (labels
ascending), the within-block shuffles (``client_order="random"`` only, blocks ascending) and the
client sizes (blocks ascending) -- the stream ``block_cyclic.label_block_partition`` has always
used; the test splits come from ``default_rng([seed, 1])``. Same inputs and seed give the same
partition on any machine.

``block_test_accuracy(predict, predictors, test_images, test_labels, partition)`` is the paper's
metric: block m's predictor scored on block m's test rows, and the plain mean over the M blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._params import as_choice
from .validation import ProblemError, check_int

__all__ = ["BlockAccuracy", "BlockCyclicPartition", "CLIENT_ORDERS", "block_cyclic_partition", "block_test_accuracy"]

SIZE_CV = 0.2
"""Sec. 5: local sizes ~ Normal(50000/(MN), (10000/(MN))^2), a coefficient of variation of 1/5."""
CLIENT_ORDERS = ("by_label", "random")
"""How a block's rows are ordered before clients fetch them in sequence (module docstring)."""
_TEST_STREAM = 1  # the test splits draw from default_rng([seed, _TEST_STREAM])


@dataclass(frozen=True, eq=False)
class BlockCyclicPartition:
    """The partition of one labelled training set and its test set into M blocks of N clients.

    * ``block_labels``: L_m, M tuples of labels (each in the order its rows are fetched);
    * ``block_rows``: M int64 arrays, block m's training rows in fetch order (the order clients
      take them in);
    * ``sizes``: (M, N) int64, n_mi = the rows of client i in block m; client i of block m holds
      ``block_rows[m][sum(sizes[m, :i]) : sum(sizes[m, :i + 1])]`` (``client_rows``);
    * ``block_of_row``, ``client_of_row``: (n,) int64 per training row, its block and its client
      within the block (-1 for a row whose label is in no block);
    * ``test_block_of_row``: (n_test,) int64, the block of each test row (-1: in no block).

    Arrays are read-only.
    """

    block_labels: tuple[tuple[int, ...], ...]
    block_rows: tuple[np.ndarray, ...]
    sizes: np.ndarray
    block_of_row: np.ndarray
    client_of_row: np.ndarray
    test_block_of_row: np.ndarray

    def __post_init__(self) -> None:
        for array in (*self.block_rows, self.sizes, self.block_of_row, self.client_of_row, self.test_block_of_row):
            array.setflags(write=False)

    @property
    def n_blocks(self) -> int:
        """M."""
        return len(self.block_labels)

    @property
    def n_clients(self) -> int:
        """N, clients per block."""
        return int(self.sizes.shape[1])

    def client_rows(self, m: int, i: int) -> np.ndarray:
        """Training rows of client i in block m, in fetch order."""
        m = check_int("m", m, minimum=0, maximum=self.n_blocks - 1)
        i = check_int("i", i, minimum=0, maximum=self.n_clients - 1)
        start = int(self.sizes[m, :i].sum())
        return self.block_rows[m][start : start + int(self.sizes[m, i])]

    def test_rows(self, m: int) -> np.ndarray:
        """Test rows of block m, ascending."""
        m = check_int("m", m, minimum=0, maximum=self.n_blocks - 1)
        return np.flatnonzero(self.test_block_of_row == m)


@dataclass(frozen=True)
class BlockAccuracy:
    """Sec. 5's metric: ``per_block`` accuracy of block m's predictor on block m's ``test_sizes[m]``
    test rows; ``mean`` = (1/M) sum_m per_block[m], the figure the paper reports."""

    per_block: tuple[float, ...]
    test_sizes: tuple[int, ...]

    @property
    def mean(self) -> float:
        """The plain average over the M blocks (each block counts once, whatever its test size)."""
        return float(np.mean(self.per_block))


def block_cyclic_partition(
    labels: np.ndarray,
    test_labels: np.ndarray | None,
    n_blocks: int,
    n_clients: int,
    seed: int,
    *,
    labels_per_block: int | None = None,
    block_labels: Sequence[Sequence[int]] | None = None,
    n_classes: int | None = None,
    client_order: str = "by_label",
) -> BlockCyclicPartition:
    """Ding et al.'s Sec. 5 partition (module docstring) of training ``labels`` (n,) and
    ``test_labels`` (n_test,) (None: no test set) into ``n_blocks`` blocks of ``n_clients``.

    Label sets: exactly one of ``labels_per_block`` (the rule) and ``block_labels`` (M sets).
    ``n_classes`` C defaults to the largest label + 1. ProblemError naming the field on bad input,
    and naming ``n_clients`` when a block has fewer rows than clients.
    """
    labels = _labels("labels", labels)
    test = None if test_labels is None else _labels("test_labels", test_labels)
    M = check_int("n_blocks", n_blocks, minimum=1)
    N = check_int("n_clients", n_clients, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    largest = int(max(labels.max(), -1 if test is None or test.size == 0 else test.max()))
    C = largest + 1 if n_classes is None else check_int("n_classes", n_classes, minimum=1)
    if largest >= C:
        raise ProblemError(f"n_classes: {C} classes do not cover label {largest}")
    client_order = as_choice("client_order", client_order, CLIENT_ORDERS)
    sets = _label_sets(C, M, labels_per_block, block_labels)

    rng = np.random.default_rng(seed)
    train_share = _split_shared_labels(rng, labels, sets, C)
    block_rows = []
    for m in range(M):
        rows = np.concatenate([train_share[m][c] for c in sets[m]]).astype(np.int64)
        block_rows.append(rows if client_order == "by_label" else rng.permutation(rows))
    for m, rows in enumerate(block_rows):
        if rows.size < N:
            raise ProblemError(f"n_clients: block {m} has {rows.size} rows, fewer than n_clients = {N}")
    sizes = np.stack([_client_sizes(rng, rows.size, N) for rows in block_rows])

    block_of_row = np.full(labels.size, -1, dtype=np.int64)
    client_of_row = np.full(labels.size, -1, dtype=np.int64)
    for m, rows in enumerate(block_rows):
        block_of_row[rows] = m
        client_of_row[rows] = np.repeat(np.arange(N), sizes[m])
    test_block = np.full(0 if test is None else test.size, -1, dtype=np.int64)
    if test is not None:
        test_share = _split_shared_labels(np.random.default_rng([seed, _TEST_STREAM]), test, sets, C)
        for m in range(M):
            for rows in test_share[m].values():
                test_block[rows] = m
    return BlockCyclicPartition(sets, tuple(block_rows), sizes, block_of_row, client_of_row, test_block)


def block_test_accuracy(
    predict: Callable[[Any, np.ndarray], np.ndarray],
    predictors: Sequence[Any],
    test_images: np.ndarray,
    test_labels: np.ndarray,
    partition: BlockCyclicPartition,
) -> BlockAccuracy:
    """Sec. 5's metric: for each block m, the share of block m's test rows (``partition.test_rows``)
    whose ``predict(predictors[m], test_images[rows])`` -> (len(rows),) integer classes equals
    ``test_labels[rows]``; and the mean over blocks (``BlockAccuracy``).

    ``predictors``: M parameter objects, block m's predictor at index m (a single-model method
    such as FedAvg passes its one model M times). ``test_images``: any array indexable by rows,
    (n_test, ...); ``test_labels`` (n_test,) the labels the partition was built from. ProblemError
    naming the field when lengths disagree, a block has no test row, or ``predict`` returns
    something other than one integer class per image.
    """
    labels = _labels("test_labels", test_labels)
    if labels.shape != partition.test_block_of_row.shape:
        raise ProblemError(f"test_labels: expected the partition's {partition.test_block_of_row.size} test labels, "
                           f"got {labels.size}")
    if len(test_images) != labels.size:
        raise ProblemError(f"test_images: expected {labels.size} images (one per test label), got {len(test_images)}")
    if len(predictors) != partition.n_blocks:
        raise ProblemError(f"predictors: expected one per block ({partition.n_blocks}), got {len(predictors)}")
    accuracies, counts = [], []
    for m in range(partition.n_blocks):
        rows = partition.test_rows(m)
        if rows.size == 0:
            raise ProblemError(f"partition: block {m} has no test rows, so its predictor cannot be scored")
        predicted = np.asarray(predict(predictors[m], test_images[rows]))
        if predicted.shape != rows.shape or predicted.dtype.kind not in "iu":
            raise ProblemError(f"predict: expected one integer class per image ({rows.size}) for block {m}, got "
                               f"{predicted.dtype} {predicted.shape}")
        accuracies.append(float(np.mean(predicted == labels[rows])))
        counts.append(int(rows.size))
    return BlockAccuracy(tuple(accuracies), tuple(counts))


def _labels(name: str, labels: Any) -> np.ndarray:
    """A 1-D non-negative integer array (n,), int64."""
    array = np.asarray(labels)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ProblemError(f"{name}: expected a 1-D integer array, got {array.dtype} {array.shape}")
    if name == "labels" and array.size == 0:
        raise ProblemError(f"{name}: expected at least one label")
    if array.size and array.min() < 0:
        raise ProblemError(f"{name}: labels must be non-negative, got {array.min()}")
    return array.astype(np.int64)


def _label_sets(
    C: int, M: int, labels_per_block: int | None, block_labels: Sequence[Sequence[int]] | None
) -> tuple[tuple[int, ...], ...]:
    """L_1..L_M from the rule or as given (module docstring), checked."""
    if (labels_per_block is None) == (block_labels is None):
        raise ProblemError("labels_per_block: give exactly one of labels_per_block (the rule) and block_labels")
    if labels_per_block is not None:
        k = check_int("labels_per_block", labels_per_block, minimum=1)
        if k > C:
            raise ProblemError(f"labels_per_block: at most n_classes = {C}, got {k}")
        return tuple(tuple(int(c) for c in (m * C // M + np.arange(k)) % C) for m in range(M))
    if isinstance(block_labels, (str, bytes)) or not isinstance(block_labels, Sequence) or len(block_labels) != M:
        raise ProblemError(f"block_labels: expected n_blocks = {M} label sets, got {block_labels!r}")
    sets = []
    for m, chosen in enumerate(block_labels):
        if isinstance(chosen, (str, bytes)) or not isinstance(chosen, Sequence) or not chosen:
            raise ProblemError(f"block_labels[{m}]: expected a non-empty sequence of labels, got {chosen!r}")
        values = tuple(check_int(f"block_labels[{m}]", c, minimum=0, maximum=C - 1) for c in chosen)
        if len(set(values)) != len(values):
            raise ProblemError(f"block_labels[{m}]: a label appears twice in {values}")
        sets.append(values)
    return tuple(sets)


def _split_shared_labels(
    rng: np.random.Generator, labels: np.ndarray, sets: tuple[tuple[int, ...], ...], C: int
) -> list[dict[int, np.ndarray]]:
    """Per block, label -> its rows: a label's rows shuffled and split into near-equal consecutive
    parts over the blocks holding it (block order), labels ascending; labels in no block are skipped."""
    share: list[dict[int, np.ndarray]] = [{} for _ in sets]
    for c in range(C):
        owners = [m for m, chosen in enumerate(sets) if c in chosen]
        if owners:
            rows = rng.permutation(np.flatnonzero(labels == c))
            for m, part in zip(owners, np.array_split(rows, len(owners))):
                share[m][c] = part
    return share


def _client_sizes(rng: np.random.Generator, n_rows: int, n_clients: int) -> np.ndarray:
    """N client sizes summing to n_rows, about Normal(n_rows/N, (n_rows/(5N))^2) (module docstring)."""
    draws = np.maximum(rng.normal(n_rows / n_clients, SIZE_CV * n_rows / n_clients, n_clients), 1.0)
    target = draws * (n_rows - n_clients) / draws.sum()
    sizes = 1 + np.floor(target).astype(np.int64)
    short = n_rows - sizes.sum()
    sizes[np.argsort(-(target - np.floor(target)), kind="stable")[:short]] += 1
    return sizes
