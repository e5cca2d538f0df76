"""Plain-NumPy reference path of the block-cyclic algorithms on a CNN (``problems.BlockCyclicImageProblem``).

The trajectory of ``network_kernel.block_cyclic_network_kernel`` (whose docstring states the
algorithms, the precision and the streams) from the same seed: the same participants
(``_rng.participants_np``), the same minibatch rows (``chain_rows_np``: the kernels' counter-based
streams, the x chain under the seed key, MC's y chain under its salted key), the same step sizes,
with the network's loss and gradient from the NumPy twin of the model oracle
(``problems.models.cnn.reference.loss_grad_np``, im2col) instead of the kernel's direct loops. The
arithmetic of the algorithm is the kernel's: each step computed in float64 and stored in the
problem's dtype, averages accumulated in float64 in participant order, predictors in float64. So
the two paths agree to the network's rounding (<= 1e-10 relative in float64,
``tests/test_cnn_block_cyclic.py``). A CNN run keeps no per-step trace.
"""

from __future__ import annotations

import numpy as np

from problems import BlockCyclicImageProblem
from problems.models.cnn.reference import loss_grad_np

from ..._rng import GOLDEN, mix64_np, participants_np
from ..local_steps import DIVERGENCE_FACTOR
from .kernel import MODE_MC, PREDICTOR_EXPONENTIAL, Plan, SeedRecords
from .network_kernel import SEPARATE_CHAIN_SALT

__all__ = ["block_cyclic_network_reference", "chain_rows_np", "chain_keys_np"]

_HIGH = np.uint64(32)


def chain_keys_np(seed: int) -> tuple[np.uint64, np.uint64]:
    """(key of the x chain's minibatches, key of the y chain's) of ``seed``: seed_key(seed) =
    mix64(seed + G) and mix64(seed_key ^ SEPARATE_CHAIN_SALT), as the kernel's."""
    with np.errstate(over="ignore"):
        key = mix64_np(np.uint64(seed) + GOLDEN)
        return key, mix64_np(key ^ SEPARATE_CHAIN_SALT)


def chain_rows_np(key: np.uint64, t: int, sizes: np.ndarray, batch: int) -> np.ndarray:
    """The kernels' minibatch rows at step t under ``key``, shape (N, batch), local to each client:
    row j of client i is sample_index(stream_key(key, t, i, N), j, n_i) (``_rng``); under the seed
    key these are ``_rng.sample_indices_np``'s."""
    sizes = np.asarray(sizes, dtype=np.uint64)
    with np.errstate(over="ignore"):
        ids = np.arange(sizes.size, dtype=np.uint64)
        streams = mix64_np(key + GOLDEN * (np.uint64(t) * np.uint64(sizes.size) + ids + np.uint64(1)))
        h = mix64_np(streams[:, None] + GOLDEN * np.arange(1, batch + 1, dtype=np.uint64)[None, :])
    return (((h >> _HIGH) * sizes[:, None]) >> _HIGH).astype(np.int64)


