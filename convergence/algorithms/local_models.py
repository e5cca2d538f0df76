"""The model a local-SGD run trains, chosen once from the problem (``local_model``): what the one
round loop (``local_sgd`` and its NumPy reference ``local_sgd_reference``) needs that depends on
the model, and nothing else.

* ``LinearLocal`` (a ``problems.FederatedProblem``: least squares, logistic, softmax): the
  kernel's model is the loss tag (``kernel_loss()``) and its client data the support-restricted
  ``packing.PackedClients`` (``linear_rounds``); the reference's piece ``LinearStepsNP``; it starts
  from w0 = 0 and can run over threads and keep a trace.
* ``NetworkLocal`` (a CNN's ``problems.ImageClassificationProblem``): the kernel's model is the
  network's layout table and its client data ``network_rounds.NetworkClients`` with the network's
  buffers for the run's batch; the reference's piece ``NetworkStepsNP``; it starts from the
  network's initialisation at the run seed (w0 = 0 is a stationary point of a ReLU net), runs
  serially (its clients fold into the aggregate as they finish), keeps no trace and has no
  proximal term.

Either starts from the config's ``initial_model`` when one is given, in the problem's dtype.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from problems import FederatedProblem, ImageClassificationProblem
from problems.models.cnn.kernel import loss_grad_address

from .client_steps_np import LinearStepsNP, NetworkStepsNP
from .network_rounds import NetworkClients
from .packing import PackedClients, pack_clients

__all__ = ["LinearLocal", "LocalModel", "NetworkLocal", "local_model"]


class LocalModel(Protocol):
    """The model's side of the local-SGD loop (module docstring)."""

    serial: bool
    keeps_trace: bool

    def start(self, initial_model: tuple[float, ...], seed: int) -> np.ndarray:
        """w0 (d,): the config's initial model, or the model's own start at the run seed."""
        ...

    def kernel_loss(self) -> Any:
        """The kernel's ``loss`` argument (the model as the kernels take it)."""
        ...

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of one model on the reference path: (f, C) for a linear model, (d,) for a CNN."""
        ...

    def kernel_clients(self, batch: int, dense: bool = False) -> PackedClients | NetworkClients:
        """The kernel's client-data bundle for minibatches of ``batch`` rows (0: exact gradients);
        ``dense``: every client sees every coordinate (an algorithm whose correction moves all of
        them, SCAFFOLD; a CNN's clients always do)."""
        ...

    def reference_steps(self, batch: int, seed: int, scheme: str, w_star: np.ndarray, mu_prox: float,
                        trace: Any) -> LinearStepsNP | NetworkStepsNP:
        """The NumPy reference's piece for one seed (``client_steps_np``)."""
        ...

    def work_floats(self, batch: int, engine: str) -> int:
        """Floats of work arrays one seed holds beside its records (``FedAvgEngine.memory_bytes``)."""
        ...


class LinearLocal:
    """A linear model (module docstring)."""

    serial = False
    keeps_trace = True

    def __init__(self, problem: FederatedProblem) -> None:
        self.problem = problem

    def start(self, initial_model: tuple[float, ...], seed: int) -> np.ndarray:
        return np.array(initial_model, dtype=np.float64) if initial_model else np.zeros(self.problem.dim)

    def kernel_loss(self) -> Any:
        return self.problem.model.kernel_loss()

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.problem.n_features, self.problem.n_classes)

    def kernel_clients(self, batch: int, dense: bool = False) -> PackedClients:
        return pack_clients(self.problem, dense)

    def reference_steps(self, batch: int, seed: int, scheme: str, w_star: np.ndarray, mu_prox: float,
                        trace: Any) -> LinearStepsNP:
        return LinearStepsNP(self.problem, batch, seed, scheme, w_star, mu_prox, trace)

    def work_floats(self, batch: int, engine: str) -> int:
        """The padded client data of the reference path (N n_max (f + 2) and a minibatch
        N b (f + 2)), or the kernel's minibatch (b f) and, for exact least-squares steps, the Gram
        matrices (N f^2)."""
        problem = self.problem
        N, f = problem.n_clients, problem.n_features
        if engine == "numpy":
            return N * int(problem.client_sizes.max()) * (f + 2) + N * batch * (f + 2)
        return max(batch, 1) * f + (N * f * f if problem.model.quadratic and batch == 0 else 0)


class NetworkLocal:
    """A CNN (module docstring)."""

    serial = True
    keeps_trace = False

    def __init__(self, problem: ImageClassificationProblem) -> None:
        self.problem = problem

    def start(self, initial_model: tuple[float, ...], seed: int) -> np.ndarray:
        problem = self.problem
        return np.array(initial_model, dtype=problem.float_type) if initial_model else problem.initial_model(seed)

    def kernel_loss(self) -> Any:
        return self.problem.network.layout.table

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.problem.dim,)

    def kernel_clients(self, batch: int, dense: bool = False) -> NetworkClients:
        problem, dtype = self.problem, self.problem.float_type
        rows = batch if batch > 0 else int(problem.client_sizes.max())
        return NetworkClients(
            problem.images, problem.labels, problem.offsets, problem.weights,
            np.empty((rows, *problem.network.input_shape), dtype=dtype),
            np.empty(rows, dtype=np.int64), *problem.network.workspace(rows, dtype), loss_grad_address(dtype),
        )

    def reference_steps(self, batch: int, seed: int, scheme: str, w_star: np.ndarray, mu_prox: float,
                        trace: Any) -> NetworkStepsNP:
        if mu_prox != 0.0 or trace is not None:
            raise ValueError("mu_prox, trace: a CNN's local steps have no proximal term and keep no trace")
        return NetworkStepsNP(self.problem, batch, seed, scheme, w_star)

    def work_floats(self, batch: int, engine: str) -> int:
        """The models W, W_k, the aggregate and the gradient (4 d) and the network's activations and
        their gradients for the largest batch (2 b_max A, A the layout's activation size; the
        reference's im2col copies are of the same order); the reference adds every client's local
        model (N d)."""
        problem = self.problem
        rows = batch if batch > 0 else int(problem.client_sizes.max())
        work = 4 * problem.dim + 2 * rows * problem.network.layout.activation_size
        return work + (problem.n_clients * problem.dim if engine == "numpy" else 0)


def local_model(problem: FederatedProblem | ImageClassificationProblem) -> LocalModel:
    """The model of ``problem``'s local-SGD runs: the one place that tells a network from a linear model."""
    return NetworkLocal(problem) if isinstance(problem, ImageClassificationProblem) else LinearLocal(problem)
