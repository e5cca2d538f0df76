"""SCAFFOLD's steps in the compiled local-SGD loop (``local_sgd``): the control variates' state
bundle and its implementations of ``round_state``'s three steps, selected by the bundle's type.

Per client k of round r (``config.ScaffoldConfig`` states the algorithm):

* ``correct_gradient``: G <- G + (c - c_k) / lambda_k, so the loop's step
  W_k <- W_k - eta_t lambda_k (G + mu W_k) is y_k <- y_k - eta_t (lambda_k grad h_k(y_k) - c_k + c);
* ``end_client``: c_k+ = c_k - c + (x - y_k) / sum_e eta_{rE+e} (option II) into the round's
  ``updated`` row k (each client writes only its own row, so threads may run clients in parallel);
* ``end_round``: in client order, c <- c + (p_k / lambda_k) (c_k+ - c_k) and c_k <- c_k+ for every
  sampled client (c_k > 0 in the round's multiplicities), once per client.

The correction touches every coordinate, so the loop must see every client on all features in
order (``packing.pack_clients(problem, dense=True)``: full support, no off-support scalar).
Under ``control_variates = "zero"`` (code 0) the state is never updated and the correction adds 0,
so the engine packs the clients as FedAvg does (support-restricted) and the loop computes FedAvg's
trajectory, bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload

from ...schedules import step_size_at
from ..round_state import correct_gradient, end_client, end_round, is_state
from .config import CONTROL_UPDATES

__all__ = ["ScaffoldState"]


class ScaffoldState(NamedTuple):
    """SCAFFOLD's state for one seed (d = n_features C): ``server`` (d,) c, ``controls`` (N, d) the
    c_k, ``updated`` (N, d) the round's new c_k (scratch), ``update`` the ``CONTROL_UPDATES`` code.
    Updated in place by the kernel; after the run ``server`` and ``controls`` are the final c, c_k."""

    server: np.ndarray
    controls: np.ndarray
    updated: np.ndarray
    update: int

    @classmethod
    def zeros(cls, n_clients: int, dim: int, control_variates: str) -> ScaffoldState:
        """Every control variate 0 (Algorithm 1's initialisation), for ``control_variates``."""
        return cls(np.zeros(dim), np.zeros((n_clients, dim)), np.zeros((n_clients, dim)),
                   CONTROL_UPDATES[control_variates])


@overload(correct_gradient)
def _correct_gradient(state, k, lam, G):
    if not is_state(state, ScaffoldState):
        return None

    def impl(state, k, lam, G):
        c, ck = state.server, state.controls[k]
        for q in range(G.size):
            G[q] += (c[q] - ck[q]) / lam
    return impl


@overload(end_client)
def _end_client(state, k, r, lam, schedule, E, Wk, W):
    if not is_state(state, ScaffoldState):
        return None

    def impl(state, k, r, lam, schedule, E, Wk, W):
        if state.update == 0:
            return
        steps = 0.0
        for e in range(E):
            steps += step_size_at(schedule.code, schedule.a, schedule.b, r * E + e, E)
        c, ck, new = state.server, state.controls[k], state.updated[k]
        for q in range(new.size):
            new[q] = ck[q] - c[q] + (np.float64(W[q]) - np.float64(Wk[q])) / steps
    return impl


@overload(end_round)
def _end_round(state, counts, weights, step_scales):
    if not is_state(state, ScaffoldState):
        return None

    def impl(state, counts, weights, step_scales):
        if state.update == 0:
            return
        c, controls, updated = state.server, state.controls, state.updated
        for k in range(counts.size):
            if counts[k] == 0:
                continue
            share = weights[k] / step_scales[k]
            for q in range(c.size):
                c[q] += share * (updated[k, q] - controls[k, q])
                controls[k, q] = updated[k, q]
    return impl
