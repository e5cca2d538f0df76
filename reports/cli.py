"""The `fedbound` command line: verify, list, bench. A thin shell over the Python API.

Every expected failure (bad input, unknown claim, unwritable output, a diverging run) ends with
one line naming the problem and exit status 2; only --debug shows a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from convergence import ConfigError, DivergenceError, ScheduleError, StoreError, SweepError
from problems import ProblemError
from proofs_check import UnknownClaimError

__all__ = ["main", "build_parser"]

EXPECTED_ERRORS = (
    ConfigError, ProblemError, ScheduleError, UnknownClaimError, DivergenceError, StoreError, SweepError, ValueError,
    OSError,
)


def _positive_int(name: str) -> Callable[[str], int]:
    """An argparse type: decimal digits only (no sign, spaces or underscores) giving an int >= 1."""
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise argparse.ArgumentTypeError(f"{name}: expected an integer >= 1, got {text!r}")
        return int(text)

    return parse


def _path(name: str) -> Callable[[str], str]:
    """An argparse type: a non-blank path."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{name}: expected a path, got {text!r}")
        return text

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fedbound", description="Verify convergence theorems of federated and local SGD numerically."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="run claims and write the report (HTML, Markdown, JSON, PNG)")
    verify.add_argument("--quick", action="store_true", help="smaller grids and horizons (about a minute)")
    verify.add_argument("--full", action="store_true", help="larger horizons (several minutes)")
    verify.add_argument("--out", type=_path("--out"), default="fedbound-report",
                        help="output directory (default: ./fedbound-report)")
    verify.add_argument("--seeds", type=_positive_int("--seeds"), default=4, help="seeds for stochastic runs (default 4)")
    verify.add_argument("--jobs", type=_positive_int("--jobs"), default=1,
                        help="worker processes (default 1; capped at the CPU count unless --force-jobs)")
    verify.add_argument("--force-jobs", action="store_true", help="allow --jobs above the CPU count")
    verify.add_argument("--claim", action="append", metavar="ID", help="run only this claim (repeatable)")
    verify.add_argument("--no-progress", action="store_true", help="hide progress bars")
    verify.add_argument("--store", type=_path("--store"), metavar="PATH",
                        help="run store (SQLite) for finished runs (default: OUT/runs.sqlite); reruns reuse them")
    verify.add_argument("--no-cache", action="store_true", help="recompute runs even when the store has them")
    verify.add_argument("--scheduler", metavar="ADDRESS", help="run sweeps on this Dask scheduler (tcp://host:port)")

    falsify = sub.add_parser("falsify", help="search for a counterexample to a claim's inequality (hypothesis)")
    falsify.add_argument("claim", help="a built-in falsifiable claim id, or module:attribute of your own FalsifiableClaim")
    falsify.add_argument("--budget", type=_positive_int("--budget"), default=100, help="examples to try (default 100)")
    falsify.add_argument("--seed", type=int, default=0, help="search seed (default 0); the result reproduces with it")
    falsify.add_argument("--json", action="store_true", help="print the result as JSON")

    export = sub.add_parser("export", help="write a run store as a tidy table (CSV, or Parquet with pyarrow)")
    export.add_argument("store", help="run store path (e.g. fedbound-report/runs.sqlite)")
    export.add_argument("table", help="output file: .csv or .parquet")

    sub.add_parser("list", help="list the claims fedbound can verify")

    bench = sub.add_parser("bench", help="time the kernels against the NumPy reference and the floor")
    bench.add_argument("--json", action="store_true", help="print machine-readable JSON")
    bench.add_argument("--repeats", type=_positive_int("--repeats"), default=5, help="timing repeats (median)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args, argv)
        if args.command == "list":
            return _list()
        if args.command == "export":
            return _export(args)
        if args.command == "falsify":
            return _falsify(args)
        return _bench(args)
    except EXPECTED_ERRORS as exc:
        if args.debug:
            raise
        print(f"fedbound: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fedbound: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # an internal bug: one line, the traceback on request
        if args.debug:
            raise
        print(f"fedbound: internal error ({type(exc).__name__}): {exc}. Rerun with --debug for the traceback.",
              file=sys.stderr)
        return 3


def _prepare_out(out: str) -> Path:
    """Create the output directory and prove it is writable."""
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".fedbound-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise OSError(f"--out: cannot write to output directory {str(path)!r} ({exc.strerror or exc})") from None
    return path


def _verify(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    from convergence import check_jobs, check_scheduler, check_sweep_memory
    from proofs_check import VerifySettings, default_claims, get_claim

    from .render import format_verdict_table, write_html, write_markdown, write_verdicts_json
    from .figures import draw
    from .meta import run_metadata

    if args.quick and args.full:
        raise ValueError("--quick/--full: choose at most one")
    claims = [get_claim(cid) for cid in dict.fromkeys(args.claim)] if args.claim else default_claims()
    jobs = check_jobs(args.jobs, force=args.force_jobs, name="--jobs")
    check_sweep_memory(args.seeds, 0, name="--seeds")
    if args.scheduler is not None:
        check_scheduler(args.scheduler, name="--scheduler")
    out = _prepare_out(args.out)
    store = args.store or str(out / "runs.sqlite")
    settings = VerifySettings(args.seeds, jobs, args.quick, args.full, progress=not args.no_progress,
                              store=store, use_cache=not args.no_cache, scheduler=args.scheduler)
    start = time.perf_counter()
    verdicts, figures = [], []
    for claim in claims:
        print(f"[fedbound] {claim.id}: {claim.citation}", file=sys.stderr, flush=True)
        claim_start = time.perf_counter()
        result = claim.evaluate(settings)
        verdicts.append(result.verdict)
        figures += [draw(spec, claim.id, out) for spec in result.plots]
        print(f"[fedbound] {claim.id}: {result.verdict.status.value} ({time.perf_counter() - claim_start:.1f} s)",
              file=sys.stderr, flush=True)
    meta = run_metadata(argv, settings, time.perf_counter() - start, [c.id for c in claims])
    write_verdicts_json(out / "verdicts.json", verdicts, meta)
    write_markdown(out / "report.md", verdicts, figures, meta)
    write_html(out / "index.html", verdicts, figures, meta)
    print(format_verdict_table(verdicts))
    print(f"\nReport: {out / 'index.html'}  (also report.md, verdicts.json); wall time {meta['wall_time_s']:.1f} s")
    return 0


def _falsify(args: argparse.Namespace) -> int:
    import importlib
    import json

    from proofs_check.falsify import FALSIFIABLE, FalsifiableClaim, falsify

    if ":" in args.claim:
        module, _, attribute = args.claim.partition(":")
        try:
            claim = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"claim: cannot load {args.claim!r} ({exc})") from None
        if not isinstance(claim, FalsifiableClaim):
            raise ValueError(f"claim: {args.claim!r} is a {type(claim).__name__}, not a FalsifiableClaim")
    elif args.claim in FALSIFIABLE:
        claim = FALSIFIABLE[args.claim]
    else:
        raise ValueError(f"claim: unknown falsifiable claim {args.claim!r}; known: {', '.join(FALSIFIABLE)}")
    if args.seed < 0:
        raise ValueError(f"--seed: must be >= 0, got {args.seed}")
    result = falsify(claim, args.budget, args.seed)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.message)
        if result.found:
            print(f"reproduce: fedbound falsify {args.claim} --budget {args.budget} --seed {args.seed}")
            print("counterexample (JSON):")
            print(json.dumps(result.counterexample, indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    from convergence import RunStore

    if not Path(args.store).is_file():
        raise OSError(f"store: no run store at {args.store!r}")
    with RunStore(args.store) as store:
        rows = store.export_table(args.table)
    print(f"wrote {rows} rows to {args.table}")
    return 0


def _list() -> int:
    from proofs_check import CLAIMS

    for claim in CLAIMS.values():
        tag = " [negative control, expected FAIL]" if claim.expected is not None else ""
        print(f"{claim.id}{tag}\n    {claim.citation}\n    {claim.statement}\n")
    return 0


def _bench(args: argparse.Namespace) -> int:
    import json

    from convergence.bench import format_bench, run_bench

    report = run_bench(repeats=args.repeats)
    print(json.dumps(report, indent=2) if args.json else format_bench(report))
    return 0
