"""An algorithm's own state in the one local-SGD round loop (``local_sgd``, ``local_sgd_reference``):
what a client adds to its local steps and what the server does after averaging, beyond FedAvg.

The round loop is FedAvg's (Li et al., ICLR 2020, Sec. 2): the round's clients k start from the
global model W, take E steps on their local objective and the server combines their models. An
algorithm that keeps more state between rounds (SCAFFOLD's control variates; a momentum buffer)
plugs three steps into that loop, without changing it:

* ``correct_gradient(state, k, lam, G)``: after client k's data gradient G (its support's m C
  entries; lam = lambda_k, the client's step scale) is computed, add the algorithm's correction to
  it, so that the step is W_k <- W_k - eta_t lam (G + mu W_k + ...) with the corrected G;
* ``end_client(state, k, r, lam, schedule, E, W_k, W)``: after client k's E steps of round r, from
  its local model W_k and the round's global model W (the schedule gives the steps it took);
* ``end_round(state, counts, weights, step_scales)``: after the server's aggregation, with the
  round's multiplicities c_k (c_k > 0: sampled), the client weights p_k and the step scales.

In the Numba kernel the three are stub functions resolved at compile time by the type of the
state bundle (``numba.extending.overload``): an algorithm registers its implementations for its own
named-tuple class in its own folder (``scaffold.kernel``), and the loop is compiled (and cached)
once per state type. ``Stateless`` (FedAvg, FedProx) resolves to no operation: its compiled loop
is the loop without the calls, so its arithmetic is unchanged, bit for bit. Dispatch happens on
the type, so a cached kernel for one algorithm never runs another's steps; passing jitted
functions as arguments would do the same but defeats Numba's cache.

The NumPy reference takes the same three steps as methods of a ``RoundStateNP`` object
(``STATELESS_NP`` for FedAvg and FedProx), vectorised over clients.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
from numba import types
from numba.extending import overload

from .participation import RoundSample

__all__ = ["STATELESS", "STATELESS_NP", "RoundStateNP", "Stateless", "correct_gradient", "end_client", "end_round",
           "is_state"]


class Stateless(NamedTuple):
    """The state of an algorithm that keeps none between rounds (FedAvg, FedProx): no field is read."""

    unused: int


STATELESS = Stateless(0)


def is_state(state: types.Type, cls: type) -> bool:
    """Whether the Numba type ``state`` is the named tuple class ``cls`` (an overload's guard)."""
    return isinstance(state, types.BaseNamedTuple) and state.instance_class is cls


def correct_gradient(state, k, lam, G):  # noqa: ARG001 -- its implementations are the overloads below
    """Add the algorithm's correction to client k's data gradient G (m C,) in place (module docstring)."""
    raise TypeError("correct_gradient runs compiled only: an overload for the state's type implements it")


def end_client(state, k, r, lam, schedule, E, Wk, W):  # noqa: ARG001
    """Client k's state update after its E steps of round r (module docstring)."""
    raise TypeError("end_client runs compiled only: an overload for the state's type implements it")


def end_round(state, counts, weights, step_scales):  # noqa: ARG001
    """The server's state update after round r's aggregation (module docstring)."""
    raise TypeError("end_round runs compiled only: an overload for the state's type implements it")


@overload(correct_gradient)
def _stateless_correct_gradient(state, k, lam, G):
    if is_state(state, Stateless):
        return lambda state, k, lam, G: None
    return None


@overload(end_client)
def _stateless_end_client(state, k, r, lam, schedule, E, Wk, W):
    if is_state(state, Stateless):
        return lambda state, k, r, lam, schedule, E, Wk, W: None
    return None


@overload(end_round)
def _stateless_end_round(state, counts, weights, step_scales):
    if is_state(state, Stateless):
        return lambda state, counts, weights, step_scales: None
    return None


class RoundStateNP(Protocol):
    """The three steps on the NumPy reference path, vectorised over the N clients (local models
    ``local`` (N, f, C), the global model ``W`` (f, C), ``scales`` (N, 1, 1) the lambda_k)."""

    def correction(self, scales: np.ndarray) -> np.ndarray | None:
        """The term added to every client's data gradient, (N, f, C), or None for none."""
        ...

    def end_round(self, round_index: int, local: np.ndarray, W: np.ndarray, sample: RoundSample,
                  scales: np.ndarray, round_steps: np.ndarray) -> None:
        """After the aggregation: ``round_steps`` (E,) the round's step sizes eta_t (before lambda_k)."""
        ...


class _StatelessNP:
    """FedAvg's and FedProx's NumPy state: no correction, nothing to update."""

    def correction(self, scales: np.ndarray) -> None:
        return None

    def end_round(self, round_index: int, local: np.ndarray, W: np.ndarray, sample: RoundSample,
                  scales: np.ndarray, round_steps: np.ndarray) -> None:
        return None


STATELESS_NP: RoundStateNP = _StatelessNP()
