"""The model oracle (problems.models): each model's NumPy path against finite differences and a
closed form, its Numba path against its NumPy path, and a model defined here (not shipped) run by
the FedAvg kernel unchanged, which shows that adding a model touches no algorithm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from problems import FederatedProblem, exact_optimum
from problems.models import LeastSquaresModel, LogisticModel, SoftmaxModel, model_for
from problems.models.linear import LinearModel

RNG = np.random.default_rng(7)
X = RNG.normal(size=(9, 4))
CASES = [
    (LeastSquaresModel(), RNG.normal(size=9)),
    (LogisticModel(), (RNG.random(9) < 0.5).astype(float)),
    (SoftmaxModel(3), RNG.integers(0, 3, size=9).astype(float)),
]
IDS = ["least_squares", "logistic", "softmax"]


@pytest.mark.parametrize(("model", "y"), CASES, ids=IDS)
def test_gradient_and_hessian_match_central_differences(model: LinearModel, y: np.ndarray) -> None:
    """Central differences of the weighted loss (step 1e-6, error O(h^2) ~ 1e-10) match the
    oracle's gradient, and those of the gradient match its Hessian."""
    r = RNG.random(9)
    w = RNG.normal(size=model.dim(4))
    _, grad = model.weighted_value_grad(w, X, y, r)
    H = model.weighted_hessian(w, X, y, r)
    h = 1e-6
    for q in range(w.size):
        e = np.zeros_like(w)
        e[q] = h
        up, gu = model.weighted_value_grad(w + e, X, y, r)
        down, gd = model.weighted_value_grad(w - e, X, y, r)
        assert (up - down) / (2 * h) == pytest.approx(grad[q], abs=1e-7)
        np.testing.assert_allclose((gu - gd) / (2 * h), H[:, q], atol=1e-7)
    np.testing.assert_allclose(model.gradients(w, X, y).T @ r, grad, rtol=1e-12, atol=1e-14)


def test_closed_forms() -> None:
    """l(0, y) at W = 0: least squares y^2/2, logistic log 2, softmax log C (all logits equal)."""
    zero = np.zeros((9, 1))
    ls, lg, sm = (m for m, _ in CASES)
    np.testing.assert_allclose(ls.margin_losses(zero, CASES[0][1]), CASES[0][1] ** 2 / 2)
    np.testing.assert_allclose(lg.margin_losses(zero, CASES[1][1]), np.log(2.0))
    np.testing.assert_allclose(sm.margin_losses(np.zeros((9, 3)), CASES[2][1]), np.log(3.0))


@pytest.mark.parametrize(("model", "y"), CASES, ids=IDS)
def test_curvature_bounds_hold(model: LinearModel, y: np.ndarray) -> None:
    """For one sample x = 1 (a single feature) the data Hessian is D = d^2l/dz^2 itself: it lies
    between the stated lower and upper bounds, and reaches upper at w = 0 iff the model says the
    upper bound is exact (softmax, C = 3: lambda_max(I/3 - 11'/9) = 1/3 < 1/2)."""
    x = np.array([[1.0]])
    for scale in (0.0, 1.0, 5.0):
        w = scale * RNG.normal(size=model.dim(1))
        eig = np.linalg.eigvalsh(model.weighted_hessian(w, x, y[:1], np.ones(1)))
        assert eig[-1] <= model.curvature.upper + 1e-12
        assert eig[0] >= model.curvature.lower - 1e-12
    top = np.linalg.eigvalsh(model.weighted_hessian(np.zeros(model.dim(1)), x, y[:1], np.ones(1)))[-1]
    assert (top == pytest.approx(model.curvature.upper)) == model.curvature.exact_upper


@pytest.mark.parametrize(("model", "y"), CASES, ids=IDS)
def test_cvxpy_term_is_the_same_loss(model: LinearModel, y: np.ndarray) -> None:
    """The independent cvxpy formulation evaluates to the NumPy loss at a fixed W."""
    r = RNG.random(9)
    w = RNG.normal(size=model.dim(4))
    var, expr = model.cvxpy_data_term(X, y, r)
    var.value = w.reshape(var.shape)
    assert float(expr.value) == pytest.approx(model.weighted_value_grad(w, X, y, r)[0], rel=1e-12)


def test_registry_names_every_model() -> None:
    assert type(model_for("softmax", 4)) is SoftmaxModel and model_for("softmax", 4).n_classes == 4
    with pytest.raises(KeyError):
        model_for("hinge")


@pytest.mark.parametrize("batch", [0, 5])
def test_numba_oracle_matches_numpy(batch: int) -> None:
    """One FedAvg step from W = w0 through the kernel (Numba oracle) equals the NumPy reference
    (the model's batched gradients) to rounding, for every shipped model."""
    from convergence import FedAvgConfig, RunConfig, StepSize, run

    for loss, n_classes in (("least_squares", 1), ("logistic", 1), ("softmax", 3)):
        rng = np.random.default_rng(1)
        Xd = rng.normal(size=(30, 5))
        y = rng.normal(size=30) if loss == "least_squares" else rng.integers(0, max(2, n_classes), size=30).astype(float)
        problem = FederatedProblem("oracle", loss, Xd, y, np.array([0, 10, 20, 30]), np.full(3, 1 / 3), 0.1, n_classes)
        config = RunConfig(problem.spec, FedAvgConfig(2, 3, StepSize.constant(0.1), batch, seeds=(4,)))
        optimum = exact_optimum(problem, crosscheck=False)
        a = run(config, problem=problem, optimum=optimum, engine="numba").iterates
        b = run(config, problem=problem, optimum=optimum, engine="numpy").iterates
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_a_new_model_runs_in_the_shipped_kernel_unchanged(tmp_path: Path) -> None:
    """The FedAvg kernel, given a model it has never seen (tests/squared_hinge_model.py, which
    touches no algorithm file), computes the same local steps as that model's NumPy gradient.

    It runs in a subprocess with its own Numba cache folder: a kernel compiled for a type that
    lives in a test module must not enter the package's cache, whose index every process loads.
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).parent)}
    out = subprocess.run([sys.executable, "-m", "squared_hinge_model"], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    assert float(out.stdout.strip()) < 1e-13
