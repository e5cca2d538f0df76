"""What a performance-estimation program of FedAvg is asked: the method, the function class, the metric.

FedAvg with full participation and exact local gradients, N clients of weights p_i (``weights``; None:
p_i = 1/N), objective F = sum_i p_i f_i, x* a minimiser of F. Round r starts every client at the server
model x_r, each runs E gradient steps on its own f_i and the server moves towards their weighted average:

    y_i^0 = x_r,   y_i^(e+1) = y_i^e - eta_t (grad f_i(y_i^e) + mu_prox (y_i^e - x_r))   (t = r E + e, e = 0..E-1),
    x_(r+1) = x_r + s (sum_i p_i y_i^E - x_r)                   (s: the server step, 1 in plain FedAvg).

``mu_prox`` >= 0 is FedProx's proximal coefficient (Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, MLSys
2020, with E exact gradient steps on h_i(y) = f_i(y) + mu_prox/2 ||y - x_r||^2: the local step of
fedbound's ``convergence.FedProxConfig``, where f_i holds the problem's l2 term); mu_prox = 0 is FedAvg,
the same program and the same cache key (``to_json`` leaves a zero mu_prox out). Parallel restarted SGD
with exact gradients and every client (``convergence.PRSGDConfig``, Yu, Yang and Zhu 2019: a constant
step s, K local steps, simple averaging) is FedAvg with ``constant_steps(s, K R)``, E = K and server step 1:
the same program.

The class (``FedAvgPEP``): every f_i L-smooth and mu-strongly convex (mu = 0: L-smooth convex),
||x_0 - x*|| <= r0, and any of

* ``zeta``:  sum_i p_i ||grad f_i(x*)||^2 <= zeta^2     (gradient dissimilarity at the optimum);
* ``Gamma``: F* - sum_i p_i f_i* <= Gamma                (Li et al., ICLR 2020: Gamma = F* - sum_k p_k F_k*);
* ``G``:     ||grad f_i(y_i^e)||^2 <= G^2 at every local iterate where a gradient is taken
             (Li et al.'s Assumption 4 with exact gradients, sigma_k = 0);
* ``bgd``:   the (G, B)-bounded gradient dissimilarity (``BGD``; Karimireddy et al., ICML 2020,
             Assumption A1), sum_i p_i ||grad f_i(x)||^2 <= G^2 + B^2 ||grad F(x)||^2, imposed at the points
             where the program has every client's gradient: x* (there it reads sum_i p_i ||grad f_i(x*)||^2
             <= G^2, the ``zeta`` constraint with zeta = G), the server models x_0, ..., x_(R-1) (each
             client's first local step) and, for the metric "gap", x_R. The assumption holds at every x,
             the program asks it at these points only: a relaxation of the class, so its worst case is an
             upper bound on the (G, B)-BGD class's (a bound above it holds over the class; one below it
             need not fail there). It is at most the ``zeta = G`` class's worst case (whose program is the
             one at x* alone) and non-decreasing in B; B = 1 is the bounded dissimilarity
             sum_i p_i ||grad f_i(x) - grad F(x)||^2 <= G^2 at those points (Yu, Jin and Yang 2019's sigma_G).
             Asking it also at every client's local iterates (every other client's gradient there: an
             N-client program, which the symmetry does not reduce; not built) moved the worst case by at
             most 4e-4 (relative) in a trial at N = 2, 3, E = 2, 4, R = 2, G = 1, B = 0, 1, 2.

The metric after R rounds: ``"distance"`` ||x_R - x*||^2 or ``"gap"`` F(x_R) - F*. ``function_class``
"quadratic" restricts every f_i to quadratics (``FUNCTION_CLASSES``).

``FedAvgLimitPEP`` asks for the limit of constant-step FedAvg (FedProx when ``mu_prox`` > 0) instead:
for mu > 0 and 0 < eta < 2/(L + 2 mu_prox) the round map is a contraction for any server step s in
(0, 1], so the method converges from every x_0 to its unique fixed point w~, the point with
(1/N) sum_i y_i^E = w~ when the clients start at w~ (s cancels). (One local step with anchor w is
y -> [(1 - eta mu_prox) y - eta grad f_i(y)] + eta mu_prox w; the bracket is Lipschitz with
q = max{|1 - eta (mu + mu_prox)|, |1 - eta (L + mu_prox)|}, so E steps move with w by at most
c = q^E + b (1 - q^E)/(1 - q), b = eta mu_prox, and c < 1 iff q < 1 and b < 1 - q, which for
mu > 0 is eta < 2/(L + 2 mu_prox); mu_prox = 0 is FedAvg's eta < 2/L, c = q^E.) Its metric is the
bias ||w~ - x*||^2 over the class with ``zeta``, ``Gamma`` or ``bgd`` (at x* and w~).

``DriftPEP`` asks for the client drift of FedAvg after K local steps over L-smooth (non-convex)
clients with bounded gradients (Yu, Yang and Zhu's lemma; ``proofs_check.pep.drift``).

All are frozen dataclasses that check their fields (``PEPError`` naming the field) and serialise
to JSON (``to_json``), which keys the cache (``proofs_check.pep.worst_case``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["PEPError", "METRICS", "DRIFT_METRICS", "FUNCTION_CLASSES", "BGD", "FedAvgPEP", "FedAvgLimitPEP",
           "DriftPEP", "PEPSetting", "checked_class", "checked_int", "checked_real", "constant_steps", "unit_length"]

METRICS = ("distance", "gap")
"""``"distance"``: ||x_R - x*||^2; ``"gap"``: F(x_R) - F*."""
FUNCTION_CLASSES = ("smooth", "quadratic")
"""Each client's f_i: ``"smooth"``, L-smooth and mu-strongly convex; ``"quadratic"``, a quadratic with
mu I <= Hessian <= L I (a subclass: its worst case is at most the smooth class's, equal when quadratics
attain it; ``proofs_check.pep.quadratic``)."""


class PEPError(ValueError):
    """A performance-estimation request with a bad field; the message names it."""


def checked_real(name: str, value: Any, minimum: float | None = None, *, strict: bool = False) -> float:
    """``value`` as a finite float >= ``minimum`` (> when ``strict``); PEPError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PEPError(f"{name}: expected a real number, got {value!r} ({type(value).__name__})")
    out = float(value)
    if not math.isfinite(out):
        raise PEPError(f"{name}: must be finite, got {value!r}")
    if minimum is not None and (out <= minimum if strict else out < minimum):
        raise PEPError(f"{name}: must be {'>' if strict else '>='} {minimum:g}, got {out:g}")
    return out


