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

from convergence.budget import Workload, check_workload, exceeds, pass_workload, run_workload

from .. import plans as p
from .claim_text import variant_id
from .parameters import ModePlans

__all__ = ["check_claim_budget", "check_claims_budget", "plan_workload", "runs_workload", "network_flops_per_image"]

_CYCLES = 2
"""C of Ding et al.'s theorem runs (``claims.ding2020.theorem_runs.CYCLES``, the lemma table's MC-PSGD run too)."""


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


def _li_thm4(plan: p.Li2020Thm4Plan) -> Workload:
    # the constant-step (E = 5), gradient-descent (E = 1) and decaying-step (E = 5) runs, N clients, exact gradients
    return (runs_workload(rounds=plan.simulated_rounds, E=5, clients=plan.N, records=41)
            + runs_workload(rounds=plan.gd_rounds, E=1, clients=plan.N)
            + runs_workload(rounds=plan.decay_rounds, E=5, clients=plan.N, records=41))


def _li_thm1(plan: p.Li2020Thm1Plan) -> Workload:
    # two rate instances (N = 5, exact; N = 10, seeds): horizon_over_gamma (60, 30) x scale x gamma >= E steps,
    # and the traced eq. 13 run (N = 4, E = 1) with recursion_seeds seeds
    rates = sum((runs_workload(seeds=seeds, rounds=h * plan.horizon_scale, E=plan.E, clients=N, records=40)
                 for h, N, seeds in ((60, 5, 1), (30, 10, plan.seeds))), Workload())
    return rates + runs_workload(seeds=plan.recursion_seeds, rounds=plan.recursion_steps, clients=4, reference=True)


def _li_sampling(plan: p.Li2020SamplingPlan) -> Workload:
    # E = 1, batch 1: horizon x 12 steps on K clients (N = 10 balanced, N = 4 unbalanced) per K of the plan, and
    # the two image instances at image_horizon x their gamma (>= 1) steps on image_participants clients
    synthetic = sum((runs_workload(seeds=plan.seeds, rounds=12 * plan.horizon, clients=K, records=60)
                     for K in plan.participants + plan.unbalanced_participants), Workload())
    images = runs_workload(configs=2, seeds=plan.image_seeds, rounds=plan.image_horizon, clients=plan.image_participants,
                   records=30)
    return synthetic + images


def _yu_pairs(clients: Sequence[int], horizons: Sequence[int]) -> list[tuple[int, int]]:
    """The (N, T) runs of a Yu sweep: T >= N^3."""
    return [(N, T) for N in clients for T in horizons if T >= N**3]


def _yu_sweep(plan: p.YuSweepPlan) -> Workload:
    # PR-SGD: T steps per client on N clients, per (N, T) with T >= N^3
    return sum((runs_workload(seeds=plan.seeds, rounds=T, clients=N, records=12)
                for N, T in _yu_pairs(plan.clients, plan.horizons)), Workload())


def _yu_cnn(plan: p.YuCNNPlan) -> Workload:
    # the sweep, the speed-up runs at the largest T and the pilot run (smallest N, largest T), minibatch images;
    # PR-SGD tracks the gradient of f (n_train images) at the average at every one of the T steps
    from ..yu2019_cnn import NETWORK

    T_max = max(plan.horizons)
    pairs = set(_yu_pairs(plan.clients, plan.horizons)) | {(N, T_max) for N in plan.speedup_clients}
    pairs = sorted(pairs) + [(min(plan.clients), T_max)]
    flops = network_flops_per_image(NETWORK)
    return sum((runs_workload(seeds=plan.seeds, rounds=T, clients=N, records=7, rows=plan.batch_size, network_flops=flops)
                + pass_workload(passes=plan.seeds * T, rows=plan.n_train, flops_per_row=flops, network=True)
                for N, T in pairs), Workload())


def _constants(plan: p.ConstantsPlan) -> Workload:
    return Workload()  # assumption constants: analysis only, no run


def _lemmas(plan: p.LemmasPlan) -> Workload:
    # traced FedAvg (E = 5) on the two default problems (N = 5, 10) and Yu's drift instance (N = 4), and the
    # traced MC-PSGD run of Ding's lemmas (C = 2, M = 3, E = 16, I = 4, N = 4, two chains)
    fedavg = sum((runs_workload(seeds=plan.seeds, rounds=plan.rounds, E=5, clients=N, reference=True) for N in (5, 10, 4)),
                 Workload())
    return fedavg + runs_workload(seeds=plan.seeds, rounds=_CYCLES * 3 * 16, E=4, clients=2 * 4, reference=True)


def _li_schemes(plan: p.Li2020SchemesPlan) -> Workload:
    # 3 schemes and the original per step of its grid, on the two image instances (E = 20 steps_per_E) and,
    # with synthetic, Fig. 4's two (E = 10 steps_per_E); K participants, every round recorded
    per_instance = 3 + len(plan.original_steps)
    images = runs_workload(configs=2 * per_instance, seeds=plan.seeds, rounds=plan.image_rounds, E=20 * plan.steps_per_E,
                   clients=plan.participants, records=plan.image_rounds + 1)
    if not plan.synthetic:
        return images
    return images + runs_workload(configs=2 * per_instance, seeds=plan.seeds, rounds=plan.synthetic_rounds,
                          E=10 * plan.steps_per_E, clients=plan.participants, records=plan.synthetic_rounds + 1)


def _instances(instance: str | None) -> int:
    """How many of Li's choice instances a plan runs (None: all of them)."""
    return len(p.LI_CHOICE_INSTANCES) if instance is None else 1


def _li_eq8(plan: p.Li2020Eq8Plan) -> Workload:
    # Scheme I with K participants per E of the grid, every round recorded, on each instance
    return sum((runs_workload(configs=_instances(plan.instance), seeds=plan.seeds, rounds=plan.rounds, E=E,
                      clients=plan.participants, records=plan.rounds + 1) for E in plan.E_grid), Workload())


def _li_k_effect(plan: p.Li2020KEffectPlan) -> Workload:
    # Scheme I with E local steps per K of the grid, on each instance
    return sum((runs_workload(configs=_instances(plan.instance), seeds=plan.seeds, rounds=plan.rounds, E=plan.E, clients=K,
                      records=plan.tail_rounds + 1) for K in plan.K_grid), Workload())


_WORKLOADS: Mapping[type, Callable[[Any], Workload]] = {
    p.Li2020Thm4Plan: _li_thm4,
    p.Li2020Thm1Plan: _li_thm1,
    p.Li2020SamplingPlan: _li_sampling,
    p.YuTheorem1Plan: _yu_sweep,
    p.YuCorollary2Plan: _yu_sweep,
    p.YuCNNPlan: _yu_cnn,
    p.ConstantsPlan: _constants,
    p.LemmasPlan: _lemmas,
    p.Li2020SchemesPlan: _li_schemes,
    p.Li2020Eq8Plan: _li_eq8,
    p.Li2020KEffectPlan: _li_k_effect,
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
