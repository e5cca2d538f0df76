"""``verify``: evaluate claims and write the report folder (HTML, Markdown, JSON, PNG/SVG plots);
``run_experiment``: the same for an experiment file compiled into a claim; ``rebuild_report``: write
it again from a run store, computing no run.

``verify(claims, settings, out)`` is the library entry point (``fedbound verify`` builds the
settings from its arguments and calls it). A claim is a ``Claim``, a ``ClaimSelection`` or its text
``ID`` / ``ID[name=value,...]`` (``proofs_check.select_claim``): a shipped claim run with other
parameters of its plan (``li2020.thm1[E=10,seeds=16]``); the verdict's id shows them. Every plan is
resolved, and so checked (names, types, ranges, fields that must fit together), before any run. A
claim checked as several statements (its evaluator returns ``ClaimResults``: an experiment file,
``proofs_check.experiments.compile``, one per check) gets one card per statement, in its order,
each with the claim's grid and the verdict's own id.

``run_experiment(experiment, out)`` (``fedbound run``) prices the experiment, compiles it into its
claim (which checks everything that needs no run) and evaluates it here; its report replaces what
``out`` held (nothing merged, no verification recorded in the store), with the metadata's ``mode``
"experiment", so that ``verify`` never merges claims into it.

A report folder is always consistent: every claim card in it was computed with the same mode
(default, ``--quick`` or ``--full``) and the same number of seeds. Running a subset of claims
(``--claim``) into a folder that already holds a report made with the same settings *merges*:
the claims run now replace their old cards and the others are kept (verdicts, figures and grids
read back from ``verdicts.json``). Into a folder whose report was made with other settings it
refuses, and says what to do, rather than mixing the two. The folder is read once before anything
runs (to refuse early) and again, for the merge, under its lock (``report_files.report_lock``),
which is held until the report is written: two ``verify`` runs into one folder at once both end up
in its report.

With ``power=True`` (``fedbound verify --power``) every selected claim that lists planted variants
(``Claim.variants``) is also evaluated once per variant, with the variant's parameters added to the
claim's (``Claim.evaluate``), and the report gets the power table (``reports.power.PowerRow``: the
claim as stated, expected PASS or a control's expected status, and each variant, expected FAIL
unless it says otherwise). A variant changes only the check, so its runs have the claim's configs
and come from the run store (``settings.store``; without a store they are recomputed). Variant
verdicts appear only in the power table and in ``verdicts.json["power"]``, not as claim cards.
Power rows of claims kept from an earlier report are kept with them; those of claims run now
without ``power`` are dropped (they would describe another run).

With a run store, ``verify`` records in it which verification it holds (``reports.verification``).
``rebuild_report(store, out)`` (``fedbound report STORE``) reads that record, opens the store
read-only and evaluates every claim of it again (with the power self-test where it ran): each run
comes from the store, and a run the store does not hold is an error naming the claim and the
``fedbound verify`` command that computes it, never a silent recomputation. Analysis that is not a
run is recomputed: exact optima and limits (li2020.thm4's fixed points), the replays of the lemma
checks and of li2020.thm1's eq. 13, and the assumption constants.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convergence.store import StoreError
from convergence.sweep import MissingRunError
from convergence.verdict import Verdict
from proofs_check.framework.claim import Claim, ClaimResults
from proofs_check.framework.settings import VerifySettings
from proofs_check.framework.plan_workloads import check_claims_budget
from proofs_check.framework.plot_specs import PlotSpec
from proofs_check.framework.registry import CLAIMS, ClaimSelection, select_claim

from .claim_pool import evaluate_claims
from .html_report import write_html
from .markdown import write_markdown
from .power import PowerRow
from .progress import VerifyProgress
from .report_cards import Card, ClaimCards, base_id, in_report_order, kept_cards
from .report_document import report_document
from .report_files import ReportFigure, report_lock
from .run_metadata import run_metadata
from .verdicts_json import write_verdicts_json
from .verification import (
    ExperimentRecord, VerificationRecord, claim_runs, no_verification_error, read_verification, record_experiment,
    record_verification,
)

if TYPE_CHECKING:
    from proofs_check.experiments import Experiment

__all__ = ["VerifyOutcome", "verify", "run_experiment", "rebuild_report", "prepare_out"]


@dataclass(frozen=True)
class VerifyOutcome:
    """What ``verify`` wrote: the verdicts in the report (merged ones included), the ids of the claims
    run now, the figures, the metadata, the folder, the power rows in the report (merged ones
    included), the power rows computed now (``power_ran``), and the verification the run store holds
    after ``verify`` recorded this one in it (``recorded``; None without a writable store)."""

    verdicts: tuple[Verdict, ...]
    ran: tuple[str, ...]
    figures: tuple[ReportFigure, ...]
    meta: dict[str, Any]
    out: Path
    power: tuple[PowerRow, ...] = ()
    power_ran: tuple[PowerRow, ...] = ()
    recorded: VerificationRecord | None = None


def prepare_out(out: str | Path) -> Path:
    """Create the output directory and prove it is writable (errors name ``--out``)."""
    if str(out) == "":
        raise ValueError("--out: an empty path is not a folder; give a folder name (default ./fedbound-report)")
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".fedbound-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise OSError(f"--out: cannot write to output directory {str(path)!r} ({exc.strerror or exc})") from None
    return path


def verify(claims: Sequence[str | Claim | ClaimSelection], settings: VerifySettings, out: str | Path, *,
           power: bool = False, command: Sequence[str] = ()) -> VerifyOutcome:
    """Evaluate ``claims`` under ``settings`` and write ``out/verdicts.json``, ``report.md``,
    ``index.html`` and the plots, merging with a compatible report already in ``out``; with
    ``power``, also each claim's planted variants (module docstring). With a writable run store
    (``settings.store``) the verification is recorded in it for ``rebuild_report``; the store is
    closed on return (``VerifySettings.close``), so its file is complete on its own.

    ``settings.progress``: a ``VerifyProgress`` (kept), or True / False for one printing to stderr or
    silent. ``command``: the command line recorded in the report's metadata. ValueError, before
    anything runs, for a claim text or parameter that is not valid, a plan whose fields do not fit
    together, a claim or the claims together estimated over ``settings.max_cpu_hours``
    (``proofs_check.framework.plan_workloads.check_claims_budget``: BudgetError naming the parameter),
    ``power`` with no selected claim that has a variant, or a variant whose parameters its claim
    does not take."""
    if isinstance(claims, str):
        raise ValueError(f"claims: expected a sequence of claims, got the string {claims!r} (write [{claims!r}])")
    selections = list({s.id: s for s in map(select_claim, claims)}.values())
    if not selections:
        raise ValueError("claims: name at least one claim")
    check_claims_budget(selections, settings)
    settings, progress = _with_progress(settings, [s.id for s in selections])
    out = prepare_out(out)
    if power:
        _check_power(selections)
    power_ids = {s.id for s in selections if power and s.claim.variants}
    try:
        outcome = _write_report(selections, settings, out, command, progress, power_ids)
        if settings.run_store is None or settings.store_readonly:
            return outcome
        recorded = record_verification(settings.run_store, settings.mode, settings.seeds, outcome.ran,
                                       [cid for cid in outcome.ran if cid in power_ids],
                                       claim_runs(progress.sweeps, outcome.ran))
    finally:
        settings.close()  # the store file is complete on its own (no write-ahead log left beside it)
    return dataclasses.replace(outcome, recorded=recorded)


def run_experiment(experiment: Experiment, out: str | Path, *, jobs: int = 1, store: str | None = None,
                   use_cache: bool = True, scheduler: str | None = None, progress: bool | VerifyProgress = True,
                   command: Sequence[str] = (), figures: bool = True, max_cpu_hours: float | None = None) -> VerifyOutcome:
    """Run ``experiment`` (``fedbound run``) and write its report into ``out``: its claim
    (``proofs_check.experiments.compile_experiment``) evaluated and written as ``verify`` does, one
    card per check; returns what was written.

    ``jobs`` worker processes (or the Dask cluster at ``scheduler``); ``store`` the run store's path
    (None: no store, every run computed), read back unless ``use_cache`` is False; ``progress`` a
    VerifyProgress (its ``reused`` and ``computed`` count the runs), or True / False for one printing
    to stderr or silent; ``command`` the command line recorded in the metadata; ``figures`` False
    writes the report without its figures (a quicker re-check: each figure takes about a second to draw).
    The report replaces any report in ``out`` (nothing is merged) and its metadata's ``mode`` is
    "experiment", so that ``verify`` never merges claims into it; no verification is recorded in the
    store (``fedbound report`` rebuilds verifications of registered claims): the store records the
    experiment's file and runs instead (``reports.verification.ExperimentRecord``), so that ``fedbound
    report`` on it points back to ``fedbound run`` and ``fedbound export`` names the runs' claim.

    Before the output folder is made, the experiment's work is estimated and priced
    (``proofs_check.experiments.check_experiment_budget``): BudgetError naming the field when it is over
    ``max_cpu_hours`` (None: ``$FEDBOUND_MAX_CPU_HOURS`` or the default), the limit of every sweep too;
    then it is compiled, which checks everything that does not need the runs (the problem, every cell's
    config and plan, the memory, the checks' expressions that read no run moment), so bad input leaves
    no folder behind. ExperimentError naming the field of a value that only the problem or the runs show
    to be bad; ConfigError / DivergenceError as ``convergence.execute``."""
    from proofs_check.experiments import check_experiment_budget, compile_experiment

    check_experiment_budget(experiment, max_cpu_hours)
    settings = VerifySettings(len(experiment.seeds), jobs, progress=progress, store=store, use_cache=use_cache,
                              scheduler=scheduler, max_cpu_hours=max_cpu_hours)
    settings, monitor = _with_progress(settings, [experiment.name])
    selection = ClaimSelection(compile_experiment(experiment))
    out = prepare_out(out)
    about = {"mode": "experiment", "experiment": experiment.source or experiment.name,
             "problem": experiment.problem.to_json(), "algorithm": experiment.algorithm.name}
    try:
        outcome = _write_report([selection], settings, out, command, monitor, (), figures=figures, experiment=about)
        if settings.run_store is not None:
            runs = claim_runs(monitor.sweeps, [selection.id])[selection.id]
            record_experiment(settings.run_store, ExperimentRecord(experiment.source, experiment.name, runs))
        return outcome
    finally:
        settings.close()


def rebuild_report(store: str | Path, out: str | Path, *, claims: Sequence[str] = (), progress: bool | VerifyProgress
                   = True, command: Sequence[str] = ()) -> VerifyOutcome:
    """Write the report of the verification ``store`` holds (all its claims, or those of ``claims``)
    into ``out`` from its runs, computing none (module docstring): its mode, seeds and claims come
    from the store's record, the store is opened read-only, and the power self-test is evaluated for
    the claims recorded with it.

    Errors (ValueError / StoreError naming ``STORE`` or ``--claim``): no store at ``store``, a store
    that holds no verification record (filled by sweeps of your own or by an older fedbound), a
    ``claims`` id that is not part of the recorded verification, and a run of some claim that is not
    in the store (``MissingRunError`` from the sweep, reported with the claim and the
    ``fedbound verify`` command that computes it)."""
    from convergence import RunStore

    with RunStore(store, readonly=True, field="STORE") as opened:
        record = read_verification(opened)
        if record is None:
            raise no_verification_error(opened)
    ids = list(record.claims)
    if claims:
        normal = [select_claim(text).id for text in claims]
        unknown = [cid for cid in normal if cid not in record.claims]
        if unknown:
            raise ValueError(f"--claim: {', '.join(unknown)} is not part of the verification {str(store)!r} holds: "
                             f"{record.describe()}")
        ids = list(dict.fromkeys(normal))
    selections = [select_claim(cid) for cid in ids]
    settings = VerifySettings(record.seeds, 1, record.mode == "quick", record.mode == "full", progress=progress,
                              store=str(store), store_readonly=True)
    settings, monitor = _with_progress(settings, ids)
    out = prepare_out(out)
    power_ids = {cid for cid in ids if cid in record.power}
    return _write_report(selections, settings, out, command, monitor, power_ids, rebuilt_from=str(store))


def _with_progress(settings: VerifySettings, ids: Sequence[str]) -> tuple[VerifySettings, VerifyProgress]:
    """``settings`` whose progress is a VerifyProgress over ``ids`` (the one given, or a new one)."""
    if isinstance(settings.progress, VerifyProgress):
        return settings, settings.progress
    if not isinstance(settings.progress, bool):
        raise ValueError(f"progress: verify reports through a reports.progress.VerifyProgress, or True / False for a "
                         f"new one, got {type(settings.progress).__name__}")
    progress = VerifyProgress(list(ids), enabled=settings.progress)
    return dataclasses.replace(settings, progress=progress), progress


def _write_report(selections: Sequence[ClaimSelection], settings: VerifySettings, out: Path, command: Sequence[str],
                  progress: VerifyProgress, power_ids: Collection[str], rebuilt_from: str | None = None, *,
                  figures: bool = True, experiment: Mapping[str, Any] | None = None) -> VerifyOutcome:
    """Resolve every plan, evaluate the selections (and the planted variants of those in ``power_ids``),
    merge with the report in ``out`` and write it. ``figures`` False: no figure drawn. ``experiment``:
    the metadata of an experiment's report (``run_experiment``): it replaces the folder's report, merging
    nothing, and its metadata says so (mode "experiment")."""
    draw = _drawer() if figures else None
    for selection in selections:  # every plan checked before anything runs
        selection.claim.plan_for(settings, selection.params)
        if selection.id in power_ids:
            for variant in selection.claim.variants:
                selection.claim.plan_for(settings, {**selection.params, **variant.params})
    ids = [s.id for s in selections]
    if experiment is None:
        kept_cards(out, ids, settings)  # a folder this run cannot merge into is refused before anything runs
    start = time.perf_counter()
    evaluated = evaluate_claims(selections, settings, progress,
                                functools.partial(_claim_cards, out=out, power_ids=frozenset(power_ids), draw=draw))
    cards = {cid: card for claim_cards in evaluated.values() for cid, card in claim_cards.cards}
    with report_lock(out):  # read again: another verify may have merged its claims meanwhile
        kept = kept_cards(out, ids, settings) if experiment is None else {}
        return _merge_and_write(selections, settings, out, command, progress, power_ids, rebuilt_from, cards, kept,
                                time.perf_counter() - start, experiment)


def _drawer() -> Callable[[PlotSpec, str, Path], ReportFigure]:
    """``plots.draw``: matplotlib imported once here, before a pool of claims forks (its workers inherit it)."""
    from .plots import draw

    return draw


def _merge_and_write(selections: Sequence[ClaimSelection], settings: VerifySettings, out: Path, command: Sequence[str],
                     progress: VerifyProgress, power_ids: Collection[str], rebuilt_from: str | None,
                     cards: dict[str, Card], kept: dict[str, Card], seconds: float,
                     experiment: Mapping[str, Any] | None) -> VerifyOutcome:
    """The report of the claims evaluated now (``cards``) merged with those ``kept`` from the report in
    ``out``, written there (the caller holds the folder's ``report_lock``); ``experiment``'s metadata
    added to the run's."""
    ordered = in_report_order({**kept, **cards})
    meta = run_metadata(command, settings, seconds, list(cards), progress.reused,
                        progress.computed, merged=sorted(kept), out=out,
                        figures=[f for card in ordered for f in card.figures])
    meta.update(experiment or {})
    if rebuilt_from is not None:
        meta["rebuilt"] = (f"rebuilt from the run store {rebuilt_from} without computing any run; analysis that is "
                           "not a run (exact optima and limits, assumption constants) was recomputed")
    if power_ids:
        meta["power"] = _power_meta([s for s in selections if s.id in power_ids], selections)
    verdicts = [card.verdict for card in ordered]
    power_rows = [row for card in ordered for row in card.power]
    figures = [f for card in ordered for f in card.figures]
    grids = {card.verdict.claim_id: list(card.grid) for card in ordered}
    report_claims = {card.verdict.claim_id: CLAIMS[base_id(card.verdict.claim_id)] for card in ordered
                     if not card.part_of and base_id(card.verdict.claim_id) in CLAIMS}
    write_verdicts_json(out / "verdicts.json", verdicts, meta, figures=figures, grids=grids, power=power_rows)
    document = report_document(verdicts, figures, meta, claims=report_claims, grids=grids, power=power_rows)
    write_markdown(out / "report.md", document)
    write_html(out / "index.html", document)
    return VerifyOutcome(tuple(verdicts), tuple(cards), tuple(figures), meta, out, tuple(power_rows),
                         tuple(row for card in cards.values() for row in card.power))


def _claim_cards(selection: ClaimSelection, settings: VerifySettings, progress: VerifyProgress, *, out: Path,
                 power_ids: frozenset[str], draw: Callable[[PlotSpec, str, Path], ReportFigure] | None) -> ClaimCards:
    """One claim evaluated (with its planted variants when it is in ``power_ids``), its figures drawn
    into ``out`` with ``draw`` (``plots.draw``; None: none drawn) and its grid read from ``progress``:
    its card, or one per statement of a claim checked as several (``ClaimResults``), each with the
    claim's grid (``claim_pool.evaluate_claims`` calls it)."""
    try:
        returned = selection.claim.evaluate_all(settings, **selection.params)
        several = isinstance(returned, ClaimResults)
        rows = (_power_rows(selection, returned.verdict, settings, progress)
                if selection.id in power_ids and not several else ())
    except MissingRunError as exc:
        raise StoreError(_missing_run(exc, selection.id, settings)) from None
    grid = tuple(record.summary() for record in progress.sweeps.get(selection.id, ()))
    cards = []
    for result in returned.results if several else (returned,):
        card_id = result.verdict.claim_id if several else selection.id
        figures = () if draw is None else tuple(draw(_plot_for(spec, selection), card_id, out) for spec in result.plots)
        cards.append((card_id, Card(result.verdict, figures, grid, rows, selection.claim.id if several else "")))
    return ClaimCards(tuple(cards))


def _plot_for(spec: PlotSpec, selection: ClaimSelection) -> PlotSpec:
    """``spec`` named apart for a claim run with parameters, so that its figure files do not overwrite
    those of the claim as stated in the same folder (``li2020_thm1_recursion_E_10_seeds_16.png``)."""
    if not selection.params:
        return spec
    suffix = re.sub(r"[^A-Za-z0-9.]+", "_", selection.id[len(selection.claim.id):]).strip("_")
    return dataclasses.replace(spec, name=f"{spec.name}_{suffix}")


def _missing_run(error: MissingRunError, claim_id: str, settings: VerifySettings) -> str:
    """The message for a run of ``claim_id`` that the read-only store does not hold."""
    store = shlex.quote(str(settings.store))
    mode = {"quick": " --quick", "full": " --full", "default": ""}[settings.mode]
    again = f"fedbound verify --store {store}{mode} --seeds {settings.seeds} --claim {shlex.quote(claim_id)}"
    return (f"run {error.key} of claim {claim_id} is not in {settings.store} ({error.missing} run(s) of that sweep are "
            f"missing; fedbound report computes none); run `{again}` first")


def _check_power(selections: Sequence[ClaimSelection]) -> None:
    """Refuse a power run with nothing to test (the variants' parameters were checked with their claim)."""
    if not any(s.claim.variants for s in selections):
        with_variants = [c.id for c in CLAIMS.values() if c.variants]
        raise ValueError(
            f"--power: none of the selected claims ({', '.join(s.id for s in selections)}) has a planted variant; claims "
            f"with planted variants: {', '.join(with_variants) or 'none'}")


def _power_rows(selection: ClaimSelection, verdict: Verdict, settings: VerifySettings,
                progress: VerifyProgress) -> tuple[PowerRow, ...]:
    """The claim as selected and each of its planted variants (its parameters added to the selection's), evaluated now."""
    claim = selection.claim
    rows = [PowerRow.from_verdict(selection.id, verdict)]
    for variant in claim.variants:
        variant_id = ClaimSelection(claim, {**selection.params, **variant.params}).id
        progress.variant_started(variant_id, variant.description)
        start = time.perf_counter()
        result = claim.evaluate_variant(settings, variant, **selection.params)
        rows.append(PowerRow.from_verdict(selection.id, result.verdict, variant, stated=verdict))
        progress.variant_finished(variant_id, result.verdict.status.value, variant.expected.value,
                                  time.perf_counter() - start)
    return tuple(rows)


def _power_meta(tested: Sequence[ClaimSelection], selections: Sequence[ClaimSelection]) -> str:
    """One line for the report's metadata: what the power self-test covered and what it did not."""
    text = (f"{sum(len(s.claim.variants) for s in tested)} planted variant(s) of {len(tested)} claim(s) run with "
            "--power (variants reuse their claim's runs from the run store)")
    untested = [f"{s.id} ({s.claim.no_variant})" for s in selections if not s.claim.variants]
    if untested:
        text += f"; no planted variant registered (power untested): {', '.join(untested)}"
    return text
