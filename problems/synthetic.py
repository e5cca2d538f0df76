"""synthetic(alpha, beta): the FedProx data recipe as Li et al. (ICLR 2020) use it, as an
l2-regularised softmax (multinomial logistic) regression problem.

Sources: Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020,
Appendix D.1 ("Model and loss", "Datasets", Table 2), which follows Sahu/Li et al. 2018
(FedProx, arXiv 1812.06127) and its public data generator. For client k = 1..N:

* u_k ~ N(0, alpha) and B_k ~ N(0, beta). Li writes N(0, alpha); the FedProx generator draws
  ``normal(0, alpha)`` and ``normal(0, beta)``, i.e. alpha and beta are *standard deviations*,
  and so do we.
* W_k in R^{C x f0} and b_k in R^C with i.i.d. entries N(u_k, 1) (the same u_k for both, as in the
  generator), where f0 = n_features (60) and C = n_classes (10).
* v_k ~ N(B_k, 1), a vector of length f0; x ~ N(v_k, diag(j^{-1.2})), j = 1..f0, i.e. coordinate j
  has standard deviation j^{-0.6}.
* y = argmax(W_k x + b_k) (softmax is monotone, so argmax(softmax(.)) = argmax(.)).
* n_k = int(lognormal(4, 2)) + 50 (the generator's power-law-like sizes; Li: "follows a power
  law"), so n_k >= 50; p_k = n_k / n with n = sum_k n_k.

Model. Li's model is softmax(W x + b) with w = (W, b) and objective
(1/n) sum_i CE + lambda ||w||^2, lambda = 1e-4 on all of w (Appendix D.1). We append a constant-1
feature, so each row is (x, 1) in R^{f0 + 1} and the bias is the last row of the (f0 + 1) x C
parameter matrix; the toolkit's softmax client carries (mu/2) ||w||^2, hence mu = 2 * l2.
Then sum_k p_k F_k = (1/n) sum_i CE_i + l2 ||w||^2, Li's objective. d = (f0 + 1) * C = 610.

Differences from the published files: we draw with ``numpy.random.default_rng(seed)`` in the order
below (not the generator's legacy global stream), so instances are statistically equivalent to,
not bit-identical with, the FedProx JSON files; and we keep all n_k samples as the training
objective (the generator additionally splits off a 10% test set). Li's Table 2 reports
n = 27348 samples, 273 +- 421 per device, for synthetic(1, 1); our counts vary with the seed.
"""

from __future__ import annotations

import math
import numpy as np

from ._base import FederatedProblem, LossKind, ProblemError
from .spec import FamilySpec
from .validation import check_int, check_problem_size, check_real

__all__ = ["synthetic"]

_LOGNORMAL_MEAN, _LOGNORMAL_SIGMA, _MIN_SAMPLES = 4.0, 2.0, 50  # FedProx generator
_COV_EXPONENT = 1.2  # Li et al. Appendix D.1: (x_k)_j ~ N(v_k, j^{-1.2})


def synthetic(
    alpha: float = 1.0,
    beta: float = 1.0,
    n_clients: int = 100,
    n_features: int = 60,
    n_classes: int = 10,
    l2: float = 1e-4,
    seed: int = 0,
) -> FederatedProblem:
    """The synthetic(alpha, beta) softmax problem of Li et al. (2020), Appendix D.1.

    Shapes: X (n, n_features + 1) with a trailing constant-1 column, y (n,) integer labels in
    [0, n_classes), weights p_k = n_k / n, mu = 2 * l2, d = (n_features + 1) * n_classes.
    Draw order from ``default_rng(seed)``: n_k, u_k, B_k, v_k for all clients, then per client
    (W_k, b_k, x). See the module docstring for every choice and its source.
    """
    alpha = check_real("alpha", alpha, minimum=0.0)
    beta = check_real("beta", beta, minimum=0.0)
    N = check_int("n_clients", n_clients, minimum=1)
    f0 = check_int("n_features", n_features, minimum=1)
    C = check_int("n_classes", n_classes, minimum=2)
    l2 = check_real("l2", l2, minimum=0.0)
    seed = check_int("seed", seed, minimum=0)
    expected_rows = N * (math.ceil(math.exp(_LOGNORMAL_MEAN + _LOGNORMAL_SIGMA**2 / 2)) + _MIN_SAMPLES)
    check_problem_size("n_clients, n_features, n_classes", expected_rows, f0 + 1, (f0 + 1) * C)

    rng = np.random.default_rng(seed)
    sizes = rng.lognormal(_LOGNORMAL_MEAN, _LOGNORMAL_SIGMA, N).astype(np.int64) + _MIN_SAMPLES
    u = rng.normal(0.0, alpha, N)
    B = rng.normal(0.0, beta, N)
    v = rng.normal(B[:, None], 1.0, (N, f0))
    x_std = np.arange(1, f0 + 1) ** (-_COV_EXPONENT / 2)
    X_parts, y_parts = [], []
    for k in range(N):
        W = rng.normal(u[k], 1.0, (C, f0))
        b = rng.normal(u[k], 1.0, C)
        x = v[k] + x_std * rng.standard_normal((sizes[k], f0))
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, naming the fields
            logits = x @ W.T + b
        if not (np.all(np.isfinite(logits)) and np.all(np.isfinite(x))):
            raise ProblemError(f"alpha, beta: synthetic({alpha:g}, {beta:g}) overflows float64: client {k}'s data or "
                               "label scores W_k x + b_k are not finite (alpha and beta are the standard deviations of "
                               "the clients' means; keep alpha * beta * n_features far below 1e308)")
        y_parts.append(np.argmax(logits, axis=1))
        X_parts.append(np.hstack([x, np.ones((sizes[k], 1))]))
    params = {
        "alpha": alpha,
        "beta": beta,
        "n_clients": N,
        "n_features": f0,
        "n_classes": C,
        "l2": l2,
        "seed": seed,
    }
    return FederatedProblem(
        name=f"synthetic({alpha:g}, {beta:g}) N={N} seed={seed}",
        loss=LossKind.SOFTMAX,
        X=np.vstack(X_parts),
        y=np.concatenate(y_parts).astype(np.float64),
        offsets=np.concatenate(([0], np.cumsum(sizes))),
        weights=sizes / sizes.sum(),
        mu=2.0 * l2,
        n_classes=C,
        spec=FamilySpec("synthetic", params),
        notes="Li et al., ICLR 2020, Appendix D.1; FedProx synthetic generator (arXiv 1812.06127).",
    )
