"""The model-specific pieces of the block-cyclic round loop (``kernel.block_cyclic_kernel``), as
stubs that Numba resolves at compile time by the TYPE of the data bundle.

The loop (Ding et al., arXiv 2002.07454, Algorithms 1-2; ``kernel``'s docstring states it) is one
for every model; what a model adds is a client's local steps, the gradient norm a tracked run sums,
the average local loss MC-PSGD's selection compares, the minibatch stream of MC's y chain, and the
order of an untracked round's steps.
Each stub below names one of these; its implementations are ``numba.extending.overload``s that
return an implementation for their own bundle type and None for another:

* ``linear_pieces``: ``BlockCyclicData`` (a linear model's rows, targets and Gram matrices), with
  ``model`` the loss's kernel tag (``LinearModel.kernel_loss()``);
* ``network_pieces``: ``NetworkCyclicData`` (a CNN's images, labels and network workspace), with
  ``model`` the network's layout table (``NetworkLayout.table``).

Why stubs and overloads rather than jitted functions passed to the loop: a Numba kernel cached on
disk (``cache=True``) that takes a jitted function as an argument, or closes over one, is compiled
again in every process; an overload is resolved from the argument types and cached with the loop.
Numba's cache only tracks the source file of the cached function (``kernel.py``): after editing an
implementation, delete the stale caches (``*.nbi``, ``*.nbc``).

Shared arguments: ``model`` and ``data`` as above; ``work`` the model's scratch arrays
(``workspace``); ``m`` the block, ``i`` the client (pseudo-client k = m N + i holds client i's
block-m rows, offsets[k]:offsets[k+1]); models W of d parameters in the run's dtype (w0's).
"""

from __future__ import annotations

from numba import types

__all__ = ["block_grad_sq", "client_major", "client_steps", "is_bundle", "participant_loss", "workspace"]


def is_bundle(data: types.Type, bundle: type) -> bool:
    """Whether the Numba type ``data`` is that of a NamedTuple of class ``bundle``: the test with which
    each implementation claims its model's bundles (and returns None for another's)."""
    return isinstance(data, types.BaseNamedTuple) and data.instance_class is bundle


def workspace(model, data, batch, d):
    """The model's scratch arrays for minibatches of ``batch`` rows (0: exact gradients, whole
    clients) and d parameters, allocated once per seed: a tuple the other pieces take as ``work``."""


def client_major(data):
    """Whether an untracked round runs client by client (each participant's I steps of a chain in
    one go) rather than step by step; a compile-time constant of the model, chosen by speed (W3-like
    linear MC-PSGD, 100 clients: step by step ~7% slower; a CNN MC-PSGD seed: client by client ~4%
    slower). The numbers are the same either way."""


def client_steps(model, data, work, batch, key, chain, m, i, t0, steps, schedule, period, W):
    """``steps`` local SGD steps of client i of block m in place on W, from global step t0:
    W <- W - eta_t (g_i(W) + mu W), eta_t = step_size_at(schedule, t, period) (``schedules``),
    computed in float64 and stored in W's dtype; g_i the data gradient of F_m^i over the client's
    rows (batch = 0) or ``batch`` rows drawn with replacement from the counter-based stream of
    (key, t, i, N) (``_rng``). ``chain`` 0 (the block-mixed x chain) draws the stream's slots
    0..b-1; ``chain`` 1 (MC's block-separate y chain) draws rows independent of the x chain's, in
    the model's own way (a linear model: slots b..2b-1; a CNN: the stream under a salted key)."""


def block_grad_sq(model, data, work, m, W):
    """||grad F_m(W)||^2 in float64, F_m = (1/N) sum_i F_m^i over all N clients' block-m rows
    (with the l2 term of a linear model): the tracked gradient norm."""


def participant_loss(model, data, work, m, part, K, W):
    """(1/K) sum_{p < K} F_m^{part[p]}(W): the average local loss over each participant's whole
    block-m rows (MC-PSGD's selection, Algorithm 2 lines 9-10)."""
