"""Which predictor each Ding et al. claim runs: Sec. 5's experiments (ding2020.fig2, table1, fig4, fig5)
build MM-PSGD and MC-PSGD with the paper's exponential average ("the exponentially weighted average of
the historical global model [...] the base is 0.5", Sec. 5, Implementation Settings), both algorithms;
the theorem claims (thm1, thm2, speedup, ordering) with eq. 7's uniform average, which the proofs use.

The plans are read where the claims hand them to the sweep layer: ``convergence.execute`` is replaced by one
that records the requests and stops, so nothing is trained."""

from __future__ import annotations

from typing import Any

import pytest

from convergence import MCPSGDConfig, MMPSGDConfig
from proofs_check import VerifySettings, get_claim
import convergence

QUICK = VerifySettings(quick=True, seeds=2, jobs=1, progress=False)


class _Planned(Exception):
    """Raised by the recording ``execute`` once the claim has handed over its requests."""


def planned_algorithms(monkeypatch: pytest.MonkeyPatch, claim_id: str) -> list[Any]:
    """The algorithm configs of the first sweep the claim's quick plan runs through ``convergence.execute``."""
    requests = []

    def record(batch, *args, **kwargs):
        requests.extend(batch)
        raise _Planned

    monkeypatch.setattr(convergence, "execute", record)
    with pytest.raises(_Planned):
        get_claim(claim_id).evaluate(QUICK)
    return [request.config.algorithm for request in requests]


def psgd(algorithms: list[Any]) -> list[MMPSGDConfig]:
    """The MM-PSGD and MC-PSGD configs (MCPSGDConfig extends MMPSGDConfig), each type present."""
    found = [a for a in algorithms if isinstance(a, MMPSGDConfig)]
    assert {type(a) for a in found} == {MMPSGDConfig, MCPSGDConfig}, [type(a).__name__ for a in algorithms]
    return found


@pytest.mark.parametrize("claim_id", ["ding2020.fig2", "ding2020.table1", "ding2020.fig4", "ding2020.fig5"])
def test_sec5_claims_run_both_algorithms_with_the_papers_exponential_predictor(
        monkeypatch: pytest.MonkeyPatch, claim_id: str) -> None:
    configs = psgd(planned_algorithms(monkeypatch, claim_id))
    assert [a.predictor for a in configs] == ["exponential"] * len(configs), claim_id
    # Sec. 5: "we set both learning rates gamma = eta" for MC-PSGD
    assert all(a.block_step_size == a.step_size for a in configs if isinstance(a, MCPSGDConfig))


@pytest.mark.parametrize("claim_id", ["ding2020.thm1", "ding2020.thm2", "ding2020.speedup", "ding2020.ordering"])
def test_theorem_claims_keep_the_uniform_average_of_eq_7(monkeypatch: pytest.MonkeyPatch, claim_id: str) -> None:
    algorithms = planned_algorithms(monkeypatch, claim_id)
    configs = [a for a in algorithms if isinstance(a, MMPSGDConfig)]
    assert configs and all(a.predictor == "average" for a in configs)
    if claim_id in ("ding2020.speedup", "ding2020.ordering"):  # both algorithms in one sweep
        assert {type(a) for a in configs} == {MMPSGDConfig, MCPSGDConfig}
