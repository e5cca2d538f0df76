"""Exact worst cases of FedAvg: ``fedavg_worst_case``, ``fedavg_limit_worst_case`` and ``worst_case``.

A request (``setting.FedAvgPEP`` or ``FedAvgLimitPEP``) is built into the clients' symmetric program
(``program``; a ``FedAvgPEP`` with unequal client weights into its N-client program, ``weighted``; a
``DriftPEP`` into its N-client program, ``drift``), solved (``sdp``) and returned as a ``WorstCase``: the value with the solver's status,
its accuracy and the time it took. ``float(result)`` and ``result.value`` are the worst case (the
primal objective: the metric of the worst function set the solver found); read it only when
``result.solved`` (``sdp.SDPSolution.solved``), else it is NaN or not accurate to tolerance.

Solved programs are cached by their request (its JSON and the solver's settings, ``cache_key``): in
a run store when one is given (``store``, the store of ``fedbound verify``: a program solved once is
read back by every later verification and by ``fedbound report``; a read-only store that lacks one
raises ``convergence.MissingRunError``), else in this process. The store keeps the figures (value,
dual value, residuals, gap, iterations, status code) as arrays and the times in the metadata.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .block_cyclic import MMPSGDPEP, reduced_clients
from .sdp import SolverAccuracy
from .setting import BGD, DriftPEP, FedAvgLimitPEP, FedAvgPEP, PEPError, PEPSetting, constant_steps, unit_length

if TYPE_CHECKING:
    from convergence import RunStore

    from .program import Program

__all__ = ["STATUSES", "WorstCase", "build_program", "cache_key", "fedavg_limit_worst_case", "fedavg_worst_case",
           "mm_psgd_worst_case", "worst_case"]

STATUSES = ("optimal", "optimal_inaccurate", "user_limit", "infeasible", "infeasible_inaccurate", "unbounded",
            "unbounded_inaccurate", "infeasible_or_unbounded", "solver_error")
"""cvxpy's statuses (and "solver_error" when the solver failed), as the store codes them (the index)."""
_FIGURES = ("value", "dual_value", "primal_residual", "dual_residual", "duality_gap", "iterations", "status_code")
_FORMAT = 1
"""The version of the stored figures: a change of the program or of their layout makes new keys."""
_SOLVED: dict[str, WorstCase] = {}


@dataclass(frozen=True)
class WorstCase(SolverAccuracy):
    """The worst case of ``setting`` (module docstring): ``value`` (NaN when the solver returned
    nothing), the dual ``dual_value`` (an upper bound when the dual is feasible), cvxpy's ``status``,
    the ``primal_residual``, ``dual_residual`` and ``duality_gap`` (``sdp``), the solver's
    ``iterations``, and ``seconds`` / ``cpu_seconds`` (wall and process CPU time of building the program
    with PEPit and solving it; those of the original solve when ``cached``)."""

    setting: PEPSetting | MMPSGDPEP
    value: float
    dual_value: float
    status: str
    primal_residual: float
    dual_residual: float
    duality_gap: float
    iterations: int
    seconds: float
    cpu_seconds: float
    cached: bool = False

    def __float__(self) -> float:
        return self.value

    def summary(self) -> str:
        """One line: the metric, its worst case and how it was solved."""
        s = self.setting
        if isinstance(s, MMPSGDPEP):
            what = (f"(1/M) sum_m F_m(x~_m) - F(x*) of MM-PSGD (M = {s.blocks}, C = {s.cycles}, E = {s.rounds_per_block}, "
                    f"I = {s.local_steps}, gamma = {s.step:g}, B = {s.B:g}, G = {s.G:g})")
        elif isinstance(s, DriftPEP):
            drift = "||x_1 - xbar||^2" if s.metric == "client" else "(1/N) sum_i ||x_i - xbar||^2"
            what = f"the drift {drift} after K = {s.local_steps} local steps (s = {s.step:g}, G = {s.G:g})"
        elif isinstance(s, FedAvgLimitPEP):
            prox = f", FedProx mu_prox = {s.mu_prox:g}" if s.mu_prox > 0 else ""
            bgd = f", (G, B)-BGD G = {s.bgd.G:g}, B = {s.bgd.B:g}" if s.bgd is not None else ""
            what = f"||w~ - x*||^2 of the limit (E = {s.local_steps}, eta = {s.step:g}{prox}{bgd})"
        else:
            metric = "||x_R - x*||^2" if s.metric == "distance" else "F(x_R) - F*"
            prox = f", FedProx mu_prox = {s.mu_prox:g}" if s.mu_prox > 0 else ""
            bgd = f", (G, B)-BGD G = {s.bgd.G:g}, B = {s.bgd.B:g}" if s.bgd is not None else ""
            weights = f", weights {', '.join(f'{p:g}' for p in s.weights)}" if s.weights is not None else ""
            what = f"{metric} after R = {s.rounds} rounds of E = {s.local_steps} local steps{prox}{bgd}{weights}"
        state = "solved" if self.solved else "NOT solved to tolerance"
        return (f"worst case of {what} over N = {s.n_clients} {s.function_class} clients: {self.value:.10g} ({state}: "
                f"{self.status}, accuracy {self.accuracy:.2g}, {self.iterations} iterations, {self.seconds:.2f} s"
                f"{', cached' if self.cached else ''})")

    def figures(self) -> dict[str, Any]:
        """The status and figures as JSON (for a verdict's evidence)."""
        return {"value": _json_float(self.value), "dual_value": _json_float(self.dual_value), "status": self.status,
                "solved": self.solved, "accuracy": _json_float(self.accuracy),
                "primal_residual": _json_float(self.primal_residual), "dual_residual": _json_float(self.dual_residual),
                "duality_gap": _json_float(self.duality_gap), "iterations": self.iterations,
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds}


