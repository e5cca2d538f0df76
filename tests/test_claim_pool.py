"""``reports.claim_pool``: the claims of a verify evaluated side by side in forked processes.

What must hold: the same verdicts, figures and grids as one claim after the other (a run is a pure
function of its config and seed); each claim's card under its own id, in the order given; an error
of a claim reaches the caller as the same kind of error with its message, even when the exception
class cannot be pickled as it is; the progress counts the workers' sweeps. That a whole verify gives
the same report with --jobs 1 and 2 (verdicts.json numbers, figure files) is
tests/test_verify_speed_paths.py's test.
"""

from __future__ import annotations

import io
import os
import time
import types
from pathlib import Path

import pytest

from convergence import MissingRunError, StoreError
from convergence.verdict import Status
from proofs_check.framework.settings import VerifySettings
from proofs_check.framework.registry import select_claim
from reports.claim_pool import CHAINS, claims_side_by_side, evaluate_claims
from reports.progress import SweepRecord, VerifyProgress

CHEAP = ["control.constant-step-rate", "ding2020.ordering", "yu2019.cor2"]


def _pid_card(selection, settings, progress):
    """A card saying which process evaluated the claim, with the sweep a claim would report."""
    progress.sweep_started("fake sweep", [{"claim": selection.id}], cached=1)
    progress.run_finished()
    progress.sweep_finished("fake sweep", 2, 1, 0.0)
    return types.SimpleNamespace(status=Status.PASS, pid=os.getpid(),
                                 jobs=settings.jobs, proxy=types.MappingProxyType({"claim": selection.id}),
                                 started=time.perf_counter())


def _failing_card(selection, settings, progress):
    if selection.id == "yu2019.cor2":
        raise MissingRunError(Path("store.sqlite"), "run-key-1", 3)  # its __init__ takes three arguments
    return _pid_card(selection, settings, progress)


def test_claims_run_in_worker_processes_with_their_cards_in_order():
    selections = [select_claim(cid) for cid in CHEAP]
    progress = VerifyProgress(CHEAP, stream=io.StringIO(), interactive=False)
    cards = evaluate_claims(selections, VerifySettings(jobs=2, progress=progress), progress, _pid_card)
    assert list(cards) == CHEAP
    assert all(card.pid != os.getpid() for card in cards.values())
    assert {card.jobs for card in cards.values()} == {2}  # a worker's sweeps have a pool of their own
    assert [card.proxy["claim"] for card in cards.values()] == CHEAP  # read-only mappings survive the trip back
    assert isinstance(cards[CHEAP[0]].proxy, types.MappingProxyType)
    assert (progress.reused, progress.computed) == (3, 3)
    assert progress.sweeps == {cid: [SweepRecord("fake sweep", ({"claim": cid},), 1)] for cid in CHEAP}
    text = progress._stream.getvalue()  # a StringIO does not reach the workers: their lines are replayed
    assert all(f"[fedbound] {cid}: PASS" in text and f"{cid}: fake sweep: 2 run(s), 1 reused" in text for cid in CHEAP)


def test_one_job_or_one_claim_runs_here():
    assert not claims_side_by_side(VerifySettings(jobs=1), 3)
    assert not claims_side_by_side(VerifySettings(jobs=2), 1)
    assert not claims_side_by_side(VerifySettings(jobs=2, scheduler="tcp://127.0.0.1:8786"), 3)
    progress = VerifyProgress(CHEAP, enabled=False)
    cards = evaluate_claims([select_claim(cid) for cid in CHEAP], VerifySettings(jobs=1), progress, _pid_card)
    assert {card.pid for card in cards.values()} == {os.getpid()}


def test_an_error_in_a_worker_keeps_its_kind_and_message():
    selections = [select_claim(cid) for cid in CHEAP]
    progress = VerifyProgress(CHEAP, enabled=False)
    with pytest.raises(StoreError, match="run run-key-1 is not in the run store 'store.sqlite' \\(3 run"):
        evaluate_claims(selections, VerifySettings(jobs=2), progress, _failing_card)


def test_chained_claims_run_in_one_worker_in_the_chain_order():
    """yu2019.cor2 reads yu2019.thm1's runs and yu2019.cnn loads ding2020.fig2's compiled CNN kernels: each
    pair runs in one worker, in the chain's order, whatever the order they were selected in."""
    assert ("ding2020.fig2", "yu2019.cnn") in CHAINS and ("yu2019.thm1", "yu2019.cor2") in CHAINS
    ids = ["yu2019.cor2", "yu2019.cnn", "control.constant-step-rate", "ding2020.fig2", "yu2019.thm1"]
    progress = VerifyProgress(ids, enabled=False)
    cards = evaluate_claims([select_claim(cid) for cid in ids], VerifySettings(jobs=2), progress, _pid_card)
    assert list(cards) == ids
    for first, then in (("ding2020.fig2", "yu2019.cnn"), ("yu2019.thm1", "yu2019.cor2")):
        assert cards[first].pid == cards[then].pid != os.getpid()
        assert cards[first].started < cards[then].started
