"""Ding et al.'s Sec. 5 block-cyclic partition (``problems.block_cyclic_partition``) and its metric
(``problems.block_test_accuracy``): label sets by rule and as given, shared labels split
near-equally, clients fetched in sequence, the size distribution against Normal(n_m/N,
(n_m/(5N))^2), determinism, the test set's blocks, the metric on a hand-made predictor, and
``label_block_partition`` built from the same partition."""

from __future__ import annotations

import numpy as np
import pytest

from problems import (
    BlockAccuracy,
    ProblemError,
    block_cyclic_partition,
    block_test_accuracy,
    label_block_partition,
)

C = 10


def cifar_like_labels(per_class: int, seed: int) -> np.ndarray:
    """``per_class`` rows of each of 10 labels in a shuffled order (CIFAR-10's training set has 5000)."""
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(C), per_class))


def test_the_rule_gives_overlapping_consecutive_label_sets() -> None:
    labels = cifar_like_labels(200, 0)
    p = block_cyclic_partition(labels, None, 5, 10, 0, labels_per_block=3)
    # L_m = {2m, 2m+1, 2m+2} mod 10: neighbouring blocks share one label, every label is in a block
    assert p.block_labels == ((0, 1, 2), (2, 3, 4), (4, 5, 6), (6, 7, 8), (8, 9, 0))
    assert np.all(p.block_of_row >= 0)
    for m, chosen in enumerate(p.block_labels):
        assert set(labels[p.block_rows[m]].tolist()) == set(chosen)
    # a label held by two blocks is split 100/100; the others stay whole
    counts = np.array([[np.sum(labels[p.block_rows[m]] == c) for c in range(C)] for m in range(5)])
    assert counts[0, 0] == counts[4, 0] == 100 and counts[0, 1] == 200 and counts[1, 2] == counts[0, 2] == 100
    assert counts.sum() == labels.size


def test_given_label_sets_and_rows_in_no_block() -> None:
    labels = cifar_like_labels(50, 1)
    test_labels = cifar_like_labels(10, 2)
    sets = ((3, 1), (1, 4, 5))
    p = block_cyclic_partition(labels, test_labels, 2, 4, 0, block_labels=sets)
    assert p.block_labels == sets
    # fetched in the given label order: block 0 is all 3s, then all 1s (its half of them)
    np.testing.assert_array_equal(labels[p.block_rows[0]], [3] * 50 + [1] * 25)
    in_blocks = np.isin(labels, (1, 3, 4, 5))
    assert np.all((p.block_of_row >= 0) == in_blocks) and np.all((p.client_of_row >= 0) == in_blocks)
    assert np.all((p.test_block_of_row >= 0) == np.isin(test_labels, (1, 3, 4, 5)))


def test_clients_are_fetched_in_sequence_and_hold_few_labels() -> None:
    labels = cifar_like_labels(500, 3)
    p = block_cyclic_partition(labels, None, 5, 20, 4, labels_per_block=3)
    for m in range(5):
        rows = np.concatenate([p.client_rows(m, i) for i in range(20)])
        np.testing.assert_array_equal(rows, p.block_rows[m])  # consecutive chunks, in order, every row once
        order = [p.block_labels[m].index(c) for c in labels[rows]]
        assert np.all(np.diff(order) >= 0)  # the block is laid out label by label
        for i in range(20):
            mine = p.client_rows(m, i)
            assert np.all(p.block_of_row[mine] == m) and np.all(p.client_of_row[mine] == i)
            assert np.unique(labels[mine]).size <= 2  # ~83 rows from label runs of 250 or 500: non-i.i.d.
    shuffled = block_cyclic_partition(labels, None, 5, 20, 4, labels_per_block=3, client_order="random")
    assert np.unique(labels[shuffled.client_rows(0, 0)]).size == 3