def _json_float(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def cache_key(setting: PEPSetting, max_iter: int) -> str:
    """The key of a request in the caches: ``pep-`` and the digest of its JSON and the solver's settings."""
    from problems import json_digest

    return "pep-" + json_digest(_config(setting, max_iter), 40)


def _config(setting: PEPSetting, max_iter: int) -> dict[str, Any]:
    from .sdp import SOLVER, SOLVER_TOLERANCE

    return {"pep": setting.to_json(), "format": _FORMAT,
            "solver": {"name": SOLVER, "tolerance": SOLVER_TOLERANCE, "max_iter": max_iter}}


def worst_case(setting: PEPSetting, *, max_iter: int | None = None, store: RunStore | None = None,
               use_cache: bool = True) -> WorstCase:
    """The worst case of ``setting``, from the caches when ``use_cache`` (module docstring), else solved
    (and then cached). ``max_iter``: the solver's iteration limit (Clarabel's default 200 when None)."""
    from .sdp import DEFAULT_MAX_ITER

    if not isinstance(setting, (FedAvgPEP, FedAvgLimitPEP, DriftPEP, MMPSGDPEP)):
        raise PEPError(f"setting: expected a FedAvgPEP, FedAvgLimitPEP, DriftPEP or MMPSGDPEP, got "
                       f"{type(setting).__name__}")
    max_iter = DEFAULT_MAX_ITER if max_iter is None else max_iter
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise PEPError(f"max_iter: expected a positive integer, got {max_iter!r}")
    key = cache_key(setting, max_iter)
    if use_cache:
        found = _SOLVED.get(key) if store is None else _stored(store, key, setting)
        if found is not None:
            return dataclasses.replace(found, cached=True)
    if store is not None and store.readonly:
        from convergence import MissingRunError

        raise MissingRunError(store.path, key, 1)
    result = _solve(setting, max_iter)
    if store is None:
        _SOLVED[key] = result
    else:
        import numpy as np

        arrays = {name: np.asarray(float(getattr(result, name)) if name != "status_code"
                                   else STATUSES.index(result.status) if result.status in STATUSES else -1)
                  for name in _FIGURES}
        store.put(key, _config(setting, max_iter), arrays, {"seconds": result.seconds, "cpu_seconds": result.cpu_seconds})
    return result


def _solve(setting: PEPSetting, max_iter: int) -> WorstCase:
    """Solve ``setting`` scaled to unit length (``setting.unit_length``) and scale the values back."""
    import time

    from .sdp import solve_program

    start, cpu_start = time.perf_counter(), time.process_time()
    unit, length = setting.unit_length() if isinstance(setting, MMPSGDPEP) else unit_length(setting)
    solution = solve_program(build_program(unit), max_iter)
    return WorstCase(setting, solution.value * length ** 2, solution.dual_value * length ** 2, solution.status,
                     solution.primal_residual, solution.dual_residual, solution.duality_gap, solution.iterations,
                     time.perf_counter() - start, time.process_time() - cpu_start)


def build_program(setting: PEPSetting) -> Program:
    """The program of ``setting``, by its type: ``program.fedavg_program`` (FedAvgPEP; with unequal client
    weights ``weighted.weighted_program``), ``program.limit_program`` (FedAvgLimitPEP),
    ``drift.drift_program`` (DriftPEP) or ``block_cyclic.mm_psgd_program`` (MMPSGDPEP)."""
    from .block_cyclic import mm_psgd_program
    from .drift import drift_program
    from .program import fedavg_program, limit_program
    from .weighted import weighted_program

    if isinstance(setting, FedAvgPEP):
        return fedavg_program(setting) if setting.weights is None else weighted_program(setting)
    if isinstance(setting, FedAvgLimitPEP):
        return limit_program(setting)
    if isinstance(setting, DriftPEP):
        return drift_program(setting)
    if isinstance(setting, MMPSGDPEP):
        return mm_psgd_program(setting)
    raise TypeError(f"setting: expected a FedAvgPEP, FedAvgLimitPEP or DriftPEP, got {type(setting).__name__}")


def _stored(store: RunStore, key: str, setting: PEPSetting) -> WorstCase | None:
    """The stored result of ``key``, or None when the store has none or one of another layout."""
    run = store.load(key)
    if run is None or set(run.result) != set(_FIGURES):
        return None
    figures = {name: float(run.result[name]) for name in _FIGURES}
    code = int(figures.pop("status_code"))
    status = STATUSES[code] if 0 <= code < len(STATUSES) else "unknown"
    return WorstCase(setting, figures["value"], figures["dual_value"], status, figures["primal_residual"],
                     figures["dual_residual"], figures["duality_gap"], int(figures["iterations"]),
                     float(run.meta.get("seconds", math.nan)), float(run.meta.get("cpu_seconds", math.nan)), cached=True)


def fedavg_worst_case(
    n_clients: int, local_steps: int, rounds: int, L: float, mu: float, step: float | Sequence[float], zeta: float | None,
    r0: float, metric: str = "distance", *, server_step: float = 1.0, Gamma: float | None = None, G: float | None = None,
    function_class: str = "smooth", mu_prox: float = 0.0, bgd: BGD | tuple[float, float] | None = None,
    weights: Sequence[float] | None = None, max_iter: int | None = None, store: RunStore | None = None,
) -> WorstCase:
    """The exact worst case of FedAvg (FedProx with proximal coefficient ``mu_prox`` > 0) over the class (``setting.FedAvgPEP``): ``n_clients`` clients,
    each L-smooth and mu-strongly convex (mu = 0: convex), ``local_steps`` (E) gradient steps per round of
    size ``step`` (a number, or one step per local step: E x rounds of them), ``rounds`` (R) rounds,
    sum_i p_i ||grad f_i(x*)||^2 <= zeta^2 (None: not bounded), ||x_0 - x*|| <= r0, metric
    ``"distance"`` (||x_R - x*||^2) or ``"gap"`` (F(x_R) - F*). Optional: the server step, Gamma
    (F* - sum_i p_i f_i* <= Gamma), G (||grad f_i||^2 <= G^2 at every local iterate), the function
    class ("quadratic": every f_i a quadratic, ``setting.FUNCTION_CLASSES``), ``bgd`` the (G, B)-BGD pair
    (``setting.BGD`` or a pair (G, B): sum_i p_i ||grad f_i(x)||^2 <= G^2 + B^2 ||grad F(x)||^2 at x* and
    the server models, a relaxation of the class, ``setting``) and the clients' ``weights`` p_i (None:
    1/N; the heterogeneity measures and the server's average are then weighted by them).

    Returns a ``WorstCase``: ``.value`` (also ``float(result)``) with the solver's status, accuracy and
    time; read the value when ``.solved``. With equal weights, or weights none of which exceeds 1/2, the
    worst case is the same for every n_clients >= 2 (``program``, ``weighted``), so it is solved once for
    all of them; when one client has more than half the weight the N-client program is solved
    (``weighted``). Bad input raises PEPError naming the field.
    """
    steps = _step_list(step, local_steps, rounds)
    setting = FedAvgPEP(n_clients, local_steps, rounds, L, mu, steps, r0, server_step, zeta, Gamma, G, metric,
                        function_class, mu_prox, _pair(bgd), weights)
    return _for_every_n(setting, max_iter=max_iter, store=store)


def fedavg_limit_worst_case(
    n_clients: int, local_steps: int, L: float, mu: float, step: float, zeta: float | None, *,
    Gamma: float | None = None, function_class: str = "smooth", mu_prox: float = 0.0,
    bgd: BGD | tuple[float, float] | None = None, max_iter: int | None = None, store: RunStore | None = None,
) -> WorstCase:
    """The worst-case bias ||w~ - x*||^2 of constant-step FedAvg's (FedProx's, ``mu_prox`` > 0) limit w~ over
    the class (``setting.FedAvgLimitPEP``: needs mu > 0, step < 2/(L + 2 mu_prox) and zeta, Gamma or the
    (G, B)-BGD pair ``bgd``, at x* and w~). Returns a ``WorstCase``."""
    setting = FedAvgLimitPEP(n_clients, local_steps, L, mu, step, zeta, Gamma, function_class, mu_prox, _pair(bgd))
    return _for_every_n(setting, max_iter=max_iter, store=store)


def _pair(bgd: Any) -> Any:
    """A pair (G, B) as a ``BGD``; anything else as given (the settings check it)."""
    if isinstance(bgd, tuple):
        if len(bgd) != 2:
            raise PEPError(f"bgd: expected a pair (G, B), got {bgd!r}")
        return BGD(*bgd)
    return bgd


def _step_list(step: Any, local_steps: Any, rounds: Any) -> Any:
    """A real number as a constant schedule of E x R steps; anything else as given (``FedAvgPEP`` checks it)."""
    counts = isinstance(local_steps, int) and isinstance(rounds, int) and local_steps > 0 and rounds > 0
    if counts and isinstance(step, numbers.Real) and not isinstance(step, bool):
        return constant_steps(step, local_steps * rounds)
    return step


def _for_every_n(setting: FedAvgPEP | FedAvgLimitPEP, *, max_iter: int | None, store: RunStore | None) -> WorstCase:
    """The worst case of ``setting`` solved at n_clients = 2 with equal weights when it has more clients of equal
    weights, or weights none of which exceeds 1/2 (the same value: ``program``, ``weighted``; every such setting
    shares one cached solve), returned with ``setting`` itself."""
    weighted = isinstance(setting, FedAvgPEP) and setting.weights is not None
    if weighted and max(setting.weights) > 0.5 or setting.n_clients <= 2 and not weighted:
        return worst_case(setting, max_iter=max_iter, store=store)
    changes = {"weights": None} if weighted else {}
    result = worst_case(dataclasses.replace(setting, n_clients=2, **changes), max_iter=max_iter, store=store)
    return dataclasses.replace(result, setting=setting)



def mm_psgd_worst_case(
    n_clients: int, blocks: int, cycles: int, rounds_per_block: int, local_steps: int, L: float, mu: float,
    step: float, B: float, G: float, *, function_class: str = "smooth", max_iter: int | None = None,
    store: RunStore | None = None, use_cache: bool = True,
) -> WorstCase:
    """The worst-case mini-max gap (1/M) sum_m F_m(x~_m) - F(x*) of MM-PSGD over the class of ``MMPSGDPEP``
    (module docstring), solved once per ``block_cyclic.reduced_clients`` (its value holds for every N that shares it) and
    returned with the requested setting (``use_cache``: as ``worst_case``'s). Read ``.value`` when ``.solved``;
    bad input raises PEPError naming the field."""
    setting = MMPSGDPEP(n_clients, blocks, cycles, rounds_per_block, local_steps, L, mu, step, B, G,
                        function_class=function_class)
    solved = worst_case(dataclasses.replace(setting, n_clients=reduced_clients(setting)), max_iter=max_iter,
                        store=store, use_cache=use_cache)
    return dataclasses.replace(solved, setting=setting)
