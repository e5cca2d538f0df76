"""li_images: the MNIST recipe of Li et al. (ICLR 2020), Appendix D.1 and Table 2, as a problem family.

Source: Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020,
App. D.1: "we distribute the data among N = 100 devices such that each device contains samples of
only two digits ... for unbalanced cases, the number of samples among devices follows a power law,
while for balanced cases, we force all devices to have the same amount of samples"; Table 2:
balanced 54,200 samples (542 per device, std 0), unbalanced 62,864 (628 +- 800 per device);
model l2-regularised softmax regression, lambda = 1e-4.

Recipe (C = 10 classes, N devices, C | N; all randomness from ``numpy.random.default_rng(seed)``):

* **Labels per device.** Device k holds exactly two distinct labels: before relabelling, device k
  has a_k = k mod C and b_k = (a_k + 1 + (floor(k / C) mod (C - 1))) mod C; over every block of C
  consecutive devices a_k runs through all labels once and so does b_k (a rotation by a fixed
  offset in 1..C-1, so b_k != a_k). Each label is thus held by exactly 2N/C devices (20 for N =
  100). A random permutation of the labels and one of the devices then relabel this structure.
* **Rows per (device, label) share.** A label's rows are split among the 2N/C devices holding it.
  Balanced: every share has s = n / (2N) rows, so every device has n / N rows (n must be a
  multiple of 2N and each label needs n / C rows). Unbalanced: device weights w_k ~ Pareto(a) on
  w >= 1 (a = ``power_law_shape``, 2.3 by default: coefficient of variation 1 / sqrt(a (a - 2)) =
  1.24, Table 2's 800 / 628 = 1.27; the same law as ``partitions.powerlaw_partition``); label c
  gets a quota n_c of the n rows in proportion to the total weight W_c of its devices (largest
  remainders, at least one row per share; a label with fewer rows than that is capped at its row
  count and the rest shared again among the others), and its quota is apportioned among its
  devices in proportion to their weights, at least one row each
  (``partitions.largest_remainder_sizes``). Device sizes are then about n w_k / sum_j w_j where no
  cap binds, and sum to n exactly; every device holds exactly two labels. (With n close to the
  number of images, as in Table 2, caps bind and the spread is below the weights'. A sample of 100
  Pareto(2.3) weights is also much less spread than the law: measured on Fashion-MNIST at Table 2's
  62,864 rows, 628.6 +- 370 (seed 0) and +- 329 (seed 1) against the paper's 628 +- 800; on the
  digits 16 +- 8. ``power_law_shape`` below 2.3 spreads them more.)
* **Rows.** Each label's rows are shuffled and cut into its shares in device order.

Data (``dataset``): "mnist", "fashion-mnist" (the same IDX format; classes are clothing types, not
digits) or "digits" (scikit-learn's bundled 8x8 digits, on every machine), read with
``image_data.load_images``; "auto" takes MNIST files when present, else Fashion-MNIST, else the
digits (``resolve_li_dataset``: a claim records the resolved name in its specs, so a run id never
depends on the machine; the problem's name and notes always say which data it used). The train and
test splits are pooled (Table 2's unbalanced count, 62,864, exceeds MNIST's 60,000 training
images, so the paper drew from the 70,000 pooled ones).

What differs from the paper, and why:

* **Pooling.** Rows are the images average-pooled over ``pool`` x ``pool`` windows (default: 4 on
  28x28 images, giving 7x7 = 49 features; 2 on the 8x8 digits, giving 4x4 = 16) plus a constant-1
  column (the bias b of softmax(W x + b)), so d = (features + 1) x 10 = 500 on MNIST (the paper:
  785 x 10 = 7,850) and 170 on the digits. The engine needs the exact optimum, dense Newton solves
  in d for F and every F_k (``problems.exact_optimum``): at d = 7,850 that is not feasible here,
  and on the digits at d = 650 (no pooling) it takes about 5 s of the claim's budget against
  under 1 s at d = 170. ``pool=1`` gives the paper's pixels.
* **Sample counts.** ``n_samples`` (None: the default) is Table 2's count on 28x28 data (54,200
  balanced, 62,864 unbalanced, for N = 100: 542 N and 628.64 N in general, the balanced one
  rounded down to a multiple of 2N), feasible in full with the pooled features. The bundled
  digits (1,797 images, the rarest label 174 rows) cannot hold 542 per device: their default is
  16 per device (1,600 for N = 100; 8 rows per share, 20 shares per label: 160 <= 174 rows per
  label) for both cases, so the digits recipe is the paper's at 1/34 of its size.
* **Objective.** F_k(w) = (1/n_k) sum_{i in device k} CE(w; x_i, y_i) + lambda ||w||^2 with p_k =
  n_k / n, so sum_k p_k F_k is Li's objective; the toolkit's softmax client carries (mu / 2) ||w||^2,
  hence mu = 2 lambda (as ``synthetic``).

Every bad argument raises one ProblemError naming it.
"""

from __future__ import annotations

import numpy as np

