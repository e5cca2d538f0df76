"""An algorithm state written outside the package, run through FedAvg's round loop on a CNN
(``tests/test_cnn_fedavg.py`` runs it in a subprocess).

``Shift`` adds a constant c (d,) to every local step's gradient (``round_state.correct_gradient``)
and counts each client's ends of round (``end_client``) and the server's (``end_round``);
``ShiftNP`` is the same on the NumPy reference path. ``python -m shifted_cnn_state`` prints one
JSON line of the quantities the test checks.

A kernel compiled for ``Shift`` stays out of the package's Numba cache:
``keep_test_types_out_of_the_cache`` makes this process save only signatures made of the package's
types. The package's compiled pieces (the CNN layers, the round pieces) still load from that cache,
and only the loop specialised to ``Shift`` is compiled here. (Saved, such a signature would name this
module's class in the index that every process loads: by value when this runs as ``__main__``, which
cloudpickle serialises whole, but by reference, and so unloadable elsewhere, once imported as a module.)
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
from numba.core import caching
from numba.extending import overload

from convergence import FedAvgConfig, StepSize
from convergence.algorithms.local_models import local_model
from convergence.algorithms.local_sgd import RoundPlan, local_sgd_seed
from convergence.algorithms.local_sgd_reference import local_sgd_reference
from convergence.algorithms.participation import kernel_participation, round_sample
from convergence.algorithms.round_state import correct_gradient, end_client, end_round, is_state
from problems import build_problem, problem_spec
from problems.models import digits_net


def keep_test_types_out_of_the_cache() -> None:
    """Numba's cache saves no signature that holds a type defined in this module (module docstring)."""
    save = caching.Cache.save_overload

    def save_package_types(self, sig, data):
        if not any(getattr(getattr(t, "instance_class", None), "__module__", None) == __name__ for t in sig):
            save(self, sig, data)

    caching.Cache.save_overload = save_package_types


class Shift(NamedTuple):
    """c (d,) float64 added to every gradient; client_ends (N,) and server_ends (1,) int64 counters."""

    c: np.ndarray
    client_ends: np.ndarray
    server_ends: np.ndarray


@overload(correct_gradient)
def _shift_correct_gradient(state, k, lam, G):
    if is_state(state, Shift):
        def impl(state, k, lam, G):
            for q in range(G.size):
                G[q] += state.c[q]
        return impl
    return None


@overload(end_client)
def _shift_end_client(state, k, r, lam, schedule, E, Wk, W):
    if is_state(state, Shift):
        def impl(state, k, r, lam, schedule, E, Wk, W):
            state.client_ends[k] += 1
        return impl
    return None


@overload(end_round)
def _shift_end_round(state, counts, weights, step_scales):
    if is_state(state, Shift):
        def impl(state, counts, weights, step_scales):
            state.server_ends[0] += 1
        return impl
    return None


class ShiftNP:
    """``Shift`` on the NumPy reference path: the correction c for every client, the rounds counted."""

    def __init__(self, c: np.ndarray, n_clients: int) -> None:
        self.c, self.n_clients, self.server_ends = c, n_clients, 0

    def correction(self, scales: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.c, (self.n_clients, self.c.size))

    def end_round(self, round_index, local, W, sample, scales, round_steps) -> None:
        self.server_ends += 1


def shifted(problem, config: FedAvgConfig, seed: int, c: np.ndarray, engine: str):
    """One seed with ``Shift(c)``: ((records, stats, diverged), server ends, client ends or None)."""
    model = local_model(problem)
    w0 = model.start((), seed)
    w_star = w0.astype(np.float64)
    if engine == "numpy":
        state = ShiftNP(c, problem.n_clients)
        out = local_sgd_reference(problem, config, seed, w0, w_star, True, state=state)
        return out, state.server_ends, None
    state = Shift(c, np.zeros(problem.n_clients, dtype=np.int64), np.zeros(1, dtype=np.int64))
    scheme = kernel_participation(config.participation, config.participants, problem)
    out = local_sgd_seed(problem, model.kernel_clients(config.batch_size), scheme, config.step_size.schedule,
                         RoundPlan.of(config, seed), w0, w_star, True, state)
    return out, int(state.server_ends[0]), state.client_ends


def main() -> dict:
    spec = problem_spec("image_classification", n_clients=1, n_train=30, n_test=10, dtype="float64")
    problem = build_problem(spec)
    c = np.linspace(-0.01, 0.02, problem.dim)
    images, labels = problem.client_data(0)
    w0 = problem.initial_model(5)
    _, grad = digits_net().loss_and_gradient(w0, images, labels)
    (records, _, _), one_rounds, one_ends = shifted(problem, FedAvgConfig(1, 1, StepSize.constant(0.3), seeds=(5,)),
                                                    5, c, "numba")

    spec = problem_spec("image_classification", n_clients=4, n_train=200, n_test=40, dtype="float64",
                        recipe="dirichlet", alpha=0.5, min_size=10)
    problem = build_problem(spec)
    config = FedAvgConfig(3, 4, StepSize.constant(0.1), batch_size=4, record_rounds=(0, 1, 2, 3, 4), seeds=(1,),
                          participation="scheme_ii", participants=2)
    c = np.linspace(-0.01, 0.02, problem.dim)
    (kernel, kernel_stats, _), kernel_rounds, ends = shifted(problem, config, 1, c, "numba")
    (reference, reference_stats, _), reference_rounds, _ = shifted(problem, config, 1, c, "numpy")
    sampled = sum((round_sample("scheme_ii", 2, problem.weights, 1, r).counts > 0).astype(int) for r in range(4))
    (plain, _, _), _, _ = shifted(problem, config, 1, np.zeros(problem.dim), "numba")
    return {
        "one_step_exact": bool(np.array_equal(records[-1], w0 - 0.3 * (grad + c))),
        "one_step_ends": [one_rounds, one_ends.tolist()],
        "kernel_vs_reference": float(np.max(np.abs(kernel - reference)) / np.max(np.abs(reference))),
        "stats_vs_reference": float(np.max(np.abs(kernel_stats - reference_stats) / reference_stats)),
        "server_ends": [kernel_rounds, reference_rounds],
        "client_ends": ends.tolist(),
        "sampled_rounds": sampled.tolist(),
        "shift_differs": not np.array_equal(kernel, plain),
    }


if __name__ == "__main__":
    keep_test_types_out_of_the_cache()
    print(json.dumps(main()))
