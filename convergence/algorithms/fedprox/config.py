"""FedProx's config: FedAvg's schedule plus the proximal coefficient mu_prox."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from problems import check_real

from ...config import ConfigError, LocalRoundsConfig
from ...schedules import StepSize
from ..fedavg import FedAvgConfig

__all__ = ["FedProxConfig"]


@dataclass(frozen=True)
class FedProxConfig(LocalRoundsConfig):
    """FedProx with full participation (Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated
    Optimization in Heterogeneous Networks", MLSys 2020, Algorithm 2).

    Each of ``rounds`` rounds: every client k starts from the global model w_g and takes
    ``local_steps`` (E) SGD steps on its proximal local objective

        h_k(w) = F_k(w) + (mu_prox / 2) ||w - w_g||^2,
        w <- w - eta_t (g_k(w) + mu w + mu_prox (w - w_g)),

    with F_k the client's objective (its data term plus the problem's l2 term (mu / 2) ||w||^2) and
    g_k the exact (``batch_size`` = 0) or minibatch gradient of its data term, exactly as in FedAvg
    (``FedAvgConfig``); the server then sets w_g <- w_g + server_lr * (sum_k p_k w_k - w_g)
    (server_lr = 1: the weighted average). ``mu_prox`` >= 0; mu_prox = 0 is FedAvg, bit for bit.

    What the paper analyses and what runs here: the paper's theory (Sec. 4) lets each device
    return any gamma-inexact minimiser of h_k (Definitions 1-2: ||grad h_k(w_k)|| <= gamma
    ||grad h_k(w_g)||, gamma in [0, 1], possibly per device and round) and samples K devices per
    round; its experiments (Sec. 5) solve h_k with a fixed number of local SGD steps. We run that
    fixed-E SGD solver (its inexactness gamma is neither set nor measured) with every client in
    every round, weighted by p_k as our FedAvg. T = rounds * E local steps in all; the global
    model is recorded after each round in ``record_rounds`` (0 = the initial point). The run
    starts from ``initial_model`` w_0 (d reals; empty: w_0 = 0, left out of the JSON as FedAvg's).
    """

    name: ClassVar[str] = "fedprox"

    local_steps: int
    rounds: int
    step_size: StepSize
    mu_prox: float
    batch_size: int = 0
    server_lr: float = 1.0
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    initial_model: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        schedule = self.fedavg_config  # validates and normalises the fields FedProx shares with FedAvg
        for attribute in ("local_steps", "rounds", "batch_size", "server_lr", "record_rounds", "seeds", "initial_model"):
            object.__setattr__(self, attribute, getattr(schedule, attribute))
        object.__setattr__(self, "mu_prox", check_real("mu_prox", self.mu_prox, 0.0, error=ConfigError))

    @property
    def fedavg_config(self) -> FedAvgConfig:
        """The FedAvg config of the same schedule: the run FedProx is with mu_prox = 0."""
        return FedAvgConfig(self.local_steps, self.rounds, self.step_size, self.batch_size, self.server_lr,
                            self.record_rounds, self.seeds, self.initial_model)

    def to_json(self) -> dict[str, Any]:
        return {**self.fedavg_config.to_json(), "algorithm": self.name, "mu_prox": self.mu_prox}