from ._base import FederatedProblem, LossKind
from .image_data import ImageDataset, load_images, resolve_image_dataset
from .partitions import largest_remainder_sizes
from .spec import FamilySpec
from .validation import ProblemError, check_int, check_problem_size, check_real

__all__ = ["LI_AUTO_ORDER", "LI_IMAGE_DATASETS", "LI_TABLE2_SAMPLES", "LI_DIGITS_PER_DEVICE", "li_images", "resolve_li_dataset"]

LI_AUTO_ORDER = ("mnist", "fashion-mnist", "digits")
"""The data sets of ``li_images`` in the order "auto" prefers them (the paper's MNIST first)."""
LI_IMAGE_DATASETS = ("auto", *LI_AUTO_ORDER)
"""The ``dataset`` values of ``li_images``; "auto" is the first of the other three found here."""
LI_TABLE2_SAMPLES = {True: 54_200, False: 62_864}
"""Li et al. Table 2: training samples of MNIST balanced (True) and unbalanced (False), N = 100."""
LI_DIGITS_PER_DEVICE = 16
"""Default rows per device on the bundled digits (module docstring: their rarest label has 174 rows)."""
_CLASSES = 10
_DEFAULT_POOL = {(28, 28): 4, (8, 8): 2}  # 28x28 -> 7x7, the digits' 8x8 -> 4x4 (module docstring)


def resolve_li_dataset(dataset: str = "auto", data_dir: str | None = None) -> str:
    """The data set ``li_images`` uses for ``dataset``: itself, or for "auto" the first of MNIST,
    Fashion-MNIST (files found by ``image_data``'s discovery) and the bundled digits
    (``image_data.resolve_image_dataset`` with ``LI_AUTO_ORDER``)."""
    return resolve_image_dataset(dataset, LI_AUTO_ORDER, data_dir)


