"""`fedbound bench`'s JAX peers (optional; JAX is no dependency): FedAvg as one jit-compiled
program, and the CNN's SGD step jitted once and called in a Python loop.

The same trajectory as ``bench_peers.numpy_peer_fedavg`` from the same precomputed inputs
(``bench_peers.PeerInputs``: the kernel's minibatch row indices, step sizes, Gram matrices), in
float64: the E local steps of a round are a ``lax.scan``, each step one ``vmap`` over the clients
of the client gradient, the rounds an outer ``lax.scan``:

    g_k = Xb_k' (softmax(Xb_k W_k) - onehot(y)) / b     (softmax minibatch steps)
    g_k = Q_k W_k - c_k                                 (exact least-squares steps, Gram form)
    W_k <- W_k - eta_t (g_k + mu W_k);   W <- W + s (sum_k p_k W_k - W).

Only these two step kinds are written (bench's W1 and W2); other inputs raise ValueError.

The CNN peer (``jax_cnn_peer``) is the step as a JAX user writes it: the network's loss with
``lax.conv_general_dilated`` (NHWC/HWIO), ``reduce_window`` max-pooling and dense products,
``jax.grad``, one step theta <- theta - lr grad under ``jax.jit``, called once per minibatch from a
Python loop over minibatches already on the device. (Compiling the whole run as a
``lax.fori_loop`` over the steps, as bench did before, ran 2.8x slower on this CPU: issue 29.)

When ``jax`` cannot be imported both return None and bench prints a note instead of a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from problems import FederatedProblem
from problems.models import ConvNet, SoftmaxModel
from problems.models.cnn import Conv2d, Dense, MaxPool2d

from .bench_peers import PeerInputs

__all__ = ["jax_peer", "jax_cnn_peer"]


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


def jax_cnn_peer(network: ConvNet, params0: np.ndarray, images: np.ndarray, labels: np.ndarray, batch: int,
                 lr: float) -> Callable[[int], np.ndarray] | None:
    """A call ``peer(n)`` runs n SGD steps of ``network`` from ``params0`` in float32 on the
    minibatches rows [(s b) mod n_images, + b) (``kernel.sgd_steps``'s order; n_images a multiple
    of ``batch``) and returns the parameters (waits for the device); None when jax is not
    importable. The step compiles at the first call: time after a warm-up."""
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        return None
    layout = network.layout
    blocks = {block.layer: block for block in layout.parameter_blocks}

    def weights(theta: Any, i: int) -> tuple[Any, Any]:
        block = blocks[i]
        w = theta[block.offset : block.offset + block.weight_size].reshape(block.weight_shape)
        return w, theta[block.offset + block.weight_size : block.offset + block.size]

    def loss(theta: Any, x: Any, y: Any) -> Any:
        for i, layer in enumerate(layout.layers):
            if isinstance(layer, Conv2d):
                w, b = weights(theta, i)
                x = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b
            elif isinstance(layer, MaxPool2d):
                x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            elif isinstance(layer, Dense):
                w, b = weights(theta, i)
                x = x.reshape(x.shape[0], -1) @ w + b
            else:
                x = jnp.maximum(x, 0)
        picked = jnp.take_along_axis(x, y[:, None], axis=1)[:, 0]
        return jnp.mean(jax.nn.logsumexp(x, axis=1) - picked)

    gradient = jax.grad(loss)
    lr32 = np.float32(lr)
    step = jax.jit(lambda theta, x, y: theta - lr32 * gradient(theta, x, y))
    minibatches = [(jnp.asarray(images[i : i + batch], dtype=jnp.float32), jnp.asarray(labels[i : i + batch],
                                                                                       dtype=jnp.int32))
                   for i in range(0, images.shape[0], batch)]
    theta0 = jnp.asarray(params0, dtype=jnp.float32)

    def run(n: int) -> np.ndarray:
        theta = theta0
        for s in range(n):
            theta = step(theta, *minibatches[s % len(minibatches)])
        return np.asarray(theta.block_until_ready())

    return run
