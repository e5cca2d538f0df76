"""Clients that hold identical data: the setting of Yu, Yang, Zhu (AAAI 2019) Theorem 1.

Parallel restarted SGD is analysed for workers that sample from one distribution, so every
worker's stochastic gradient is unbiased for the global f. With finite data that is exact only
when every client holds the same rows: ``identical_quadratic`` replicates one ``random_quadratic``
client (mu-strongly convex, L-smooth with the exact constants) to N clients with weights 1/N, so
F_k = F; ``identical_images`` does the same for a CNN on image data (every client holds the same
n images, F_k = F = the mean cross-entropy over them), as one block of a ``BlockCyclicImageProblem``
so that parallel restarted SGD (``convergence.PRSGDConfig``) runs it.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind
from .block_cyclic_images import BlockCyclicImageProblem
from .block_partition import BlockCyclicPartition
from .image_classification import ImageClassificationProblem, network_images
from .spec import FamilySpec
from .validation import check_int, check_memory, check_problem_size, check_real
from .quadratic import random_quadratic

__all__ = ["identical_images", "identical_quadratic"]

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
    partition = BlockCyclicPartition(
        block_labels=(tuple(int(c) for c in np.unique(labels)),),
        block_rows=(np.arange(N * n, dtype=np.int64),),
        sizes=np.full((1, N), n, dtype=np.int64),
        block_of_row=np.zeros(N * n, dtype=np.int64),
        client_of_row=np.repeat(np.arange(N, dtype=np.int64), n),
        test_block_of_row=np.zeros(test_rows.size, dtype=np.int64),
    )
    return BlockCyclicImageProblem(combined, 1, N, partition)
