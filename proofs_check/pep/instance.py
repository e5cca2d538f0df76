"""The worst case over quadratics as a fedbound problem, run through the engine: a cross-check of both.

For ``FedAvgPEP`` with ``function_class = "quadratic"`` the solved program's Gram blocks are a
configuration of vectors (factor G_c = V_c'V_c and G_d = V_d'V_d; a common leaf is (V_c e_j, 0), a
deviation leaf (0, V_d e_j), in R^(r_c + r_d), r the blocks' numerical ranks) in which client 1's
points x_i, gradients g_i and minimiser x_s are interpolated by a quadratic f(x) = 1/2 (x - x_s)' Q
(x - x_s) + f_s, mu I <= Q <= L I (``quadratic``). Q is recovered as the least-squares solution of
Q (x_i - x_s) = g_i under mu I <= Q <= L I (cvxpy); its relative misfit is ``fit_residual``.
Client 2 is client 1 reflected through the common block, R = diag(I, -I): Q_2 = R Q R, x_s2 = R x_s
(the symmetric reduction's lift at N = 2, ``program``), so x* = 0 minimises F = (f_1 + f_2)/2 and
the program's x_0 is the start.

``engine_check`` writes the two clients as least squares, F_k(w) = 1/(2n) ||X_k w - y_k||^2 with
X_k = sqrt(n) Q_k^(1/2) and y_k = X_k x_sk (n = d rows; ``problems.from_arrays``, weights 1/2), runs
FedAvg (FedProx when ``mu_prox`` > 0) on it with the engine (``convergence.run``: exact gradients, the
program's E, R, steps, server step and mu_prox, w_0 = x_0) and compares the run's metric after R rounds with the program's value.
Tolerance ``ENGINE_TOLERANCE`` = 1e-3 relative: the instance realises the solver's primal point, whose
constraints hold to about 1e-8 (the primal residual); a Gram matrix known to eps determines its vectors
only to about sqrt(eps) = 1e-4 in its nearly null directions (an interior-point solution has the
largest rank the optimal face allows), which the quadratic fit absorbs (fit residual measured 3e-8
to 7e-5, with eigenvalues below 1e-7 of the largest dropped); measured, the run's value agrees with the
program's to 3e-9 to 3e-5 (tests/test_pep.py), and the tolerance is ten times sqrt(eps).

Whether quadratics attain the smooth class's worst case is for the two programs to say
(``function_class`` "smooth" against "quadratic"): for gradient descent (E = 1) they do, for E > 1
they do not (tests/test_pep.py: 0.672 against 0.625 at E = 2, R = 3), so the instance is then the worst
case over quadratics, below the class's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .setting import FedAvgPEP, PEPError, unit_length

if TYPE_CHECKING:
    from convergence import StepSize

__all__ = ["ENGINE_TOLERANCE", "EngineCheck", "QuadraticInstance", "engine_check", "fit_hessian", "gram_factor",
           "quadratic_instance", "sqrt_psd"]

ENGINE_TOLERANCE = 1e-3
"""The relative difference allowed between the engine's run on the instance and the program's value
(module docstring)."""
_RANK_TOLERANCE = 1e-7
"""Eigenvalues of a Gram block below this fraction of its largest are taken as zero (the rank)."""


@dataclass(frozen=True)
class QuadraticInstance:
    """Two quadratic clients f_k(x) = 1/2 (x - centres[k])' hessians[k] (x - centres[k]) in R^d
    (hessians (2, d, d), centres (2, d)), the start ``x0`` (d,), the program's ``value`` and status,
    and ``fit_residual`` ||Q (x_i - x_s) - g_i||_F / ||g_i||_F of client 1's quadratic."""

    setting: FedAvgPEP
    hessians: np.ndarray
    centres: np.ndarray
    x0: np.ndarray
    value: float
    solved: bool
    fit_residual: float


@dataclass(frozen=True)
class EngineCheck:
    """The engine's metric after R rounds on the instance against the program's value."""

    instance: QuadraticInstance
    simulated: float
    relative_difference: float

    @property
    def agrees(self) -> bool:
        """Within ENGINE_TOLERANCE (relative), and the program solved to tolerance."""
        return self.instance.solved and self.relative_difference <= ENGINE_TOLERANCE


