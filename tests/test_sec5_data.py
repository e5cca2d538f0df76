"""Ding et al.'s Sec. 5 claims on the richest image data present: the shared "auto" resolver's order
(fake IDX and CIFAR files in tmp_path, the machine's own folders left out), "auto" resolved with the
plan before any spec or run id is built, each data set's scale, and the digits defaults unchanged
(the configs, hence the run ids and the numbers, of the plans that ran on "digits" before)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import problems.image_data as image_data
from problems import ProblemError, resolve_image_dataset, resolve_li_dataset
from proofs_check import VerifySettings, get_claim
from proofs_check.claims.ding2020.sec5_runs import sec5_problem
from proofs_check.framework.parameters import describe_parameters
from proofs_check.claims.ding2020.fig2 import DingFig2Plan
from proofs_check.claims.ding2020.fig4 import DingFig4Plan
from proofs_check.claims.ding2020.fig5 import DingFig5Plan
from proofs_check.claims.ding2020.sec5_plans import SEC5_AUTO_ORDER
from proofs_check.claims.ding2020.table1 import DingTable1Plan
from test_image_data import cifar_archive, cifar_batch, write_mnist

SEC5_CLAIMS = ("ding2020.fig2", "ding2020.table1", "ding2020.fig4", "ding2020.fig5")
DEFAULT = VerifySettings(seeds=4, progress=False)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$FEDBOUND_DATA, empty, in tmp_path; the Debian Fashion-MNIST folder moved there too."""
    root = tmp_path / "env"
    root.mkdir()
    monkeypatch.setenv("FEDBOUND_DATA", str(root))
    monkeypatch.setattr(image_data, "DEBIAN_FASHION_MNIST", tmp_path / "debian" / "fashion-mnist")
    return root


def test_auto_takes_the_first_data_set_of_the_order_present(data: Path) -> None:
    order = SEC5_AUTO_ORDER
    assert resolve_image_dataset("auto", order) == "digits"  # nothing but the bundled digits
    write_mnist(data / "mnist", "train", 10)
    assert resolve_image_dataset("auto", order) == "mnist"
    write_mnist(image_data.DEBIAN_FASHION_MNIST, "train", 10)  # where Debian's package puts it
    assert resolve_image_dataset("auto", order) == "fashion-mnist"
    cifar_archive(data / "cifar10" / "cifar-10-python.tar.gz", {"test_batch": cifar_batch(4)})
    assert resolve_image_dataset("auto", order) == "cifar10"
    # Li et al.'s order is another list through the same resolver: MNIST first, CIFAR-10 not a candidate
    assert resolve_li_dataset("auto") == "mnist"
    assert resolve_image_dataset("fashion-mnist", order) == "fashion-mnist"  # a name is itself, found or not
    with pytest.raises(ProblemError, match="^dataset: expected one of auto, cifar10"):
        resolve_image_dataset("svhn", order)


def test_auto_is_resolved_with_the_plan_at_each_data_sets_scale(data: Path) -> None:
    write_mnist(data / "fashion-mnist", "train", 10)
    for claim_id in SEC5_CLAIMS:
        claim = get_claim(claim_id)
        assert claim.plan.default.dataset == "auto"
        plan = claim.plan_for(DEFAULT, {})
        assert plan == dataclasses.replace(claim.plan.by_data.lenet5, dataset="fashion-mnist", seeds=4)
        # a value given by name is kept over the data set's scale; a named data set is not rescaled
        assert claim.plan_for(DEFAULT, {"cycles": 5}).cycles == 5
        assert claim.plan_for(DEFAULT, {"dataset": "digits"}) == dataclasses.replace(claim.plan.default,
                                                                                   dataset="digits", seeds=4)
    lines = describe_parameters(get_claim("ding2020.fig2").plan)
    assert lines[0].startswith("dataset = auto;")
    assert "auto on mnist, fashion-mnist (LeNet-5): n_train = 1500, n_test = 300, cycles = 4, step_size = 0.05" in lines


def test_run_ids_name_the_data_set_never_auto(data: Path) -> None:
    plan = get_claim("ding2020.fig2").plan_for(DEFAULT, {})
    problem = sec5_problem(plan.dataset, plan.n_blocks, plan.clients_per_block, plan.labels_per_block, plan.n_train,
                           plan.n_test)
    assert problem.spec.params["dataset"] == "digits" and "auto" not in problem.spec.to_json()
    with pytest.raises(ValueError, match="^dataset: .*'auto'"):
        sec5_problem("auto", 2, 5, 5, 0, 0)


# The default plans as they were before "auto" (all on the digits), field by field: the same configs,
# so the same run ids and bit-identical numbers (the measured values in each claim's docstring).
DIGITS_DEFAULTS = {
    "ding2020.fig2": DingFig2Plan(dataset="digits", n_train=0, n_test=0, n_blocks=2, clients_per_block=5,
                                  labels_per_block=5, cycles=12, rounds_per_block=5, step_size=0.1),
    "ding2020.table1": DingTable1Plan(dataset="digits", n_train=0, n_test=0, n_blocks=2, clients_per_block=5,
                                      labels_per_block=5, cycles=6, rounds_per_block=5, step_size=0.1,
                                      local_steps_grid=(5, 10, 15, 20), record_every=1),
    "ding2020.fig4": DingFig4Plan(dataset="digits", n_train=0, n_test=0, clients_per_block=5, cycles=12,
                                  step_size=0.1, blocks_grid=(2, 5), rounds_per_cycle=10, extra_labels=0),
    "ding2020.fig5": DingFig5Plan(dataset="digits", n_train=0, n_test=0, clients_per_block=100, cycles=30,
                                  step_size=0.1, n_blocks=5, labels_per_block=2, rounds_per_block=2,
                                  rates=(0.05, 0.2)),
}


@pytest.mark.parametrize("claim_id", SEC5_CLAIMS)
def test_digits_defaults_are_unchanged(data: Path, claim_id: str) -> None:
    assert get_claim(claim_id).plan_for(DEFAULT, {}) == DIGITS_DEFAULTS[claim_id]
    variant = get_claim(claim_id).variants[0]  # a planted variant runs at its claim's scale, on its runs
    planted = get_claim(claim_id).plan_for(DEFAULT, variant.params)
    assert planted == dataclasses.replace(DIGITS_DEFAULTS[claim_id], **variant.params)


def test_plans_per_data_set_are_checked_as_the_modes_plans() -> None:
    from proofs_check.framework.parameters import ModePlans
    from proofs_check.claims.ding2020.sec5_plans import Sec5DataPlans

    fig2, fig4 = DIGITS_DEFAULTS["ding2020.fig2"], DIGITS_DEFAULTS["ding2020.fig4"]
    with pytest.raises(TypeError, match="^by_data: every plan must be a DingFig2Plan, got DingFig4Plan"):
        ModePlans(default=fig2, by_data=Sec5DataPlans(lenet5=fig4, cifar10=fig2))
    one_cycle = dataclasses.replace(fig2, cycles=1)  # below the field's minimum of 2
    with pytest.raises(ValueError, match="^by_data plan: cycles:"):
        ModePlans(default=fig2, by_data=Sec5DataPlans(lenet5=fig2, cifar10=one_cycle)).check("ding2020.fig2")
