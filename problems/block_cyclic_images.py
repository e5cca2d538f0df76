"""Block-cyclic image data for a CNN: Ding et al.'s Sec. 5 setting, and its problem family
``block_cyclic_images``.

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454,
Sec. 5 (``shared/papers/ding2020_block_cyclic.md``). The training images of a data set are split
into M label-based blocks, each spread over N clients non-i.i.d. and unbalanced, and the test set
into the same M blocks (``block_partition.block_cyclic_partition``). With CE the softmax
cross-entropy of the network,

    F_m^i(theta) = (1/n_mi) sum_{images of client i in block m} CE(net(theta; x), y),
    F_m = (1/N) sum_i F_m^i,   F = (1/M) sum_m F_m                              (eq. 3, 6),

the client weights uniform as in ``block_cyclic`` (the paper's algorithms average with 1/N).

Representation, as ``block_cyclic.BlockCyclicProblem`` for the linear families:
``BlockCyclicImageProblem.combined`` is an ``ImageClassificationProblem`` with M*N pseudo-clients,
pseudo-client m*N + i holding the images of (block m, client i) in fetch order, every weight
1/(M N), so its objective is F; its test split is the whole (subsampled) test set, and
``partition`` says which test image belongs to which block. ``shuffled(seed)`` is Sec. 5's
non-cyclic baseline: the same images pooled and dealt to N clients at random. The paper's metric is
``block_accuracy``: block m's predictor scored on block m's test images, averaged over blocks
(``block_partition.block_test_accuracy``). Images, the network, its initialisation per run seed,
the precision and the data-set line are ``ImageClassificationProblem``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .block_layout import BlockLayout
from .block_partition import BlockAccuracy, BlockCyclicPartition, block_cyclic_partition, block_test_accuracy
from .image_classification import ImageClassificationProblem, network_images
from .spec import ProblemSpec
from .validation import ProblemError, check_int

__all__ = ["BlockCyclicImageProblem", "block_cyclic_images"]

_SUBSAMPLE_STREAM = 0xB10C  # default_rng([seed, _SUBSAMPLE_STREAM]) draws the subsampled rows


@dataclass(frozen=True, eq=False)
class BlockCyclicImageProblem(BlockLayout):
    """M blocks of N clients' images (module docstring); pseudo-client m*N + i = (block m, client i).

    ``combined``: the CNN problem over the M*N pseudo-clients (weights 1/(M N)); ``partition``:
    the block partition of its rows and of its test images (``partition.sizes`` (M, N) equal to
    the pseudo-clients' sizes, ``partition.test_block_of_row`` (n_test,)); ``spec`` rebuilds it
    (``registry.build_block_cyclic``), None for a problem made directly.
    """

    combined: ImageClassificationProblem
    n_blocks: int
    n_clients: int
    partition: BlockCyclicPartition
    spec: ProblemSpec | None = None

    def __post_init__(self) -> None:
        c = self.combined
        self._check_layout(ImageClassificationProblem,
                           f"combined: expected an ImageClassificationProblem, got {type(c).__name__}")
        M, N = self.n_blocks, self.n_clients
        if not isinstance(self.partition, BlockCyclicPartition):
            raise ProblemError(f"partition: expected a BlockCyclicPartition, got {type(self.partition).__name__}")
        if self.partition.sizes.shape != (M, N) or not np.array_equal(self.partition.sizes.reshape(-1),
                                                                      c.client_sizes):
            raise ProblemError("partition: its client sizes (M, N) are not the pseudo-clients' sizes")
        if self.partition.test_block_of_row.shape != c.test_labels.shape:
            raise ProblemError(f"partition: assigns {self.partition.test_block_of_row.size} test images to blocks, "
                               f"the problem has {c.test_labels.size}")

    @property
    def name(self) -> str:
        return self.combined.name

    def shuffled(self, seed: int) -> ImageClassificationProblem:
        """All training images pooled, permuted by ``default_rng(seed)`` and dealt to N clients in
        contiguous chunks (sizes differ by at most one, the first n mod N clients one more), weights
        p_k = n_k / n: Sec. 5's "FedAvg with shuffled data" baseline, whose F is the mean loss over
        all images. The test split is this problem's, so a model is scored on it by
        ``block_accuracy`` as FedAvg is in the paper. Its spec ``{"view": "shuffled", "shuffle_seed":
        seed, "of": spec}`` rebuilds it when ``spec`` is not None."""
        c, N = self.combined, self.n_clients
        n = c.images.shape[0]
        seed, order, sizes = self._shuffled_deal(n, seed)
        return ImageClassificationProblem(
            name=f"{c.name} [shuffled, seed {seed}]",
            network_name=c.network_name,
            images=c.images[order],
            labels=c.labels[order],
            offsets=np.concatenate([[0], np.cumsum(sizes)]),
            weights=sizes / n,
            test_images=c.test_images,
            test_labels=c.test_labels,
            dtype=c.dtype,
            dataset=f"{c.dataset}; pooled and dealt to {N} clients at random (seed {seed})",
            spec=self._view("shuffled", shuffle_seed=seed),
        )

    def block_accuracy(self, predictors: Sequence[np.ndarray] | np.ndarray, engine: str = "numba") -> BlockAccuracy:
        """Sec. 5's metric: block m's predictor (row m of ``predictors`` (M, d)) on block m's test
        images, and the mean over blocks. The network runs in float64 (the predictors and images
        converted exactly), through ``ConvNet.predict``: engine "numba" (the Numba kernel) or "numpy"
        (the reference); a predicted class is the first largest logit (ties go to the smaller class),
        and acc_m = (correct predictions) / (block m's test images). A single-model method passes its
        model M times."""
        predictors = np.asarray(predictors)
        if predictors.shape != (self.n_blocks, self.dim):
            raise ProblemError(f"predictors: expected shape ({self.n_blocks}, {self.dim}) (one per block), "
                               f"got {predictors.shape}")
        network = self.combined.network

        def predict(theta: np.ndarray, images: np.ndarray) -> np.ndarray:
            return network.predict(np.asarray(theta, dtype=np.float64), np.asarray(images, np.float64), engine)

        c = self.combined
        return block_test_accuracy(predict, list(predictors), c.test_images, c.test_labels, self.partition)


def block_cyclic_images(
    dataset: str = "digits",
    network: str = "digits_net",
    n_blocks: int = 2,
    clients_per_block: int = 5,
    labels_per_block: int = 5,
    n_train: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    dtype: str = "float32",
) -> BlockCyclicImageProblem:
    """The family ``block_cyclic_images``: ``network`` on data set ``dataset`` (``image_data``;
    "digits" is bundled), the first ``n_train`` training and ``n_test`` test images of seeded
    permutations (None: all), split by Ding et al.'s Sec. 5 partition into ``n_blocks`` blocks of
    ``clients_per_block`` clients with ``labels_per_block`` consecutive labels per block
    (``block_cyclic_partition``'s rule; training images whose label is in no block are left out).
    ``seed`` fixes the subsampling and the partition (the data), not a run's initialisation.
    ProblemError naming the field for bad input, a network whose input shape is not the data
    set's, or a block with fewer images than clients or without test images.
    """
    M = check_int("n_blocks", n_blocks, minimum=1)
    N = check_int("clients_per_block", clients_per_block, minimum=1)
    k = check_int("labels_per_block", labels_per_block, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    data = network_images(dataset, network, dtype, n_train, n_test, np.random.default_rng([seed, _SUBSAMPLE_STREAM]))
    net, train, test, train_rows, test_rows = data.net, data.train, data.test, data.train_rows, data.test_rows
    labels, test_labels = train.labels[train_rows], test.labels[test_rows]
    try:
        partition = block_cyclic_partition(labels, test_labels, M, N, seed, labels_per_block=k,
                                           n_classes=net.n_classes)
    except ProblemError as error:  # the partition names its n_clients; the family calls it clients_per_block
        message = str(error)
        raise ProblemError(message.replace("n_clients", "clients_per_block", 1) if message.startswith("n_clients")
                           else message) from None
    for m in range(M):
        if partition.test_rows(m).size == 0:
            raise ProblemError(f"n_test: block {m} gets no test image, so its predictor cannot be scored; "
                               "use more test images")
    rows = np.concatenate([partition.client_rows(m, i) for m in range(M) for i in range(N)])
    combined = ImageClassificationProblem(
        name=(f"block_cyclic_images({dataset}, {network}, M={M}, N={N}, {k} labels/block"
              f", seed={seed})"),
        network_name=network,
        images=train.images[train_rows[rows]].astype(dtype),
        labels=labels[rows],
        offsets=np.concatenate([[0], np.cumsum(partition.sizes.reshape(-1))]),
        weights=np.full(M * N, 1.0 / (M * N)),
        test_images=test.images[test_rows].astype(dtype),
        test_labels=test_labels,
        dtype=dtype,
        dataset=(f"{train.describe()}: {rows.size} training images in {M} blocks of labels "
                 f"{[list(labels_m) for labels_m in partition.block_labels]} and {test_rows.size} test images used; "
                 f"{train.verified}"),
    )
    return BlockCyclicImageProblem(combined, M, N, partition)