def li_images(
    dataset: str = "auto",
    balanced: bool = True,
    n_clients: int = 100,
    n_samples: int | None = None,
    pool: int | None = None,
    power_law_shape: float = 2.3,
    l2: float = 1e-4,
    seed: int = 0,
    data_dir: str | None = None,
) -> FederatedProblem:
    """Li et al.'s two-labels-per-device image problem, balanced or power-law unbalanced (module docstring).

    Shapes: X (n, f + 1) with f = (H / pool) (W / pool) pooled pixels in [0, 1] and a trailing
    constant-1 column, y (n,) labels in 0..9, offsets (N + 1,), p_k = n_k / n, mu = 2 l2,
    d = (f + 1) x 10. Rows of a device are its first label's share, then its second's.
    """
    name = resolve_li_dataset(dataset, data_dir)
    if not isinstance(balanced, (bool, np.bool_)):
        raise ProblemError(f"balanced: expected True or False, got {balanced!r}")
    N = check_int("n_clients", n_clients, minimum=2)
    if N % _CLASSES:
        raise ProblemError(f"n_clients: must be a multiple of the {_CLASSES} classes (each label on 2N/C devices), got {N}")
    shape = check_real("power_law_shape", power_law_shape)
    if not shape > 0:
        raise ProblemError(f"power_law_shape: the Pareto shape must be > 0, got {shape!r}")
    l2 = check_real("l2", l2, minimum=0.0)
    seed = check_int("seed", seed, minimum=0)
    train, test = (_load(name, split, data_dir) for split in ("train", "test"))
    side = train.images.shape[1]
    pool_param, pool = pool, _pool_size(pool, train)
    n = _sample_count(n_samples, bool(balanced), N, side)
    features = ((side // pool) ** 2) * train.images.shape[3] + 1
    check_problem_size("n_samples, pool", n, features, features * _CLASSES)
    images = np.concatenate([_pooled(train, pool), _pooled(test, pool)])
    labels = np.concatenate([train.labels, test.labels])

    rng = np.random.default_rng(seed)
    pairs = _label_pairs(N, rng)
    counts = np.bincount(labels, minlength=_CLASSES)
    holders = [np.flatnonzero((pairs == c).any(axis=1)) for c in range(_CLASSES)]  # 2N/C devices each
    per_label = 2 * N // _CLASSES
    if balanced:
        if n % (2 * N):
            raise ProblemError(f"n_samples: balanced devices hold two equal shares, so n must be a multiple of 2N = "
                               f"{2 * N}, got {n}")
        quotas = np.full(_CLASSES, n // _CLASSES)
        weights = np.ones(N)
    else:
        if n < 2 * N:
            raise ProblemError(f"n_samples: every device holds two labels, so n >= 2N = {2 * N}, got {n}")
        if n > counts.sum():
            raise ProblemError(f"n_samples: {name} has {int(counts.sum())} images, fewer than {n}")
        weights = rng.pareto(shape, N) + 1.0  # numpy's pareto is the Lomax law; + 1: Pareto on w >= 1
        demand = np.array([weights[devices].sum() for devices in holders])
        quotas = _capped_quotas(demand, counts, n, per_label)
    short = np.flatnonzero(quotas > counts)
    if short.size:
        c = int(short[0])
        raise ProblemError(f"n_samples: {n} rows need {int(quotas[c])} rows of label {c}, but {name} has "
                           f"{int(counts[c])}; ask for fewer")
    share_rows: dict[tuple[int, int], np.ndarray] = {}
    for c in range(_CLASSES):
        rows = rng.permutation(np.flatnonzero(labels == c))[: quotas[c]]
        shares = largest_remainder_sizes(weights[holders[c]], int(quotas[c]), 1)
        for device, part in zip(holders[c], np.split(rows, np.cumsum(shares)[:-1])):
            share_rows[(int(device), c)] = part
    order = np.concatenate([share_rows[(k, int(c))] for k in range(N) for c in pairs[k]])
    sizes = np.array([sum(share_rows[(k, int(c))].size for c in pairs[k]) for k in range(N)])
    X = np.hstack([images[order], np.ones((order.size, 1))])
    params = {"dataset": dataset, "balanced": bool(balanced), "n_clients": N, "n_samples": n_samples,
              "pool": pool_param, "power_law_shape": shape, "l2": l2, "seed": seed, "data_dir": data_dir}
    kind = "balanced" if balanced else "unbalanced"
    return FederatedProblem(
        name=f"Li {kind} {name} N={N} n={n} seed={seed}",
        loss=LossKind.SOFTMAX,
        X=X,
        y=labels[order].astype(np.float64),
        offsets=np.concatenate(([0], np.cumsum(sizes))),
        weights=sizes / sizes.sum(),
        mu=2.0 * l2,
        n_classes=_CLASSES,
        spec=FamilySpec("li_images", params),
        notes=(f"Li et al., ICLR 2020, App. D.1 / Table 2: {kind} two labels per device, on {train.describe()} "
               f"pooled with its test split, {pool}x{pool} average pooling, {n} rows."),
    )


def _load(name: str, split: str, data_dir: str | None) -> ImageDataset:
    """``load_images(name, split, data_dir)``; its error for missing files names ``dataset``, this family's field."""
    try:
        return load_images(name, split, data_dir)
    except ProblemError as exc:
        text = str(exc)
        raise ProblemError(f"dataset: {text.removeprefix('name: ')}" if text.startswith("name: ") else text) from None


def _capped_quotas(demand: np.ndarray, counts: np.ndarray, n: int, minimum: int) -> np.ndarray:
    """Rows per label (C,) summing to n: in proportion to ``demand`` (C,) (largest remainders, at
    least ``minimum`` each), a label whose share would exceed its row count capped at that count
    and the rest shared again among the others (needs n <= sum(counts), counts >= minimum)."""
    quotas = np.zeros(counts.size, dtype=np.int64)
    free = np.arange(counts.size)
    remaining = n
    while True:
        share = largest_remainder_sizes(demand[free], remaining, minimum)
        over = share > counts[free]
        if not over.any():
            quotas[free] = share
            return quotas
        capped = free[over]
        quotas[capped] = counts[capped]
        remaining -= int(counts[capped].sum())
        free = free[~over]


def _pool_size(pool: int | None, data: ImageDataset) -> int:
    """The pooling window: ``pool``, or the default (4 on 28x28 images, 2 on the 8x8 digits); must divide the sides."""
    height, width = data.images.shape[1:3]
    if pool is None:
        return _DEFAULT_POOL.get((height, width), 1)
    pool = check_int("pool", pool, minimum=1)
    if height % pool or width % pool:
        raise ProblemError(f"pool: a {pool}x{pool} window must divide the {height}x{width} images of {data.name}")
    return pool


def _pooled(data: ImageDataset, pool: int) -> np.ndarray:
    """Images (n, H, W, C) averaged over pool x pool windows, as rows (n, (H/pool) (W/pool) C)."""
    n, height, width, channels = data.images.shape
    blocks = data.images.reshape(n, height // pool, pool, width // pool, pool, channels)
    return blocks.mean(axis=(2, 4)).reshape(n, -1)


def _sample_count(n_samples: int | None, balanced: bool, N: int, side: int) -> int:
    """n: ``n_samples`` or the default of the module docstring (Table 2 on 28x28 data, 16 per device on the digits)."""
    if n_samples is not None:
        return check_int("n_samples", n_samples, minimum=1)
    if side != 28:
        return LI_DIGITS_PER_DEVICE * N
    per_device = LI_TABLE2_SAMPLES[balanced] / 100
    if balanced:
        return int(per_device * N) // (2 * N) * (2 * N)
    return int(round(per_device * N))


def _label_pairs(N: int, rng: np.random.Generator) -> np.ndarray:
    """The two distinct labels of each device (N, 2), each label held by exactly 2N/C devices (module docstring)."""
    k = np.arange(N)
    first = k % _CLASSES
    second = (first + 1 + (k // _CLASSES) % (_CLASSES - 1)) % _CLASSES
    relabel = rng.permutation(_CLASSES)
    pairs = relabel[np.stack([first, second], axis=1)]
    return pairs[rng.permutation(N)]