def checked_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; PEPError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PEPError(f"{name}: expected an integer, got {value!r} ({type(value).__name__})")
    if int(value) < minimum:
        raise PEPError(f"{name}: must be >= {minimum}, got {int(value)}")
    return int(value)


def _optional(name: str, value: Any) -> float | None:
    return None if value is None else checked_real(name, value, 0.0)


def constant_steps(step: float, count: int) -> tuple[float, ...]:
    """``count`` copies of ``step``: a constant schedule as ``FedAvgPEP.steps``."""
    return (float(step),) * count


def checked_class(L: Any, mu: Any) -> tuple[float, float]:
    """The class's (L, mu) as floats with L > 0 and 0 <= mu < L; PEPError naming the field."""
    L = checked_real("L", L, 0.0, strict=True)
    mu = checked_real("mu", mu, 0.0)
    if mu >= L:
        raise PEPError(f"mu: must be < L = {L:g} (an L-smooth mu-strongly convex function with mu = L is one "
                       f"quadratic), got {mu:g}")
    return L, mu


@dataclass(frozen=True)
class BGD:
    """The (G, B)-bounded gradient dissimilarity pair (Karimireddy et al., ICML 2020, Assumption A1):
    sum_i p_i ||grad f_i(x)||^2 <= G^2 + B^2 ||grad F(x)||^2 (``FedAvgPEP.bgd``; module docstring)."""

    G: float
    B: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "G", checked_real("bgd.G", self.G, 0.0))
        object.__setattr__(self, "B", checked_real("bgd.B", self.B, 0.0))

    def to_json(self) -> dict[str, float]:
        """{"G": G, "B": B}."""
        return {"G": self.G, "B": self.B}


