"""The constants the assumption checks take from the model oracle (``problems/models/linear.py``),
checked against each model's own functions, and the checks of ``proofs_check`` running on models
they have never seen (squared hinge: not quadratic, unbounded gradient; a scaled quadratic loss).

* ``gradient_bound`` beta = sup ||dl/dz||^2: every residual stays below it and the sup is
  approached; models stating None have residuals beyond any bound.
* ``curvature``: lower <= eig D(z) <= upper for D = d^2 l/dz^2 from ``margin_hessian_rows``, so one
  row's Hessian (x x') kron D has norm <= upper ||x||^2.
* ``least_squares_form``: l(x'w, y) = (1/2)(u'w - v)^2 + const with the model's own gradients.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np
import pytest
from squared_hinge_model import SquaredHingeModel

from convergence import FedAvgConfig, StepSize
from problems import FederatedProblem, exact_optimum, random_quadratic
from problems.models import CurvatureBounds, LeastSquaresModel, LinearModel, LogisticModel, SoftmaxModel
from proofs_check.constants.assumptions import gradient_dissimilarity, second_moment_bound, variance_bound
from proofs_check.constants.bgd import bgd_curve, bgd_pair
from proofs_check.constants.gradient_bounds import sample_curvature
from proofs_check.constants.least_squares_moments import LeastSquaresMoments
from proofs_check.constants.minibatch_moments import client_terms, gradient_variance
from proofs_check.constants.regions import EVERYWHERE, Ball
from proofs_check.constants.run_moments import exact_expectations


class ScaledSquaresTag(NamedTuple):
    """Kernel tag of ``ScaledSquaresModel`` (a NumPy-side model: no kernel runs it in these tests)."""

    n_classes: int


class ScaledSquaresModel(LinearModel):
    """l(z, y) = (3/2)(z - 2y - 1)^2: quadratic in the margin with a = 3, t(y) = 2y + 1, so its
    least-squares form is u = sqrt(3) x, v = sqrt(3)(2y + 1): least squares in disguise, but not
    the least squares of (x, y)."""

    name: ClassVar[str] = "scaled_squares"
    curvature: ClassVar[CurvatureBounds] = CurvatureBounds(3.0, 3.0, True)
    quadratic: ClassVar[bool] = True

    @property
    def exp_calls_per_sample(self) -> int:
        return 0

    def check_targets(self, y: np.ndarray) -> str | None:
        return None

    def margin_losses(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 1.5 * (Z[..., 0] - 2.0 * y - 1.0) ** 2

    def margin_residuals(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 3.0 * (Z - 2.0 * y[..., None] - 1.0)

    def margin_hessian_rows(self, X: np.ndarray, y: np.ndarray, r: np.ndarray, W: np.ndarray) -> np.ndarray:
        return 3.0 * X.T @ (r[:, None] * X)

    def cvxpy_data_term(self, X: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[Any, Any]:
        import cvxpy as cp

        w = cp.Variable(X.shape[1])
        return w, 1.5 * (r @ cp.square(X @ w - 2.0 * y - 1.0))

    def kernel_loss(self) -> ScaledSquaresTag:
        return ScaledSquaresTag(1)


class NonConvexHingeModel(SquaredHingeModel):
    """The squared hinge declared with a negative curvature bound: certified bounds must refuse it."""

    curvature: ClassVar[CurvatureBounds] = CurvatureBounds(-1.0, 1.0, False)


def _with_model(problem: FederatedProblem, model: LinearModel) -> FederatedProblem:
    """``problem``'s data and weights with another model oracle (a model no problem spec names)."""

    class ProblemWithModel(FederatedProblem):
        @property
        def model(self) -> LinearModel:
            return model

    return ProblemWithModel(f"{problem.name} ({model.name})", problem.loss, problem.X, problem.y, problem.offsets,
                            problem.weights, problem.mu, problem.n_classes)


