"""Block-cyclic federated data: the data model of Ding et al. (2020), Sec. 2, and its generators.

Source: Y. Ding et al., "Distributed Optimization over Block-Cyclic Data", arXiv 2002.07454
(``shared/papers/ding2020_block_cyclic.md``). Training runs for C cycles of M blocks; in block m,
client i (of N) draws its data from D_m^i (eq. 4-5). With f the per-sample loss,

    F_m^i(x) = (1/n_mi) sum_{rows of client i in block m} f(x; row) + (mu/2) ||x||^2,
    F_m(x)   = (1/N) sum_i F_m^i(x),        F(x) = (1/M) sum_m F_m(x)      (eq. 3, 6),

x* = argmin F and x_m* = argmin F_m. The client weights are uniform, as in eq. 3 and 6: the
paper folds unbalanced sizes into F^i = p_i N F~^i, but its algorithms average client models
with weight 1/N and every client takes the same number of steps on its own rows, which is
SGD on exactly this mean of per-client means (so a client's row count changes its variance,
not its weight).

Representation. ``BlockCyclicProblem.combined`` is a ``FederatedProblem`` with M*N pseudo-clients,
pseudo-client m*N + i holding the rows of (block m, client i), every weight 1/(M N). Its F is
(1/(MN)) sum_{m,i} F_m^i = (1/M) sum_m F_m, so ``exact_optimum(combined)`` gives x* and F(x*).
``block(m)`` is block m alone (N clients, weights 1/N: F_m, x_m*), ``shuffled(seed)`` the same rows
pooled and dealt to N clients at random, the non-cyclic baseline of Sec. 5 ("FedAvg with
shuffled data").

Generators (each seeded; the first two are registered problem families, see ``registry``; the
third is in ``label_blocks``):

* ``block_cyclic_quadratic``: least squares with ground truths theta_m = theta_0 + block_spread z_m
  per block and theta_mi = theta_m + client_spread z_mi per client;
* ``block_cyclic_softmax``: l2 softmax regression (logistic for 2 classes) with the same two knobs;
* ``label_block_partition``: label-based blocks of a classification data set with unbalanced
  client sizes, as in Sec. 5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import FederatedProblem, LossKind, ProblemError
from .block_layout import BlockLayout
from .spec import FamilySpec, ProblemSpec
from .validation import check_int, check_problem_size, check_real

__all__ = ["BlockCyclicProblem", "block_cyclic_quadratic", "block_cyclic_softmax"]


@dataclass(frozen=True, eq=False)
class BlockCyclicProblem(BlockLayout):
    """M blocks of N clients' data (module docstring); pseudo-client m*N + i = (block m, client i).

    Shapes: ``combined`` has M*N pseudo-clients with weights 1/(M N); its dimension d is that of
    every F_m^i. The generators give every F_m^i a zero constant; a problem wrapped as one block
    (e.g. for parallel restarted SGD) keeps its constants c_k, which shift values, not gradients.
    ``spec`` rebuilds the problem (``registry.build_block_cyclic``); None when nothing can (a
    problem assembled directly, or from a user's arrays by ``label_block_partition``).
    """

    combined: FederatedProblem
    n_blocks: int
    n_clients: int
    spec: ProblemSpec | None = None

    def __post_init__(self) -> None:
        self._check_layout(FederatedProblem, "combined: expected a FederatedProblem")

    @classmethod
    def from_parts(
        cls,
        name: str,
        loss: LossKind,
        parts: list[tuple[np.ndarray, np.ndarray]],
        n_blocks: int,
        n_clients: int,
        mu: float,
        n_classes: int,
        spec: FamilySpec | None,
        notes: str,
    ) -> BlockCyclicProblem:
        """The BlockCyclicProblem whose pseudo-client m*N + i has rows ``parts[m*N + i]`` = (X, y)."""
        sizes = np.array([X.shape[0] for X, _ in parts])
        combined = FederatedProblem(
            name=name,
            loss=loss,
            X=np.vstack([X for X, _ in parts]),
            y=np.concatenate([y for _, y in parts]).astype(np.float64),
            offsets=np.concatenate(([0], np.cumsum(sizes))),
            weights=np.full(len(parts), 1.0 / len(parts)),
            mu=mu,
            n_classes=n_classes,
            spec=spec,
            notes=notes,
        )
        return cls(combined, n_blocks, n_clients, spec)

    def block(self, m: int) -> FederatedProblem:
        """Block m as a problem of N clients with weights 1/N; its F is F_m and its optimum x_m*.

        Its spec ``{"view": "block", "block": m, "of": spec}`` rebuilds it when ``spec`` is not None.
        """
        m = check_int("m", m, minimum=0)
        if m >= self.n_blocks:
            raise ProblemError(f"m: block index must be < n_blocks = {self.n_blocks}, got {m}")
        c, N = self.combined, self.n_clients
        lo, hi = c.offsets[m * N], c.offsets[(m + 1) * N]
        return FederatedProblem(
            name=f"{c.name} [block {m}]",
            loss=c.loss,
            X=c.X[lo:hi],
            y=c.y[lo:hi],
            offsets=c.offsets[m * N : (m + 1) * N + 1] - lo,
            weights=np.full(N, 1.0 / N),
            mu=c.mu,
            n_classes=c.n_classes,
            constants=c.constants[m * N : (m + 1) * N],
            spec=self._view("block", block=m),
            notes=f"Block {m} of a block-cyclic problem (Ding et al. 2020, eq. 6: F_m = (1/N) sum_i F_m^i).",
        )

    def nested(self, n_clients: int, n_blocks: int) -> "BlockCyclicProblem":
        """The sub-instance of the first ``n_clients`` clients of each of the first ``n_blocks`` blocks.

        Pseudo-client m*N' + i of the view (m < M' = n_blocks, i < N' = n_clients) holds exactly
        the rows, constant and loss of pseudo-client m*N + i of this problem, with weight
        1/(M' N') (eq. 3, 6). So a sweep over N' (or M') on views of one problem compares
        instances that share their data: every row of a smaller view is a row of every larger
        one (same clients, same blocks, same samples), which pairs the comparison; only the
        averages F_m = (1/N') sum_{i < N'} F_m^i and F = (1/M') sum_{m < M'} F_m change, as they
        must. ``nested(N, M)`` is the problem itself (same data; its spec says it is a view).
        Shapes: combined X (sum of the kept n_mi, d), d unchanged.

        Its spec ``{"view": "nested", "n_clients": N', "n_blocks": M', "of": spec}`` rebuilds it
        (``registry.build_block_cyclic``) when ``spec`` is not None.
        """
        N_sub = check_int("n_clients", n_clients, minimum=1)
        M_sub = check_int("n_blocks", n_blocks, minimum=1)
        if N_sub > self.n_clients:
            raise ProblemError(f"n_clients: a nested view keeps at most the {self.n_clients} clients, got {N_sub}")
        if M_sub > self.n_blocks:
            raise ProblemError(f"n_blocks: a nested view keeps at most the {self.n_blocks} blocks, got {M_sub}")
        c, N = self.combined, self.n_clients
        kept = (np.arange(M_sub)[:, None] * N + np.arange(N_sub)[None, :]).reshape(-1)  # pseudo-clients, m-major
        rows = np.concatenate([np.arange(c.offsets[k], c.offsets[k + 1]) for k in kept])
        sizes = c.client_sizes[kept]
        spec = self._view("nested", n_clients=N_sub, n_blocks=M_sub)
        combined = FederatedProblem(
            name=f"{c.name} [first {N_sub} clients of the first {M_sub} blocks]",
            loss=c.loss,
            X=c.X[rows],
            y=c.y[rows],
            offsets=np.concatenate(([0], np.cumsum(sizes))),
            weights=np.full(kept.size, 1.0 / kept.size),
            mu=c.mu,
            n_classes=c.n_classes,
            constants=c.constants[kept],
            spec=spec,
            notes="Nested sub-instance of a block-cyclic problem: a subset of its clients and blocks, same rows.",
        )
        return BlockCyclicProblem(combined, M_sub, N_sub, spec)

    def shuffled(self, seed: int) -> FederatedProblem:
        """All rows pooled, permuted by ``default_rng(seed)`` and dealt to N clients in contiguous chunks.

        Chunk sizes differ by at most one (the first n mod N clients get one row more); weights
        p_k = n_k / n, so F is the mean loss over all rows + (mu/2)||w||^2 (Sec. 5's "shuffled data"
        baseline), plus the mean of the pseudo-clients' constants (0 for the generators). It equals
        the block-cyclic F when every (block, client) has the same number of rows, and weights rows
        differently otherwise. Its spec ``{"view": "shuffled", "shuffle_seed": seed, "of": spec}``
        rebuilds it when ``spec`` is not None.
        """
        c, N = self.combined, self.n_clients
        n = c.X.shape[0]
        seed, order, sizes = self._shuffled_deal(n, seed)
        if n < N:
            raise ProblemError(f"n_clients: cannot deal {n} rows to {N} clients")
        return FederatedProblem(
            name=f"{c.name} [shuffled, seed {seed}]",
            loss=c.loss,
            X=c.X[order],
            y=c.y[order],
            offsets=np.concatenate(([0], np.cumsum(sizes))),
            weights=sizes / n,
            mu=c.mu,
            n_classes=c.n_classes,
            constants=np.full(N, c.constants.mean()),
            spec=self._view("shuffled", shuffle_seed=seed),
            notes="Non-cyclic baseline of Ding et al. 2020, Sec. 5: the rows pooled and dealt at random.",
        )


def _ground_truths(
    rng: np.random.Generator, shape: tuple[int, ...], M: int, N: int, block_spread: float, client_spread: float
) -> np.ndarray:
    """theta_mi = theta_0 + block_spread z_m + client_spread z_mi, shape (M, N, *shape).

    theta_0, z_m, z_mi have i.i.d. N(0, 1/shape[0]) entries (each column has norm about 1), drawn
    in this order: theta_0, then z_m for m = 0..M-1, then z_mi for m, i in row-major order.
    """
    scale = 1.0 / np.sqrt(shape[0])
    theta0 = scale * rng.standard_normal(shape)
    z_block = scale * rng.standard_normal((M, *shape))
    z_client = scale * rng.standard_normal((M, N, *shape))
    return theta0 + block_spread * z_block[:, None] + client_spread * z_client


def block_cyclic_quadratic(
    n_clients: int = 10,
    n_blocks: int = 5,
    dim: int = 10,
    samples_per_client: int = 20,
    block_spread: float = 1.0,
    client_spread: float = 0.5,
    mu: float = 0.1,
    noise: float = 0.1,
    seed: int = 0,
    identical_blocks: bool = False,
) -> BlockCyclicProblem:
    """Least-squares block-cyclic data with ground truths that separate block and client bias.

    From ``default_rng(seed)``: theta_mi = theta_0 + block_spread z_m + client_spread z_mi in R^dim
    (``_ground_truths``), then for every (m, i) in row-major order rows x ~ N(0, I_dim) and targets
    y = x'theta_mi + noise * eps, eps ~ N(0, 1), samples_per_client of them. F_m^i(w) =
    (1/(2 n)) ||X_mi w - y_mi||^2 + (mu/2) ||w||^2. With mu = 0, noise = 0 and client_spread = 0
    every F_m^i is minimised at theta_m (when samples_per_client >= dim), so x_m* = theta_m and
    block_spread = 0 gives identical block optima; in general the knobs set the spread of the
    ground truths, and x*, x_m* are computed by ``exact_optimum``.

    ``identical_blocks=True`` gives every block exactly the rows of block 0 (drawn as above for
    m = 0 only, the ground truths still drawn for every m so theta_0 is the same): D_m^i = D_1^i,
    hence F_m^i = F_1^i, F_m = F for every m and x_m* = x*. Then (1/M) sum_m F_m* - F* = 0 and Ding
    et al.'s mini-max gap (1/M) sum_m F_m(x~_m) - F(x*) >= 0 equals the mean per-block gap, so
    their Theorem 1 bound is not met trivially. (``block_spread = 0`` is not enough for this: the
    blocks share their ground truths but still draw different rows, so F_m differ.)
    Shapes: combined X (M N samples_per_client, dim), d = dim.
    """
    N = check_int("n_clients", n_clients, minimum=1)
    M = check_int("n_blocks", n_blocks, minimum=1)
    d = check_int("dim", dim, minimum=1)
    n = check_int("samples_per_client", samples_per_client, minimum=1)
    block_spread = check_real("block_spread", block_spread, minimum=0.0)
    client_spread = check_real("client_spread", client_spread, minimum=0.0)
    mu = check_real("mu", mu, minimum=0.0)
    noise = check_real("noise", noise, minimum=0.0)
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(identical_blocks, (bool, np.bool_)):
        raise ProblemError(f"identical_blocks: expected True or False, got {identical_blocks!r}")
    identical_blocks = bool(identical_blocks)
    check_problem_size("n_clients, n_blocks, dim, samples_per_client", M * N * n, d, d)

    rng = np.random.default_rng(seed)
    theta = _ground_truths(rng, (d,), M, N, block_spread, client_spread)
    parts = []
    for m in range(1 if identical_blocks else M):
        for i in range(N):
            X = rng.standard_normal((n, d))
            parts.append((X, X @ theta[m, i] + noise * rng.standard_normal(n)))
    parts = parts * M if identical_blocks else parts
    params = {
        "n_clients": N,
        "n_blocks": M,
        "dim": d,
        "samples_per_client": n,
        "block_spread": block_spread,
        "client_spread": client_spread,
        "mu": mu,
        "noise": noise,
        "seed": seed,
        "identical_blocks": identical_blocks,
    }
    identical = ", identical blocks" if identical_blocks else ""
    return BlockCyclicProblem.from_parts(
        f"block_cyclic_quadratic(N={N}, M={M}, d={d}, block={block_spread:g}, client={client_spread:g}{identical}, "
        f"seed={seed})",
        LossKind.LEAST_SQUARES,
        parts,
        M,
        N,
        mu,
        1,
        FamilySpec("block_cyclic_quadratic", params),
        "Ding et al. 2020 data model (Sec. 2) with least-squares clients.",
    )


def block_cyclic_softmax(
    n_clients: int = 10,
    n_blocks: int = 5,
    n_features: int = 10,
    n_classes: int = 3,
    samples_per_client: int = 20,
    block_spread: float = 1.0,
    client_spread: float = 0.5,
    l2: float = 1e-3,
    seed: int = 0,
) -> BlockCyclicProblem:
    """l2-regularised softmax regression (logistic when n_classes = 2) on block-cyclic data.

    Rows are (x, 1) with x ~ N(0, I_f) (a trailing constant-1 feature carries the bias, as in
    ``synthetic``). Ground truths per (block m, client i), from ``_ground_truths``: a matrix
    Theta_mi in R^{(f+1) x C} (softmax) or a vector theta_mi in R^{f+1} (logistic), and labels are
    drawn from the model itself, y ~ Categorical(softmax(Theta_mi' x)) or y ~ Bernoulli(sigmoid
    (theta_mi' x)), so the data are not separable and every F_m^i has a finite minimiser.
    Draw order from ``default_rng(seed)``: the ground truths, then per (m, i) in row-major order the
    rows and the labels. As in ``synthetic``, l2 weighs ||w||^2 directly: mu = 2 l2.
    Shapes: combined X (M N samples_per_client, f + 1); d = (f + 1) C (softmax) or f + 1 (logistic).
    """
    N = check_int("n_clients", n_clients, minimum=1)
    M = check_int("n_blocks", n_blocks, minimum=1)
    f = check_int("n_features", n_features, minimum=1)
    C = check_int("n_classes", n_classes, minimum=2)
    n = check_int("samples_per_client", samples_per_client, minimum=1)
    block_spread = check_real("block_spread", block_spread, minimum=0.0)
    client_spread = check_real("client_spread", client_spread, minimum=0.0)
    l2 = check_real("l2", l2, minimum=0.0, strict=True)
    seed = check_int("seed", seed, minimum=0)
    check_problem_size("n_clients, n_blocks, n_features, n_classes, samples_per_client", M * N * n, f + 1,
                       (f + 1) * C)

    rng = np.random.default_rng(seed)
    logistic = C == 2
    theta = _ground_truths(rng, (f + 1,) if logistic else (f + 1, C), M, N, block_spread, client_spread)
    parts = []
    for m in range(M):
        for i in range(N):
            X = np.hstack([rng.standard_normal((n, f)), np.ones((n, 1))])
            u = rng.random(n)
            if logistic:
                labels = (u < 1.0 / (1.0 + np.exp(-(X @ theta[m, i])))).astype(np.float64)
            else:
                Z = X @ theta[m, i]
                P = np.exp(Z - Z.max(axis=1, keepdims=True))
                cdf = np.cumsum(P / P.sum(axis=1, keepdims=True), axis=1)
                labels = np.minimum((u[:, None] > cdf).sum(axis=1), C - 1).astype(np.float64)
            parts.append((X, labels))
    params = {
        "n_clients": N,
        "n_blocks": M,
        "n_features": f,
        "n_classes": C,
        "samples_per_client": n,
        "block_spread": block_spread,
        "client_spread": client_spread,
        "l2": l2,
        "seed": seed,
    }
    return BlockCyclicProblem.from_parts(
        f"block_cyclic_softmax(N={N}, M={M}, f={f}, C={C}, block={block_spread:g}, client={client_spread:g}, "
        f"seed={seed})",
        LossKind.LOGISTIC if logistic else LossKind.SOFTMAX,
        parts,
        M,
        N,
        2.0 * l2,
        1 if logistic else C,
        FamilySpec("block_cyclic_softmax", params),
        "Ding et al. 2020 data model (Sec. 2) with softmax / logistic clients; labels drawn from the model.",
    )