@dataclass(frozen=True)
class FedAvgPEP:
    """The worst case of FedAvg (FedProx when ``mu_prox`` > 0) after ``rounds`` rounds (module docstring).
    ``steps`` holds one step per local step, ``local_steps * rounds`` of them (step t = r E + e;
    ``constant_steps`` for a constant one); ``zeta``, ``Gamma``, ``G`` and ``bgd`` are None when the class
    does not bound that quantity. ``weights``: the clients' p_i, positive and summing to 1 (None, and
    equal weights, which are stored as None: p_i = 1/N, the symmetric program of ``program``; unequal
    weights: the N-client program of ``weighted``)."""

    kind: ClassVar[str] = "fedavg"

    n_clients: int
    local_steps: int
    rounds: int
    L: float
    mu: float
    steps: tuple[float, ...]
    r0: float = 1.0
    server_step: float = 1.0
    zeta: float | None = None
    Gamma: float | None = None
    G: float | None = None
    metric: str = "distance"
    function_class: str = "smooth"
    mu_prox: float = 0.0
    bgd: BGD | None = None
    weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)  # the fields of a frozen dataclass, checked
        set_("n_clients", checked_int("n_clients", self.n_clients, 1))
        if self.bgd is not None and not isinstance(self.bgd, BGD):
            raise PEPError(f"bgd: expected a BGD(G, B) or None, got {self.bgd!r} ({type(self.bgd).__name__})")
        set_("weights", _weights(self.weights, self.n_clients))
        set_("local_steps", checked_int("local_steps", self.local_steps, 1))
        set_("rounds", checked_int("rounds", self.rounds, 1))
        set_("mu_prox", checked_real("mu_prox", self.mu_prox, 0.0))
        L, mu = checked_class(self.L, self.mu)
        set_("L", L)
        set_("mu", mu)
        set_("steps", _steps(self.steps, self.local_steps * self.rounds))
        set_("r0", checked_real("r0", self.r0, 0.0))
        set_("server_step", checked_real("server_step", self.server_step, 0.0, strict=True))
        for name in ("zeta", "Gamma", "G"):
            set_(name, _optional(name, getattr(self, name)))
        if self.metric not in METRICS:
            raise PEPError(f"metric: expected one of {METRICS}, got {self.metric!r}")
        _check_class(self.function_class, self.mu)

    @property
    def total_steps(self) -> int:
        """T = E R local steps."""
        return self.local_steps * self.rounds

    @property
    def client_weights(self) -> tuple[float, ...]:
        """p_1, ..., p_N (1/N each when ``weights`` is None)."""
        return self.weights if self.weights is not None else (1 / self.n_clients,) * self.n_clients

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON, with ``kind``; ``mu_prox``, ``bgd`` and ``weights`` only when set (FedAvg's JSON,
        and cache key, unchanged without them)."""
        extra = ({"mu_prox": self.mu_prox} if self.mu_prox > 0 else {}) | (
            {"bgd": self.bgd.to_json()} if self.bgd is not None else {}) | (
            {"weights": list(self.weights)} if self.weights is not None else {})
        return {"kind": self.kind, "n_clients": self.n_clients, "local_steps": self.local_steps,
                "rounds": self.rounds, "L": self.L, "mu": self.mu, "steps": list(self.steps), "r0": self.r0,
                "server_step": self.server_step, "zeta": self.zeta, "Gamma": self.Gamma, "G": self.G,
                "metric": self.metric, "function_class": self.function_class, **extra}


@dataclass(frozen=True)
class FedAvgLimitPEP:
    """The worst-case bias ||w~ - x*||^2 of constant-step FedAvg's (FedProx's, ``mu_prox`` > 0) limit w~
    (module docstring) over the class with ``zeta``, ``Gamma`` and / or ``bgd`` (at least one: without
    heterogeneity every f_i is minimised at x* and w~ = x*). The (G, B)-BGD pair is imposed at x* and at
    w~, the points where every client takes a gradient (a relaxation, as ``FedAvgPEP``'s)."""

    kind: ClassVar[str] = "fedavg_limit"
    metric: ClassVar[str] = "distance"

    n_clients: int
    local_steps: int
    L: float
    mu: float
    step: float
    zeta: float | None = None
    Gamma: float | None = None
    function_class: str = "smooth"
    mu_prox: float = 0.0
    bgd: BGD | None = None

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)  # the fields of a frozen dataclass, checked
        set_("n_clients", checked_int("n_clients", self.n_clients, 1))
        set_("local_steps", checked_int("local_steps", self.local_steps, 1))
        set_("mu_prox", checked_real("mu_prox", self.mu_prox, 0.0))
        if self.bgd is not None and not isinstance(self.bgd, BGD):
            raise PEPError(f"bgd: expected a BGD(G, B) or None, got {self.bgd!r} ({type(self.bgd).__name__})")
        L, mu = checked_class(self.L, self.mu)
        _check_class(self.function_class, mu)
        if mu == 0:
            raise PEPError("mu: the limit needs mu > 0 (then the round map is a contraction and w~ is unique)")
        set_("L", L)
        set_("mu", mu)
        step = checked_real("step", self.step, 0.0, strict=True)
        if step >= 2 / (L + 2 * self.mu_prox):
            limit = "2/(L + 2 mu_prox)" if self.mu_prox > 0 else "2/L"
            raise PEPError(f"step: must be < {limit} = {2 / (L + 2 * self.mu_prox):g} for the round map to contract, "
                           f"got {step:g}")
        set_("step", step)
        for name in ("zeta", "Gamma"):
            set_(name, _optional(name, getattr(self, name)))
        if self.zeta is None and self.Gamma is None and self.bgd is None:
            raise PEPError("zeta: give zeta, Gamma or bgd (without heterogeneity the limit is x* itself)")

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON, with ``kind``; ``mu_prox`` and ``bgd`` only when set (FedAvg's JSON, and cache key,
        unchanged without them)."""
        extra = ({"mu_prox": self.mu_prox} if self.mu_prox > 0 else {}) | (
            {"bgd": self.bgd.to_json()} if self.bgd is not None else {})
        return {"kind": self.kind, "n_clients": self.n_clients, "local_steps": self.local_steps, "L": self.L,
                "mu": self.mu, "step": self.step, "zeta": self.zeta, "Gamma": self.Gamma,
                "function_class": self.function_class, **extra}


DRIFT_METRICS = ("client", "average")
"""``"client"``: client 1's drift ||x_1 - xbar||^2; ``"average"``: (1/N) sum_i ||x_i - xbar||^2."""


