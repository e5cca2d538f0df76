"""A federated image-classification problem with a CNN: the model behind the engine's oracle for
the CNN track (issue 12), and its problem family ``image_classification``.

N clients with weights p_k = n_k / n hold the images of a data set (``image_data.load_images``)
split by a partition recipe (``partition_recipe.PartitionRecipe``); the network is one of
``models.registry.NETWORK_NAMES`` (``models.cnn``), with parameters theta (d,) in one flat vector.
The objective is the weighted mean softmax cross-entropy

    F_k(theta) = (1/n_k) sum_{i in client k} CE(net(theta; x_i), y_i),   F(theta) = sum_k p_k F_k(theta),

with no regulariser (mu = 0). F is non-convex and has no exact minimiser to compute: the problem
has no exact optimum, so runs on it report gap and distance as "not available"
(``convergence.run.objective_optimum``) and accuracy on the held-out test split is the metric
(``test_accuracy``).

Precision: ``dtype`` "float32" (the default, the fast path) or "float64" (the agreement tests'):
the images are stored in that dtype and the algorithms' iterates and every network evaluation of
a run use it; F, the local objectives and accuracies are always evaluated in float64 (parameters
and images converted exactly), so metrics do not depend on the run's precision beyond its iterates.

The start. theta_0 = 0 is a stationary point of a ReLU net (every hidden activation and every
gradient vanishes but the last bias's), so runs start from PyTorch's default initialisation
(``initial_model(seed)``, ``models.cnn.initialisation``) drawn **per run seed**: the seeds of a
run then sample the initialisation as well as the minibatches and the participants, as repeated
training runs do, so intervals over seeds cover both; and two algorithms compared at the same
seed start from the same theta_0 (paired comparisons). The problem's own ``seed`` fixes only
the data (subsampling and partition), so every algorithm and seed sees the same clients.

Shapes: images (n, H, W, C) in the problem's dtype, grouped by client (client k owns rows
offsets[k]:offsets[k+1]), labels (n,) int64, offsets (N+1,) int64, weights (N,); test_images
(n_test, H, W, C), test_labels (n_test,). Arrays are read-only.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._base import ClientRows
from .models.cnn.layout import EVALUATION_CHUNK
from .models.registry import network_for
from .partition_recipe import PartitionRecipe
from .spec import ProblemSpec
from .validation import ProblemError, check_int

if TYPE_CHECKING:
    from .image_data import ImageDataset
    from .models.cnn.network import ConvNet

__all__ = ["CNN_DTYPES", "ImageClassificationProblem", "NetworkImages", "image_classification", "network_images",
           "subsample_rows"]

CNN_DTYPES = ("float32", "float64")
"""The precisions a CNN problem runs in (module docstring)."""


@dataclass(frozen=True, eq=False)
class ImageClassificationProblem(ClientRows):
    """A federated CNN problem (module docstring): its name, the network's registry name, the
    client data grouped by client, the client weights, the held-out test split, the precision
    ``dtype`` and ``dataset`` (a line naming the data set, split sizes and where its files came
    from). ``spec`` rebuilds it (None for a problem made directly)."""

    name: str
    network_name: str
    images: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    weights: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    dtype: str = "float32"
    dataset: str = ""
    spec: ProblemSpec | None = None

    def __post_init__(self) -> None:
        if self.dtype not in CNN_DTYPES:
            raise ProblemError(f"dtype: expected one of {', '.join(CNN_DTYPES)}, got {self.dtype!r}")
        if self.spec is not None and not isinstance(self.spec, ProblemSpec):
            raise ProblemError(f"spec: expected a ProblemSpec or None, got {type(self.spec).__name__}")
        network = network_for(self.network_name)
        shape = network.input_shape
        images = _images("images", self.images, shape, self.dtype)
        test_images = _images("test_images", self.test_images, shape, self.dtype)
        labels = _labels("labels", self.labels, images.shape[0], network.n_classes)
        test_labels = _labels("test_labels", self.test_labels, test_images.shape[0], network.n_classes)
        offsets = np.ascontiguousarray(self.offsets)
        if offsets.dtype.kind not in "iu" or offsets.ndim != 1 or offsets.size < 2:
            raise ProblemError(f"offsets: expected N+1 >= 2 integers, got {offsets.dtype} {offsets.shape}")
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or offsets[-1] != images.shape[0] or np.any(np.diff(offsets) <= 0):
            raise ProblemError("offsets: must start at 0, end at the number of images and increase strictly "
                               "(every client holds at least one image)")
        weights = np.ascontiguousarray(self.weights, dtype=np.float64).reshape(-1)
        if weights.shape != (offsets.size - 1,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ProblemError(f"weights: expected {offsets.size - 1} finite non-negative client weights")
        if abs(weights.sum() - 1.0) > 1e-9:
            raise ProblemError(f"weights: client weights p_k must sum to 1 (they sum to {weights.sum():.12g})")
        for field, value in (("images", images), ("labels", labels), ("offsets", offsets), ("weights", weights),
                             ("test_images", test_images), ("test_labels", test_labels)):
            value.setflags(write=False)
            object.__setattr__(self, field, value)

    # ----------------------------------------------------------------- sizes
    @property
    def network(self) -> ConvNet:
        """The network (``models.cnn.ConvNet``): layout, initialisation, loss and gradient."""
        return network_for(self.network_name)

    @property
    def float_type(self) -> np.dtype:
        """The precision of the images and of a run's iterates."""
        return np.dtype(self.dtype)

    @property
    def dim(self) -> int:
        """d, the number of network parameters."""
        return self.network.n_params

    @property
    def n_classes(self) -> int:
        return self.network.n_classes

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of what defines F, the F_k and the test metric: network, precision, arrays."""
        digest = hashlib.sha256(f"cnn|{self.network_name}|{self.dtype}|{self.images.shape}".encode())
        for array in (self.images, self.labels, self.offsets, self.weights, self.test_images, self.test_labels):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    def client_data(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Images (n_k, H, W, C) and labels (n_k,) of client k (read-only views)."""
        lo, hi = self.offsets[k], self.offsets[k + 1]
        return self.images[lo:hi], self.labels[lo:hi]

    # ------------------------------------------------------------- the oracle
    def initial_model(self, seed: int) -> np.ndarray:
        """theta_0 (d,) in the problem's dtype: PyTorch's default initialisation keyed by the run
        seed (module docstring, "The start")."""
        return self.network.init_params(check_int("seed", seed, minimum=0), self.float_type)

    def client_gradient(self, theta: np.ndarray, k: int, rows: np.ndarray | None = None,
                        engine: str = "numba") -> np.ndarray:
        """grad F_k(theta) (d,), or the minibatch gradient (1/b) sum_{i in rows} grad CE_i(theta) over
        ``rows`` (indices local to client k; repeats count), in the problem's dtype; engine
        "numba" (``cnn.kernel``) or "numpy" (``cnn.reference``)."""
        images, labels = self.client_data(check_int("k", k, minimum=0, maximum=self.n_clients - 1))
        if rows is not None:
            images, labels = images[np.asarray(rows)], labels[np.asarray(rows)]
        return self.network.loss_and_gradient(self._params(theta), images, labels, engine)[1]

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """grad F(theta) = sum_k p_k grad F_k(theta), shape (d,), float64: the network run in float64
        (parameters and images converted exactly) on chunks of at most ``EVALUATION_CHUNK`` images of
        each client, each chunk's mean gradient weighted by p_k (its images) / n_k."""
        params, out = np.asarray(self._params(theta), dtype=np.float64), np.zeros(self.dim)
        for k in range(self.n_clients):
            images, labels = self.client_data(k)
            for lo in range(0, images.shape[0], EVALUATION_CHUNK):
                chunk = slice(lo, lo + EVALUATION_CHUNK)
                chunk_images = np.asarray(images[chunk], dtype=np.float64)
                grad = self.network.loss_and_gradient(params, chunk_images, labels[chunk])[1]
                out += (self.weights[k] * chunk_images.shape[0] / images.shape[0]) * grad
        return out

    def sample_gradients(self, theta: np.ndarray, k: int) -> np.ndarray:
        """grad CE(net(theta; x_i), y_i) for every image i of client k, shape (n_k, d), float64 (the
        network run in float64): client k's minibatch moments come from these (their mean is grad F_k)."""
        images, labels = self.client_data(check_int("k", k, minimum=0, maximum=self.n_clients - 1))
        params = np.asarray(self._params(theta), dtype=np.float64)
        return self.network.sample_gradients(params, np.asarray(images, dtype=np.float64), labels)

    def sample_losses(self, theta: np.ndarray, images: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """CE(net(theta; x_i), y_i) (n,) in float64, the network run in float64 in chunks."""
        net, params = self.network, np.asarray(theta, dtype=np.float64)
        out = np.empty(images.shape[0])
        for lo in range(0, images.shape[0], EVALUATION_CHUNK):
            chunk = slice(lo, lo + EVALUATION_CHUNK)
            logits = net.logits(params, np.asarray(images[chunk], dtype=np.float64))
            top = logits.max(axis=1, keepdims=True)
            log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
            out[chunk] = log_norm - logits[np.arange(logits.shape[0]), labels[chunk]]
        return out

    def local_objectives(self, theta: np.ndarray) -> np.ndarray:
        """(F_1(theta), ..., F_N(theta)), shape (N,), float64."""
        sums = np.add.reduceat(self.sample_losses(self._params(theta), self.images, self.labels), self.offsets[:-1])
        return sums / self.client_sizes

    def objective(self, theta: np.ndarray) -> float:
        """F(theta) = sum_k p_k F_k(theta)."""
        return float(self.weights @ self.local_objectives(theta))

    def accuracy(self, theta: np.ndarray) -> float:
        """Share of the training images (all clients) the network classifies correctly."""
        return self._accuracy(self._params(theta), self.images, self.labels)

    def test_accuracy(self, theta: np.ndarray) -> float:
        """Share of the held-out test images the network classifies correctly (the CNN claims' metric)."""
        return self._accuracy(self._params(theta), self.test_images, self.test_labels)

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary: name, network, sizes, precision, data set and the rebuilding spec."""
        return {
            "name": self.name,
            "network": self.network_name,
            "n_clients": self.n_clients,
            "dim": self.dim,
            "n_samples": int(self.images.shape[0]),
            "n_test": int(self.test_images.shape[0]),
            "dtype": self.dtype,
            "dataset": self.dataset,
            "spec": None if self.spec is None else self.spec.to_json(),
        }

    def _params(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta)
        if theta.shape != (self.dim,):
            raise ProblemError(f"theta: expected shape ({self.dim},) for {self.network_name}, got {theta.shape}")
        return theta

    def _accuracy(self, theta: np.ndarray, images: np.ndarray, labels: np.ndarray) -> float:
        params, correct = np.asarray(theta, dtype=np.float64), 0
        for lo in range(0, images.shape[0], EVALUATION_CHUNK):
            chunk = slice(lo, lo + EVALUATION_CHUNK)
            predicted = self.network.predict(params, np.asarray(images[chunk], dtype=np.float64))
            correct += int(np.sum(predicted == labels[chunk]))
        return correct / images.shape[0]


def image_classification(
    dataset: str = "digits",
    network: str = "digits_net",
    recipe: str = "iid",
    n_clients: int = 10,
    n_train: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    dtype: str = "float32",
    alpha: float | None = None,
    shards_per_client: int | None = None,
    shape: float | None = None,
    sigma: float | None = None,
    min_size: int | None = None,
) -> ImageClassificationProblem:
    """The family ``image_classification``: ``network`` on data set ``dataset``'s training split
    (``image_data.load_images``; "digits" is bundled and needs no download), the first ``n_train``
    images of a seeded permutation (None: all), split over ``n_clients`` clients by partition
    ``recipe`` (``partition_recipe.RECIPES``, with its ``alpha``, ``shards_per_client``, ``shape``,
    ``sigma``, ``min_size``), p_k = n_k / n; the test split likewise subsampled to ``n_test``.
    ``seed`` fixes the subsampling and the partition (the data), not the initialisation (module
    docstring). ProblemError naming the field for bad input, for a network whose input shape is
    not the data set's, or for a partition leaving a client without images.
    """
    seed = check_int("seed", seed, minimum=0)
    partition = PartitionRecipe(recipe, n_clients, seed, alpha=alpha, shards_per_client=shards_per_client,
                                shape=shape, sigma=sigma, min_size=min_size)
    # the subsampling stream, apart from the partition's
    data = network_images(dataset, network, dtype, n_train, n_test, np.random.default_rng([seed, 0x1A6E]))
    train, test, train_rows, test_rows = data.train, data.test, data.train_rows, data.test_rows
    labels = train.labels[train_rows]
    client_of_row = partition.apply(labels)
    sizes = np.bincount(client_of_row, minlength=n_clients)
    if np.any(sizes == 0):
        raise ProblemError(f"n_clients: the {recipe} partition of {labels.size} images leaves client "
                           f"{int(np.argmin(sizes))} without images; use fewer clients or more images")
    order = np.argsort(client_of_row, kind="stable")
    rows = train_rows[order]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return ImageClassificationProblem(
        name=f"image_classification({dataset}, {network}, {partition.describe()})",
        network_name=network,
        images=train.images[rows].astype(dtype),
        labels=train.labels[rows],
        offsets=offsets,
        weights=sizes / sizes.sum(),
        test_images=test.images[test_rows].astype(dtype),
        test_labels=test.labels[test_rows],
        dtype=dtype,
        dataset=(f"{train.describe()}: {rows.size} training and {test_rows.size} test images used; "
                 f"{train.verified}"),
    )


@dataclass(frozen=True)
class NetworkImages:
    """A network, the training and test splits of the data set it runs on, and the rows of each a
    problem keeps (sorted indices, ``subsample_rows``)."""

    net: ConvNet
    train: ImageDataset
    test: ImageDataset
    train_rows: np.ndarray
    test_rows: np.ndarray


def network_images(dataset: str, network: str, dtype: str, n_train: int | None, n_test: int | None,
                   rng: np.random.Generator) -> NetworkImages:
    """``network`` (``models.registry.network_for``) and data set ``dataset``'s splits
    (``image_data.load_images``) with ``n_train`` / ``n_test`` rows of each drawn from ``rng`` in that
    order (None: all). ProblemError naming the field for an unknown network, a ``dtype`` not in
    CNN_DTYPES, a network whose input shape is not the images', or a count above the split's size."""
    from .image_data import load_images  # here: image_data imports arrays, which imports the problem registry

    net = network_for(network)
    if dtype not in CNN_DTYPES:
        raise ProblemError(f"dtype: expected one of {', '.join(CNN_DTYPES)}, got {dtype!r}")
    train, test = load_images(dataset, "train"), load_images(dataset, "test")
    if train.images.shape[1:] != net.input_shape:
        raise ProblemError(f"network: {network} takes {net.input_shape} images, the {dataset} images are "
                           f"{train.images.shape[1:]}")
    train_rows = subsample_rows("n_train", n_train, train.n, rng)
    test_rows = subsample_rows("n_test", n_test, test.n, rng)
    return NetworkImages(net, train, test, train_rows, test_rows)


def subsample_rows(field: str, count: int | None, available: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted row indices: all ``available`` rows (count None) or the first ``count`` of a permutation."""
    if count is None:
        return np.arange(available)
    count = check_int(field, count, minimum=1)
    if count > available:
        raise ProblemError(f"{field}: {count} images asked, the split has {available}")
    return np.sort(rng.permutation(available)[:count])


def _images(field: str, value: Any, shape: tuple[int, int, int], dtype: str) -> np.ndarray:
    """``value`` as C-contiguous (n, *shape) images of ``dtype`` with finite values; ProblemError naming ``field``."""
    images = np.asarray(value)
    if images.dtype != np.dtype(dtype):
        raise ProblemError(f"{field}: expected {dtype} images (the problem's dtype), got {images.dtype}")
    if images.ndim != 4 or images.shape[1:] != shape or images.shape[0] == 0:
        raise ProblemError(f"{field}: expected a non-empty (n, {', '.join(map(str, shape))}) array, got {images.shape}")
    if not np.all(np.isfinite(images)):
        raise ProblemError(f"{field}: contains non-finite values")
    return np.ascontiguousarray(images)


def _labels(field: str, value: Any, n: int, n_classes: int) -> np.ndarray:
    """``value`` as n int64 labels in [0, n_classes); ProblemError naming ``field``."""
    labels = np.asarray(value)
    if labels.dtype.kind not in "iu" or labels.shape != (n,):
        raise ProblemError(f"{field}: expected {n} integer labels, got {labels.dtype} {labels.shape}")
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ProblemError(f"{field}: labels must lie in [0, {n_classes})")
    return np.ascontiguousarray(labels, dtype=np.int64)
