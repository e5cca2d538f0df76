"""The claim layer's layout (issue 24): one module per claim under ``proofs_check/claims/<source>/``,
found by the registry, each with its plan, evaluator and at least one planted variant, and light
enough that ``fedbound list`` imports no numerical library."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import proofs_check.claims
from proofs_check.framework.claim import Claim
from proofs_check.framework.registry import CLAIMS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numba", "cvxpy", "matplotlib", "scipy", "dask", "hypothesis")
MODULES = [info.name for info in pkgutil.walk_packages(proofs_check.claims.__path__, "proofs_check.claims.")]
CLAIM_MODULES = {name: importlib.import_module(name).CLAIM for name in MODULES
                 if isinstance(getattr(importlib.import_module(name), "CLAIM", None), Claim)}


def test_every_shipped_claim_is_one_module_under_claims() -> None:
    own = [c for c in CLAIMS.values() if c.order < 1000]
    assert sorted(c.id for c in CLAIM_MODULES.values()) == sorted(c.id for c in own)
    for name, claim in CLAIM_MODULES.items():
        assert claim.evaluator.__module__ == name, f"{claim.id}: its evaluator lives in another module"
        source = name.rpartition(".")[0]  # a plan two claims share (thm2 / thm3) lives beside them, in their source
        assert claim.plan.plan_type.__module__.rpartition(".")[0] == source, f"{claim.id}'s plan is outside {source}"
    assert not (ROOT / "proofs_check" / "plans.py").exists()
    assert not list((ROOT / "proofs_check").glob("registry*.py"))


@pytest.mark.parametrize("claim_id", [c.id for c in CLAIM_MODULES.values()])
def test_every_claim_plants_a_variant_in_a_named_sub_check(claim_id: str) -> None:
    claim = CLAIMS[claim_id]
    assert claim.variants or claim.no_variant, f"{claim_id} plants no variant: --power cannot show its checks can fail"
    assert all(v.sub_check.strip() for v in claim.variants)
    assert callable(getattr(claim.plan.default, "workload", None)), f"{claim_id}'s plan cannot count its runs"


def test_a_claim_without_a_planted_variant_must_say_why() -> None:
    from proofs_check.framework.claim import PlantedVariant

    control = CLAIMS["control.constant-step-rate"]
    with pytest.raises(ValueError, match=r"^variants: claim 'x' plants no variant, so --power cannot show"):
        dataclasses.replace(control, id="x", variants=())
    with pytest.raises(ValueError, match=r"^sub_check: planted variant 'v' must name the sub-check it plants"):
        PlantedVariant("v", "a variant", {"step": "li"}, sub_check=" ")
    assert [c.id for c in CLAIMS.values() if not c.variants] == []  # yu2019.cnn plants one on its smooth network


def test_claim_modules_import_no_numerical_library() -> None:
    code = ("import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in MODULES)
            + f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
