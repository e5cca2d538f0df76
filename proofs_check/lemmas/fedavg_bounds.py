"""The right-hand sides of the FedAvg lemmas, stated once for the lemma checks and the falsifier.

Li et al. (ICLR 2020), Lemmas 1-3 (``papers/li2020_fedavg_noniid.txt`` l.361-378, ``shared/THEOREMS.md``
l.49-55), and Yu, Yang, Zhu (AAAI 2019) client drift (Lemma 1 of ``papers/liu_lecture_fl_fedavg.md``,
l.363; THEOREMS.md l.110). Notation: eta_t the step of local step t, E local steps per round,
p_k the client weights, wbar_t = sum_k p_k w_t^k, vbar_{t+1} = wbar_t - eta_t g_t, L, mu as in
Assumptions 1-2, Gamma = F* - sum_k p_k F_k*, sigma_k^2 and G^2 as ``run_moments.IterateMoments``
defines them:

* Lemma 1 (eta_t <= 1/(4L)): E||vbar_{t+1} - w*||^2 <= (1 - eta_t mu) E||wbar_t - w*||^2
  + eta_t^2 E||g_t - gbar_t||^2 + 6 L eta_t^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2;
* Lemma 2: E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2;
* Lemma 3 (eta_t non-increasing, eta_t <= 2 eta_{t+E}): E sum_k p_k ||wbar_t - w_t^k||^2
  <= 4 eta_t^2 (E-1)^2 G^2;
* Yu's drift (constant step s, sync interval K, xbar_t = (1/N) sum_i x_t^i):
  E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 for every client i.

``proofs_check.lemmas.fedavg`` evaluates them with expectations over seeds, ``proofs_check.
falsifiable_claims`` with exact expectations; the constants 4 are arguments so that planted
variants (a constant too small) are the same statement with another number.
"""

from __future__ import annotations

import numpy as np

__all__ = ["li_lemma1_bound", "li_lemma2_bound", "li_lemma3_bound", "yu_drift_bound"]


def li_lemma1_bound(
    eta: np.ndarray, mu: float, L: float, Gamma: float, dist: np.ndarray, noise: np.ndarray, spread: np.ndarray
) -> np.ndarray:
    """Lemma 1's right-hand side (1 - eta mu) dist + eta^2 noise + 6 L eta^2 Gamma + 2 spread, with
    dist = ||wbar_t - w*||^2, noise = ||g_t - gbar_t||^2 (or its expectation), spread =
    sum_k p_k ||wbar_t - w_t^k||^2; eta (T,) and the others of shape (..., T) (per seed, or expected)."""
    return (1 - eta * mu) * dist + eta**2 * noise + 6 * L * eta**2 * Gamma + 2 * spread


def li_lemma2_bound(weights: np.ndarray, sigma_sq: np.ndarray) -> float:
    """Lemma 2's right-hand side sum_k p_k^2 sigma_k^2; weights p and sigma_sq of shape (N,)."""
    return float(weights**2 @ sigma_sq)


def li_lemma3_bound(eta: np.ndarray, local_steps: int, G_sq: float, constant: float = 4.0) -> np.ndarray:
    """Lemma 3's right-hand side constant eta_t^2 (E-1)^2 G^2 at every step, eta of shape (T,)
    (constant = 4 in the paper)."""
    return constant * eta**2 * (local_steps - 1) ** 2 * G_sq


def yu_drift_bound(step: float, sync_interval: int, G_sq: float, constant: float = 4.0) -> float:
    """Yu's drift bound constant s^2 K^2 G^2 with step s and sync interval K (constant = 4 in the
    lecture note's Lemma 1)."""
    return constant * step**2 * sync_interval**2 * G_sq
