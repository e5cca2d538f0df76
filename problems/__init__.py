"""Federated problem families, their constants and exact optima (the first layer of fedbound).

Public API (everything else is private):

* the problem model: ``FederatedProblem``, ``LossKind``, ``ProblemError``;
* families: ``li_counterexample`` (Li et al. 2020, Appendix C) and ``li_counterexample_matrices``,
  ``random_quadratic``, ``synthetic`` (Li et al. 2020, Appendix D / FedProx);
* block-cyclic data (Ding et al. 2020): ``BlockCyclicProblem``, ``block_cyclic_quadratic``,
  ``block_cyclic_softmax``, ``label_block_partition``;
* the registry: ``build_problem(spec)``, ``build_block_cyclic(spec)``, ``problem_spec(family, **params)``;
* constants: ``ProblemConstants``, ``problem_constants``;
* optima: ``Optimum``, ``OptimumError``, ``exact_optimum``, ``heterogeneity_gamma``, ``check_optimum``;
* the registry's ``check_problem(problem, spec)`` (does a problem belong to a spec?);
* validation shared by every layer: ``check_int``, ``check_ints``, ``check_real``, ``check_memory``, ``check_problem_size``,
  ``available_memory``, ``format_bytes``, ``MEMORY_FRACTION``.
"""

from ._base import FederatedProblem, LossKind, ProblemError
from .block_cyclic import BlockCyclicProblem, block_cyclic_quadratic, block_cyclic_softmax, label_block_partition
from .constants import ProblemConstants, problem_constants
from .counterexample import li_counterexample, li_counterexample_matrices
from .identical import identical_quadratic
from .optimum import Optimum, OptimumError, check_optimum, exact_optimum, heterogeneity_gamma
from .quadratic import random_quadratic
from .registry import build_block_cyclic, build_problem, check_problem, problem_spec
from .synthetic import synthetic
from .validation import MEMORY_FRACTION, available_memory, check_int, check_ints, check_memory, check_problem_size, check_real, format_bytes

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
    "check_problem",
    "ProblemConstants",
    "problem_constants",
    "Optimum",
    "OptimumError",
    "exact_optimum",
    "heterogeneity_gamma",
    "check_optimum",
    "MEMORY_FRACTION",
    "available_memory",
    "check_int",
    "check_ints",
    "check_memory",
    "check_problem_size",
    "check_real",
    "format_bytes",
]
