"""The claim ``lemmas``: the lemma table of `fedbound verify` built on the lemma checks.

li2020.lemma1-3 on the default problems (``default_problems``: the counterexample and a
synthetic(1, 1) instance) with Li's schedule, li2020.lemma4-5 (unbiasedness and variance of the
sampling schemes, ``proofs_check.lemmas.sampling``) under Schemes I and II on the traced runs of
``li2020.sampling_steps`` (N = 20, K = 10, E = 10: the runs li2020.thm2/thm3 trace for their proof steps, so a
store shares them), yu2019.drift on heterogeneous least-squares clients
with a constant step (the proof does not need identical data), and ding2020.lemma1-9 on
the Ding instance with MC-PSGD (the theorem's step sizes, I = 4 so that the drift of lemma 3 is not
trivially 0), each a sub-check whose worst ratio LHS / RHS over every step is reported with its
interval. Constants as the assumptions define them (``proofs_check.lemmas.fedavg``,
``proofs_check.lemmas.ding2020``). Every run keeps every local iterate (a traced request through
``convergence.execute`` on the NumPy reference path), so ``--jobs`` runs its seeds in parallel and
``--store`` keeps its traces like any other run.

The plan (``LemmasPlan``) gives the rounds of the FedAvg runs (10 in quick mode,
30 otherwise) and the seeds (at least 16: Li's Lemma 2 compares realised noise).

Power self-test: ``lemmas[planted=LEMMA_ID]`` (the plan's ``planted``) plants a false version of one lemma
(``PLANTABLE_LEMMAS``). Li's Lemma 4 is planted as the paper's own counter-example, McMahan's original
scheme claimed unbiased (its bias is 1 - K/N = 1/2 of every round's update: the row's statistic is about
0.25 against the tolerance 0.15^2 = 0.0225); Lemma 5 with 1/K replaced by 1/K^2 (at K = 10 the sampling
variance uses about 0.15 of the true bound, so 1.5 times the planted one). For the others the constant is
replaced (for Ding's Lemmas 1, 4, 5: the right-hand side scaled) by ``lemma_verdicts.PLANTED_MARGIN`` (0.9) times the largest one the data prove too small
(``lemma_verdicts.attained_scale``: a simultaneous lower confidence limit above the bound), so the planted lemma is false on the instance, by about 11%
beyond what the data resolve, and must FAIL; Lemma 6's additive constant is moved below the
attained one the same way (``lemma_verdicts.attained_offset``), and so is Lemma 7's (eq. 54: Lemma 6 on the
block-separate chains). Ding's Lemmas 8 and 9 are not
plantable: their rows cannot fail as the paper states them (``ding2020_lemmas``: Lemma 8 holds by
construction of the selection rule, Lemma 9 is implied by L-smoothness once B covers x_m*), so they are
listed as uninformative and never counted, and a planted variant of a row that is never counted would
show no power of the claim. Only the rows of the planted lemma are evaluated (the others are those of the true
claim and cannot change a FAIL); the row notes give the planted constant next to the paper's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import convergence
import problems
from convergence.verdict import Status, Uninformative, Verdict

from ... import lemmas
from ...framework.claim import Claim, ClaimResult, PlantedVariant
from ...framework.evaluation import combine_checks
from ...framework.parameters import ModePlans, parameter
from ...framework.references import DING2020, LI2020, YU2019
from ..li2020.sampling_steps import STEP_CLIENTS, STEP_INSTANCE, STEP_LOCAL_STEPS, STEP_ROUNDS, step_config
from .default_problems import BATCH, DEFAULT_PROBLEMS

if TYPE_CHECKING:
    from convergence import MCPSGDConfig
    from convergence.budget import Workload
    from problems import BlockCyclicProblem

    from ...framework.settings import VerifySettings
    from ...lemmas.ding2020 import DingLemmaData
    from ...lemmas.fedavg import LemmaData

__all__ = ["CLAIM", "LemmasPlan", "PLANTABLE_LEMMAS", "LEMMA2_EQUALITY"]

_PLANTED_CHANGE: Mapping[str, str] = {
    "li2020.lemma1": "Li Lemma 1 with its right-hand side scaled to 0.9 of the largest scale the run proves too small",
    "li2020.lemma2": "Li Lemma 2 with sum_k p_k^2 sigma_k^2 scaled to 0.9 of what the realised noise proves too small",
    "li2020.lemma3": "Li Lemma 3 with the constant 4 shrunk to 0.9 of the value the drift proves too small",
    "li2020.lemma4": "Li Lemma 4 claimed for McMahan's original scheme, biased by 1 - K/N of each round's update",
    "li2020.lemma5": "Li Lemma 5 with 1/K replaced by 1/K^2 (K = 10: the variance uses 0.15 of the true bound)",
    "yu2019.drift": "Yu's drift bound with the constant 4 shrunk to 0.9 of the value the drift proves too small",
    "ding2020.lemma1": "Ding Lemma 1 with its error terms scaled to 0.9 of what the worst (seed, step) proves too small",
    "ding2020.lemma4": "Ding Lemma 4 (eq. 32) with its right-hand side scaled to 0.9 of what the windows prove too small",
    "ding2020.lemma5": "Ding Lemma 5 (eq. 35) with its right-hand side scaled to 0.9 of what the prefixes prove too small",
    "ding2020.lemma2": "Ding Lemma 2 with sigma^2/N shrunk to 0.9 of the value the noise proves too small",
    "ding2020.lemma3": "Ding Lemma 3 with the constant 4 shrunk to 0.9 of the value the drift proves too small",
    "ding2020.lemma6": "Ding Lemma 6 with its additive constant lowered below the largest measured window gap",
    "ding2020.lemma7": "Ding Lemma 7 (eq. 54, Lemma 6 on the block-separate chains) with its additive constant lowered "
                       "below the largest measured window gap",
}
"""What the planted variant of each plantable lemma changes (its ``PlantedVariant`` description)."""

PLANTABLE_LEMMAS = tuple(_PLANTED_CHANGE)
"""The lemmas of the lemma table that can be planted false (``proofs_check.report_items``)."""


@dataclass(frozen=True)
class LemmasPlan:
    """lemmas: the rounds of the FedAvg runs, the seeds, and which lemma (if any) is planted false."""

    rounds: int = parameter(doc="rounds of the FedAvg runs of Li's lemmas and Yu's drift (E = 5)", minimum=1)
    seeds: int = parameter(16, "seeds of every run (at least 16: Li's Lemma 2 compares realised noise)", minimum=16,
                           from_settings="seeds")
    planted: str | None = parameter(None, "a lemma planted false", choices=PLANTABLE_LEMMAS)

    def workload(self) -> Workload:
        """Traced FedAvg (E = 5) on the two default problems (N = 5, 10) and Yu's drift instance (N = 4), Schemes I
        and II traced on the sampling instance (N = 20, E = 10), and the traced MC-PSGD run of Ding's lemmas
        (C = 2, M = 3, E = 16, I = 4, N = 4, two chains)."""
        from convergence.budget import Workload

        from ...framework.plan_workloads import runs_workload
        from ..ding2020.theorem_runs import CYCLES

        fedavg = sum((runs_workload(seeds=self.seeds, rounds=self.rounds, E=5, clients=N, reference=True)
                      for N in (5, 10, 4)), Workload())
        fedavg += runs_workload(configs=2, seeds=self.seeds, rounds=STEP_ROUNDS, E=STEP_LOCAL_STEPS,
                                clients=STEP_CLIENTS, reference=True)
        return fedavg + runs_workload(seeds=self.seeds, rounds=CYCLES * 3 * 16, E=4, clients=2 * 4, reference=True)


def _ding_lemma_run(seeds: tuple[int, ...]) -> tuple[BlockCyclicProblem, MCPSGDConfig]:
    """The Ding instance with MC-PSGD at K = 64 (C = 2, E = 16, I = 4), gamma and eta of Theorem 2."""
    from ..ding2020.theorem_runs import CYCLES
    from ..ding2020.theorem_runs import instance as ding_instance

    problem = ding_instance()
    N, M, E, I = problem.n_clients, problem.n_blocks, 16, 4
    T = CYCLES * M * E * I
    L = problems.problem_constants(problem.combined).L
    config = convergence.MCPSGDConfig(
        cycles=CYCLES, rounds_per_block=E, local_steps=I, batch_size=1, seeds=seeds,
        step_size=convergence.StepSize.constant(np.sqrt(N) / (L * np.sqrt(T))),
        block_step_size=convergence.StepSize.constant(np.sqrt(N * M) / (L * np.sqrt(T))))
    return problem, config


def _li_rows(data: LemmaData, label: str, planted: str | None) -> list[tuple[str, Verdict]]:
    """Li's Lemmas 1-3 (true, or only the planted one) on one collected run."""
    rows = []
    if planted in (None, "li2020.lemma1"):
        true = lemmas.li_lemma1(data)
        rows.append(true if planted is None else lemmas.li_lemma1(data, scale=lemmas.planted_factor(true)))
    if planted in (None, "li2020.lemma2"):
        true = lemmas.li_lemma2(data)
        rows.append(true if planted is None else lemmas.li_lemma2(data, factor=lemmas.planted_factor(true)))
    if planted in (None, "li2020.lemma3"):
        true = lemmas.li_lemma3(data)
        rows.append(true if planted is None else lemmas.li_lemma3(data, constant=4.0 * lemmas.planted_factor(true)))
    return [(f"{v.claim_id}, {label}", v) for v in rows]


