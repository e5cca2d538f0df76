"""Fixtures shared by several test modules."""

from __future__ import annotations

import pytest

from proofs_check import VerifySettings


@pytest.fixture(scope="module")
def quick_settings(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> VerifySettings:
    """The claims' quick plans with 6 seeds, one job, no progress, and a run store of the test module's
    own (shared by its tests, so a claim's runs are computed once per module)."""
    store = tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]) / "runs.sqlite"
    return VerifySettings(quick=True, seeds=6, jobs=1, progress=False, store=str(store))


@pytest.fixture
def on_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every "process" sweep runs on a pool, however small (``sweep_batches.IN_PLACE_SECONDS`` = 0): for the
    tests that compare a pool's results with serial ones on tiny sweeps, which would run in place otherwise."""
    from convergence import sweep_batches

    monkeypatch.setattr(sweep_batches, "IN_PLACE_SECONDS", 0.0)
