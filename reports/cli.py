"""The `fedbound` command line: verify, run, report, list, falsify, export, partition, data, pep, bench. A thin shell over the
Python API (``reports.verify.verify`` and ``rebuild_report``, ``reports.verify.run_experiment``,
``proofs_check.select_claim``): it parses arguments, prints errors and sets the exit status.

Every expected failure (bad input, unknown claim, unwritable output, a diverging run) ends with
one line naming the problem and exit status 2; only --debug shows a traceback.

Exit status of `verify` (and `report`): 0 when the report was written, whatever the verdicts (a claim that FAILs
is a finding, not an error of the tool), with ``--power`` 1 when some row of the power self-test
run now is an alarm (a negative control that does not give its expected status, or a planted
variant whose planted sub-check does not FAIL: the checks' power is not shown; ``reports.power``),
and 2 on bad input. The arguments are ``reports.cli_parser``'s. Exit status of `run` (a user's experiment file): 0 when every check PASSes, 1 when some
check FAILs or is INCONCLUSIVE (the experiment's claims are not confirmed), 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from typing import TYPE_CHECKING, Sequence

from .cli_parser import build_parser, checked_jobs

if TYPE_CHECKING:
    from .verify import VerifyOutcome

__all__ = ["main", "build_parser"]

def _expected_errors() -> tuple[type[BaseException], ...]:
    """The errors that end a command with one line (imported only when one is being handled)."""
    from convergence import ConfigError, DivergenceError, ScheduleError, StoreError, SweepError
    from problems import ProblemError
    from proofs_check import UnknownClaimError

    return (ConfigError, ProblemError, ScheduleError, UnknownClaimError, DivergenceError, StoreError, SweepError,
            ValueError, OSError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _dispatch(args, list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("fedbound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `fedbound list | head`: the reader left, nothing more to say
        sys.stderr.close()
        return 0
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, _expected_errors()):
            print(f"fedbound: error: {exc}", file=sys.stderr)
            return 2
        print(f"fedbound: internal error ({type(exc).__name__}): {exc}. Rerun with --debug for the traceback.",
              file=sys.stderr)
        return 3


def _dispatch(args: argparse.Namespace, argv: list[str]) -> int:
    if args.command == "verify":
        return _verify(args, argv)
    if args.command == "run":
        return _run(args, argv)
    if args.command == "report":
        return _report(args, argv)
    if args.command == "list":
        return _list(args)
    if args.command == "export":
        return _export(args)
    if args.command == "falsify":
        return _falsify(args)
    if args.command == "partition":
        return _partition(args)
    if args.command == "data":
        return _data_fetch(args)
    if args.command == "pep":
        return _pep(args)
    return _bench(args)


def _verify(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from pathlib import Path

    from convergence import check_sweep_memory
    from proofs_check import VerifySettings, default_claims, select_claim
    from proofs_check.framework.plan_workloads import check_claims_budget

    from .verify import prepare_out, verify

    if args.quick and args.full:
        raise ValueError("--quick/--full: choose at most one")
    claims = [select_claim(text) for text in args.claim] if args.claim else [select_claim(c) for c in default_claims()]
    jobs = checked_jobs(args)
    check_sweep_memory(args.seeds, 0, name="--seeds")
    settings = VerifySettings(args.seeds, jobs, args.quick, args.full, progress=not args.no_progress,
                              store=args.store or str(Path(args.out) / "runs.sqlite"), use_cache=not args.no_cache,
                              scheduler=args.scheduler, max_cpu_hours=args.max_cpu_hours)
    check_claims_budget(claims, settings)  # before the output folder is made
    out = prepare_out(args.out)
    start = time.perf_counter()
    outcome = verify(claims, settings, out, power=args.power, command=argv)
    return _print_outcome(outcome, start, power=args.power)


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from pathlib import Path

    from proofs_check.experiments import load_experiment

    from .verify import run_experiment

    experiment = load_experiment(args.experiment)
    jobs = checked_jobs(args)
    out = Path(args.out)  # created by run_experiment once everything, the budget first, is checked
    start = time.perf_counter()
    outcome = run_experiment(experiment, out, jobs=jobs, store=args.store or str(out / "runs.sqlite"),
                             use_cache=not args.no_cache, scheduler=args.scheduler, progress=not args.no_progress,
                             command=argv, max_cpu_hours=args.max_cpu_hours)
    _print_outcome(outcome, start, power=False)
    failed = [v.claim_id for v in outcome.verdicts if v.status.value != "PASS"]
    if failed:
        print(f"fedbound run: {len(failed)} check(s) did not pass: {', '.join(failed)}")
    return 1 if failed else 0


def _report(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .verify import rebuild_report

    start = time.perf_counter()
    outcome = rebuild_report(args.store, args.out, claims=args.claim or (), progress=not args.no_progress,
                             command=argv)
    return _print_outcome(outcome, start, power=bool(outcome.power_ran))


def _print_outcome(outcome: VerifyOutcome, start: float, *, power: bool) -> int:
    """The verdict table and where the report is; the exit status (module docstring)."""
    from .text_table import format_verdict_table

    print(format_verdict_table(list(outcome.verdicts), outcome.power))
    kept = len(outcome.verdicts) - len(outcome.ran)
    merged = f"; {kept} claim(s) kept from the earlier report in this folder" if kept else ""
    print(f"\nReport: {outcome.out / 'index.html'}  (also report.md, verdicts.json){merged}; "
          f"{outcome.meta['cache']}; wall time {time.perf_counter() - start:.1f} s")
    if outcome.recorded is not None:
        store = outcome.meta["run_store"]
        print(f"Run store {store} holds the verification of {outcome.recorded.describe()}; "
              f"`fedbound report {shlex.quote(store)}` rebuilds its report without computing a run")
    if power:
        print(f"power: {outcome.meta['power']}")
        return 1 if any(row.alarm for row in outcome.power_ran) else 0
    return 0


def _falsify(args: argparse.Namespace) -> int:
    import json

    from proofs_check import FALSIFIABLE, falsify

    if args.list:
        return _list_falsifiable()
    if args.claim is None:
        raise ValueError("claim: name a claim to falsify (ids: fedbound falsify --list)")
    if args.seed < 0:
        raise ValueError(f"--seed: must be >= 0, got {args.seed}")
    claim = _load_falsifiable(args.claim, FALSIFIABLE)
    result = falsify(claim, args.budget, args.seed, max_cpu_hours=args.max_cpu_hours)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.message)
        if result.found:
            print(f"reproduce: {shlex.join(['fedbound', 'falsify', args.claim, '--budget', str(args.budget), '--seed', str(args.seed)])}")
            print("counterexample (JSON):")
            print(json.dumps(result.counterexample, indent=2))
    return 1 if result.found else 0


def _load_falsifiable(name: str, builtin: dict):
    """A built-in claim by id, or your own as ``FILE.py:NAME`` (relative to the current directory) or
    ``MODULE:NAME`` (installed, not the standard library), loaded by ``problems.CodeReference``."""
    from problems import CodeReference
    from proofs_check import FalsifiableClaim

    if ":" not in name:
        if name not in builtin:
            raise ValueError(f"claim: unknown falsifiable claim {name!r}; known: {', '.join(builtin)} "
                             "(or FILE.py:NAME / MODULE:NAME of your own FalsifiableClaim)")
        return builtin[name]
    claim = CodeReference.parse(name, "claim", os.getcwd()).load()
    if not isinstance(claim, FalsifiableClaim):
        raise ValueError(f"claim: {name!r} is a {type(claim).__name__}, not a FalsifiableClaim")
    return claim


def _list_falsifiable() -> int:
    from proofs_check import FALSIFIABLE

    for claim in FALSIFIABLE.values():
        tag = " [planted false: a working falsifier finds a counterexample]" if claim.known_false else ""
        print(f"{claim.id}{tag}\n    {claim.description}\n")
    print("These ids are the built-in ones; a planted variant's id carries its fixed parameter, e.g. "
          "'li2020.lemma3[constant=0.01]' (quote it in the shell), and other values are not built in. Your own: "
          "fedbound falsify my_claims.py:my_claim or installed_module:my_claim (a proofs_check.FalsifiableClaim).")
    return 0


def _export(args: argparse.Namespace) -> int:
    from convergence import RunStore, export_table

    from .verification import recorded_runs

    with RunStore(args.store, readonly=True, field="store") as store:
        claims = recorded_runs(store)
        summary = export_table(store, args.table, claims=claims, iterates=args.iterates)
    others = (f"; {summary.others} stored entries are no engine runs (PEP solutions, sweeps of your own), not exported"
              if summary.others else "")
    print(f"wrote {summary.rows} rows of {summary.runs} run(s) to {args.table}{others}")
    for line in summary.diverged:
        print(f"left out: {line}")
    if not claims:
        print("claim column empty: the store records no claim's runs (filled by an older fedbound or by sweeps of "
              "your own); `fedbound verify --store STORE` (or `fedbound run EXPERIMENT.toml --store STORE`) with the "
              "same settings records them, reusing every run")
    return 0


def _pep(args: argparse.Namespace) -> int:
    import json

    from proofs_check.pep import fedavg_limit_worst_case, fedavg_worst_case

    kind = "quadratic" if args.quadratic else "smooth"
    if args.blocks is not None:
        return _pep_mm_psgd(args, kind)
    bgd = None if args.bgd is None else tuple(args.bgd)
    if args.limit and args.weights is not None:
        raise ValueError("--weights: the limit program has equal weights")
    if args.limit:
        result = fedavg_limit_worst_case(args.clients, args.local_steps, args.L, args.mu, args.step, args.zeta,
                                         Gamma=args.Gamma, function_class=kind, mu_prox=args.mu_prox, bgd=bgd)
    elif args.rounds is None:
        raise ValueError("--rounds: required unless --limit")
    else:
        result = fedavg_worst_case(args.clients, args.local_steps, args.rounds, args.L, args.mu, args.step, args.zeta,
                                   args.r0, args.metric, server_step=args.server_step, Gamma=args.Gamma, G=args.G,
                                   function_class=kind, mu_prox=args.mu_prox, bgd=bgd, weights=args.weights)
    print(json.dumps({"setting": result.setting.to_json(), **result.figures()}) if args.json else result.summary())
    return 0 if result.solved else 1


def _pep_mm_psgd(args: argparse.Namespace, kind: str) -> int:
    """``fedbound pep --blocks M``: MM-PSGD's worst-case mini-max gap (``proofs_check.pep.block_cyclic``)."""
    import json

    from proofs_check.pep import mm_psgd_worst_case

    for flag, value in (("--rounds", args.rounds), ("--B", args.B), ("--G", args.G)):
        if value is None:
            raise ValueError(f"{flag}: required with --blocks")
    if args.limit or args.mu_prox != 0 or args.zeta is not None or args.Gamma is not None:
        raise ValueError("--blocks: MM-PSGD's program takes no --limit, --mu-prox, --zeta or --Gamma")
    result = mm_psgd_worst_case(args.clients, args.blocks, args.cycles, args.rounds, args.local_steps, args.L, args.mu,
                                args.step, args.B, args.G, function_class=kind)
    print(json.dumps({"setting": result.setting.to_json(), **result.figures()}) if args.json else result.summary())
    return 0 if result.solved else 1


