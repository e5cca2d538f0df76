"""A model that fedbound does not ship, for tests/test_models.py: squared hinge loss
l(z, y) = max(0, 1 - s z)^2 / 2 with s = 2y - 1, written against the model oracle only."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import numpy as np
from problems.models.kernels import register_loss
from problems.models.linear import CurvatureBounds, LinearModel


class SquaredHingeLoss(NamedTuple):
    n_classes: int


class SquaredHingeModel(LinearModel):
    name: ClassVar[str] = "squared_hinge"
    curvature: ClassVar[CurvatureBounds] = CurvatureBounds(0.0, 1.0, True)

    @property
    def exp_calls_per_sample(self) -> int:
        return 0

    def check_targets(self, y):
        return None if np.all((y == 0) | (y == 1)) else "squared hinge labels must be 0 or 1"

    def margin_losses(self, Z, y):
        return 0.5 * np.maximum(0.0, 1.0 - (2 * y - 1) * Z[..., 0]) ** 2

    def margin_residuals(self, Z, y):
        s = (2 * y - 1)[..., None]
        return -s * np.maximum(0.0, 1.0 - s * Z)

    def margin_hessian_rows(self, X, y, r, W):
        active = (2 * y - 1) * (X @ W[:, 0]) < 1.0
        return X.T @ ((r * active)[:, None] * X)

    def cvxpy_data_term(self, X, y, r):
        import cvxpy as cp

        w = cp.Variable(X.shape[1])
        return w, 0.5 * (r @ cp.square(cp.pos(1.0 - cp.multiply(2 * y - 1, X @ w))))

    def kernel_loss(self):
        return SquaredHingeLoss(1)


def _residuals(loss, Z, targets, sample_base, idx, n_used, wt):
    for b in range(n_used):
        s = 2.0 * targets[sample_base + idx[b]] - 1.0
        Z[b, 0] = -s * max(0.0, 1.0 - s * Z[b, 0]) * wt


def _loss_sum(loss, Z, targets, sample_base, n):
    total = 0.0
    for b in range(n):
        s = 2.0 * targets[sample_base + b] - 1.0
        total += 0.5 * max(0.0, 1.0 - s * Z[b, 0]) ** 2
    return total


register_loss(SquaredHingeLoss, _residuals, _loss_sum)


def run_in_kernel() -> float:
    """E = 3 exact FedAvg steps of one client from w = 0 through the shipped kernel, compared with
    the model's NumPy gradient loop; returns the largest absolute difference."""
    from convergence.algorithms.local_sgd import local_sgd_kernel as fedavg_kernel
    from convergence.algorithms.packing import PackedClients
    from convergence.algorithms.participation import KernelParticipation
    from convergence.algorithms.local_sgd import RoundPlan, SeedState
    from convergence.algorithms.round_state import STATELESS
    from convergence.schedules import StepSchedule

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(12, 4)), (rng.random(12) < 0.5).astype(float)
    model = SquaredHingeModel()
    records, stats = np.zeros((1, 4)), np.zeros(2)
    eta, mu = 0.1, 0.01
    one = np.array([0, 4], dtype=np.int64)  # one dense client: support = every feature, no Gram
    clients = PackedClients(
        1, 4, mu, np.ones(1), y, np.array([0, 12]), np.arange(4), one, X.reshape(-1),
        np.array([0, 48]), np.ones(1, dtype=np.bool_), np.zeros(0), np.zeros(2, dtype=np.int64), np.zeros(4),
        np.zeros(1, dtype=np.bool_))
    full = KernelParticipation(0, 1, np.ones(1), np.ones(1))  # full participation: code 0, K = N = 1
    plan = RoundPlan(3, 1, 0, 0, 1.0, 0.0, np.array([1]))
    state = SeedState(np.zeros(4), np.zeros(4), False, records, stats)
    diverged = fedavg_kernel(model.kernel_loss(), clients, full, StepSchedule(0, eta, 0.0), plan, state, STATELESS)
    assert diverged == -1
    w = np.zeros(4)
    for _ in range(3):
        w = w - eta * (model.gradients(w, X, y).mean(axis=0) + mu * w)
    return float(np.max(np.abs(records[0] - w)))


if __name__ == "__main__":
    print(run_in_kernel())
