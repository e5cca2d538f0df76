"""SCAFFOLD's config: FedAvg's (local steps, rounds, step sizes, minibatch, server step, participation
scheme, initial model; its fields and checks, inherited) plus how the control variates are updated."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar


from ...config import ConfigError
from ..fedavg import FedAvgConfig

__all__ = ["CONTROL_UPDATES", "ScaffoldConfig"]

CONTROL_UPDATES = {"zero": 0, "option_ii": 2}
"""``control_variates`` -> the kernel's code: "option_ii" is Algorithm 1's option II; "zero" holds
every control variate at 0 (SCAFFOLD's code path without its correction: FedAvg, bit for bit)."""


@dataclass(frozen=True)
class ScaffoldConfig(FedAvgConfig):
    """SCAFFOLD (Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, "SCAFFOLD: Stochastic Controlled
    Averaging for Federated Learning", ICML 2020, Algorithm 1), with Li et al.'s participation
    schemes and client weights p_k.

    State: a server control variate c and one control variate c_k per client, all 0 at the start
    (the paper: "can safely all be initialized to 0"; c = sum_k (p_k / lambda_k) c_k is kept
    exactly). Each of ``rounds`` rounds, the round's clients (``participation``, ``participants``
    as in ``FedAvgConfig``) start from the global model x and take E = ``local_steps`` steps

        y_k <- y_k - eta_t (lambda_k grad h_k(y_k) - c_k + c),   t = r E + e,

    with grad h_k the exact (``batch_size`` = 0) or minibatch gradient of F_k (its data term plus
    (mu/2) ||w||^2) and lambda_k = N p_k under transformed Scheme II (1 otherwise); then, with
    option II (``control_variates = "option_ii"``),

        c_k+ = c_k - c + (x - y_k) / sum_e eta_{rE+e}

    (the paper's (x - y_i)/(K eta_l) for a constant step: the step-weighted mean of the client's
    corrected directions, which estimates lambda_k grad F_k), and the server sets
    x <- x + eta_g (x' - x) with x' the scheme's aggregate of the y_k (full participation:
    sum_k p_k y_k; Scheme II on balanced data: the paper's mean over S) and eta_g = ``server_lr``,
    and c <- c + sum_{k in S} (p_k / lambda_k) (c_k+ - c_k) (the paper's (|S|/N) mean_S Delta c_i
    for p_k = 1/N), each sampled client counted once. Option I (c_k+ = g_k(x), one more gradient
    per round) is not provided. ``control_variates = "zero"`` keeps every c_k and c at 0: the same
    code path computes FedAvg's trajectory (the check that the correction is the only change).

    With exact gradients x = w*, c_k = grad F_k(w*) (scaled by lambda_k) is a fixed point of a
    round for every step size and E: SCAFFOLD has no client drift, where FedAvg with a constant
    step and E > 1 stops at a point w~* != w* (Li et al., Theorem 4). The run starts from
    ``initial_model`` (empty: w_0 = 0); the global model is recorded after the rounds in
    ``record_rounds`` (0 = the initial point).
    """

    name: ClassVar[str] = "scaffold"

    control_variates: str = "option_ii"

    def __post_init__(self) -> None:
        super().__post_init__()  # FedAvg's checks of the schedule's fields
        if not isinstance(self.control_variates, str) or self.control_variates not in CONTROL_UPDATES:
            raise ConfigError(f"control_variates: expected one of {tuple(CONTROL_UPDATES)}, got {self.control_variates!r}")

    @property
    def fedavg_config(self) -> FedAvgConfig:
        """FedAvg's config of the same schedule: the run SCAFFOLD is with its control variates at 0."""
        return FedAvgConfig(**{f.name: getattr(self, f.name) for f in fields(FedAvgConfig)})

    def to_json(self) -> dict[str, Any]:
        return {**self.fedavg_config.to_json(), "algorithm": self.name, "participation": self.participation,
                "participants": self.participants, "initial_model": list(self.initial_model),
                "control_variates": self.control_variates}