def block_cyclic_network_reference(problem: BlockCyclicImageProblem, plan: Plan, seed: int,
                                   w0: np.ndarray) -> SeedRecords:
    """Run one seed from w0 (d,) of the problem's dtype; the kernel's records (``SeedRecords``)."""
    c, M, N, K = problem.combined, problem.n_blocks, problem.n_clients, plan.participants
    layout, sizes = c.network.layout, problem.block_sizes()
    I, E, b, d, mc = plan.local_steps, plan.rounds_per_block, plan.batch, c.dim, plan.mode == MODE_MC
    key_x, key_y = chain_keys_np(seed)
    steps = np.arange(plan.rounds * I)
    eta_x, eta_y = plan.gamma.at(steps, I), plan.eta.at(steps, I)
    record = list(plan.record_rounds)
    P = len(record)
    rec_global, rec_pred = np.zeros((P, d)), np.zeros((P, M, d))
    rec_sep, rec_sel = np.zeros((P if mc else 0, M, d)), np.zeros((P if mc else 0, M), dtype=np.int64)
    rec_track = np.zeros((P if plan.track else 0, 4))
    anchor = w0.astype(np.float64)
    xbar, wbar = w0.copy(), np.repeat(w0[None], M, axis=0)
    pred = np.repeat(anchor[None], M, axis=0)
    count, sel = np.zeros(M, dtype=np.int64), np.zeros(M, dtype=np.int64)
    grad_sum, max_mean_drift, max_drift, max_norm = 0.0, 0.0, 0.0, float(np.sum(anchor**2))

    def rows(m: int, i: int, chosen: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        images, labels = c.client_data(m * N + i)
        return (images, labels) if chosen is None else (images[chosen], labels[chosen])

    def step(W: np.ndarray, m: int, i: int, chosen: np.ndarray | None, eta: float) -> None:
        with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
            _, grad = loss_grad_np(layout, W, *rows(m, i, chosen))
            W[:] = W.astype(np.float64) - eta * grad.astype(np.float64)

    def mean(local: np.ndarray) -> np.ndarray:
        acc = np.zeros(d)
        for model in local:
            acc += (1.0 / K) * model.astype(np.float64)
        return acc

    def participant_loss(m: int, part: np.ndarray, W: np.ndarray) -> float:
        return sum(loss_grad_np(layout, W, *rows(m, i, None))[0] for i in part) / K

    def save(ri: int) -> None:
        rec_global[ri], rec_pred[ri] = xbar, pred
        if mc:
            rec_sep[ri], rec_sel[ri] = wbar, sel
        if plan.track:
            rec_track[ri] = grad_sum, max_mean_drift, max_drift, max_norm

    if record and record[0] == 0:
        save(0)
    for r in range(plan.rounds):
        m = (r // E) % M
        part = np.arange(N) if K == N else participants_np(seed, r, N, K)
        xs = np.repeat(xbar[None], K, axis=0)
        ys = np.repeat(wbar[m][None], K, axis=0) if mc else None
        avg = xbar.copy()
        for e in range(I):
            t = r * I + e
            chosen_x = None if b == 0 else chain_rows_np(key_x, t, sizes[m], b)
            chosen_y = None if b == 0 or not mc else chain_rows_np(key_y, t, sizes[m], b)
            if plan.track:
                block_grad = np.zeros(d)
                for i in range(N):
                    block_grad += loss_grad_np(layout, avg, *rows(m, i, None))[1].astype(np.float64) / N
                grad_sum += float(np.sum(block_grad**2))
            for p, i in enumerate(part):
                step(xs[p], m, i, None if chosen_x is None else chosen_x[i], eta_x[t])
                if mc:
                    step(ys[p], m, i, None if chosen_y is None else chosen_y[i], eta_y[t])
            if plan.track:
                average = mean(xs)
                drift = np.sum((xs.astype(np.float64) - average) ** 2, axis=1)
                max_mean_drift = max(max_mean_drift, float(drift.mean()))
                max_drift = max(max_drift, float(drift.max()))
                max_norm = max(max_norm, float(np.max(np.sum(xs.astype(np.float64) ** 2, axis=1))))
                if mc:
                    max_norm = max(max_norm, float(np.max(np.sum(ys.astype(np.float64) ** 2, axis=1))))
                avg[:] = average
        xbar[:] = mean(xs)
        with np.errstate(all="ignore"):
            if not float(np.sum((xbar.astype(np.float64) - anchor) ** 2)) <= DIVERGENCE_FACTOR:
                return SeedRecords(rec_global, rec_pred, rec_sep, rec_sel, rec_track, r)
        u = xbar
        if mc:
            ybar = mean(ys).astype(w0.dtype)
            with np.errstate(all="ignore"):
                if not float(np.sum((ybar.astype(np.float64) - anchor) ** 2)) <= DIVERGENCE_FACTOR:
                    return SeedRecords(rec_global, rec_pred, rec_sep, rec_sel, rec_track, r)
            wbar[m] = ybar
            if participant_loss(m, part, ybar) < participant_loss(m, part, xbar):
                u = ybar
                sel[m] += 1
        n_m = count[m]
        if plan.predictor == PREDICTOR_EXPONENTIAL and n_m > 0:
            pred[m] = 0.5 * (pred[m] + u.astype(np.float64))
        else:
            pred[m] = (n_m / (n_m + 1.0)) * pred[m] + (1.0 / (n_m + 1.0)) * u.astype(np.float64)
        count[m] += 1
        if r + 1 in record:
            save(record.index(r + 1))
    return SeedRecords(rec_global, rec_pred, rec_sep, rec_sel, rec_track, -1)
