"""The model oracle on the Numba side: the loss of a margin, dispatched on the loss's tag.

The kernels (``convergence.algorithms.local_sgd``, ``convergence.algorithms.block_cyclic.linear_pieces``) compute margins Z = X_S W
and the outer products themselves (the linear layout, with support restriction and Gram
matrices), and ask the model only for the loss: ``margin_residuals`` (Z <- wt * dl/dz in place)
and ``margin_loss_sum``. A linear model's ``kernel_loss()`` is a NamedTuple tag of scalars, and
each loss module registers its implementation of both functions with ``register_loss`` (through
``numba.extending.overload``); Numba resolves them at compile time by the tag's type, so a new
loss touches no kernel and the compiled kernels stay cached across processes (numba cannot cache
a kernel that takes a jitted function as an argument; an overload it can).

Why not a whole-gradient oracle over a NamedTuple of the packed arrays: measured on W1 (Li's
counterexample, 5 x 5 Gram steps), every array read out of such a tuple inside the step loop
costs an NRT reference-count increment and decrement (the pruner does not remove them across the
branch), 8x the step's arithmetic (0.45 us against 0.06 us per step). Tags hold scalars only.
"""

from __future__ import annotations

from collections.abc import Callable

from numba.core import types
from numba.extending import overload

__all__ = ["margin_residuals", "margin_loss_sum", "register_loss"]


def margin_residuals(loss, Z, targets, sample_base, idx, n_used, wt):
    """Z[b] <- wt * dl/dz(Z[b], targets[sample_base + idx[b]]) for b < n_used, in place; Numba only."""
    raise TypeError("margin_residuals is called from Numba kernels only")


def margin_loss_sum(loss, Z, targets, sample_base, n):
    """sum_{b < n} l(Z[b], targets[sample_base + b]); Numba only."""
    raise TypeError("margin_loss_sum is called from Numba kernels only")


def register_loss(tag: type, residuals: Callable, loss_sum: Callable) -> None:
    """Register a loss's Numba implementations for its NamedTuple ``tag`` type: ``residuals`` has
    the signature of ``margin_residuals`` and ``loss_sum`` that of ``margin_loss_sum``; both are
    plain Python functions that Numba compiles (and caches) for the kernels calling them. ``residuals``
    runs once per local step and is compiled without Numba's reference counting (``_nrt=False``, as
    ``local_steps.data_gradient``): it must not allocate (Numba refuses to compile an allocation
    there), and the views it makes of its caller's arrays count no references."""

    def applies(loss) -> bool:
        return isinstance(loss, types.BaseNamedTuple) and loss.instance_class is tag

    @overload(margin_residuals, jit_options={"cache": True, "_nrt": False})
    def _residuals(loss, Z, targets, sample_base, idx, n_used, wt):
        return residuals if applies(loss) else None

    @overload(margin_loss_sum, jit_options={"cache": True})
    def _loss_sum(loss, Z, targets, sample_base, n):
        return loss_sum if applies(loss) else None