def _list(args: argparse.Namespace) -> int:
    if args.falsifiable:
        return _list_falsifiable()
    from proofs_check.framework.parameters import describe_parameters
    from proofs_check.framework.registry import CLAIMS

    for claim in CLAIMS.values():
        tag = " [negative control, expected FAIL]" if claim.expected is not None else ""
        lines = [f"\n      {line}" for line in describe_parameters(claim.plan)]
        variants = "".join(f"\n    planted variant (verify --power): {v.id_for(claim.id)}, expected {v.expected.value}: "
                           f"{v.description}" for v in claim.variants)
        print(f"{claim.id}{tag}\n    {claim.citation}\n    {claim.statement}\n    measured: {claim.measured}"
              f"\n    parameters (default mode, as {claim.id}[name=value,...]):{''.join(lines)}{variants}\n")
    return 0


def _partition(args: argparse.Namespace) -> int:
    import json

    from problems import PartitionRecipe, load_images
    from proofs_check import partition_report

    recipe = PartitionRecipe(args.recipe, args.clients, args.seed, alpha=args.alpha,
                             shards_per_client=args.shards_per_client)
    dataset = load_images(args.dataset, args.split, args.data_dir)
    report = partition_report(dataset, recipe, data_dir=args.data_dir)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.to_markdown())
    return 0


def _data_fetch(args: argparse.Namespace) -> int:
    from problems import fetch_dataset

    fetched = fetch_dataset(args.name, args.data_dir, progress=not args.no_progress and sys.stderr.isatty())
    for file in fetched:
        print(file.describe())
    print(f"{args.name}: {len(fetched)} file(s) in {fetched[0].path.parent}, verified")
    return 0


def _bench(args: argparse.Namespace) -> int:
    import json

    from convergence.bench import run_bench
    from convergence.bench_report import format_bench

    report = run_bench(repeats=args.repeats, scaling=not args.quick, quick=args.quick)
    print(json.dumps(report.to_json(), indent=2) if args.json else format_bench(report))
    return 0


if __name__ == "__main__":
    # `python -m reports.cli` puts the current directory first on sys.path (Python's rule, not ours):
    # drop it, unless fedbound itself is being run from there (a checkout), so that a downloaded
    # experiment's folder cannot shadow an installed package (issue 30).
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd() \
            and not os.path.abspath(__file__).startswith(os.getcwd() + os.sep):
        del sys.path[0]
    sys.exit(main())