def _sampling_rows(seeds: int, settings: VerifySettings, planted: str | None) -> list[tuple[str, Verdict]]:
    """Li's Lemmas 4-5 (true, or only the planted one) under Schemes I and II on the sampling instance; Lemma
    4 planted runs McMahan's original scheme instead."""
    problem = problems.build_problem(STEP_INSTANCE)
    schemes = ("original",) if planted == "li2020.lemma4" else ("scheme_i", "scheme_ii")
    rows = []
    for scheme in schemes:
        data = lemmas.collect_sampling(problem, step_config(scheme, STEP_LOCAL_STEPS, seeds), settings=settings)
        label = f"{scheme}, K = {data.participants} of N = {problem.n_clients}, E = {STEP_LOCAL_STEPS}"
        if planted in (None, "li2020.lemma4"):
            rows.append((f"li2020.lemma4, {label}" + (" (planted: claimed unbiased)" if planted else ""),
                         lemmas.li_lemma4(data)))
        if planted in (None, "li2020.lemma5"):
            factor = 1.0 if planted is None else 1.0 / data.participants
            rows.append((f"li2020.lemma5{'' if planted is None else ' with 1/K^2'}, {label}",
                         lemmas.li_lemma5(data, factor=factor)))
    return rows


LEMMA2_EQUALITY = (
    "Li's Lemma 2 holds with equality at t = 0 by the definition of sigma_k^2 = max_t E var_k(w_t^k) (every "
    "client starts at w_0, where its variance peaks), so no sample of realised noise can confirm it; the row still "
    "FAILs, and then counts, if the clients' noise is correlated"
)


