"""Federated problem families, their constants and exact optima (the first layer of fedbound).

Public API (everything else is private):

* the problem model: ``FederatedProblem``, ``LossKind``, ``ProblemError``;
* families: ``li_counterexample`` (Li et al. 2020, Appendix C) and ``li_counterexample_matrices``,
  ``random_quadratic``, ``synthetic`` (Li et al. 2020, Appendix D / FedProx);
* block-cyclic data (Ding et al. 2020): ``BlockCyclicProblem``, ``block_cyclic_quadratic``,
  ``block_cyclic_softmax``, ``label_block_partition``;
* the registry: ``build_problem(spec)``, ``build_block_cyclic(spec)``, ``problem_spec(family, **params)``;
* constants: ``ProblemConstants``, ``problem_constants``;
* optima: ``Optimum``, ``OptimumError``, ``exact_optimum``, ``heterogeneity_gamma``.
"""

from ._base import FederatedProblem, LossKind, ProblemError
from .block_cyclic import BlockCyclicProblem, block_cyclic_quadratic, block_cyclic_softmax, label_block_partition
from .constants import ProblemConstants, problem_constants
from .counterexample import li_counterexample, li_counterexample_matrices
from .identical import identical_quadratic
from .optimum import Optimum, OptimumError, exact_optimum, heterogeneity_gamma
from .quadratic import random_quadratic
from .registry import build_block_cyclic, build_problem, problem_spec
from .synthetic import synthetic

__all__ = [
    "FederatedProblem",
    "LossKind",
    "ProblemError",
    "li_counterexample",
    "li_counterexample_matrices",
    "random_quadratic",
    "identical_quadratic",
    "synthetic",
    "BlockCyclicProblem",
    "block_cyclic_quadratic",
    "block_cyclic_softmax",
    "label_block_partition",
    "build_problem",
    "build_block_cyclic",
    "problem_spec",
    "ProblemConstants",
    "problem_constants",
    "Optimum",
    "OptimumError",
    "exact_optimum",
    "heterogeneity_gamma",
]
