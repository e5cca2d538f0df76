"""What the plans of Ding et al.'s Sec. 5 claims (ding2020.fig2, table1, fig4, fig5) share: the image data
set and its scale, the training, the block-cyclic partition, the plan per data set that "auto" resolves
to, their work count, and the blocks and data scales their mode plans take. Each figure's own plan (its
grid and claimed direction) is in its claim's module."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from typing import TYPE_CHECKING, Any

from ...framework.parameters import parameter

if TYPE_CHECKING:
    from convergence.budget import Workload

__all__ = ["NETWORK_OF_DATASET", "SEC5_AUTO_ORDER", "SEC5_DATASETS", "Sec5DataPlans", "SEC5_CLASSES", "DingSec5Plan",
           "DingBlocksPlan", "SEC5_MARGIN", "local_steps_parameter", "FIG2_DIGITS_BLOCKS", "SEC5_QUICK", "SEC5_DEFAULT",
           "SEC5_LENET5", "SEC5_CIFAR10"]

NETWORK_OF_DATASET = {"digits": "digits_net", "mnist": "lenet5", "fashion-mnist": "lenet5",
                      "cifar10": "tutorial_cifar_net"}
"""The network each data set runs (the paper's tutorial net on CIFAR-10; LeNet-5 on 28x28 images)."""


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

    def sec5_workload(self, rounds: Any, local_steps: Any, clients: Any, records: Any = 1) -> Workload:
        """Runs of a Sec. 5 plan: ``clients`` clients a round (both chains counted), minibatch images, the
        flops of the network this plan's data set runs (resolved, never "auto")."""
        from ...framework.plan_workloads import network_flops_per_image, runs_workload

        flops = network_flops_per_image(NETWORK_OF_DATASET.get(self.dataset, "digits_net"))
        return runs_workload(seeds=self.seeds, rounds=rounds, E=local_steps, clients=clients, records=records,
                             rows=self.batch_size, network_flops=flops)


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


def local_steps_parameter() -> int:
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


SEC5_MARGIN = 0.02
"""The equivalence margin delta of ding2020.fig4 and ding2020.fig5 (accuracy, absolute): "does not
degrade" is a drop below delta. From the paper's numbers: accuracies it calls stable move by at most
one point (MC-PSGD 64-65% over M, Fig. 4; MM-PSGD 60-61% and MC-PSGD 61-62% over the participation
rate, Fig. 5), the degradation it reports is at least four (FedAvg-cyclic 61% at M = 2, 53-57% at
M = 10); two points lie between."""


FIG2_DIGITS_BLOCKS = dict(n_blocks=2, clients_per_block=5, labels_per_block=5)
"""ding2020.fig2's blocks on the digits (quick and default): M = 2 blocks of 5 labels, N = 5 clients each."""
SEC5_QUICK = dict(dataset="digits", n_train=400, n_test=200, step_size=0.1)
"""The Sec. 5 quick plans' data and step: 400 training and 200 test images of the bundled digits, gamma = 0.1."""
SEC5_DEFAULT = dict(dataset="auto", n_train=0, n_test=0, step_size=0.1)
"""The Sec. 5 default plans' data and step: "auto" (``by_data`` swaps in ``SEC5_LENET5`` or ``SEC5_CIFAR10``
where their data are found), every image, gamma = 0.1 on the digits."""
SEC5_LENET5 = dict(dataset="auto", n_train=1500, n_test=300, step_size=0.05)
"""The Sec. 5 defaults' data and step on MNIST / Fashion-MNIST (LeNet-5), where "auto" finds them: the
digits' blocks and schedule on 1500 training and 300 test images drawn at random (about the digits' 1438
and 359), fewer cycles (each claim's own), and gamma = 0.05, the full plans' on Fashion-MNIST (chosen
before these runs, not tuned on them). A LeNet-5 step costs about 17x a digits_net step (1,845 against
31,900 images/s at batch 2, one process, load average 11 on 2 cores), so the cycles are cut to keep the
four claims near a minute or two of the default verify (each claim's docstring gives its measured time)."""
SEC5_CIFAR10 = dict(dataset="auto", n_train=1500, n_test=300, step_size=0.01)
"""The same on CIFAR-10 (the tutorial net) with the paper's gamma = 0.01. Not run here (no CIFAR-10 on
this machine): a tutorial-net step measured 1,106 images/s beside LeNet-5's 1,845 (same process and
load), so about 1.7x the Fashion-MNIST time."""
