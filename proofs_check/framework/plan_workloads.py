"""The work a claim's plan asks for, counted from the plan alone, and the check that it fits.

``plan_workload(plan)`` counts, through the plan's own ``workload()`` method (each claim's plan
dataclass has one, beside its evaluator; ``runs_workload`` is their unit), the runs its evaluator makes: configs,
seeds, rounds, local steps and clients per round, record points, whether they are traced (the
NumPy reference path), and for the CNN claims the network's flops per image
(``convergence.budget``, which prices the count). Nothing is built: no problem, no config, no
seed tuple or record array, so an absurd parameter (``li2020.thm1[seeds=1000000000]``,
``control.constant-step-rate[rounds=1000000000000]``) is refused in milliseconds.

The count is a **lower bound** of what the evaluator runs (runs, client-steps, records), never
above it: where a horizon depends on a problem's constants (Li et al.'s gamma = max{8 kappa, E} >=
E, an image instance's gamma) it takes the smallest value the plan allows, and a linear model's
arithmetic (rows x d, known only once its problem is built) is left out (a CNN's, known from its
network, is counted), so that at the budget's prices the check refuses only what is certainly
over the limit. ``convergence.execute`` then prices the runs themselves, from their
configs and problems, before any of them starts: the second, exact check.

``check_claims_budget`` is the check of ``fedbound verify`` (every selected claim, and their sum,
before anything runs) and of ``Claim.evaluate``; a refusal names the parameter that drives the
cost: the given one whose return to the mode's value lowers the estimate most (``--seeds`` for the
seeds taken from the settings), else the claim.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from convergence.budget import Workload, check_workload, exceeds, run_workload

from .claim_text import variant_id
from .parameters import ModePlans

__all__ = ["check_claim_budget", "check_claims_budget", "counts_its_work", "plan_workload", "runs_workload",
           "network_flops_per_image"]

def runs_workload(*, configs: Any = 1, seeds: Any = 1, rounds: Any, E: Any = 1, clients: Any = 1, records: Any = 1,
                  rows: Any = 0, network_flops: Any = 0, reference: bool = False) -> Workload:
    """``configs`` configs of one shape (``convergence.budget.run_workload``); a linear model's
    arithmetic is not counted (module docstring), a CNN's is (``network_flops`` per image)."""
    return run_workload(seeds=seeds, rounds=rounds, steps_per_round=E, clients=clients, rows=rows,
                        flops_per_row=network_flops, records=records, network=True,
                        reference=reference).times(configs)


@functools.lru_cache(maxsize=None)
def network_flops_per_image(network: str) -> float:
    """Flops of one image's forward and backward pass through a shipped network (``problems.models.cnn``)."""
    from problems.models.cnn import networks

    return float(getattr(networks, network)().layout.flops_per_image())


def counts_its_work(plan: Any) -> bool:
    """Whether ``plan`` counts its runs (has a ``workload()`` method: every shipped claim's plan does;
    another package's may not, and its runs are then priced by ``convergence.execute`` alone)."""
    return callable(getattr(plan, "workload", None))


def plan_workload(plan: Any) -> Workload:
    """The work ``plan`` asks for, ``plan.workload()`` (module docstring: a lower bound, counted
    without building anything); TypeError for a plan that does not count its work."""
    if not counts_its_work(plan):
        raise TypeError(f"plan: {type(plan).__name__} has no workload() method")
    return plan.workload()


def check_claims_budget(selections: Sequence[Any], settings: Any) -> None:
    """BudgetError (``convergence.budget``) when a selected claim (a ``ClaimSelection``: claim and
    params; ``check_claim_budget``) or all of them together is estimated over the limit
    (``settings.max_cpu_hours``) or beyond the memory available."""
    total = sum((check_claim_budget(s.claim, s.params, settings) for s in selections), Workload())
    if len(selections) > 1:
        check_workload(total, f"the {len(selections)} claims together", "--claim", limit_hours=settings.max_cpu_hours)


def check_claim_budget(claim: Any, params: Mapping[str, Any], settings: Any) -> Workload:
    """The work of ``claim`` run with ``params`` under ``settings`` (``plan_workload``), after a
    BudgetError if it is over the limit or beyond the memory available. Nothing is counted for a
    read-only store (nothing is computed) or a claim of another package (no count here: its runs
    are priced by ``convergence.execute``)."""
    if settings.store_readonly or not counts_its_work(claim.plan.default):
        return Workload()
    plan = claim.plan_for(settings, params)
    work = plan_workload(plan)
    if exceeds(work, settings.max_cpu_hours):
        check_workload(work, f"claim {variant_id(claim.id, params)!r}", _driver(claim, params, settings, plan, work),
                       limit_hours=settings.max_cpu_hours)
    return work


def _driver(claim: Any, params: Mapping[str, Any], settings: Any, plan: Any, work: Workload) -> str:
    """The field to name when ``work`` is refused: of the given parameters and those taken from the
    settings (``--seeds``), the one whose value in the mode's plan lowers the estimate most."""
    plans: ModePlans = claim.plan
    base = plans.select(settings.mode)
    candidates = {name: name for name in params}
    candidates.update({spec.name: f"--{spec.from_settings}" for spec in plans.parameters()
                       if spec.from_settings is not None and spec.name not in params
                       and getattr(plan, spec.name) != getattr(base, spec.name)})
    best, lowest = f"claim {claim.id}", work.seconds
    for name, label in candidates.items():
        try:
            seconds = plan_workload(dataclasses.replace(plan, **{name: getattr(base, name)})).seconds
        except ValueError:  # the other fields do not fit the mode's value of this one
            continue
        if seconds < lowest:
            best, lowest = label, seconds
    return best
