"""The CNN kernels are compiled for writable arrays only (issue 29, cold start): a read-only
argument (a stored iterate, a problem's frozen images) would make Numba compile the whole network
again. ``ConvNet`` copies read-only parameters and images; the round loops copy a client's rows into
their minibatch buffers (``network_steps.rows_loss_grad``), sized for the largest client when the
gradients are exact; the copy gives the same bits as the network on the rows themselves."""

from __future__ import annotations

import numpy as np
from numba import types

from convergence.algorithms.block_cyclic.network_pieces import network_data
from convergence.algorithms.local_models import local_model
from convergence.algorithms.network_steps import rows_loss_grad
from problems import build_block_cyclic, build_problem, problem_spec
from problems.models import digits_net
from problems.models.cnn.kernel import (
    loss_grad_address,
    network_forward,
    network_loss_grad,
    network_predict,
)


def read_only(array: np.ndarray) -> np.ndarray:
    out = array.copy()
    out.setflags(write=False)
    return out


def read_only_signatures(*dispatchers) -> list[tuple]:
    """The compiled signatures of ``dispatchers`` in this process with a read-only array argument."""
    return [sig for d in dispatchers for sig in d.signatures
            if any(isinstance(t, types.Array) and not t.mutable for t in sig)]


def test_read_only_inputs_do_not_compile_the_network_again() -> None:
    net = digits_net()
    rng = np.random.default_rng(0)
    images = rng.normal(size=(5, *net.input_shape))
    labels = rng.integers(0, 10, size=5)
    params = net.init_params(0, np.float64)
    frozen_params, frozen_images = read_only(params), read_only(images)
    loss, grad = net.loss_and_gradient(frozen_params, frozen_images, labels)
    logits = net.logits(frozen_params, frozen_images)
    predicted = net.predict(frozen_params, frozen_images)
    assert read_only_signatures(network_loss_grad, network_forward, network_predict) == []
    loss_w, grad_w = net.loss_and_gradient(params, images, labels)  # the same bits as writable inputs
    assert loss == loss_w and np.array_equal(grad, grad_w)
    assert np.array_equal(logits, net.logits(params, images))
    assert np.array_equal(predicted, net.predict(params, images))


def test_rows_loss_grad_is_the_network_on_the_rows() -> None:
    net = digits_net()
    rng = np.random.default_rng(1)
    images = read_only(rng.normal(size=(12, *net.input_shape)))
    labels = read_only(rng.integers(0, 10, size=12))
    params = net.init_params(2, np.float64)
    work = net.workspace(7, np.float64)
    buffers = np.full((7, *net.input_shape), np.nan), np.full(7, -1, dtype=np.int64)
    loss = rows_loss_grad(net.layout.table, loss_grad_address(np.float64), params, images, labels, 3, 10, *buffers,
                          *work)
    want_loss, want_grad = net.loss_and_gradient(params, images[3:10].copy(), labels[3:10].copy())
    assert loss == want_loss and np.array_equal(work.grad, want_grad)
    assert read_only_signatures(network_loss_grad) == []


def test_exact_gradients_size_the_row_buffers_for_the_largest_client() -> None:
    """batch 0 (exact gradients): the buffers hold the largest client's rows, FedAvg's and the
    block-cyclic family's; a minibatch's hold b rows."""
    spec = problem_spec("image_classification", n_clients=4, n_train=200, n_test=40, dtype="float64",
                        recipe="dirichlet", alpha=0.5, min_size=10)
    problem = build_problem(spec)
    largest = int(problem.client_sizes.max())
    assert largest > 200 // 4  # unequal clients: the largest is not the mean
    model = local_model(problem)
    for batch, rows in ((0, largest), (3, 3)):
        clients = model.kernel_clients(batch)
        assert clients.batch_images.shape[0] == rows and clients.batch_labels.shape[0] == rows
    cyclic = build_block_cyclic(problem_spec("block_cyclic_images", n_blocks=2, clients_per_block=3,
                                             labels_per_block=6, n_train=150, n_test=60, dtype="float64"))
    data = network_data(cyclic, 0)
    assert data.batch_images.shape[0] == int(cyclic.combined.client_sizes.max())