def test_sizes_follow_the_normal_law_of_sec5() -> None:
    # n = 50,000 rows, M = 5 disjoint blocks of n_m = 10,000, N = 100 (the paper's CIFAR-10 setting):
    # sizes ~ Normal(n_m/N, (n_m/(5N))^2) = Normal(100, 20^2), made to sum to n_m. The mean is then
    # exactly 100; the sd is 20 (n_m - N)/sum(draws) ~ 20 (1 - N/n_m) = 19.8, and over 10 seeds x 5
    # blocks x 100 clients = 5,000 sizes the sample sd has a standard error of 19.8/sqrt(2 * 5000)
    # = 0.2 (1%): the tolerance is 3%, three standard errors.
    labels = cifar_like_labels(5000, 5)
    sizes = np.stack([block_cyclic_partition(labels, None, 5, 100, seed, labels_per_block=2).sizes
                      for seed in range(10)])
    assert sizes.shape == (10, 5, 100) and sizes.min() >= 1
    assert np.all(sizes.sum(axis=2) == 10_000)
    assert sizes.mean() == 100.0
    assert sizes.std() == pytest.approx(20.0 * (1 - 100 / 10_000), rel=0.03)
    # roughly normal: about 68% within one sd of the mean (binomial sd over 5000 draws: 0.7%)
    assert np.mean(np.abs(sizes - 100) <= 19.8) == pytest.approx(0.683, abs=0.03)


def test_same_seed_same_partition_and_the_test_split_is_its_own_stream() -> None:
    labels, test_labels = cifar_like_labels(300, 6), cifar_like_labels(60, 7)
    a = block_cyclic_partition(labels, test_labels, 5, 12, 9, labels_per_block=3)
    b = block_cyclic_partition(labels, test_labels, 5, 12, 9, labels_per_block=3)
    for x, y in ((a.sizes, b.sizes), (a.block_of_row, b.block_of_row), (a.client_of_row, b.client_of_row),
                 (a.test_block_of_row, b.test_block_of_row), *zip(a.block_rows, b.block_rows)):
        np.testing.assert_array_equal(x, y)
    other = block_cyclic_partition(labels, test_labels, 5, 12, 10, labels_per_block=3)
    assert not np.array_equal(a.client_of_row, other.client_of_row)
    # the test split draws from its own stream: the clients per block do not move it
    fewer = block_cyclic_partition(labels, test_labels, 5, 3, 9, labels_per_block=3, client_order="random")
    np.testing.assert_array_equal(a.test_block_of_row, fewer.test_block_of_row)
    assert not a.block_rows[0].flags.writeable and not a.sizes.flags.writeable


def test_the_test_set_is_split_into_the_same_blocks_by_label() -> None:
    labels, test_labels = cifar_like_labels(100, 8), cifar_like_labels(21, 9)
    p = block_cyclic_partition(labels, test_labels, 5, 4, 0, labels_per_block=3)
    for m, chosen in enumerate(p.block_labels):
        rows = p.test_rows(m)
        assert set(test_labels[rows].tolist()) == set(chosen)
    # every test row in exactly one block; a label held by two blocks: 21 rows split 11 / 10
    assert np.all(p.test_block_of_row >= 0)
    assert sorted(np.sum(test_labels[p.test_rows(m)] == 2) for m in (0, 1)) == [10, 11]
    assert block_cyclic_partition(labels, None, 5, 4, 0, labels_per_block=3).test_block_of_row.shape == (0,)


def test_the_metric_is_the_plain_mean_of_per_block_accuracies() -> None:
    # blocks {0, 1} and {1, 2}; test labels: three 0s, two 1s (one to each block), one 2.
    # Predictor m is a constant class: block 0 predicts 0 (right on 3 of its 4 rows: 0.75),
    # block 1 predicts 2 (right on 1 of its 2 rows: 0.5); the paper's average is 0.625, not the
    # row-weighted 4/6.
    labels = np.array([0, 0, 1, 1, 2, 2])
    test_labels = np.array([0, 1, 0, 2, 1, 0])
    p = block_cyclic_partition(labels, test_labels, 2, 1, 0, block_labels=((0, 1), (1, 2)))
    test_images = np.arange(6.0)[:, None]

    def predict(params: int, images: np.ndarray) -> np.ndarray:
        return np.full(len(images), params, dtype=np.int64)

    result = block_test_accuracy(predict, [0, 2], test_images, test_labels, p)
    assert isinstance(result, BlockAccuracy)
    assert result.per_block == (0.75, 0.5) and result.test_sizes == (4, 2) and result.mean == 0.625
    # one model for every block (FedAvg's): passed M times
    assert block_test_accuracy(predict, [1, 1], test_images, test_labels, p).per_block == (0.25, 0.5)