def _binary_problem(seed: int = 0, mu: float = 0.1) -> FederatedProblem:
    """Three clients of 12, 15, 9 rows, 3 features, labels in {0, 1} (logistic)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(36, 3))
    y = (rng.random(36) < 0.5).astype(float)
    return FederatedProblem("binary", "logistic", X, y, np.array([0, 12, 27, 36]), np.array([0.3, 0.5, 0.2]), mu)


def _labels(model: LinearModel, n: int, rng: np.random.Generator) -> np.ndarray:
    if model.n_classes > 1:
        return rng.integers(0, model.n_classes, size=n).astype(float)
    if model.check_targets(np.array([0.5])) is None:  # real-valued targets
        return rng.normal(size=n)
    return (rng.random(n) < 0.5).astype(float)


MODELS = [LeastSquaresModel(), LogisticModel(), SoftmaxModel(2), SoftmaxModel(3), SoftmaxModel(5), SquaredHingeModel()]


# ------------------------------------------------------------------ the model's constants
@pytest.mark.parametrize("model", [m for m in MODELS if m.gradient_bound is not None], ids=lambda m: f"{m.name}{m.n_classes}")
def test_gradient_bound_holds_and_is_approached(model: LinearModel) -> None:
    rng = np.random.default_rng(11)
    n = 4000
    scale = np.repeat([0.1, 1.0, 10.0, 60.0], n // 4)[:, None]
    Z = rng.normal(size=(n, model.n_classes)) * scale
    sq = np.sum(model.margin_residuals(Z, _labels(model, n, rng)) ** 2, axis=1)
    assert np.all(sq <= model.gradient_bound * (1 + 1e-12))
    assert sq.max() >= 0.999 * model.gradient_bound  # the supremum, not only a bound


@pytest.mark.parametrize("model", [m for m in MODELS if m.gradient_bound is None], ids=lambda m: m.name)
def test_models_without_gradient_bound_have_unbounded_residuals(model: LinearModel) -> None:
    rng = np.random.default_rng(2)
    y = _labels(model, 200, rng)
    Z = np.where((2 * y - 1 > 0) | (model.check_targets(np.array([0.5])) is None), -1e6, 1e6)[:, None]
    assert np.min(np.sum(model.margin_residuals(Z, y) ** 2, axis=1)) > 1e11


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.name}{m.n_classes}")
def test_curvature_bounds_the_hessian_of_the_margins(model: LinearModel) -> None:
    # One row x = 1 (f = 1): margin_hessian_rows gives D(z) (C, C) at the margins z = W[0].
    rng = np.random.default_rng(5)
    top = []
    for scale in (0.0, 0.3, 1.0, 3.0, 20.0):
        for _ in range(60):
            z = rng.normal(size=(1, model.n_classes)) * scale
            D = model.margin_hessian_rows(np.ones((1, 1)), _labels(model, 1, rng), np.ones(1), z)
            eig = np.linalg.eigvalsh(D)
            assert eig[0] >= model.curvature.lower - 1e-12 and eig[-1] <= model.curvature.upper + 1e-12
            top.append(eig[-1])
    assert max(top) >= 0.9 * model.curvature.upper
    if model.curvature.exact_upper:
        assert max(top) == pytest.approx(model.curvature.upper, rel=1e-12)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.name}{m.n_classes}")
def test_one_rows_hessian_norm_is_at_most_curvature_times_row_norm(model: LinearModel) -> None:
    rng = np.random.default_rng(8)
    for _ in range(50):
        x = rng.normal(size=(1, 4)) * rng.choice([0.1, 1.0, 5.0])
        W = rng.normal(size=(4, model.n_classes)) * rng.choice([0.0, 0.5, 3.0])
        H = model.margin_hessian_rows(x, _labels(model, 1, rng), np.ones(1), W)
        assert np.linalg.norm(H, 2) <= model.curvature.upper * float(np.sum(x**2)) * (1 + 1e-12)


def test_least_squares_form_of_least_squares_is_the_data_itself() -> None:
    # bit for bit: the quadratic path of the assumption constants is unchanged for least squares
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(7, 3)), rng.normal(size=7)
    U, v = LeastSquaresModel().least_squares_form(X, y)
    assert np.array_equal(U, X) and np.array_equal(v, y)


def test_least_squares_form_reproduces_the_models_loss_and_gradients() -> None:
    model = ScaledSquaresModel()
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(9, 3)), rng.normal(size=9)
    U, v = model.least_squares_form(X, y)
    np.testing.assert_allclose(U, np.sqrt(3.0) * X, rtol=1e-15)
    np.testing.assert_allclose(v, np.sqrt(3.0) * (2 * y + 1), rtol=1e-15)
    offsets = []
    for w in rng.normal(size=(5, 3)):
        residual = U @ w - v
        np.testing.assert_allclose(model.gradients(w, X, y), U * residual[:, None], rtol=1e-12, atol=1e-12)
        offsets.append(model.losses(w, X, y) - 0.5 * residual**2)
    np.testing.assert_allclose(offsets, np.broadcast_to(offsets[0], (5, 9)), atol=1e-12)  # const(y) only


@pytest.mark.parametrize("model", [LogisticModel(), SoftmaxModel(3), SquaredHingeModel()], ids=lambda m: m.name)
def test_models_that_are_not_quadratic_have_no_least_squares_form(model: LinearModel) -> None:
    with pytest.raises(ValueError, match="^model: .* no least-squares form"):
        model.least_squares_form(np.ones((2, 2)), np.zeros(2))


# ------------------------------------------------------------------ proofs_check on these models
def test_quadratic_path_uses_the_models_least_squares_form() -> None:
    # The exact quadratics of the constants agree with the oracle's moments at random points for a
    # quadratic model that is not the least squares of (x, y).
    problem = _with_model(random_quadratic(3, 3, 0.3, 2.0, 1.5, 5, 4, "dirichlet"), ScaledSquaresModel())
    moments = LeastSquaresMoments.of(problem)
    W = np.random.default_rng(3).normal(size=(6, problem.dim))
    for k in range(problem.n_clients):
        grads, _ = client_terms(problem, k, W)
        np.testing.assert_allclose(moments.grad_sq(k).at(W), np.sum(grads**2, axis=1), rtol=1e-10)
        np.testing.assert_allclose(moments.variance(k, 2).at(W), [gradient_variance(problem, w, 2)[k] for w in W],
                                   rtol=1e-9, atol=1e-9)
    estimate = variance_bound(problem, Ball(np.zeros(problem.dim), 1.5), 2)
    assert estimate.exact and np.all(estimate.values >= estimate.attained * (1 - 1e-9))


def test_exact_expectations_run_on_a_quadratic_models_least_squares_form() -> None:
    # w_0 = 0: E||grad F_k(w_0)||^2 and E var_k(w_0, b) are the oracle's moments at 0.
    problem = _with_model(random_quadratic(3, 3, 0.3, 2.0, 1.5, 5, 6, "dirichlet"), ScaledSquaresModel())
    H = np.einsum("k,kij->ij", problem.weights, LeastSquaresMoments.of(problem).H)
    w_star = np.linalg.solve(H, -problem.gradient(np.zeros(problem.dim)))
    trace = exact_expectations(problem, FedAvgConfig(2, 2, StepSize.constant(0.05), 2, 1.0, (2,), (0,)), w_star)
    zero = np.zeros(problem.dim)
    np.testing.assert_allclose(trace.grad_sq[0], np.sum(problem.local_gradients(zero) ** 2, axis=1), rtol=1e-12)
    np.testing.assert_allclose(trace.variance[0], gradient_variance(problem, zero, 2), rtol=1e-12)


def test_certified_bounds_of_a_model_without_gradient_bound() -> None:
    # Squared hinge: not quadratic, dl/dz unbounded, so only the Lipschitz bounds apply; every
    # constant is a certified upper bound of the values sampled in the ball.
    problem = _with_model(_binary_problem(), SquaredHingeModel())
    ball = Ball(np.full(problem.dim, 0.2), 2.0)
    variance = variance_bound(problem, ball, 3)
    assert not variance.exact and np.all(variance.values >= variance.attained) and "beta" not in variance.method
    for estimate in (second_moment_bound(problem, ball, 3), gradient_dissimilarity(problem, ball, "p")):
        assert not estimate.exact and estimate.value >= estimate.attained > 0
        assert "bounded-gradient" not in estimate.method
    for pair in bgd_curve(problem, ball, [0.0, 1.0, 4.0]):
        assert pair.G_sq >= pair.attained


def test_gradient_bound_is_read_from_the_model() -> None:
    # Logistic on a large ball: the bounded-gradient cap beta mean_i ||x_i||^2 / b is the smaller
    # bound, with beta = LogisticModel.gradient_bound = 1; without a gradient bound (same curvature,
    # a subclass stating none) the Lipschitz bound, larger, is all that is left.
    problem = _binary_problem()
    ball = Ball(np.zeros(problem.dim), 50.0)
    sizes = problem.client_sizes
    mean_row_sq = np.add.reduceat(np.sum(problem.X**2, axis=1), problem.offsets[:-1]) / sizes
    capped = variance_bound(problem, ball, 4).values
    np.testing.assert_allclose(capped, LogisticModel.gradient_bound * mean_row_sq / 4, rtol=1e-14)

    class UnstatedLogisticModel(LogisticModel):
        gradient_bound: ClassVar[float | None] = None

    lipschitz = variance_bound(_with_model(problem, UnstatedLogisticModel()), ball, 4).values
    assert np.all(lipschitz > 10 * capped)


def test_models_lacking_what_a_check_needs_give_clear_errors() -> None:
    problem = _binary_problem()
    with pytest.raises(ValueError, match="^model: logistic"):
        LeastSquaresMoments.of(problem)
    with pytest.raises(ValueError, match="^region: .*quadratic models .* not squared_hinge"):
        bgd_pair(_with_model(problem, SquaredHingeModel()), EVERYWHERE, 1.0)
    nonconvex = _with_model(problem, NonConvexHingeModel())
    with pytest.raises(ValueError, match="^problem: certified bounds over a ball need a convex loss"):
        sample_curvature(nonconvex)
    with pytest.raises(ValueError, match="^problem: certified bounds"):
        variance_bound(nonconvex, Ball(np.zeros(problem.dim), 1.0), 1)
    with pytest.raises(ValueError, match="^instance: exact expectations need a quadratic model"):
        exact_expectations(problem, FedAvgConfig(1, 1, StepSize.constant(0.1)), np.zeros(problem.dim))


def test_exact_optimum_of_a_quadratic_model_other_than_least_squares() -> None:
    # The closed form solves H w = -grad F(0) in the model's least-squares rows; an independent
    # solve of the same normal equations from the problem's own gradient (F is quadratic, so
    # grad F(w) = H w + grad F(0)) must agree, and the gradient must vanish at w*.
    problem = _with_model(random_quadratic(3, 3, 0.3, 2.0, 1.5, 5, 6, "dirichlet"), ScaledSquaresModel())
    H = np.einsum("k,kij->ij", problem.weights, LeastSquaresMoments.of(problem).H)
    expected = np.linalg.solve(H, -problem.gradient(np.zeros(problem.dim)))
    optimum = exact_optimum(problem, crosscheck=False)
    np.testing.assert_allclose(optimum.w_star, expected, rtol=1e-10)
    assert np.linalg.norm(problem.gradient(optimum.w_star)) < 1e-10
