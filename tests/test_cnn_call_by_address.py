"""The round loops call the network by address (issue 29, cold start; ``cnn.kernel``'s "Calls by
address"): ``call_loss_grad`` gives ``network_loss_grad``'s bits in both dtypes, checks its
arguments' types at compile time, propagates the network's errors; and no round loop links the
network's code into its own (before, every compiled function above ``_loss_grad`` held and
re-optimised a copy of the whole network: 3-5 s of a cold compile each)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit, types
from numba.core.errors import TypingError

from convergence import FedAvgConfig, MCPSGDConfig, RunConfig, StepSize, run
from convergence.algorithms import local_sgd as local_sgd_module
from convergence.algorithms.block_cyclic import kernel as block_cyclic_module
from problems import problem_spec
from problems.models import digits_net
from problems.models.cnn.kernel import (
    call_loss_grad,
    loss_grad_address,
    loss_grad_args,
    network_loss_grad,
    network_loss_grad_at,
)

RNG = np.random.default_rng(7)


@njit
def _through_address(address, table, params, images, labels, acts, dacts, pool_index, grad):
    return network_loss_grad_at(address, table, params, images, labels, acts, dacts, pool_index, grad)


@njit
def _raw_call(address, table, params, images, labels, acts, dacts, pool_index, grad, scratch):
    return call_loss_grad(address, table, params, images, labels, acts, dacts, pool_index, grad, scratch)


def _batch(dtype: type, size: int = 5):
    net = digits_net()
    images = RNG.normal(size=(size, *net.input_shape)).astype(dtype)
    labels = RNG.integers(0, net.n_classes, size=size)
    return net, net.init_params(3, dtype), images, labels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_call_by_address_is_network_loss_grad_bit_for_bit(dtype: type) -> None:
    net, params, images, labels = _batch(dtype)
    direct, by_address = net.workspace(5, dtype), net.workspace(5, dtype)
    want = network_loss_grad(net.layout.table, params, images, labels, *direct)
    got = _through_address(loss_grad_address(dtype), net.layout.table, params, images, labels, *by_address)
    assert got == want and np.array_equal(by_address.grad, direct.grad) and np.any(direct.grad != 0)
    assert np.array_equal(by_address.acts, direct.acts)


def test_other_argument_types_are_a_typing_error_naming_the_argument() -> None:
    net, params, images, labels = _batch(np.float64)
    work = net.workspace(5, np.float64)
    scratch = np.empty(10_000)
    address = loss_grad_address(np.float64)
    frozen = images.copy()
    frozen.setflags(write=False)
    with pytest.raises(TypingError, match="images: expected"):
        _raw_call(address, net.layout.table, params, frozen, labels, *work, scratch)
    with pytest.raises(TypingError, match="grad: expected"):
        _raw_call(address, net.layout.table, params, images, labels, work.acts, work.dacts, work.pool_index,
                  work.grad.astype(np.float32), scratch)
    with pytest.raises(TypingError, match="address: expected an integer"):
        _raw_call(1.0, net.layout.table, params, images, labels, *work, scratch)


def test_the_networks_errors_reach_the_caller() -> None:
    net, params, images, labels = _batch(np.float64)
    work = net.workspace(5, np.float64)
    with pytest.raises(ValueError):  # acts too small for the images: the network's reshape raises
        _through_address(loss_grad_address(np.float64), net.layout.table, params, images, labels, work.acts[:3],
                         work.dacts, work.pool_index, work.grad)


def test_the_address_is_of_the_dtype_asked_and_bad_dtypes_are_named() -> None:
    assert loss_grad_address(np.float32) != loss_grad_address(np.float64)
    assert loss_grad_address(np.float32) == loss_grad_address("float32")
    assert loss_grad_args(types.float32)[1] == types.Array(types.float32, 1, "C")
    with pytest.raises(ValueError, match="dtype: expected float32 or float64"):
        loss_grad_address(np.int64)


def _defined(llvm: str) -> list[str]:
    """The names of the functions the LLVM module defines."""
    return re.findall(r"^define [^@]*@\"?([^\"(]+)", llvm, flags=re.MULTILINE)


def _network_functions(names: list[str]) -> list[str]:
    return [n for n in names if re.search(r"_loss_grad|_forward|conv2d|dense_|max_pool", n)]


def _compiled_fresh(monkeypatch, module, name: str, config) -> list[str]:
    """The functions defined in the LLVM module of an uncached copy of the kernel ``module.name``,
    compiled in this process for one run of ``config`` (its module is inspectable)."""
    fresh = njit(getattr(module, name).py_func)
    monkeypatch.setattr(module, name, fresh)
    run(config)
    (signature,) = fresh.signatures
    return _defined(fresh.inspect_llvm(signature))


def test_no_round_loop_links_the_network(monkeypatch) -> None:
    """The block-cyclic kernel and FedAvg's loop on a CNN define none of the network's functions:
    they call it by address. Fails with the network called directly (every layer linked in)."""
    steps = {"step_size": StepSize.constant(0.1), "batch_size": 2, "seeds": (0,)}
    cyclic = RunConfig(problem_spec("block_cyclic_images", n_blocks=2, clients_per_block=2, labels_per_block=6,
                                    n_train=80, n_test=20, dtype="float32"),
                       MCPSGDConfig(cycles=1, rounds_per_block=1, local_steps=1, record_rounds=(0, 2),
                                    block_step_size=StepSize.constant(0.05), **steps))
    fedavg = RunConfig(problem_spec("image_classification", n_clients=3, n_train=60, n_test=20, dtype="float32"),
                       FedAvgConfig(local_steps=2, rounds=2, record_rounds=(0, 2), **steps))
    for module, name, config in ((block_cyclic_module, "block_cyclic_kernel", cyclic),
                                 (local_sgd_module, "local_sgd_kernel", fedavg)):
        defined = _compiled_fresh(monkeypatch, module, name, config)
        assert any(name.split("_kernel")[0] in n for n in defined)  # the loop itself is there
        assert _network_functions(defined) == [], name
