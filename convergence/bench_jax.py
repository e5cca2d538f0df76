"""`fedbound bench`'s JAX peer: FedAvg as one jit-compiled program (optional; JAX is no dependency).

The same trajectory as ``bench_peers.numpy_peer_fedavg`` from the same precomputed inputs
(``bench_peers.PeerInputs``: the kernel's minibatch row indices, step sizes, Gram matrices), in
float64: the E local steps of a round are a ``lax.scan``, each step one ``vmap`` over the clients
of the client gradient, the rounds an outer ``lax.scan``:

    g_k = Xb_k' (softmax(Xb_k W_k) - onehot(y)) / b     (softmax minibatch steps)
    g_k = Q_k W_k - c_k                                 (exact least-squares steps, Gram form)
    W_k <- W_k - eta_t (g_k + mu W_k);   W <- W + s (sum_k p_k W_k - W).

Only these two step kinds are written (bench's W1 and W2); other inputs raise ValueError. When
``jax`` cannot be imported ``jax_peer`` returns None and bench prints a note instead of a time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from problems import FederatedProblem
from problems.models import SoftmaxModel

from .bench_peers import PeerInputs

__all__ = ["jax_peer"]


def jax_peer(problem: FederatedProblem, inputs: PeerInputs) -> Callable[[], np.ndarray] | None:
    """A compiled JAX run of ``inputs`` (calling it returns the global model after every round,
    (rounds, d), and waits for the device), or None when jax is not importable. Compilation
    happens at the first call: time it after a warm-up. Inputs of another step kind raise
    ValueError (checked before jax is imported)."""
    softmax_minibatch = inputs.rows is not None and isinstance(problem.model, SoftmaxModel)
    if not softmax_minibatch and inputs.gram is None:
        raise ValueError(f"model: the JAX peer writes softmax minibatch and exact least-squares steps only, not "
                         f"{type(problem.model).__name__} with batch_size {inputs.config.batch_size}")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    config = inputs.config
    N, f, C = problem.n_clients, problem.n_features, problem.n_classes
    R, E = config.rounds, config.local_steps
    mu, s = problem.mu, config.server_lr
    p = jnp.asarray(problem.weights)
    eta = jnp.asarray(inputs.eta.reshape(R, E))
    if softmax_minibatch:
        X, y = jnp.asarray(problem.X), jnp.asarray(problem.y.astype(np.int64))
        b = inputs.rows.shape[2]
        steps = jnp.asarray(inputs.rows.reshape(R, E, N, b))

        def client_gradient(w, rows):
            Xb = X[rows]
            residual = jax.nn.softmax(Xb @ w, axis=-1) - jax.nn.one_hot(y[rows], C, dtype=w.dtype)
            return Xb.T @ residual / b
    else:
        gram, rhs = jnp.asarray(inputs.gram), jnp.asarray(inputs.gram_rhs)
        steps = jnp.broadcast_to(jnp.arange(N), (R, E, N))

        def client_gradient(w, k):
            return gram[k] @ w - rhs[k]

    def local_step(local, step):
        rows, eta_t = step
        grad = jax.vmap(client_gradient)(local, rows) + mu * local
        return local - eta_t * grad, None

    def one_round(W, round_inputs):
        local, _ = jax.lax.scan(local_step, jnp.broadcast_to(W, (N, f, C)), round_inputs)
        W = W + s * (jnp.tensordot(p, local, axes=1) - W)
        return W, W.reshape(-1)

    program = jax.jit(lambda w0: jax.lax.scan(one_round, w0, (steps, eta))[1])
    w0 = jnp.asarray(inputs.w0)
    return lambda: np.asarray(program(w0).block_until_ready())