def quadratic_instance(setting: FedAvgPEP, max_iter: int | None = None) -> QuadraticInstance:
    """Solve ``setting`` (the quadratic class, N >= 2) and read its worst-case instance (module docstring)."""
    from .program import fedavg_program
    from .sdp import DEFAULT_MAX_ITER, solve_program

    if not isinstance(setting, FedAvgPEP) or setting.function_class != "quadratic" or setting.n_clients < 2:
        raise PEPError("setting: expected a FedAvgPEP of the quadratic class with n_clients >= 2")
    unit, length = unit_length(setting)
    program = fedavg_program(unit)
    solution = solve_program(program, DEFAULT_MAX_ITER if max_iter is None else max_iter)
    if not np.isfinite(solution.value):
        raise PEPError(f"setting: the program was not solved ({solution.status}), so it has no instance")
    common, deviation = (gram_factor(g) for g in solution.gram)
    r_c = common.shape[0]
    coordinates = {leaf.counter: np.concatenate([common[:, j], np.zeros(deviation.shape[0])])
                   for j, leaf in enumerate(program.common)}
    coordinates.update({leaf.counter: np.concatenate([np.zeros(r_c), deviation[:, j]])
                        for j, leaf in enumerate(program.deviation)})

    def vector(point: Any) -> np.ndarray:
        """A PEPit Point's coordinates, scaled back from the unit-length program."""
        return length * sum((w * coordinates[leaf.counter] for leaf, w in point.decomposition_dict.items()),
                            np.zeros(r_c + deviation.shape[0]))

    centre = vector(program.minimiser[0])
    hessian, fit = fit_hessian(program.function.list_of_points, centre, vector, setting.L, setting.mu)
    reflect = np.concatenate([np.ones(r_c), -np.ones(deviation.shape[0])])
    hessians = np.stack([hessian, reflect[:, None] * hessian * reflect[None, :]])
    return QuadraticInstance(setting, hessians, np.stack([centre, reflect * centre]), vector(program.iterates[0]),
                             solution.value * length ** 2, solution.solved, fit)


def fit_hessian(points: Any, centre: np.ndarray, vector: Any, L: float, mu: float) -> tuple[np.ndarray, float]:
    """Q with mu I <= Q <= L I fitting Q (x_i - centre) = g_i in least squares over ``points`` (PEPit (point,
    gradient, value) triples, ``vector`` their coordinates), and its relative misfit (module docstring)."""
    import cvxpy as cp

    U = np.array([vector(x) - centre for x, _, _ in points]).T
    G = np.array([vector(g) for _, g, _ in points]).T
    d = U.shape[0]
    Q = cp.Variable((d, d), symmetric=True)
    cp.Problem(cp.Minimize(cp.norm(Q @ U - G, "fro")),  # the norm, not its square: its accuracy is the solver's
               [Q >> mu * np.eye(d), L * np.eye(d) - Q >> 0]).solve(solver="CLARABEL")
    hessian = (Q.value + Q.value.T) / 2
    return hessian, float(np.linalg.norm(hessian @ U - G) / max(np.linalg.norm(G), 1e-300))


def gram_factor(gram: np.ndarray) -> np.ndarray:
    """V (r, n) with V'V = gram up to the eigenvalues below _RANK_TOLERANCE of the largest."""
    if gram.size == 0:
        return np.zeros((0, 0))
    eigenvalues, vectors = np.linalg.eigh((gram + gram.T) / 2)
    keep = eigenvalues > _RANK_TOLERANCE * max(eigenvalues[-1], 0.0)
    return np.sqrt(eigenvalues[keep])[:, None] * vectors[:, keep].T


def engine_check(instance: QuadraticInstance, step_size: StepSize | None = None,
                 data_dir: str | os.PathLike[str] | None = None) -> EngineCheck:
    """Run FedAvg on ``instance`` with the engine and compare (module docstring). ``step_size`` is the
    engine's schedule of the program's steps (None: a constant one, when they are all equal); it must
    give the program's steps. ``data_dir``: where ``problems.from_arrays`` writes the instance."""
    import convergence
    import problems

    setting = instance.setting
    T, E = setting.total_steps, setting.local_steps
    if step_size is None:
        if len(set(setting.steps)) != 1:
            raise PEPError("step_size: the program's steps are not constant: give the engine's schedule of them")
        step_size = convergence.StepSize.constant(setting.steps[0])
    if not np.allclose(step_size.at(np.arange(T), E), setting.steps, rtol=1e-12, atol=0):
        raise PEPError("step_size: the schedule does not give the program's steps")
    d = instance.x0.size
    roots = [sqrt_psd(Q) for Q in instance.hessians]
    X = np.vstack([np.sqrt(d) * root for root in roots])
    y = np.concatenate([np.sqrt(d) * root @ centre for root, centre in zip(roots, instance.centres)])
    problem = problems.from_arrays(X, y, np.repeat([0, 1], d), loss="least_squares", weights=[0.5, 0.5],
                                   name="pep worst case over quadratics", data_dir=data_dir)
    start = tuple(float(v) for v in instance.x0)
    algorithm = (convergence.FedProxConfig(E, setting.rounds, step_size, setting.mu_prox, 0, setting.server_step,
                                           (setting.rounds,), (0,), start) if setting.mu_prox > 0 else
                 convergence.FedAvgConfig(E, setting.rounds, step_size, 0, setting.server_step, (setting.rounds,), (0,),
                                          initial_model=start))
    config = convergence.RunConfig(problem.spec, algorithm)
    result = convergence.run(config, problem=problem)
    simulated = float((result.dist_sq if setting.metric == "distance" else result.gap)[0, -1])
    return EngineCheck(instance, simulated, abs(simulated - instance.value) / max(abs(instance.value), 1e-300))


def sqrt_psd(matrix: Any) -> np.ndarray:
    """The symmetric square root of a symmetric PSD matrix (eigenvalues clipped at 0: solver noise)."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.maximum(eigenvalues, 0.0))) @ vectors.T
