"""The data side of a partition report: client sizes and label histograms, and the federated
problem a partition of an image data set makes.

``summarize_partition(labels, client_of_row, n_classes, dataset=..., recipe=...)`` gives a
``PartitionSummary``: sizes n_k (N,), the label histogram H (N, C) with H[k, c] the rows of label c
held by client k (so H.sum(1) = n_k and H.sum(0) the pooled label counts), the distinct labels per
client, and the weights p_k = n_k / n of Li et al.'s objective (ICLR 2020, eq. 1).

``partition_problem(dataset, client_of_row, l2=1e-4)`` builds, through ``problems.from_arrays``,
the l2-regularised softmax regression of Li et al.'s App. D (lambda = 1e-4) on the flattened
images: rows x_i = the image's pixels in [0, 1] (H W C features, no bias column), labels 0..C-1,

    F_k(w) = (1/n_k) sum_{i in client k} softmax cross-entropy(w; x_i, y_i) + (l2/2) ||w||^2,

so d = H W C x C (640 for the 8x8 digits) and mu = l2. The heterogeneity measures of that problem
(Gamma, sigma_G^2, the (G, B)-BGD pair) are computed in ``proofs_check.constants.partition_heterogeneity``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import FederatedProblem
from .arrays import from_arrays
from .image_data import ImageDataset
from .validation import ProblemError, check_int

__all__ = ["LI_SOFTMAX_L2", "PartitionSummary", "partition_problem", "summarize_partition"]

LI_SOFTMAX_L2 = 1e-4
"""Li et al. (ICLR 2020), Sec. 5 / App. D: "weight decay lambda = 1e-4"."""


@dataclass(frozen=True, eq=False)
class PartitionSummary:
    """Sizes (N,) and label histogram (N, C) of a partition, the data set and recipe it came from."""

    dataset: str
    recipe: str
    sizes: np.ndarray
    label_histogram: np.ndarray

    @property
    def n_clients(self) -> int:
        return int(self.sizes.size)

    @property
    def n_classes(self) -> int:
        return int(self.label_histogram.shape[1])

    @property
    def weights(self) -> np.ndarray:
        """p_k = n_k / n (N,)."""
        return self.sizes / self.sizes.sum()

    @property
    def labels_per_client(self) -> np.ndarray:
        """Number of distinct labels each client holds (N,)."""
        return np.count_nonzero(self.label_histogram, axis=1)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "recipe": self.recipe,
            "n_clients": self.n_clients,
            "n_classes": self.n_classes,
            "n_rows": int(self.sizes.sum()),
            "sizes": [int(s) for s in self.sizes],
            "label_histogram": [[int(v) for v in row] for row in self.label_histogram],
            "labels_per_client": [int(v) for v in self.labels_per_client],
        }

    def to_markdown(self, max_rows: int = 20) -> str:
        """Size statistics and the label histogram as a Markdown table (the first ``max_rows`` clients)."""
        s = self.sizes
        lines = [
            f"- data: {self.dataset}",
            f"- recipe: {self.recipe}",
            f"- clients: {self.n_clients}, rows: {int(s.sum())}, sizes min / median / max: {int(s.min())} / "
            f"{float(np.median(s)):g} / {int(s.max())}, mean {s.mean():.1f} +- {s.std():.1f}",
            f"- distinct labels per client: min {int(self.labels_per_client.min())}, "
            f"max {int(self.labels_per_client.max())}",
            "",
            "| client | n_k | " + " | ".join(str(c) for c in range(self.n_classes)) + " |",
            "|---:|---:|" + "---:|" * self.n_classes,
        ]
        for k in range(min(self.n_clients, max_rows)):
            lines.append(f"| {k} | {int(s[k])} | " + " | ".join(str(int(v)) for v in self.label_histogram[k]) + " |")
        if self.n_clients > max_rows:
            lines.append(f"\n({self.n_clients - max_rows} more clients in the JSON form)")
        return "\n".join(lines)


def summarize_partition(
    labels: Any, client_of_row: Any, n_classes: int, *, dataset: str, recipe: str
) -> PartitionSummary:
    """Sizes and label histogram of ``client_of_row`` (n,) over integer ``labels`` (n,) in [0, n_classes)."""
    C = check_int("n_classes", n_classes, minimum=1)
    labels = np.asarray(labels)
    clients = np.asarray(client_of_row)
    if labels.dtype.kind not in "iu" or labels.ndim != 1 or labels.size == 0:
        raise ProblemError(f"labels: expected a non-empty 1-d integer array, got {labels.dtype} {labels.shape}")
    if labels.min() < 0 or labels.max() >= C:
        raise ProblemError(f"labels: must lie in [0, {C})")
    if clients.dtype.kind not in "iu" or clients.shape != labels.shape or clients.min() < 0:
        raise ProblemError(f"client_of_row: expected {labels.size} client ids >= 0, got {clients.dtype} {clients.shape}")
    N = int(clients.max()) + 1
    histogram = np.zeros((N, C), dtype=np.int64)
    np.add.at(histogram, (clients.astype(np.int64), labels.astype(np.int64)), 1)
    sizes = histogram.sum(axis=1)
    if np.any(sizes == 0):
        raise ProblemError(f"client_of_row: client {int(np.argmin(sizes))} has no rows")
    for array in (sizes, histogram):
        array.setflags(write=False)
    return PartitionSummary(dataset, recipe, sizes, histogram)


def partition_problem(
    dataset: ImageDataset,
    client_of_row: Any,
    *,
    l2: float = LI_SOFTMAX_L2,
    name: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> FederatedProblem:
    """The softmax problem of Li et al. App. D on ``dataset`` split by ``client_of_row`` (module docstring)."""
    return from_arrays(dataset.features(), dataset.labels, client_of_row, loss="softmax", l2=l2,
                       n_classes=dataset.n_classes, name=name or f"{dataset.name} {dataset.split} softmax",
                       data_dir=data_dir)