def _split_lemma2(checks: list[tuple[str, Verdict]]) -> tuple[list[tuple[str, Verdict]], list[Uninformative]]:
    """Li Lemma 2 rows that are INCONCLUSIVE are uninformative (LEMMA2_EQUALITY); a FAIL stays counted."""
    counted, uninformative = [], []
    for name, v in checks:
        if v.claim_id == "li2020.lemma2" and v.status is Status.INCONCLUSIVE:
            uninformative.append(Uninformative.of(name, v, LEMMA2_EQUALITY))
        else:
            counted.append((name, v))
    return counted, uninformative


_DESCENT = {"ding2020.lemma1": "ding_lemma1", "ding2020.lemma4": "ding_lemma4", "ding2020.lemma5": "ding_lemma5"}
"""Ding's lemmas planted by a scale on the right-hand side, by their function in ``proofs_check.lemmas``
(``ding2020_descent``; looked up on use, as the package loads its submodules lazily)."""


def _ding_planted_rows(data: DingLemmaData, planted: str) -> list[tuple[str, Verdict]]:
    """The rows of one planted Ding lemma (module docstring)."""
    if planted in _DESCENT:
        lemma, terms = getattr(lemmas, _DESCENT[planted]), lemmas.descent_terms(data)
        rows = [lemma(data, scale=lemmas.planted_factor(lemma(data, terms=terms)), terms=terms)]
    elif planted == "ding2020.lemma2":
        rows = [lemmas.ding_lemma2(data, factor=lemmas.planted_factor(lemmas.ding_lemma2(data)))]
    elif planted == "ding2020.lemma3":
        rows = [lemmas.ding_lemma3(data, 4.0 * lemmas.planted_factor(lemmas.ding_lemma3(data, over=over)),
                                   over=over)
                for over in ("max", "mean")]
    elif planted == "ding2020.lemma7":
        rows = [lemmas.ding_lemma7(data, constant=lemmas.attained_offset(lemmas.ding_lemma7(data),
                                                                         lemmas.PLANTED_MARGIN))]
    else:
        rows = [lemmas.ding_lemma6(data, constant=lemmas.attained_offset(lemmas.ding_lemma6(data),
                                                                         lemmas.PLANTED_MARGIN))]
    return [(f"{v.claim_id}, block-cyclic MC-PSGD", v) for v in rows]


