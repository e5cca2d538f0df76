"""Step-size schedules eta_t, indexed by the 0-based global local-step counter t.

Kinds (each is a closed form, evaluated identically by the Numba kernel and the NumPy path):

* ``constant``:     eta_t = eta0.
* ``li``:           eta_t = 2 / (mu (gamma + t + 1)), Li et al. (ICLR 2020) Theorem 1, whose
                    steps are numbered from 1 (our t = 0 is their t = 1). ``StepSize.li`` sets
                    gamma = max{8 kappa, E}.
* ``inverse_time``: eta_t = eta0 / (1 + decay * t); Li et al. Appendix C.2 uses
                    eta_t = (1/5) / (5 + a t), i.e. eta0 = 1/25 and decay = a / 5.
* ``per_round``:    eta_t = eta0 / (1 + floor(t / E)), Li et al. Appendix D.1 (decay per round).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from problems import check_int, check_real

__all__ = ["StepSchedule", "StepSize", "ScheduleError", "step_size_at"]

_CODES = {"constant": 0, "li": 1, "inverse_time": 2, "per_round": 3}


class ScheduleError(ValueError):
    """Invalid step-size schedule; the message names the field."""


class StepSchedule(NamedTuple):
    """A step-size schedule as the kernels take it (``StepSize.schedule``): ``code`` the kind's
    integer code and (a, b) = ``StepSize.params``, for ``step_size_at(code, a, b, t, E)``."""

    code: int
    a: float
    b: float


@dataclass(frozen=True)
class StepSize:
    """A step-size schedule (see the module docstring for the formulas)."""

    kind: str
    eta0: float = 0.0
    mu: float = 0.0
    gamma: float = 0.0
    decay: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in _CODES:
            raise ScheduleError(f"step_size.kind: unknown schedule {self.kind!r}; choose one of {sorted(_CODES)}")
        for name in ("eta0", "mu", "gamma", "decay"):
            object.__setattr__(self, name, check_real(f"step_size.{name}", getattr(self, name), error=ScheduleError))
        if self.kind == "li":
            if self.mu <= 0:
                raise ScheduleError(f"step_size.mu: the li schedule needs mu > 0, got {self.mu}")
            if self.gamma < 0:
                raise ScheduleError(f"step_size.gamma: must be >= 0, got {self.gamma}")
        elif self.eta0 <= 0:
            raise ScheduleError(f"step_size.eta0: the step size must be > 0, got {self.eta0}")
        if self.decay < 0:
            raise ScheduleError(f"step_size.decay: must be >= 0, got {self.decay}")

    @classmethod
    def constant(cls, eta: float) -> "StepSize":
        """eta_t = eta."""
        return cls("constant", eta0=eta)

    @classmethod
    def li(cls, mu: float, L: float, local_steps: int) -> "StepSize":
        """Li et al. Theorem 1: eta_t = 2 / (mu (gamma + t)), gamma = max{8 L / mu, E}.

        Needs mu > 0 (strong convexity), L > 0 and E = ``local_steps`` >= 1; ScheduleError naming
        the field otherwise.
        """
        mu = check_real("step_size.mu", mu, 0.0, strict=True, error=ScheduleError)
        L = check_real("step_size.L", L, 0.0, strict=True, error=ScheduleError)
        E = check_int("step_size.local_steps", local_steps, minimum=1, error=ScheduleError)
        return cls("li", mu=mu, gamma=max(8.0 * L / mu, float(E)))

    @classmethod
    def inverse_time(cls, eta0: float, decay: float) -> "StepSize":
        """eta_t = eta0 / (1 + decay t)."""
        return cls("inverse_time", eta0=eta0, decay=decay)

    @classmethod
    def per_round(cls, eta0: float) -> "StepSize":
        """eta_t = eta0 / (1 + round)."""
        return cls("per_round", eta0=eta0)

    @property
    def code(self) -> int:
        """Integer code for the kernels."""
        return _CODES[self.kind]

    @property
    def params(self) -> tuple[float, float]:
        """The two numbers the kernels need: (eta0 or 2/mu, decay or gamma)."""
        if self.kind == "li":
            return 2.0 / self.mu, self.gamma
        return self.eta0, self.decay

    @property
    def schedule(self) -> StepSchedule:
        """The kernels' bundle of this schedule (code and params, the params as floats)."""
        a, b = self.params
        return StepSchedule(self.code, float(a), float(b))

    def at(self, t: np.ndarray | int, local_steps: int) -> np.ndarray:
        """eta_t for 0-based global steps t (vectorised)."""
        a, b = self.params
        t = np.asarray(t, dtype=np.int64)
        return np.vectorize(lambda s: step_size_at(self.code, a, b, int(s), local_steps), otypes=[float])(t)

    def first(self, local_steps: int) -> float:
        """eta at the first step (t = 0)."""
        a, b = self.params
        return step_size_at(self.code, a, b, 0, local_steps)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "eta0": self.eta0, "mu": self.mu, "gamma": self.gamma, "decay": self.decay}

    @classmethod
    def from_json(cls, data: Any) -> "StepSize":
        """The schedule whose JSON is ``data``, the inverse of ``to_json``: a mapping with ``kind``
        and any of ``eta0``, ``mu``, ``gamma``, ``decay`` (a missing one takes its default 0, as in
        the constructor; the values are checked there). ScheduleError naming ``step_size`` for a
        non-mapping, ``step_size.kind`` when it is missing and ``step_size.<key>`` for an unknown key."""
        if not isinstance(data, Mapping):
            raise ScheduleError(f"step_size: expected a mapping such as {{'kind': 'constant', 'eta0': 0.01}}, got {data!r}")
        keys = [f.name for f in fields(cls)]
        unknown = [key for key in data if key not in keys]
        if unknown:
            raise ScheduleError(f"step_size.{unknown[0]}: unknown key; a step size has keys {', '.join(keys)}")
        if "kind" not in data:
            raise ScheduleError(f"step_size.kind: missing; choose one of {sorted(_CODES)}")
        return cls(**data)

    def describe(self) -> str:
        """Human-readable formula."""
        if self.kind == "constant":
            return f"eta = {self.eta0:g}"
        if self.kind == "li":
            return f"eta_t = 2/(mu (gamma + t)), mu = {self.mu:g}, gamma = {self.gamma:g}"
        if self.kind == "inverse_time":
            return f"eta_t = {self.eta0:g} / (1 + {self.decay:g} t)"
        return f"eta_t = {self.eta0:g} / (1 + round)"


@njit(cache=True)
def step_size_at(code: int, a: float, b: float, t: int, local_steps: int) -> float:
    """eta_t for schedule ``code`` with parameters (a, b) = StepSize.params (0-based t)."""
    if code == 0:
        return a
    if code == 1:
        return a / (b + t + 1.0)
    if code == 2:
        return a / (1.0 + b * t)
    return a / (1.0 + (t // local_steps))
