"""Partition recipes: the properties each promises (exactly k labels per client, Dirichlet label skew
that approaches IID as alpha grows and concentrates as it shrinks, sizes summing to n, the minimum
size kept, a repair that ends), determinism in the seed, and one error naming each bad argument."""

from __future__ import annotations

import numpy as np
import pytest

from problems import (
    RECIPES,
    PartitionRecipe,
    ProblemError,
    dirichlet_partition,
    iid_partition,
    lognormal_partition,
    powerlaw_partition,
    shard_partition,
    sorted_partition,
)

BALANCED = np.repeat(np.arange(10), 1000)  # 10 labels x 1000 rows
SKEWED = np.repeat(np.arange(10), [50, 80, 120, 200, 300, 40, 60, 90, 500, 25])


def histogram(labels: np.ndarray, clients: np.ndarray) -> np.ndarray:
    H = np.zeros((clients.max() + 1, labels.max() + 1), dtype=np.int64)
    np.add.at(H, (clients, labels), 1)
    return H


def total_variation_to_pooled(labels: np.ndarray, clients: np.ndarray) -> np.ndarray:
    """Per client, 1/2 sum_c |P(c | client) - P(c)| (0: the pooled label mix; 1: disjoint)."""
    H = histogram(labels, clients)
    pooled = np.bincount(labels) / labels.size
    return 0.5 * np.abs(H / H.sum(1, keepdims=True) - pooled).sum(1)


ALL = {
    "iid": lambda labels, N, seed: iid_partition(labels, N, seed),
    "shards": lambda labels, N, seed: shard_partition(labels, N, seed, 2),
    "sorted": lambda labels, N, seed: sorted_partition(labels, N, seed),
    "dirichlet": lambda labels, N, seed: dirichlet_partition(labels, N, seed, alpha=0.3, min_size=5),
    "powerlaw": lambda labels, N, seed: powerlaw_partition(labels, N, seed, min_size=5),
    "lognormal": lambda labels, N, seed: lognormal_partition(labels, N, seed, min_size=5),
}


@pytest.mark.parametrize("recipe", ALL)
def test_every_row_one_client_every_client_used_and_deterministic(recipe: str) -> None:
    first = ALL[recipe](SKEWED, 20, 3)
    assert first.dtype == np.int64 and first.shape == SKEWED.shape
    assert set(np.unique(first)) == set(range(20))
    np.testing.assert_array_equal(first, ALL[recipe](SKEWED, 20, 3))  # same seed, same partition
    assert not np.array_equal(first, ALL[recipe](SKEWED, 20, 4))  # another seed, another partition
    assert {*RECIPES} == {*ALL}


@pytest.mark.parametrize(("labels", "N", "k"), [(BALANCED, 100, 2), (SKEWED, 37, 2), (SKEWED, 20, 3),
                                                (BALANCED, 10, 10), (SKEWED, 10, 1)])
def test_shards_give_every_client_exactly_k_labels(labels: np.ndarray, N: int, k: int) -> None:
    clients = shard_partition(labels, N, 11, shards_per_client=k)
    assert np.all(np.count_nonzero(histogram(labels, clients), axis=1) == k)


