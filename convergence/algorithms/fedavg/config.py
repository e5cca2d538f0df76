"""FedAvg's config: local SGD with two-sided learning rates, full participation or one of Li et
al.'s sampling and aggregation schemes (``participation``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from problems import check_real

from ...config import ConfigError, LocalRoundsConfig, check_step_and_batch, config_int, config_json, set_records_and_seeds
from ...schedules import StepSize
from ..participation import check_participation

__all__ = ["FedAvgConfig"]


@dataclass(frozen=True)
class FedAvgConfig(LocalRoundsConfig):
    """FedAvg / local SGD (Li et al., ICLR 2020, Sec. 2 and 3.3).

    Each of ``rounds`` rounds: the clients of the round (all of them, or a sample, see below)
    start from the global model and take ``local_steps`` (E) SGD steps w <- w - eta_t g_k(w) on
    F_k, where g_k is the exact gradient (``batch_size`` = 0) or a minibatch gradient over
    ``batch_size`` rows drawn uniformly with replacement; the server then sets
    w <- w + server_lr * (w' - w), with w' = sum_k p_k w_k under full participation (two-sided
    learning rates; server_lr = 1 is plain FedAvg). T = rounds * E local steps in all.

    ``participation`` selects the sampling and aggregation scheme, ``participants`` the K clients
    sampled per round: "full" (every client, K = None, the default), "scheme_i" (K draws with
    replacement with probabilities p_k, simple average; Li's Theorem 2), "scheme_ii" (K clients
    uniformly without replacement, w' = (N/K) sum_{k in S} p_k w_k; Theorem 3),
    "transformed_scheme_ii" (client k descends F~_k = N p_k F_k, K uniformly without replacement,
    simple average) or "original" (McMahan et al.: w' = sum_{k not in S} p_k w + sum_{k in S} p_k
    w_k); ``participation`` states each and how the code matches the theory. Without
    replacement K <= N is checked against the problem when the run is planned.

    The step size eta_t is ``step_size`` at the 0-based global step t: Li's theory decays it per
    local iteration (``StepSize.li``, ``StepSize.inverse_time``), the paper's experiments per round
    (``StepSize.per_round``: eta_0 / (1 + round)).

    The global model is recorded after each round in ``record_rounds`` (0 = the initial point).
    The run starts from ``initial_model`` w_0 (d reals; empty: w_0 = 0, the default). Fields at
    their defaults that the JSON of earlier versions lacked (``initial_model`` empty, full
    participation) are left out of ``to_json``, so such a config keeps its run id.
    """

    name: ClassVar[str] = "fedavg"

    local_steps: int
    rounds: int
    step_size: StepSize
    batch_size: int = 0
    server_lr: float = 1.0
    record_rounds: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    initial_model: tuple[float, ...] = ()
    participation: str = "full"
    participants: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "local_steps", config_int("local_steps (E)", self.local_steps))
        object.__setattr__(self, "rounds", config_int("rounds", self.rounds))
        check_step_and_batch(self)
        object.__setattr__(self, "server_lr", check_real("server_lr", self.server_lr, 0.0, strict=True, error=ConfigError))
        set_records_and_seeds(self, self.rounds)
        if isinstance(self.initial_model, (str, bytes)) or np.ndim(self.initial_model) != 1:
            raise ConfigError(f"initial_model: expected a sequence of d reals, got {self.initial_model!r}")
        object.__setattr__(self, "initial_model", tuple(check_real(f"initial_model[{i}]", value, error=ConfigError)
                                                        for i, value in enumerate(self.initial_model)))
        _, K = check_participation(self.participation, self.participants)
        object.__setattr__(self, "participants", K)

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": self.name,
            **config_json(self, ("local_steps", "rounds", "step_size", "batch_size", "server_lr", "record_rounds",
                                 "seeds")),
            **({"initial_model": list(self.initial_model)} if self.initial_model else {}),
            **({"participation": self.participation, "participants": self.participants}
               if self.participation != "full" else {}),
        }
