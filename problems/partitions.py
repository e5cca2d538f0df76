"""Partition recipes: which client holds each row of a labelled data set.

Every recipe is a pure function of (labels, n_clients, seed, its own parameters) returning
``client_of_row``, an int64 array (n,) of client ids 0..N-1 in which every client holds at least
one row: the input of ``problems.from_arrays``. Randomness comes from one
``numpy.random.default_rng(seed)``, so the same arguments give the same partition on any machine.
``labels`` is an integer array (n,) of classes 0..C-1 (C = max label + 1).

* ``iid_partition``: the control. Rows are shuffled and cut into N near-equal consecutive parts
  (sizes floor(n/N) or ceil(n/N)); every client's label histogram is a sample of the pooled one.
* ``sorted_partition``: label skew with equal sizes (the "sort by label, cut in order" recipe of
  McMahan et al. 2017 with one shard per client): rows sorted by label (the rows of one label in a
  shuffled order) and cut into N near-equal consecutive parts (sizes floor(n/N) or ceil(n/N), equal
  when N divides n), so each client holds one or a few neighbouring labels and, with equal sizes,
  the weights p_k = n_k / n are the 1/N with which parallel restarted SGD averages (Yu, Jin, Yang
  2019, Theorem 3). ``shard_partition`` guarantees k labels per client but not equal sizes.
* ``shard_partition``: Li et al. (ICLR 2020, Sec. 5 and App. D) "each device contains samples of
  only two digits", after McMahan et al. (2017): sort the rows by label, cut them into N k shards,
  give each client k shards. Here the shard boundaries follow the labels so that each client holds
  exactly k distinct labels: label c gets s_c shards (s_c >= 1, s_c <= min(N, n_c), sum_c s_c = N k,
  apportioned to the label counts n_c by the D'Hondt rule: the next shard goes to the label with
  the largest n_c / s_c), its shuffled rows cut into s_c near-equal shards. The N k shards, listed
  label after label in a random order of the labels, are dealt round-robin: slot j takes shards j,
  j + N, ..., j + (k-1) N. Since no label has more than N shards, the k shards of a slot lie in k
  different labels. The slots are then given to the clients in a random order. (The price of the
  guarantee: label sets are structured -- with N k / C shards per label, slots j and j + N k / C
  hold the same labels -- where McMahan et al.'s random shard assignment mixes them but may give a
  client fewer than k labels.) Needs k <= C (each client k distinct labels) and
  sum_c min(N, n_c) >= N k (enough shards), checked.
* ``dirichlet_partition``: label skew (Hsu, Qi, Brown 2019): for each label c, proportions
  q_c ~ Dirichlet(alpha 1_N) split label c's shuffled rows among the clients (counts from the
  rounded cumulative sums of q_c n_c). alpha -> inf gives every client the pooled label mix,
  small alpha concentrates each label on few clients. Minimum size, guaranteed to terminate: the
  usual recipe redraws all proportions until every client has ``min_size`` rows, which for small
  alpha and many clients may take unboundedly many draws. Here the proportions are drawn once and
  then repaired: while some client has fewer than ``min_size`` rows, it takes one row, chosen at
  random, from the currently largest client. Because n >= N min_size (checked), the largest
  client then holds at least min_size + 1 rows ((n - min_size + 1) / (N - 1) > min_size), so it
  stays at or above min_size; each move raises a deficient client by one, so at most N min_size
  moves are made.
* ``powerlaw_partition`` and ``lognormal_partition``: quantity skew with i.i.d. labels. Client
  sizes are n_k = min_size + (n - N min_size) w_k / sum_j w_j, rounded by largest remainders so
  that sum_k n_k = n exactly, with weights w_k i.i.d. Pareto (shape a: density a / w^(a+1) on
  w >= 1; Li et al. App. D: "the number of samples ... follows a power law") or LogNormal(0,
  sigma^2). Li et al.'s Table 2 gives 628 +- 800 samples per device for unbalanced MNIST, a
  coefficient of variation 1.27; a Pareto(a) has 1/sqrt(a (a - 2)) for a > 2, so the default
  a = 2.3 (1.24) matches it, and a log-normal has sqrt(exp(sigma^2) - 1): the default sigma = 1
  gives 1.31. The shuffled rows are then cut into consecutive parts of those sizes.

Every bad argument raises one ProblemError naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .validation import ProblemError, check_array, check_int, check_real

__all__ = [
    "DEFAULT_MIN_SIZE",
    "dirichlet_partition",
    "iid_partition",
    "largest_remainder_sizes",
    "lognormal_partition",
    "powerlaw_partition",
    "shard_partition",
    "sorted_partition",
]

DEFAULT_MIN_SIZE = 10
"""Default minimum rows per client of the Dirichlet and size-skew recipes (NIID-Bench's
``min_require_size``, Li, Diao, Chen, He, ICDE 2022)."""


def iid_partition(labels: Any, n_clients: int, seed: int) -> np.ndarray:
    """The IID control: shuffled rows cut into N near-equal parts (module docstring); (n,) int64."""
    labels, N, rng = _inputs(labels, n_clients, seed)
    n = labels.size
    return _cut(rng.permutation(n), n // N + (np.arange(N) < n % N))


def sorted_partition(labels: Any, n_clients: int, seed: int) -> np.ndarray:
    """Label-sorted rows cut into N near-equal consecutive parts (module docstring); (n,) int64."""
    labels, N, rng = _inputs(labels, n_clients, seed)
    n = labels.size
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(labels[shuffled], kind="stable")]
    return _cut(order, n // N + (np.arange(N) < n % N))


def shard_partition(labels: Any, n_clients: int, seed: int, shards_per_client: int = 2) -> np.ndarray:
    """Pathological k-shards: every client holds exactly k = shards_per_client distinct labels
    (module docstring; Li et al. 2020 App. D use k = 2, N = 100 on MNIST); (n,) int64."""
    labels, N, rng = _inputs(labels, n_clients, seed)
    k = check_int("shards_per_client", shards_per_client, minimum=1)
    counts = np.bincount(labels)
    present = np.flatnonzero(counts)
    if k > present.size:
        raise ProblemError(
            f"shards_per_client: {k} distinct labels per client, but the data has only {present.size} labels"
        )
    if N * k < present.size:
        raise ProblemError(
            f"shards_per_client: {N} clients x {k} shards = {N * k} shards cannot cover the {present.size} labels "
            "(every label needs a shard)"
        )
    caps = np.minimum(N, counts[present])
    if caps.sum() < N * k:
        raise ProblemError(
            f"n_clients: {N} clients x {k} shards = {N * k} shards, but the labels can make at most {int(caps.sum())} "
            f"(no label is cut into more than N shards nor more shards than it has rows)"
        )
    shards_of = _dhondt(counts[present], caps, N * k)
    shards: list[np.ndarray] = []
    for i in rng.permutation(present.size):
        rows = rng.permutation(np.flatnonzero(labels == present[i]))
        shards.extend(np.array_split(rows, shards_of[i]))
    client_of_slot = rng.permutation(N)
    client_of_row = np.empty(labels.size, dtype=np.int64)
    for position, rows in enumerate(shards):
        client_of_row[rows] = client_of_slot[position % N]
    return client_of_row


def dirichlet_partition(
    labels: Any, n_clients: int, seed: int, alpha: float, min_size: int = DEFAULT_MIN_SIZE
) -> np.ndarray:
    """Dirichlet(alpha) label skew with at least ``min_size`` rows per client, by a bounded repair
    (module docstring); (n,) int64."""
    labels, N, rng = _inputs(labels, n_clients, seed)
    alpha = check_real("alpha", alpha)
    if not alpha > 0:
        raise ProblemError(f"alpha: the Dirichlet concentration must be > 0, got {alpha!r}")
    min_size = _min_size(min_size, labels.size, N)
    client_of_row = np.empty(labels.size, dtype=np.int64)
    for label in np.flatnonzero(np.bincount(labels)):
        rows = rng.permutation(np.flatnonzero(labels == label))
        q = rng.dirichlet(np.full(N, alpha))
        bounds = np.round(np.cumsum(q) * rows.size).astype(np.int64)
        bounds[-1] = rows.size
        client_of_row[rows] = np.repeat(np.arange(N), np.diff(np.concatenate(([0], bounds))))
    sizes = np.bincount(client_of_row, minlength=N)
    while sizes.min() < min_size:
        short = int(np.argmin(sizes))
        donor = int(np.argmax(sizes))
        donor_rows = np.flatnonzero(client_of_row == donor)
        client_of_row[donor_rows[rng.integers(donor_rows.size)]] = short
        sizes[short] += 1
        sizes[donor] -= 1
    return client_of_row


def powerlaw_partition(
    labels: Any, n_clients: int, seed: int, shape: float = 2.3, min_size: int = DEFAULT_MIN_SIZE
) -> np.ndarray:
    """Power-law (Pareto(shape)) client sizes, i.i.d. labels (module docstring); (n,) int64."""
    # numpy's pareto is the Lomax law; + 1: Pareto on w >= 1
    return _quantity_skew(labels, n_clients, seed, min_size, ("shape", shape, "the Pareto shape"),
                          lambda rng, a, N: rng.pareto(a, N) + 1.0)


def lognormal_partition(
    labels: Any, n_clients: int, seed: int, sigma: float = 1.0, min_size: int = DEFAULT_MIN_SIZE
) -> np.ndarray:
    """Log-normal(0, sigma^2) client sizes, i.i.d. labels (module docstring); (n,) int64."""
    return _quantity_skew(labels, n_clients, seed, min_size, ("sigma", sigma, "the log-normal spread"),
                          lambda rng, s, N: rng.lognormal(0.0, s, N))


def _quantity_skew(
    labels: Any,
    n_clients: Any,
    seed: Any,
    min_size: Any,
    spread: tuple[str, Any, str],
    draw_weights: Callable[[np.random.Generator, float, int], np.ndarray],
) -> np.ndarray:
    """Quantity skew with i.i.d. labels (module docstring): weights w (N,) = ``draw_weights(rng,
    value, N)`` for the law's one parameter ``spread`` = (name, value > 0, what it is), then sizes
    n_k = min_size + largest-remainder share of the spare rows, and the shuffled rows cut in order."""
    labels, N, rng = _inputs(labels, n_clients, seed)
    name, value, what = spread
    value = check_real(name, value)
    if not value > 0:
        raise ProblemError(f"{name}: {what} must be > 0, got {value!r}")
    min_size = _min_size(min_size, labels.size, N)
    weights = draw_weights(rng, value, N)
    return _cut(rng.permutation(labels.size), largest_remainder_sizes(weights, labels.size, min_size))


def _inputs(labels: Any, n_clients: Any, seed: Any) -> tuple[np.ndarray, int, np.random.Generator]:
    """Checked labels (n,) int64 >= 0, N in [1, n] and the seeded generator."""
    array = check_array("labels", labels, "iu", "integer class labels")
    if array.ndim != 1 or array.size == 0:
        raise ProblemError(f"labels: expected a non-empty 1-d array, got shape {array.shape}")
    if array.min() < 0:
        raise ProblemError(f"labels: class labels are 0..C-1, got {int(array.min())}")
    N = check_int("n_clients", n_clients, minimum=1)
    if N > array.size:
        raise ProblemError(f"n_clients: {N} clients need at least {N} rows, the data has {array.size}")
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    return array.astype(np.int64), N, rng


def _min_size(min_size: Any, n: int, N: int) -> int:
    m = check_int("min_size", min_size, minimum=1)
    if N * m > n:
        raise ProblemError(f"min_size: {N} clients x {m} rows = {N * m} rows needed, the data has {n}")
    return m


def _dhondt(counts: np.ndarray, caps: np.ndarray, total: int) -> np.ndarray:
    """Shards per label: 1 each, then one at a time to the label with the largest count / shards
    among those below their cap, until ``total`` (feasible: sum(caps) >= total, checked by the caller)."""
    shards = np.ones(counts.size, dtype=np.int64)
    for _ in range(total - counts.size):
        quotient = np.where(shards < caps, counts / shards, -math.inf)
        shards[int(np.argmax(quotient))] += 1
    return shards


def largest_remainder_sizes(weights: np.ndarray, n: int, min_size: int) -> np.ndarray:
    """Sizes (N,) int64 summing to ``n``: ``min_size`` each plus the largest-remainder apportionment
    of the n - N min_size spare rows in proportion to ``weights`` (N,) > 0 (the caller checks
    n >= N min_size)."""
    spare = n - weights.size * min_size
    share = weights / weights.sum() * spare
    sizes = np.floor(share).astype(np.int64)
    remainder = spare - int(sizes.sum())
    sizes[np.argsort(-(share - sizes), kind="stable")[:remainder]] += 1
    return sizes + min_size


def _cut(order: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Client ids giving client k the next sizes[k] rows of ``order``."""
    client_of_row = np.empty(order.size, dtype=np.int64)
    client_of_row[order] = np.repeat(np.arange(sizes.size), sizes)
    return client_of_row