def evaluate(settings: VerifySettings, plan: LemmasPlan) -> ClaimResult:
    """The lemma table (module docstring) with ``plan.rounds`` rounds and ``plan.seeds`` seeds;
    ``plan.planted`` names a lemma of PLANTABLE_LEMMAS to make false."""
    planted = plan.planted
    seeds = tuple(range(plan.seeds))
    checks: list[tuple[str, Verdict]] = []
    if planted in (None, "li2020.lemma1", "li2020.lemma2", "li2020.lemma3"):
        for label, spec in DEFAULT_PROBLEMS.items():
            problem = problems.build_problem(spec)
            c = problems.problem_constants(problem)
            E = 5
            config = convergence.FedAvgConfig(E, plan.rounds, convergence.StepSize.li(c.mu, c.L, E), BATCH,
                                              seeds=seeds)
            checks += _li_rows(lemmas.collect(problem, config, settings=settings), label, planted)
    if planted is None or planted in ("li2020.lemma4", "li2020.lemma5"):
        checks += _sampling_rows(plan.seeds, settings, planted)
    if planted in (None, "yu2019.drift"):
        # heterogeneous clients: the drift lemma's proof needs a constant step and E||g||^2 <= G^2, not identical data
        problem = problems.build_problem(problems.problem_spec("random_quadratic", n_clients=4, dim=10, mu=0.1, L=10.0,
                                                               heterogeneity=1.0, samples_per_client=50, seed=0))
        config = convergence.FedAvgConfig(5, plan.rounds, convergence.StepSize.constant(0.02), 1, seeds=seeds)
        data = lemmas.collect(problem, config, settings=settings)
        true = lemmas.yu_drift(data)
        drift = true if planted is None else lemmas.yu_drift(data, constant=4.0 * lemmas.planted_factor(true))
        checks.append((f"{drift.claim_id}, heterogeneous clients", drift))
    if planted is None or planted.startswith("ding2020"):
        data = lemmas.collect_ding(*_ding_lemma_run(seeds), settings=settings)
        checks += ([(f"{name}, block-cyclic MC-PSGD", v) for name, v in lemmas.ding_rows(data)] if planted is None
                   else _ding_planted_rows(data, planted))
    checks, uninformative = _split_lemma2(checks) if planted is None else (checks, [])
    # Ding's Lemmas 8 and 9 cannot fail (their verdicts say why: Verdict.cannot_fail); combine_checks lists them
    worst = max((v for _, v in checks if not v.cannot_fail), key=lambda v: v.measured)
    what = "The lemma table" if planted is None else f"Planted false {planted} (power self-test), only its rows"
    verdict = combine_checks(
        "lemmas", checks, headline=worst,
        notes=f"{what}: each row is LHS <= RHS at every local step (expectations over seeds with intervals). "
        "Headline: the worst ratio LHS / RHS over the counted rows.",
        uninformative=uninformative,
    )
    return ClaimResult(verdict)



CLAIM = Claim(
    "lemmas", (LI2020, DING2020, YU2019),
    "Li et al. Lemmas 1-5; Ding et al. Lemmas 1-9; Yu et al. client drift",
    "Both sides of each lemma along recorded trajectories, e.g. Li's Lemma 3: E Σ_k p_k ‖w̄_t − w_t^k‖² ≤ "
    "4 η_t² (E−1)² G²; Lemma 4 (Schemes I, II unbiased): E_S w̄_{t+1} = v̄_{t+1}; Lemma 5: E_S ‖v̄_{t+1} − w̄_{t+1}‖² ≤ "
    "(4/K) η_t² E² G² (Scheme I), (N−K)/(N−1) (4/K) η_t² E² G² (Scheme II); expectations over seeds (and over "
    "fresh samples of S for Lemmas 4-5).",
    "the largest ratio LHS / RHS over every counted lemma and step (must be ≤ 1; for Lemma 4 the squared bias as a "
    "share of the squared round updates over its tolerance 0.01); Ding's Lemmas 8 (true by the "
    "selection rule) and 9 (implied by L-smoothness once B covers x_m*) cannot fail and are listed as uninformative",
    evaluate,
    plan=ModePlans(quick=LemmasPlan(rounds=10), default=LemmasPlan(rounds=30)),
    variants=tuple(PlantedVariant(lemma, change, {"planted": lemma}, sub_check=lemma)
                   for lemma, change in _PLANTED_CHANGE.items()),
    order=170,
)