@dataclass(frozen=True)
class DriftPEP:
    """The worst-case client drift of FedAvg (Yu, Yang, Zhu, AAAI 2019; Lemma 1 of Liu's lecture note):
    ``n_clients`` (N >= 2) clients start at the last average xbar^(t0) and take ``local_steps`` (K) exact
    gradient steps of the constant size ``step`` (s), x_i <- x_i - s grad f_i(x_i); the metric is the
    drift from their average xbar = (1/N) sum_i x_i after the K steps, client 1's ||x_1 - xbar||^2
    (``metric`` "client") or the clients' average (1/N) sum_i ||x_i - xbar||^2 ("average"). The class:
    every f_i L-smooth (not necessarily convex), ||grad f_i(x_i)|| <= G at every local iterate where a
    gradient is taken. ``proofs_check.pep.drift`` builds the program and states its closed form."""

    kind: ClassVar[str] = "drift"

    n_clients: int
    local_steps: int
    L: float
    step: float
    G: float
    metric: str = "client"

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)  # the fields of a frozen dataclass, checked
        set_("n_clients", checked_int("n_clients", self.n_clients, 2))
        set_("local_steps", checked_int("local_steps", self.local_steps, 1))
        set_("L", checked_real("L", self.L, 0.0, strict=True))
        set_("step", checked_real("step", self.step, 0.0, strict=True))
        set_("G", checked_real("G", self.G, 0.0, strict=True))
        if self.metric not in DRIFT_METRICS:
            raise PEPError(f"metric: expected one of {DRIFT_METRICS}, got {self.metric!r}")

    @property
    def function_class(self) -> str:
        """``"smooth (non-convex)"``: each f_i is only L-smooth."""
        return "smooth (non-convex)"

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON, with ``kind``."""
        return {"kind": self.kind, "n_clients": self.n_clients, "local_steps": self.local_steps, "L": self.L,
                "step": self.step, "G": self.G, "metric": self.metric}


PEPSetting = FedAvgPEP | FedAvgLimitPEP | DriftPEP
"""Any request ``proofs_check.pep.worst_case`` solves."""


def unit_length(setting: PEPSetting) -> tuple[PEPSetting, float]:
    """``setting`` with its lengths divided by one of them, and that length c.

    The class and the method are invariant under f -> c^2 f(./c) (same L and mu; every iterate scales by c):
    r0, zeta and G scale by c, Gamma by c^2, and both metrics by c^2. The solver works on data of order 1:
    c is r0, else zeta, else sqrt(2 Gamma / L), else G / L, else the BGD pair's G / L (1 when all of them are
    zero; B is a ratio and does not scale); for ``DriftPEP``
    c = s G, one step's largest move (its drift is then of order K^2)."""
    if isinstance(setting, DriftPEP):
        length = setting.step * setting.G
        return dataclasses.replace(setting, G=setting.G / length), length
    scales = ([setting.r0] if isinstance(setting, FedAvgPEP) else []) + [
        setting.zeta or 0.0, math.sqrt(2 * (setting.Gamma or 0.0) / setting.L)]
    if isinstance(setting, FedAvgPEP):
        scales.append((setting.G or 0.0) / setting.L)
    scales.append((setting.bgd.G if setting.bgd else 0.0) / setting.L)
    length = next((c for c in scales if c > 0), 1.0)
    changes = {"zeta": None if setting.zeta is None else setting.zeta / length,
               "Gamma": None if setting.Gamma is None else setting.Gamma / length ** 2,
               "bgd": None if setting.bgd is None else BGD(setting.bgd.G / length, setting.bgd.B)}
    if isinstance(setting, FedAvgPEP):
        changes.update(r0=setting.r0 / length, G=None if setting.G is None else setting.G / length)
    return dataclasses.replace(setting, **changes), length


