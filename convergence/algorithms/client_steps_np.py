"""The model's pieces of the NumPy reference loop (``local_sgd_reference``): one local step of every
client and the server's aggregate, for a linear model (``LinearStepsNP``, vectorised over clients
with einsums) and for a CNN (``NetworkStepsNP``, one network gradient per sampled client). Li et
al., ICLR 2020, Sec. 2: a step is W_k <- W_k - eta_t lambda_k (g_k(W_k) + ...), the aggregate
W' = b W + sum_k a_k W_k over the round's sampled clients.

Both take the clients' local models ``local`` (N, *shape) (every one starts the round at W), the
round's global model W (``shape``), the step t and eta_t, the round's ``participation.RoundSample``
and the algorithm's correction (``round_state.RoundStateNP.correction``: (N, *shape), or None),
and fold the tracked maxima (over the sampled clients) into the running ones they are given. A
piece's arithmetic is its kernel's, operation for operation (``linear_rounds`` /
``network_rounds``), so the two paths agree to the linear algebra's rounding.
"""

from __future__ import annotations

import numpy as np

from problems import FederatedProblem, ImageClassificationProblem
from problems.models.cnn.reference import loss_grad_np

from .._rng import sample_indices_np
from .padded_clients import PaddedClients
from .participation import RoundSample, local_step_scales

__all__ = ["LinearStepsNP", "NetworkStepsNP"]


class LinearStepsNP:
    """A linear model's pieces (``local_sgd_reference``'s loop before the network existed): models
    as (f, C), dense on all d = f C coordinates (no support trick), every client computing (Li's
    App. B.1: all devices compute, the server uses the sampled ones; a client's steps do not depend
    on the others, so the sampled clients' models are the kernel's). A step's direction is
    lambda_k (g_k + mu W_k + correction_k + mu_prox (W_k - W)) with lambda_k = N p_k under
    transformed Scheme II, else the unscaled sum. With ``trace`` (``fedavg.trace``) every step is
    written into it: every client's model before the step and the reductions of its stochastic and
    full gradients."""

    def __init__(self, problem: FederatedProblem, batch: int, seed: int, scheme: str, w_star: np.ndarray,
                 mu_prox: float, trace=None) -> None:
        self.data, self.model, self.mu, self.weights = PaddedClients(problem), problem.model, problem.mu, problem.weights
        self.shape = (problem.n_features, problem.n_classes)
        self.batch, self.seed, self.mu_prox, self.trace = batch, seed, mu_prox, trace
        self.transformed = scheme == "transformed_scheme_ii"
        self.scales = local_step_scales(scheme, problem.weights)[:, None, None]
        self.star = w_star.reshape(self.shape)

    def step(self, local: np.ndarray, W: np.ndarray, t: int, eta: float, sample: RoundSample,
             correction: np.ndarray | None, track: bool, max_grad: float, max_rad: float) -> tuple[float, float]:
        """Step t of every client in place on ``local`` (N, f, C); returns the running (max ||g||^2,
        max ||w - w*||^2)."""
        data, N = self.data, local.shape[0]
        idx = None if self.batch == 0 else sample_indices_np(self.seed, t, data.sizes, self.batch)
        if idx is None:
            grad = data.full_gradients(self.model, local) + self.mu * local
        else:
            grad = self.model.batched_gradients(local, *data.batch(idx)) + self.mu * local
        if correction is not None:
            grad += correction
        if self.mu_prox != 0.0:
            grad += self.mu_prox * (local - W)
        if self.transformed:
            grad *= self.scales
        if self.trace is not None:
            full = grad if idx is None else self.scales * (data.full_gradients(self.model, local) + self.mu * local)
            self.trace.write_step(t, local.reshape(N, -1), grad.reshape(N, -1), full.reshape(N, -1), self.weights)
        sampled = sample.counts > 0
        if track:
            max_grad = max(max_grad, float(np.max(np.sum(grad**2, axis=(1, 2))[sampled])))
        local -= eta * grad
        if track:
            max_rad = max(max_rad, float(np.max(np.sum((local - self.star) ** 2, axis=(1, 2))[sampled])))
        return max_grad, max_rad

    def aggregate(self, local: np.ndarray, W: np.ndarray, sample: RoundSample) -> np.ndarray:
        """W' = sum_k a_k W_k (one tensor product over the sampled clients) + b W, (f, C)."""
        sampled = sample.counts > 0
        if sampled.all():
            average = np.tensordot(sample.coefficients, local, axes=1)
        else:  # only the sampled clients' models enter (an unsampled one may even be non-finite)
            average = np.tensordot(sample.coefficients[sampled], local[sampled], axes=1)
        if sample.broadcast != 0.0:
            average += sample.broadcast * W
        return average


class NetworkStepsNP:
    """A CNN's pieces: models (d,) in the problem's dtype; only the sampled clients compute (the rows
    of the others stay at W). Each step is the kernel's: the network's gradient g on the client's
    rows or minibatch (``problems.models.cnn.reference.loss_grad_np``, the NumPy twin of the
    kernel's oracle: im2col and matrix products), plus the correction, then
    W_k <- W_k - (eta_t lambda_k) g computed in float64 and stored in the dtype; the aggregate
    b W + sum_k a_k W_k is summed in float64, b W first, then the clients in index order. The two
    paths agree to the network's rounding (<= 1e-10 relative in float64,
    ``tests/test_cnn_fedavg.py``)."""

    def __init__(self, problem: ImageClassificationProblem, batch: int, seed: int, scheme: str,
                 w_star: np.ndarray) -> None:
        self.problem, self.layout, self.sizes = problem, problem.network.layout, problem.client_sizes
        self.shape = (problem.dim,)
        self.batch, self.seed, self.star = batch, seed, w_star
        self.scales = local_step_scales(scheme, problem.weights)[:, None]

    def step(self, local: np.ndarray, W: np.ndarray, t: int, eta: float, sample: RoundSample,
             correction: np.ndarray | None, track: bool, max_grad: float, max_rad: float) -> tuple[float, float]:
        """Step t of every sampled client in place on its row of ``local`` (N, d); returns the running
        (max lambda_k^2 ||g||^2, max ||w - w*||^2)."""
        rows = None if self.batch == 0 else sample_indices_np(self.seed, t, self.sizes, self.batch)
        for k in np.flatnonzero(sample.counts):
            Wk, lam = local[k], self.scales[k, 0]
            images, labels = self.problem.client_data(k)
            chosen = slice(None) if rows is None else rows[k]
            with np.errstate(all="ignore"):  # a diverging run is reported, not warned about
                _, grad = loss_grad_np(self.layout, Wk, images[chosen], labels[chosen])
                if correction is not None:
                    grad += correction[k]
                if track:
                    max_grad = max(max_grad, lam**2 * float(np.sum(grad.astype(np.float64) ** 2)))
                Wk[:] = Wk.astype(np.float64) - (eta * lam) * grad.astype(np.float64)
            if track:
                max_rad = max(max_rad, float(np.sum((Wk.astype(np.float64) - self.star) ** 2)))
        return max_grad, max_rad

    def aggregate(self, local: np.ndarray, W: np.ndarray, sample: RoundSample) -> np.ndarray:
        """W' = b W + sum_k a_k W_k in float64, (d,)."""
        acc = sample.broadcast * W.astype(np.float64)
        for k in np.flatnonzero(sample.counts):
            acc += sample.coefficients[k] * local[k].astype(np.float64)
        return acc
