"""li2020.thm4's closed forms on the Appendix C problem: the first-order coefficient c of eq. 33 and
both sides of the identity in the last step of Lemma 6's proof.

Li, Huang, Yang, Wang, Zhang (ICLR 2020), Appendix C.4-C.5; the derivation of c from eq. 33 and 35,
and what the identity claims, are in ``proofs_check.claims.li2020.thm4``'s module docstring. With
S_i = A_i + mu I (eq. 28-29, ``problems.li_counterexample_matrices``), S = sum_i S_i, V = sum_i S_i^2
and w* = S^{-1} b: c = 1/2 S^{-1} (V - S_1 S) w*, so ||w~* - w*|| = (E-1) eta ||c|| + O(eta^2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import problems

__all__ = ["first_order_coefficient", "ProofIdentity", "proof_identity", "identity_finding"]


def first_order_coefficient(N: int, p: int, mu: float) -> np.ndarray:
    """c = 1/2 S^{-1} (V - S_1 S) w* (d,), d = N p + 1: ||w~* - w*|| = (E-1) eta ||c|| + O(eta^2).

    S_i = A_i + mu I from Li et al. eq. 28-29 (problems.li_counterexample_matrices), S = sum_i S_i,
    V = sum_i S_i^2, w* = S^{-1} b; the derivation from eq. 33 and 35 is in thm4's module docstring.
    """
    S, total, w_star = _shifted_matrices(N, p, mu)
    V = np.einsum("kij,kjl->il", S, S)
    return 0.5 * np.linalg.solve(total, (V - S[0] @ total) @ w_star)


def _shifted_matrices(N: int, p: int, mu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S_i = A_i + mu I stacked (N, d, d), S = sum_i S_i (d, d), w* = S^{-1} b (d,)) from eq. 28-29."""
    A, b = problems.li_counterexample_matrices(N, p)
    S = A + mu * np.eye(A.shape[1])[None]
    total = S.sum(axis=0)
    return S, total, np.linalg.solve(total, b.sum(axis=0))


@dataclass(frozen=True)
class ProofIdentity:
    """Both sides of the last step of Lemma 6's proof (App. C.5), for S_i = A_i + mu I.

    ``claimed_gap`` = ||(V - S_1 S) - S_1 sum_{i>=2} S_i||_F (0 if the paper's identity held), beside
    ``lhs_norm`` = ||V - S_1 S||_F and ``rhs_norm`` = ||S_1 sum_{i>=2} S_i||_F; ``corrected_gap`` =
    ||(V - S_1 S) - (sum_{i>=2} S_i^2 - S_1 sum_{i>=2} S_i)||_F (0 up to rounding: the expansion of
    V - S_1 S); ``cross_max`` = max_{i>=3} max |S_1 S_i| (0 when the paper's "A_1 A_i = 0, i >= 3"
    holds); on w*: ``lhs_w`` = ||(V - S_1 S) w*||, ``paper_w`` = ||S_1 S_2 w*|| (eq. 34's norm).
    """

    mu: float
    lhs_norm: float
    rhs_norm: float
    claimed_gap: float
    corrected_gap: float
    cross_max: float
    lhs_w: float
    paper_w: float

    def describe(self) -> str:
        """One sentence with the numbers."""
        holds = self.claimed_gap <= 1e-12 * max(self.lhs_norm, 1.0)
        verdict = "holds" if holds else "is false"
        return (
            f"mu = {self.mu:g}: 'V - A_1 A = A_1 sum_(i>=2) A_i' {verdict} (||V - A_1 A||_F = {self.lhs_norm:.4g}, "
            f"||A_1 sum_(i>=2) A_i||_F = {self.rhs_norm:.4g}, difference {self.claimed_gap:.4g}); "
            f"V - A_1 A = sum_(i>=2) A_i^2 - A_1 sum_(i>=2) A_i holds to {self.corrected_gap:.1e}; "
            f"max_(i>=3) |A_1 A_i| = {self.cross_max:.3g}; on w*: ||(V - A_1 A) w*|| = {self.lhs_w:.4g} = "
            f"{self.lhs_w / self.paper_w:.4g} x ||A_1 A_2 w*|| = {self.paper_w:.4g}"
        )


def proof_identity(N: int, p: int, mu: float) -> ProofIdentity:
    """Evaluate the identity used in the last step of Lemma 6's proof (see ProofIdentity)."""
    S, total, w_star = _shifted_matrices(N, p, mu)
    lhs = np.einsum("kij,kjl->il", S, S) - S[0] @ total
    rhs = S[0] @ S[1:].sum(axis=0)
    corrected = np.einsum("kij,kjl->il", S[1:], S[1:]) - rhs
    cross = max((float(np.max(np.abs(S[0] @ S[i]))) for i in range(2, N)), default=0.0)
    return ProofIdentity(
        float(mu), float(np.linalg.norm(lhs)), float(np.linalg.norm(rhs)), float(np.linalg.norm(lhs - rhs)),
        float(np.linalg.norm(lhs - corrected)), cross, float(np.linalg.norm(lhs @ w_star)),
        float(np.linalg.norm(S[0] @ S[1] @ w_star)),
    )


def identity_finding(identities: tuple[ProofIdentity, ...]) -> str:
    """The finding about Lemma 6's last step, with its numbers, for each mu evaluated."""
    text = "Finding (Lemma 6's last step, App. C.5): " + "; ".join(i.describe() for i in identities) + "."
    if all(i.lhs_w >= i.paper_w for i in identities):
        return (f"{text} The identity does not hold as a matrix identity, but on w* ||(V - A_1 A) w*|| >= "
                "||A_1 A_2 w*||, so the inequality it feeds (eq. 34) survives the slip; the sub-checks measure eq. 34 "
                "directly.")
    return f"{text} On w* ||(V - A_1 A) w*|| < ||A_1 A_2 w*||: the proof's last step fails; the sub-checks measure eq. 34 directly."