def _check_class(function_class: Any, mu: float) -> None:
    if function_class not in FUNCTION_CLASSES:
        raise PEPError(f"function_class: expected one of {FUNCTION_CLASSES}, got {function_class!r}")
    if function_class == "quadratic" and mu == 0:
        raise PEPError("function_class: the quadratic class needs mu > 0 (its conditions use each f_i's minimiser)")


def _steps(steps: Any, count: int) -> tuple[float, ...]:
    """``steps`` as ``count`` positive floats; PEPError naming ``steps`` otherwise."""
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence) and not hasattr(steps, "__iter__"):
        raise PEPError(f"steps: expected a sequence of {count} step sizes, got {steps!r}")
    out = tuple(steps)
    if len(out) != count:
        raise PEPError(f"steps: expected one step per local step, local_steps x rounds = {count}, got {len(out)}")
    return tuple(checked_real(f"steps[{i}]", step, 0.0, strict=True) for i, step in enumerate(out))


_WEIGHT_TOLERANCE = 1e-9
"""How far from 1 the weights' sum may be (they are then divided by it)."""


def _weights(weights: Any, n_clients: int) -> tuple[float, ...] | None:
    """``weights`` as N positive floats summing to 1, or None when they are None or all equal (1/N); PEPError
    naming ``weights`` otherwise."""
    if weights is None:
        return None
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence) and not hasattr(weights, "__iter__"):
        raise PEPError(f"weights: expected a sequence of {n_clients} client weights, got {weights!r}")
    out = tuple(checked_real(f"weights[{i}]", p, 0.0, strict=True) for i, p in enumerate(weights))
    if len(out) != n_clients:
        raise PEPError(f"weights: expected one weight per client, n_clients = {n_clients}, got {len(out)}")
    total = math.fsum(out)
    if abs(total - 1) > _WEIGHT_TOLERANCE:
        raise PEPError(f"weights: must sum to 1, got {total!r}")
    out = tuple(p / total for p in out)
    return None if max(out) - min(out) <= _WEIGHT_TOLERANCE else out
