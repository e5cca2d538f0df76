"""Clients that hold identical data: the setting of Yu, Yang, Zhu (AAAI 2019) Theorem 1.

Parallel restarted SGD is analysed for workers that sample from one distribution, so every
worker's stochastic gradient is unbiased for the global f. With finite data that is exact only
when every client holds the same rows: ``identical_quadratic`` replicates one ``random_quadratic``
client (mu-strongly convex, L-smooth with the exact constants) to N clients with weights 1/N, so
F_k = F; ``identical_images`` does the same for a CNN on image data (every client holds the same
n images, F_k = F = the mean cross-entropy over them), as one block of a ``BlockCyclicImageProblem``
so that parallel restarted SGD (``convergence.PRSGDConfig``) runs it. ``sorted_images`` is its
non-iid counterpart (Yu, Jin, Yang, ICML 2019, Theorem 3: FedAvg under bounded gradient
dissimilarity): the same n images sorted by label and cut into N consecutive clients of equal size
n / N (``partitions.sorted_partition``), so p_k = 1/N is both the weight of F_k in f and the weight
with which parallel restarted SGD averages, and each client holds one or two neighbouring labels.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind
from .block_cyclic_images import BlockCyclicImageProblem
from .block_partition import BlockCyclicPartition
from .image_classification import ImageClassificationProblem, network_images
from .partitions import sorted_partition
from .spec import FamilySpec
from .validation import ProblemError, check_int, check_memory, check_problem_size, check_real
from .quadratic import random_quadratic

__all__ = ["identical_images", "identical_quadratic", "sorted_images"]

_SUBSAMPLE_STREAM = 0x1DE7  # default_rng([seed, _SUBSAMPLE_STREAM]) draws the subsampled rows


def identical_quadratic(
    n_clients: int = 8, dim: int = 10, mu: float = 0.1, L: float = 10.0, samples_per_client: int = 50, seed: int = 0
) -> FederatedProblem:
    """N clients, each with the same ``samples_per_client`` least-squares rows in R^dim."""
    N = check_int("n_clients", n_clients, minimum=1)
    d = check_int("dim", dim, minimum=2)
    n = check_int("samples_per_client", samples_per_client, minimum=d)
    check_problem_size("n_clients, dim, samples_per_client", N * n, d, d)
    base = random_quadratic(1, dim, mu, L, 0.0, samples_per_client, seed)
    spec = FamilySpec(
        "identical_quadratic",
        {"n_clients": N, "dim": d, "mu": check_real("mu", mu), "L": check_real("L", L), "samples_per_client": n,
         "seed": check_int("seed", seed)},
    )
    return FederatedProblem(
        name=f"identical_quadratic(N={N}, d={dim}, seed={seed})",
        loss=LossKind.LEAST_SQUARES,
        X=np.tile(base.X, (N, 1)),
        y=np.tile(base.y, N),
        offsets=np.arange(N + 1) * n,
        weights=np.full(N, 1.0 / N),
        mu=base.mu,
        spec=spec,
        notes="identical data on every client (Yu et al. 2019, Thm 1)",
    )


def identical_images(
    dataset: str = "digits",
    network: str = "digits_net",
    n_clients: int = 4,
    n_train: int | None = 128,
    n_test: int | None = None,
    seed: int = 0,
    dtype: str = "float64",
) -> BlockCyclicImageProblem:
    """N clients, each holding the same ``n_train`` training images of ``dataset`` (the first
    ``n_train`` of a seeded permutation; None: all), ``network`` on them, weights 1/N: one block
    (M = 1) whose N pseudo-clients are copies of one image set, so F_k = F = (1/n) sum_i CE(net(theta;
    x_i), y_i). The test split (``n_test`` images of a seeded permutation; None: all) is the block's.
    ``seed`` fixes the subsampling only (runs draw their initialisation from the run seed). Shapes:
    ``combined.images`` (N n, H, W, C), client k's rows k n .. (k + 1) n - 1. ProblemError naming
    the field for bad input or a network whose input shape is not the data set's.
    """
    N = check_int("n_clients", n_clients, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    data = network_images(dataset, network, dtype, n_train, n_test, np.random.default_rng([seed, _SUBSAMPLE_STREAM]))
    net, train, test, rows, test_rows = data.net, data.train, data.test, data.train_rows, data.test_rows
    n, labels = rows.size, train.labels[rows]
    check_memory("n_clients, n_train", N * n * int(np.prod(net.input_shape)) * np.dtype(dtype).itemsize,
                 f"{N} copies of {n} images")
    combined = ImageClassificationProblem(
        name=f"identical_images({dataset}, {network}, N={N}, n={n}, seed={seed})",
        network_name=network,
        images=np.tile(train.images[rows].astype(dtype), (N, 1, 1, 1)),
        labels=np.tile(labels, N),
        offsets=np.arange(N + 1) * n,
        weights=np.full(N, 1.0 / N),
        test_images=test.images[test_rows].astype(dtype),
        test_labels=test.labels[test_rows],
        dtype=dtype,
        dataset=(f"{train.describe()}: the same {n} training images on each of {N} clients and {test_rows.size} "
                 f"test images used; {train.verified}"),
    )
    return _one_block(combined, N, n)


def sorted_images(
    dataset: str = "digits",
    network: str = "digits_tanh_mlp",
    n_clients: int = 10,
    n_train: int = 500,
    n_test: int | None = None,
    seed: int = 0,
    dtype: str = "float64",
) -> BlockCyclicImageProblem:
    """N clients holding the ``n_train`` training images of ``dataset`` (the first ``n_train`` of a
    seeded permutation) sorted by label and cut into N consecutive parts of n_train / N images each
    (``sorted_partition``; ProblemError naming ``n_train`` unless N divides it), ``network`` on them,
    weights 1/N: one block (M = 1) of N heterogeneous clients, F_k = the mean cross-entropy over
    client k's images, f = (1/N) sum_k F_k. Test split and ``seed`` as in ``identical_images``.
    """
    N = check_int("n_clients", n_clients, minimum=1)
    n = check_int("n_train", n_train, minimum=N)
    if n % N:
        raise ProblemError(f"n_train: {n} images cannot be cut into {N} clients of equal size (N must divide n_train)")
    seed = check_int("seed", seed, minimum=0)
    data = network_images(dataset, network, dtype, n, n_test, np.random.default_rng([seed, _SUBSAMPLE_STREAM]))
    train, test, rows, test_rows = data.train, data.test, data.train_rows, data.test_rows
    rows = rows[np.argsort(sorted_partition(train.labels[rows], N, seed), kind="stable")]
    combined = ImageClassificationProblem(
        name=f"sorted_images({dataset}, {network}, N={N}, n={n}, seed={seed})",
        network_name=network,
        images=train.images[rows].astype(dtype),
        labels=train.labels[rows],
        offsets=np.arange(N + 1) * (n // N),
        weights=np.full(N, 1.0 / N),
        test_images=test.images[test_rows].astype(dtype),
        test_labels=test.labels[test_rows],
        dtype=dtype,
        dataset=(f"{train.describe()}: {n} training images sorted by label, {n // N} on each of {N} clients, and "
                 f"{test_rows.size} test images used; {train.verified}"),
    )
    return _one_block(combined, N, n // N)


def _one_block(combined: ImageClassificationProblem, N: int, n: int) -> BlockCyclicImageProblem:
    """``combined`` (N clients of n rows each, in client order) as one block of N clients."""
    partition = BlockCyclicPartition(
        block_labels=(tuple(int(c) for c in np.unique(combined.labels)),),
        block_rows=(np.arange(N * n, dtype=np.int64),),
        sizes=np.full((1, N), n, dtype=np.int64),
        block_of_row=np.zeros(N * n, dtype=np.int64),
        client_of_row=np.repeat(np.arange(N, dtype=np.int64), n),
        test_block_of_row=np.zeros(combined.test_labels.size, dtype=np.int64),
    )
    return BlockCyclicImageProblem(combined, 1, N, partition)