@pytest.mark.parametrize(("labels", "N"), [(BALANCED, 10), (BALANCED, 7), (SKEWED, 20), (SKEWED, 3)])
def test_sorted_gives_equal_sizes_and_clients_in_label_order(labels: np.ndarray, N: int) -> None:
    clients = sorted_partition(labels, N, 5)
    sizes = np.bincount(clients)
    assert set(sizes) <= {labels.size // N, -(-labels.size // N)} and sizes.sum() == labels.size
    # client k's largest label is at most client k + 1's smallest: rows cut in label order
    highest = [labels[clients == k].max() for k in range(N)]
    lowest = [labels[clients == k].min() for k in range(N)]
    assert all(h <= l for h, l in zip(highest[:-1], lowest[1:]))


def test_li_mnist_recipe_shape_balanced_shards() -> None:
    # Li et al. App. D: 100 devices, 2 digits each; balanced labels give 20 shards per label, so equal sizes
    sizes = np.bincount(shard_partition(BALANCED, 100, 0))
    assert np.all(sizes == 100)
    pairs = {tuple(np.flatnonzero(row)) for row in histogram(BALANCED, shard_partition(BALANCED, 100, 0))}
    assert len(pairs) >= 5


def test_shards_refuse_impossible_requests() -> None:
    with pytest.raises(ProblemError, match=r"^shards_per_client: 11 distinct labels per client, but the data has only 10"):
        shard_partition(BALANCED, 10, 0, shards_per_client=11)
    with pytest.raises(ProblemError, match=r"^shards_per_client: 3 clients x 2 shards = 6 shards cannot cover the 10"):
        shard_partition(BALANCED, 3, 0, shards_per_client=2)
    tiny = np.repeat(np.arange(3), [1, 1, 50])
    with pytest.raises(ProblemError, match=r"^n_clients: 20 clients x 2 shards = 40 shards, but the labels can make at most 22"):
        shard_partition(tiny, 20, 0, shards_per_client=2)


def test_dirichlet_large_alpha_approaches_iid_small_alpha_concentrates() -> None:
    # alpha = 1e4: each q_k has sd sqrt(0.1 * 0.9 / (1e5 + 1)) ~ 0.001 around 1/10, so a client's share of
    # a label is 100 +- 1 rows of 1000: its label mix is within a total variation of 0.02 of the pooled one
    wide = dirichlet_partition(BALANCED, 10, 1, alpha=1e4)
    assert total_variation_to_pooled(BALANCED, wide).max() < 0.02
    iid = iid_partition(BALANCED, 10, 1)
    assert total_variation_to_pooled(BALANCED, iid).max() < 0.05  # the control, for scale
    # alpha = 0.01: Dir(0.01 1_10) puts almost all mass on one coordinate; the largest client share of a
    # label is above 0.9 for most labels, and the clients' label mixes are far from the pooled one
    narrow = dirichlet_partition(BALANCED, 10, 1, alpha=0.01, min_size=1)
    H = histogram(BALANCED, narrow)
    assert np.median(H.max(axis=0) / H.sum(axis=0)) > 0.9
    assert np.median(total_variation_to_pooled(BALANCED, narrow)) > 0.5
    # and the measure orders alpha monotonically in between (averaged over clients)
    means = [total_variation_to_pooled(BALANCED, dirichlet_partition(BALANCED, 10, 2, alpha=a, min_size=1)).mean()
             for a in (0.05, 0.5, 5.0, 500.0)]
    assert means == sorted(means, reverse=True)


def test_dirichlet_minimum_size_repair_terminates_and_holds() -> None:
    # tiny alpha, many clients, min_size * N close to n: redrawing until every client has 10 rows would
    # essentially never succeed; the bounded repair ends and keeps every client at >= 10 rows
    labels = SKEWED[: 50 + 80 + 120 + 200]  # 450 rows, 4 labels
    clients = dirichlet_partition(labels, 40, 5, alpha=0.001, min_size=10)
    sizes = np.bincount(clients, minlength=40)
    assert sizes.min() >= 10 and sizes.sum() == labels.size
    exact = dirichlet_partition(labels, 45, 5, alpha=0.001, min_size=10)  # n = N min_size exactly
    assert np.all(np.bincount(exact) == 10)


@pytest.mark.parametrize("recipe", [powerlaw_partition, lognormal_partition])
def test_size_skew_sums_to_n_keeps_the_minimum_and_mixes_labels(recipe) -> None:
    clients = recipe(BALANCED, 100, 9, min_size=20)
    sizes = np.bincount(clients)
    assert sizes.sum() == BALANCED.size and sizes.min() >= 20 and sizes.max() > 3 * np.median(sizes)
    # the largest clients' labels are a sample of the pooled mix: a multinomial sample of n_k rows has
    # E TV = 1/2 sum_c E|p^_c - p_c| ~ 1/2 sum_c sqrt(2/pi) sqrt(p_c (1 - p_c) / n_k); allow 2.5 times that
    # (a label-skewed client, e.g. from the shards recipe, is at TV >= 0.5)
    big = np.argsort(sizes)[-5:]
    expected = 0.5 * 10 * np.sqrt(2 / np.pi) * np.sqrt(0.1 * 0.9 / sizes[big])
    assert np.all(total_variation_to_pooled(BALANCED, clients)[big] < 2.5 * expected)


def test_lognormal_sizes_have_the_stated_coefficient_of_variation() -> None:
    # sizes ~ 1 + (n - N) w_k / sum w, w ~ LogNormal(0, 1): coefficient of variation sqrt(e - 1) = 1.31;
    # with N = 4000 clients the sample value lies within +-0.25 of it (its sd is ~0.1 for this heavy tail)
    sizes = np.bincount(lognormal_partition(np.zeros(400_000, dtype=np.int64), 4000, 0, min_size=1))
    assert abs(sizes.std() / sizes.mean() - np.sqrt(np.e - 1)) < 0.25
    iid_sizes = np.bincount(iid_partition(np.zeros(400_000, dtype=np.int64), 4000, 0))
    assert iid_sizes.std() == 0.0


def test_iid_sizes_differ_by_at_most_one() -> None:
    sizes = np.bincount(iid_partition(SKEWED, 7, 0))
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == SKEWED.size


@pytest.mark.parametrize(("call", "field"), [
    (lambda: dirichlet_partition(BALANCED, 10, 0, alpha=0.0), "alpha"),
    (lambda: dirichlet_partition(BALANCED, 10, 0, alpha=float("nan")), "alpha"),
    (lambda: dirichlet_partition(BALANCED, 10, 0, alpha="1"), "alpha"),
    (lambda: dirichlet_partition(BALANCED, 1000, 0, alpha=1.0, min_size=11), "min_size"),
    (lambda: powerlaw_partition(BALANCED, 10, 0, shape=-1.0), "shape"),
    (lambda: lognormal_partition(BALANCED, 10, 0, sigma=0.0), "sigma"),
    (lambda: iid_partition(BALANCED, 10_001, 0), "n_clients"),
    (lambda: iid_partition(BALANCED, 0, 0), "n_clients"),
    (lambda: iid_partition(BALANCED, 2.0, 0), "n_clients"),
    (lambda: iid_partition(BALANCED, 10, -1), "seed"),
    (lambda: iid_partition(BALANCED.astype(float), 10, 0), "labels"),
    (lambda: iid_partition(BALANCED - 1, 10, 0), "labels"),
    (lambda: iid_partition(np.array([], dtype=int), 1, 0), "labels"),
    (lambda: shard_partition(BALANCED, 10, 0, shards_per_client=0), "shards_per_client"),
])
def test_bad_arguments_are_named(call, field: str) -> None:
    with pytest.raises(ProblemError, match=rf"^{field}: "):
        call()


def test_recipe_value_dispatches_and_refuses_parameters_it_does_not_take() -> None:
    recipe = PartitionRecipe("dirichlet", 10, 4, alpha=0.5)
    assert recipe.min_size == 10 and recipe.describe() == "dirichlet(alpha=0.5, min_size=10), N=10, seed 4"
    np.testing.assert_array_equal(recipe.apply(BALANCED), dirichlet_partition(BALANCED, 10, 4, alpha=0.5))
    assert PartitionRecipe("shards", 5).to_json() == {"recipe": "shards", "n_clients": 5, "seed": 0,
                                                      "shards_per_client": 2}
    with pytest.raises(ProblemError, match=r"^alpha: the shards recipe does not take it"):
        PartitionRecipe("shards", 5, alpha=0.1)
    with pytest.raises(ProblemError, match=r"^alpha: the dirichlet recipe needs it"):
        PartitionRecipe("dirichlet", 5)
    with pytest.raises(ProblemError, match=r"^recipe: expected one of shards, dirichlet"):
        PartitionRecipe("pathological", 5)
