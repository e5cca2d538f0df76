"""The default problems of the ``assumptions.constants`` and ``lemmas`` claims, and their minibatch size.

The Appendix C counterexample of Li et al. (ICLR 2020; N = 5, p = 4, mu = 2e-4) and a synthetic(1, 1)
instance (Li et al. Sec. 5 / Shamir-style heterogeneity, 10 clients, l2 = 0.25): the constants table
reports each one's constants, and the lemma table runs Li's Lemmas 1-3 on each.
"""

from __future__ import annotations

import problems

__all__ = ["DEFAULT_PROBLEMS", "BATCH"]

DEFAULT_PROBLEMS = {
    "counterexample": problems.problem_spec("li_counterexample", N=5, p=4, mu=2e-4),
    "synthetic(1,1)": problems.problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=10, l2=0.25, seed=1),
}
"""Label -> problem spec of the default problems (``problems.build_problem`` builds them)."""
BATCH = 24
"""The minibatch size b of the tables' stochastic gradients (sigma_k^2, G^2 and the Li lemma runs)."""
