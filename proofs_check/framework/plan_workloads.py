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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from convergence.budget import Workload, check_workload, exceeds, run_workload

from .. import plans as p
from .claim_text import variant_id
from .parameters import ModePlans

__all__ = ["check_claim_budget", "check_claims_budget", "plan_workload", "runs_workload", "network_flops_per_image"]

_CYCLES = 2
"""C of Ding et al.'s theorem runs (``ding2020.CYCLES``, the lemma table's MC-PSGD run too)."""


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


def _sec5_flops(dataset: str) -> float:
    """Flops per image of the network Ding et al.'s Sec. 5 claims train on ``dataset`` (resolved, never "auto")."""
    from ..ding2020_fig2 import NETWORK_OF_DATASET

    return network_flops_per_image(NETWORK_OF_DATASET.get(dataset, "digits_net"))


def _ding_theorem(plan: p.DingTheoremPlan) -> Workload:
    # T = C M K steps per client on the N clients of the current block, per K, on one or two instances
    instances = 2 if plan.identical_instance else 1
    return sum((runs_workload(configs=instances, seeds=plan.seeds, rounds=_CYCLES * plan.M * K, clients=plan.N)
                for K in plan.K_grid), Workload())


def _ding_speedup(plan: p.DingSpeedupPlan) -> Workload:
    # MC-PSGD (two chains) at K > C M N per N of the N sweep (M = 3), K = 1024 per M of the M sweep (N = 4)
    n_sweep = sum((runs_workload(seeds=plan.seeds, rounds=_CYCLES * 3 * (_CYCLES * 3 * N + 1), clients=2 * N)
                   for N in plan.N_grid), Workload())
    m_sweep = sum((runs_workload(seeds=plan.seeds, rounds=_CYCLES * M * 1024, clients=2 * 4) for M in plan.M_grid), Workload())
    return n_sweep + m_sweep


def _ding_ordering(plan: p.DingOrderingPlan) -> Workload:
    # MM-PSGD, MC-PSGD (two chains), FedAvg-cyclic and FedAvg on shuffled data at T = C M K, N = 4, M = 3
    return runs_workload(configs=5, seeds=plan.seeds, rounds=_CYCLES * 3 * plan.K, clients=4)


def _sec5(plan: p.DingSec5Plan, rounds: Any, local_steps: Any, clients: Any, records: Any = 1) -> Workload:
    """Runs of a Sec. 5 plan: ``clients`` clients a round (both chains counted), minibatch images."""
    return runs_workload(seeds=plan.seeds, rounds=rounds, E=local_steps, clients=clients, records=records,
                 rows=plan.batch_size, network_flops=_sec5_flops(plan.dataset))


def _ding_fig2(plan: p.DingFig2Plan) -> Workload:
    # MM-PSGD, MC-PSGD (two chains), FedAvg-cyclic: 4 N clients a round; FedAvg on shuffled data: all M N
    R, N = plan.cycles * plan.n_blocks * plan.rounds_per_block, plan.clients_per_block
    return _sec5(plan, R, plan.local_steps, 4 * N + plan.n_blocks * N, records=plan.n_blocks * plan.rounds_per_block)


def _ding_table1(plan: p.DingTable1Plan) -> Workload:
    # MM-PSGD and MC-PSGD (two chains) at every I of the grid, recorded every record_every rounds
    R, N = plan.cycles * plan.n_blocks * plan.rounds_per_block, plan.clients_per_block
    return sum((_sec5(plan, R, I, 3 * N, records=R // plan.record_every + 1) for I in plan.local_steps_grid),
               Workload())


def _ding_fig4(plan: p.DingFig4Plan) -> Workload:
    # per M: MM-PSGD, MC-PSGD (two chains), FedAvg-cyclic, C M E rounds; one FedAvg on shuffled data (M_min N clients)
    R, N = plan.cycles * plan.rounds_per_cycle, plan.clients_per_block
    cyclic = sum((_sec5(plan, R, plan.local_steps, 4 * N, records=plan.rounds_per_cycle) for _ in plan.blocks_grid),
                 Workload())
    return cyclic + _sec5(plan, R, plan.local_steps, min(plan.blocks_grid) * N)


def _ding_fig5(plan: p.DingFig5Plan) -> Workload:
    # per rate: MM-PSGD and MC-PSGD (two chains) with K = rate N participants a round
    R = plan.cycles * plan.n_blocks * plan.rounds_per_block
    return sum((_sec5(plan, R, plan.local_steps, 3 * K, records=plan.n_blocks * plan.rounds_per_block)
                for K in plan.participants()), Workload())




_WORKLOADS: Mapping[type, Callable[[Any], Workload]] = {
    p.DingTheoremPlan: _ding_theorem,
    p.DingSpeedupPlan: _ding_speedup,
    p.DingOrderingPlan: _ding_ordering,
    p.DingFig2Plan: _ding_fig2,
    p.DingTable1Plan: _ding_table1,
    p.DingFig4Plan: _ding_fig4,
    p.DingFig5Plan: _ding_fig5,
}


def plan_workload(plan: Any) -> Workload:
    """The work ``plan`` asks for (module docstring: a lower bound, counted without building
    anything); TypeError for a plan of no shipped claim (a claim's own plan has no count here:
    its runs are priced by ``convergence.execute``)."""
    if callable(getattr(plan, "workload", None)):
        return plan.workload()
    try:
        count = _WORKLOADS[type(plan)]
    except KeyError:
        raise TypeError(f"plan: no workload count for {type(plan).__name__}") from None
    return count(plan)


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
    counted = type(claim.plan.default) in _WORKLOADS or callable(getattr(claim.plan.default, "workload", None))
    if settings.store_readonly or not counted:
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
