"""The plans of Ding et al.'s Sec. 5 claims (ding2020.fig2, table1, fig4, fig5): the image data set and
its scale, the block-cyclic partition and schedule per data set that "auto" resolves to, and each
figure's grid and claimed direction. Re-exported by ``proofs_check.plans`` with every other plan."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .framework.parameters import PlanError, parameter

__all__ = ["DingFig2Plan", "SEC5_AUTO_ORDER", "SEC5_DATASETS", "Sec5DataPlans", "DingTable1Plan", "TABLE1_DIRECTIONS",
           "SEC5_CLASSES", "DingSec5Plan", "DingBlocksPlan", "SEC5_MARGIN", "DingFig4Plan", "FIG5_CLAIMS", "DingFig5Plan"]


SEC5_AUTO_ORDER = ("cifar10", "fashion-mnist", "mnist", "digits")
"""The data sets of Ding et al.'s Sec. 5 claims in the order "auto" prefers them: CIFAR-10, the paper's
(the tutorial net), then the 28x28 sets with LeNet-5, Fashion-MNIST first (a small net does not
saturate it, as it nearly does MNIST and the digits), then the bundled digits (digits_net), always present."""
SEC5_DATASETS = ("auto", "digits", "mnist", "fashion-mnist", "cifar10")
"""The ``dataset`` values of the Sec. 5 plans (``problems.image_data``; "auto": ``SEC5_AUTO_ORDER``)."""


SEC5_CLASSES = 10
"""The labels of every data set of SEC5_AUTO_ORDER (the digits, MNIST, Fashion-MNIST, CIFAR-10)."""


@dataclass(frozen=True, kw_only=True)
class DingSec5Plan:
    """What Ding et al.'s Sec. 5 claims share: the data (data set, images used, N clients per block)
    and the training (C cycles, constant gamma = eta, batch, seeds); each claim adds its blocks, its
    local steps I (one value, or ding2020.table1's grid) and its statement."""

    dataset: str = parameter(doc="the image data set (auto: CIFAR-10, else Fashion-MNIST, else MNIST, else the "
                                 "bundled digits, as found by problems.image_data; the defaults shown are the "
                                 "digits', the 'auto on' lines give the others')", choices=SEC5_DATASETS)
    n_train: int = parameter(doc="training images used (0: all of the data set's)", minimum=0)
    n_test: int = parameter(doc="test images used (0: all of the data set's)", minimum=0)
    clients_per_block: int = parameter(doc="clients N of each block", minimum=1)
    cycles: int = parameter(doc="cycles C over the blocks (T = C M E I steps per client)", minimum=2)
    step_size: float = parameter(doc="constant step gamma = eta of every run", above=0)
    batch_size: int = parameter(2, "minibatch size (the paper's 2)", minimum=1)
    seeds: int = parameter(4, "seeds of every run (at least 2: the checks are paired over seeds)", minimum=2,
                           from_settings="seeds")


@dataclass(frozen=True)
class Sec5DataPlans:
    """A Sec. 5 claim's plan per data set that a ``dataset`` "auto" resolves to (``SEC5_AUTO_ORDER``,
    ``problems.resolve_image_dataset``): the mode's own plan on the digits, ``lenet5`` on MNIST or
    Fashion-MNIST, ``cifar10`` on CIFAR-10 (their own ``dataset`` "auto"). The data set is resolved
    before any spec is built, so run ids name it; the evaluators never see "auto"."""

    lenet5: DingSec5Plan
    cifar10: DingSec5Plan

    def resolve(self, plan: DingSec5Plan, given: frozenset[str]) -> DingSec5Plan:
        """``plan`` itself unless its dataset is "auto"; else the plan of the data set found here
        (``plan`` on the digits), its dataset that name, the fields in ``given`` as in ``plan``."""
        if plan.dataset != "auto":
            return plan
        from problems import resolve_image_dataset

        name = resolve_image_dataset("auto", SEC5_AUTO_ORDER)
        base = {"digits": plan, "cifar10": self.cifar10}.get(name, self.lenet5)
        kept = {field: getattr(plan, field) for field in given - {"dataset"}}
        return dataclasses.replace(base, **kept, dataset=name)

    def alternatives(self) -> tuple[DingSec5Plan, ...]:
        return (self.lenet5, self.cifar10)

    def describe(self, default: DingSec5Plan) -> list[str]:
        """One line per alternative: its fields that differ from ``default`` (the digits' plan)."""
        lines = []
        for names, plan in (("mnist, fashion-mnist (LeNet-5)", self.lenet5), ("cifar10 (tutorial net)", self.cifar10)):
            changed = [f"{f.name} = {getattr(plan, f.name)!r}" for f in dataclasses.fields(plan)
                       if getattr(plan, f.name) != getattr(default, f.name)]
            lines.append(f"auto on {names}: {', '.join(changed)}")
        return lines


def _local_steps_parameter() -> int:
    """The field I of the Sec. 5 plans that train at one I (every one but ding2020.table1, which sweeps it)."""
    return parameter(10, "local steps I per round (the paper's 10)", minimum=1)


@dataclass(frozen=True, kw_only=True)
class DingBlocksPlan(DingSec5Plan):
    """A Sec. 5 plan with one block structure: M blocks of ``labels_per_block`` labels, E rounds per
    block visit."""

    n_blocks: int = parameter(doc="label-based blocks M", minimum=2)
    labels_per_block: int = parameter(doc="consecutive labels per block (more than 10/M: the label sets overlap)",
                                      minimum=1, maximum=SEC5_CLASSES)
    rounds_per_block: int = parameter(doc="communication rounds E per block visit", minimum=1)


@dataclass(frozen=True, kw_only=True)
class DingFig2Plan(DingBlocksPlan):
    """ding2020.fig2: Ding et al.'s Sec. 5 comparison (Fig. 2) on block-cyclic image data: the data
    (data set, images used, M blocks of N clients, labels per block) and the schedule (C cycles, E
    rounds per block, gamma) per mode; I, the batch, the seeds and the planted alternative."""

    local_steps: int = _local_steps_parameter()
    claimed_winner: str = parameter("predictors", "who is claimed more accurate: the block predictors, or "
                                    "FedAvg on block-cyclic data (a planted variant)",
                                    choices=("predictors", "fedavg_cyclic"))


TABLE1_DIRECTIONS = ("fall", "rise")
"""How ding2020.table1's rounds to target are claimed to move as I grows: fall (Table 1), or rise (planted false)."""


@dataclass(frozen=True, kw_only=True)
class DingTable1Plan(DingBlocksPlan):
    """ding2020.table1: Ding et al.'s Table 1 (rounds to a target accuracy against I) on block-cyclic
    image data: the data and the schedule as ding2020.fig2's, the I grid, how often the accuracy is
    recorded, the target rule and the claimed direction."""

    local_steps_grid: tuple[int, ...] = parameter(doc="local steps I per round of the sweep (the paper: 5, 10, 15, "
                                                      "20; at least 2 values)", minimum=1)
    record_every: int = parameter(doc="rounds between two accuracy records (1: every round; the resolution of the "
                                      "rounds to target)", minimum=1)
    target_fraction: float = parameter(0.9, "the target accuracy is this fraction of the way from the initial "
                                            "accuracy to the best mean accuracy every I reaches (the paper's 60% is "
                                            "0.91 of the way from chance, 10%, to its best, 65%)", above=0,
                                       maximum=1)
    seeds: int = parameter(4, "seeds of every run (at least 3: the checks are Bonferroni-corrected paired t-tests "
                              "over seeds)", minimum=3, from_settings="seeds")
    claimed_direction: str = parameter("fall", "how the rounds to target are claimed to move as I grows (rise: a "
                                               "planted variant)", choices=TABLE1_DIRECTIONS)

    def __post_init__(self) -> None:
        if len(self.local_steps_grid) < 2:
            raise PlanError("local_steps_grid", f"needs at least 2 values of I, got {self.local_steps_grid}")


SEC5_MARGIN = 0.02
"""The equivalence margin delta of ding2020.fig4 and ding2020.fig5 (accuracy, absolute): "does not
degrade" is a drop below delta. From the paper's numbers: accuracies it calls stable move by at most
one point (MC-PSGD 64-65% over M, Fig. 4; MM-PSGD 60-61% and MC-PSGD 61-62% over the participation
rate, Fig. 5), the degradation it reports is at least four (FedAvg-cyclic 61% at M = 2, 53-57% at
M = 10); two points lie between."""


@dataclass(frozen=True, kw_only=True)
class DingFig4Plan(DingSec5Plan):
    """ding2020.fig4: Ding et al.'s M sweep at fixed M E (Fig. 4): the M grid, M E, the labels a
    block has beyond ceil(10/M), the margin delta and the planted alternative."""

    local_steps: int = _local_steps_parameter()
    blocks_grid: tuple[int, ...] = parameter(doc="blocks M of the sweep (the checks compare the smallest and "
                                                 "the largest)", minimum=2)
    rounds_per_cycle: int = parameter(doc="rounds per cycle M E, the same for every M (the paper's 1000); "
                                          "every M must divide it", minimum=1)
    extra_labels: int = parameter(doc="labels per block beyond ceil(10/M) (more: neighbouring blocks share "
                                      "labels)", minimum=0)
    margin: float = parameter(SEC5_MARGIN, "equivalence margin delta: 'does not degrade' is a drop of the "
                                           "last-cycle accuracy below delta", minimum=0)
    claimed_degrading: str = parameter("fedavg_cyclic", "who is claimed to degrade as M grows: FedAvg on "
                                       "block-cyclic data, or the MM-/MC-PSGD predictors (a planted variant, "
                                       "FedAvg-cyclic then claimed not to)", choices=("fedavg_cyclic", "predictors"))

    def labels_for(self, n_blocks: int) -> int:
        """Labels per block at M = ``n_blocks``: ceil(10/M) + extra_labels, at most 10 (every label in
        some block)."""
        return min(SEC5_CLASSES, -(-SEC5_CLASSES // n_blocks) + self.extra_labels)

    def __post_init__(self) -> None:
        if len(self.blocks_grid) < 2:
            raise PlanError("blocks_grid", f"needs at least 2 values of M, got {self.blocks_grid}")
        for M in self.blocks_grid:
            if self.rounds_per_cycle % M:
                raise PlanError("rounds_per_cycle", f"M E = {self.rounds_per_cycle} is not a multiple of M = {M}")
            if self.labels_for(M) < 2:
                raise PlanError("blocks_grid", f"M = {M} gives blocks of one label, whose predictor is right by "
                                "predicting that label: 'does not degrade' could not fail (add extra_labels)")


FIG5_CLAIMS = ("robust", "proportional")
"""What ding2020.fig5 claims of the lowest rate's accuracy against the highest's: within delta below it
(the paper), or at most its proportional share plus delta (a planted variant)."""


@dataclass(frozen=True, kw_only=True)
class DingFig5Plan(DingBlocksPlan):
    """ding2020.fig5: Ding et al.'s participation sweep (Fig. 5): the rates K/N, the margin delta and
    the planted alternative, on one block structure."""

    local_steps: int = _local_steps_parameter()

    rates: tuple[float, ...] = parameter(doc="participation rates K/N of the sweep (K N-ths of each block's "
                                             "clients per round; the checks compare the lowest and the highest)",
                                         above=0, maximum=1)
    margin: float = parameter(SEC5_MARGIN, "equivalence margin delta: 'robust' is a drop of the last-cycle "
                                           "accuracy below delta from the highest rate to the lowest", minimum=0)
    claimed: str = parameter("robust", "the claim on the lowest rate: within delta of the highest rate, or at most "
                             "its proportional share (K_min/K_max) plus delta (a planted variant)", choices=FIG5_CLAIMS)

    def participants(self) -> tuple[int, ...]:
        """K = rate N for each rate."""
        return tuple(round(rate * self.clients_per_block) for rate in self.rates)

    def __post_init__(self) -> None:
        if len(self.rates) < 2:
            raise PlanError("rates", f"needs at least 2 rates, got {self.rates}")
        for rate, K in zip(self.rates, self.participants()):
            if K < 1 or abs(K - rate * self.clients_per_block) > 1e-9:
                raise PlanError("rates", f"rate {rate:g} of N = {self.clients_per_block} clients is not a whole "
                                "number of clients K >= 1")
