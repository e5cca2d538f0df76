from ._base import FederatedProblem, LossKind, ProblemError  # provisional, replaced by the full API
