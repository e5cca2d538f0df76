"""MM-PSGD's worst case over quadratics as a block-cyclic problem, run through the engine: a cross-check of both.

For ``block_cyclic.MMPSGDPEP`` with ``function_class = "quadratic"`` (the reduced program with N' =
``reduced_clients`` clients per block: 1 when I = 1, else 2), the solved program's Gram blocks (the common
block and one deviation block per data block) are factored into one configuration of vectors (``instance``'s
``gram_factor``: the blocks on orthogonal coordinates); each block's f_m is fitted by a quadratic
1/2 (x - c_m)' Q_m (x - c_m) through its points, gradients and minimiser (``instance.fit_hessian``). With
N' = 2, client 2 of block m is client 1 reflected through block m's deviation coordinates (the reduction's
lift, ``block_cyclic``); with N' = 1 a block has one client. The instance is moved so that x_0 = 0 (the engine
starts there; the mini-max gap does not change under a translation of every function).

``block_cyclic_engine_check`` writes every client as least squares, F_m^i(w) = 1/(2d) ||X w - y||^2 with
X = sqrt(d) Q^(1/2), y = X c (``problems.BlockCyclicProblem.from_parts``), runs fedbound's MM-PSGD on it
(``convergence.MM_PSGD``, ``MMPSGDConfig``: exact gradients, the program's C, E, I and step, eq. 7's average
predictor) and evaluates (1/M) sum_m F_m(x~_m) - F(x*) at the engine's predictors with the problem's own
objectives and exact optimum. Tolerance ``instance.ENGINE_TOLERANCE`` (1e-3 relative), for the reasons stated
there (measured: 2e-8 and 7e-8, tests/test_pep_block_cyclic.py). Quadratics do not attain the smooth class's
worst case here (0.80 to 0.95 of it where solved), so the instance is the worst case over quadratics; what it
checks is that the program writes the method fedbound runs (the block order, the local steps and the averaging,
the predictors).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .block_cyclic import MMPSGDPEP, mm_psgd_program, reduced_clients
from .instance import ENGINE_TOLERANCE, fit_hessian, gram_factor, sqrt_psd
from .setting import PEPError

__all__ = ["BlockCyclicInstance", "BlockCyclicEngineCheck", "block_cyclic_instance", "block_cyclic_engine_check"]


@dataclass(frozen=True)
class BlockCyclicInstance:
    """Quadratic clients f_(m,i)(x) = 1/2 (x - centres[m, i])' hessians[m, i] (x - centres[m, i]) in R^d
    (hessians (M, N', d, d), centres (M, N', d)), started at x_0 = 0, the program's ``value`` and whether it was
    ``solved``, and ``fit_residual``, the largest relative misfit of a block's fitted quadratic."""

    setting: MMPSGDPEP
    hessians: np.ndarray
    centres: np.ndarray
    value: float
    solved: bool
    fit_residual: float


@dataclass(frozen=True)
class BlockCyclicEngineCheck:
    """The engine's mini-max gap on the instance against the program's value."""

    instance: BlockCyclicInstance
    simulated: float
    relative_difference: float

    @property
    def agrees(self) -> bool:
        """Within ENGINE_TOLERANCE (relative), and the program solved to tolerance."""
        return self.instance.solved and self.relative_difference <= ENGINE_TOLERANCE


def block_cyclic_instance(setting: MMPSGDPEP, max_iter: int | None = None) -> BlockCyclicInstance:
    """Solve ``setting`` (the quadratic class) with N' clients per block and read its worst-case instance
    (module docstring)."""
    from .sdp import DEFAULT_MAX_ITER, solve_program

    if not isinstance(setting, MMPSGDPEP) or setting.function_class != "quadratic" or setting.anywhere:
        raise PEPError("setting: expected an MMPSGDPEP of the quadratic class (with the method's predictors)")
    unit, length = dataclasses.replace(setting, n_clients=reduced_clients(setting)).unit_length()
    program = mm_psgd_program(unit)
    solution = solve_program(program, DEFAULT_MAX_ITER if max_iter is None else max_iter)
    if not np.isfinite(solution.value):
        raise PEPError(f"setting: the program was not solved ({solution.status}), so it has no instance")
    factors = [gram_factor(gram) for gram in solution.gram]
    ranks = [f.shape[0] for f in factors]
    starts = np.concatenate(([0], np.cumsum(ranks)))
    coordinates = {}
    for k, (block, factor) in enumerate(zip(program.blocks, factors)):
        for j, leaf in enumerate(block):
            coordinates[leaf.counter] = np.zeros(starts[-1])
            coordinates[leaf.counter][starts[k]:starts[k + 1]] = factor[:, j]

    def vector(point: Any) -> np.ndarray:
        """A PEPit Point's coordinates, scaled back from the unit-length program."""
        return length * sum((w * coordinates[leaf.counter] for leaf, w in point.decomposition_dict.items()),
                            np.zeros(starts[-1]))

    x0 = vector(program.iterates[0])
    deviating = [k for k, block in enumerate(program.deviations) if block]  # the data blocks with deviation leaves
    hessians, centres, fits = [], [], []
    for m, (f, (minimiser, _)) in enumerate(zip(program.functions, program.minimisers)):
        centre = vector(minimiser)
        hessian, fit = fit_hessian(f.list_of_points, centre, vector, setting.L, setting.mu)
        fits.append(fit)
        clients_h, clients_c = [hessian], [centre - x0]
        if m in deviating:  # client 2: the reflection through block m's deviation coordinates
            k = 1 + deviating.index(m)
            reflect = np.ones(starts[-1])
            reflect[starts[k]:starts[k + 1]] = -1.0
            clients_h.append(reflect[:, None] * hessian * reflect[None, :])
            clients_c.append(reflect * centre - x0)
        hessians.append(clients_h)
        centres.append(clients_c)
    return BlockCyclicInstance(setting, np.array(hessians), np.array(centres), solution.value * length ** 2,
                               solution.solved, max(fits))


def block_cyclic_engine_check(instance: BlockCyclicInstance) -> BlockCyclicEngineCheck:
    """Run MM-PSGD on ``instance`` with the engine and compare (module docstring)."""
    import convergence
    import problems

    setting = instance.setting
    M, N, d = instance.centres.shape
    parts = []
    for m in range(M):
        for i in range(N):
            X = np.sqrt(d) * sqrt_psd(instance.hessians[m, i])
            parts.append((X, X @ instance.centres[m, i]))
    problem = problems.BlockCyclicProblem.from_parts(
        "pep worst case of MM-PSGD over quadratics", problems.LossKind.LEAST_SQUARES, parts, M, N, 0.0, 1, None,
        "the worst-case instance of proofs_check.pep.block_cyclic over quadratics")
    config = convergence.MMPSGDConfig(cycles=setting.cycles, rounds_per_block=setting.rounds_per_block,
                                      local_steps=setting.local_steps,
                                      step_size=convergence.StepSize.constant(setting.step), predictor="average")
    result = convergence.run(convergence.RunConfig(None, config), problem=problem)
    predictors = np.asarray(result.extras.predictors)[0, -1]
    F_star = problems.exact_optimum(problem.combined, crosscheck=False).F_star
    simulated = float(np.mean([problem.block(m).objective(predictors[m]) for m in range(M)]) - F_star)
    difference = abs(simulated - instance.value) / max(abs(instance.value), 1e-300)
    return BlockCyclicEngineCheck(instance, simulated, difference)