def test_label_block_partition_is_built_from_the_same_partition() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, C, 3000)
    X = np.c_[rng.normal(size=(3000, 2)), np.ones(3000)]
    problem = label_block_partition(X, y.astype(float), 5, 3, 15, seed=4)
    p = block_cyclic_partition(y, None, 5, 15, 4, labels_per_block=3)
    np.testing.assert_array_equal(problem.block_sizes(), p.sizes)
    for m in range(5):
        for i in range(15):
            np.testing.assert_array_equal(problem.combined.client_data(m * 15 + i)[0], X[p.client_rows(m, i)])


def test_bad_input_is_named() -> None:
    labels = cifar_like_labels(10, 0)
    with pytest.raises(ProblemError, match="labels_per_block: give exactly one"):
        block_cyclic_partition(labels, None, 2, 2, 0)
    with pytest.raises(ProblemError, match="labels_per_block: give exactly one"):
        block_cyclic_partition(labels, None, 2, 2, 0, labels_per_block=2, block_labels=((0,), (1,)))
    with pytest.raises(ProblemError, match="block_labels: expected n_blocks = 3"):
        block_cyclic_partition(labels, None, 3, 2, 0, block_labels=((0,), (1,)))
    with pytest.raises(ProblemError, match=r"block_labels\[1\]: a label appears twice"):
        block_cyclic_partition(labels, None, 2, 2, 0, block_labels=((0,), (1, 1)))
    with pytest.raises(ProblemError, match=r"block_labels\[0\]: must be <= 9"):
        block_cyclic_partition(labels, None, 2, 2, 0, block_labels=((10,), (1,)))
    with pytest.raises(ProblemError, match="n_clients: block 0 has 10 rows, fewer than n_clients = 11"):
        block_cyclic_partition(labels, None, 2, 11, 0, block_labels=((0,), (1,)))
    with pytest.raises(ProblemError, match="labels: expected a 1-D integer array"):
        block_cyclic_partition(labels.astype(float), None, 2, 2, 0, labels_per_block=5)
    with pytest.raises(ProblemError, match="test_labels: labels must be non-negative"):
        block_cyclic_partition(labels, np.array([-1]), 2, 2, 0, labels_per_block=5)
    with pytest.raises(ProblemError, match="n_classes: 5 classes do not cover label 9"):
        block_cyclic_partition(labels, None, 2, 2, 0, labels_per_block=2, n_classes=5)
    with pytest.raises(ProblemError, match="client_order"):
        block_cyclic_partition(labels, None, 2, 2, 0, labels_per_block=5, client_order="sorted")
    test_labels = np.array([0, 1, 2])
    p = block_cyclic_partition(labels, test_labels, 2, 2, 0, block_labels=((0,), (1, 2)))
    images = np.zeros((3, 1))
    constant = lambda params, x: np.zeros(len(x), dtype=np.int64)  # noqa: E731
    with pytest.raises(ProblemError, match="predictors: expected one per block"):
        block_test_accuracy(constant, [0], images, test_labels, p)
    with pytest.raises(ProblemError, match="test_images: expected 3 images"):
        block_test_accuracy(constant, [0, 0], images[:2], test_labels, p)
    with pytest.raises(ProblemError, match=r"predict: expected one integer class per image \(1\) for block 0, got float64"):
        block_test_accuracy(lambda params, x: np.zeros(len(x)), [0, 0], images, test_labels, p)
    empty = block_cyclic_partition(labels, np.array([0, 0]), 2, 2, 0, block_labels=((0,), (1,)))
    with pytest.raises(ProblemError, match="partition: block 1 has no test rows"):
        block_test_accuracy(constant, [0, 0], images[:2], np.array([0, 0]), empty)
