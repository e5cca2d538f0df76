"""The partition report: sizes, label histograms and the heterogeneity measures the theory uses.

For a labelled image data set, a ``PartitionRecipe`` and Li et al.'s softmax problem on it
(``problems.partition_problem``, lambda = 1e-4 as their App. D), ``partition_report`` computes:

* Gamma = F* - sum_k p_k F_k* (Li et al., ICLR 2020, Sec. 3.1; ``assumption_constants.heterogeneity``
  on the exact optima: damped Newton, ``problems.exact_optimum``);
* sigma_G^2 = max_w sum_k q_k ||grad F_k(w) - grad F(w)||^2 (Yu, Jin, Yang 2019; q_k = 1/N and
  q_k = p_k: ``assumption_constants.gradient_dissimilarity``);
* the (G, B)-BGD pair (Karimireddy et al. 2020): the smallest G^2 with sum_k p_k ||grad F_k(w)||^2
  <= G^2 + B^2 ||grad F(w)||^2, for B^2 in ``B_sq_grid`` (``bgd_constants.bgd_curve``).

Region. The last two are suprema over w; they are taken exactly over two points, the start
w = 0 of FedAvg and the optimum w* (``proofs_check.Points``). At w* grad F = 0, so there sigma_G^2
(weights p) and every G^2 equal sum_k p_k ||grad F_k(w*)||^2, the clients' disagreement at the
solution. Over any region holding both points the supremum is at least this value: a lower
estimate, stated as such in the report (a certified bound over a ball is loose for softmax).

``PartitionHeterogeneity.to_json()`` is the JSON form (``fedbound partition --json``),
``to_markdown()`` the Markdown rendering (``fedbound partition``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from problems import (
    LI_SOFTMAX_L2,
    FederatedProblem,
    ImageDataset,
    PartitionRecipe,
    PartitionSummary,
    exact_optimum,
    partition_problem,
    summarize_partition,
)

from .assumptions import Estimate, gradient_dissimilarity, heterogeneity
from .bgd import BGDPair, bgd_curve
from .regions import Points

__all__ = ["DEFAULT_B_SQ_GRID", "PartitionHeterogeneity", "partition_heterogeneity", "partition_report"]

DEFAULT_B_SQ_GRID = (1.0, 2.0, 4.0)
"""B^2 values at which the (G, B)-BGD pair is reported."""
_REGION = "the two points w = 0 (FedAvg's start) and w* (exact maximum over them; a lower estimate of any supremum over a region holding both)"


@dataclass(frozen=True)
class PartitionHeterogeneity:
    """A partition's summary (sizes, label histogram) and its problem's Gamma, sigma_G^2 (uniform and
    p weights) and (G, B)-BGD pairs over ``region``."""

    summary: PartitionSummary
    problem: str
    l2: float
    gamma: Estimate
    sigma_G_sq_uniform: Estimate
    sigma_G_sq_p: Estimate
    bgd: tuple[BGDPair, ...]
    region: str

    def to_json(self) -> dict[str, Any]:
        return {
            "partition": self.summary.to_json(),
            "problem": self.problem,
            "l2": self.l2,
            "region": self.region,
            "gamma": _estimate_json(self.gamma),
            "sigma_G_sq_uniform": _estimate_json(self.sigma_G_sq_uniform),
            "sigma_G_sq_p": _estimate_json(self.sigma_G_sq_p),
            "bgd": [{"B_sq": p.B_sq, "G_sq": p.G_sq, "exact": p.exact, "method": p.method} for p in self.bgd],
        }

    def to_markdown(self) -> str:
        return "\n".join([
            f"# Partition report: {self.summary.dataset}",
            "",
            self.summary.to_markdown(),
            "",
            f"## Heterogeneity of {self.problem} (softmax, l2 = {self.l2:g})",
            "",
            "| measure | value |",
            "|---|---:|",
            f"| Gamma = F* - sum_k p_k F_k* (Li et al. 2020) | {self.gamma.value:.6g} |",
            f"| sigma_G^2, q_k = 1/N (Yu et al. 2019) | {self.sigma_G_sq_uniform.value:.6g} |",
            f"| sigma_G^2, q_k = p_k | {self.sigma_G_sq_p.value:.6g} |",
            *(f"| (G, B)-BGD G^2 at B^2 = {p.B_sq:g}, q_k = p_k (Karimireddy et al. 2020) | {p.G_sq:.6g} |"
              for p in self.bgd),
            "",
            f"Gamma: {self.gamma.method}. sigma_G^2 and G^2: over {self.region}.",
        ])


def partition_heterogeneity(
    problem: FederatedProblem, summary: PartitionSummary, B_sq_grid: tuple[float, ...] = DEFAULT_B_SQ_GRID
) -> PartitionHeterogeneity:
    """Gamma, sigma_G^2 and the BGD pairs of ``problem`` (module docstring), beside its ``summary``."""
    optimum = exact_optimum(problem, crosscheck=False)
    region = Points(np.stack([np.zeros(problem.dim), optimum.w_star]))
    return PartitionHeterogeneity(
        summary=summary,
        problem=problem.name,
        l2=float(problem.mu),
        gamma=heterogeneity(problem, optimum),
        sigma_G_sq_uniform=gradient_dissimilarity(problem, region, "uniform"),
        sigma_G_sq_p=gradient_dissimilarity(problem, region, "p"),
        bgd=bgd_curve(problem, region, list(B_sq_grid), "p"),
        region=_REGION,
    )


def partition_report(
    dataset: ImageDataset,
    recipe: PartitionRecipe,
    *,
    l2: float = LI_SOFTMAX_L2,
    data_dir: str | os.PathLike[str] | None = None,
) -> PartitionHeterogeneity:
    """Partition ``dataset`` by ``recipe``, build Li et al.'s softmax problem on it and report it."""
    client_of_row = recipe.apply(dataset.labels)
    summary = summarize_partition(dataset.labels, client_of_row, dataset.n_classes, dataset=dataset.describe(),
                                  recipe=recipe.describe())
    problem = partition_problem(dataset, client_of_row, l2=l2, name=f"{dataset.name} {dataset.split}, {recipe.describe()}",
                                data_dir=data_dir)
    return partition_heterogeneity(problem, summary)


def _estimate_json(estimate: Estimate) -> dict[str, Any]:
    return {"value": estimate.value, "exact": estimate.exact, "method": estimate.method}
