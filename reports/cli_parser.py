"""The `fedbound` command line's arguments: the parser of every subcommand, its help texts, and the
argument types that check a value as it is parsed (one line naming the option on bad input).
``reports.cli`` runs the commands."""

from __future__ import annotations

import argparse
import os
from typing import Callable

__all__ = ["build_parser", "checked_jobs"]

_CLAIM_IDS_HELP = (
    "Claim ids are those `fedbound list` prints (e.g. li2020.thm1, ding2020.thm2, lemmas); "
    "`fedbound list` also gives each claim's citation, statement, what its verdict measures and its parameters "
    "with their defaults. A claim runs with other parameters as ID[name=value,...] (quote it in the shell: "
    "'li2020.thm1[E=10,seeds=16]'; a grid in brackets: 'ding2020.thm1[K_grid=[32,128,512]]'); its hypotheses are "
    "checked for the new values and the verdict's id shows them."
)
_REPORT_HELP = (
    "Rebuild the report of the verification a run store holds (verdicts.json, report.md, index.html, plots) "
    "without computing any run: `fedbound verify --store STORE` records in the store its mode, seeds and claims "
    "(with their parameters), and this command evaluates them again with the store opened read-only. A run the "
    "store does not hold is an error naming the claim and the `fedbound verify` command that computes it. Analysis "
    "that is not a run is recomputed: exact optima and limits (li2020.thm4) and the assumption constants (the "
    "lemma and eq. 13 traces are runs, read from the store). Exit status: 0 when the report was written (1 when the stored "
    "verification ran --power and a row of its power table is not as expected, as for verify), 2 on bad input "
    "(a store without a verification record, a claim it does not hold, a missing run)."
)
_RUN_HELP = (
    "Run your own experiment: a TOML file gives the problem (a family and its parameters, or your arrays in an .npz "
    "file), the algorithm (a registered one and its config fields), a grid, the seeds, the record rounds and the "
    "checks to apply (rate: the fitted exponent of the gap; bound: an expression of the problem's constants; "
    "ordering: two grid cells' final gaps). The runs go through the run store and the report is written as by "
    "`fedbound verify` (verdicts.json, report.md, index.html, plots). A worked example: examples/fedavg_rate.toml; "
    "the README's section \"Your own experiment\" describes the file. A user family's builder (builder = "
    "\"FILE.py:NAME\", a file in the experiment file's folder, or an installed MODULE:NAME) is code that runs: it must be "
    "declared with @problems.problem_builder, and nothing else is imported from the current directory or that folder. "
    "Exit status: 0 when every check PASSes, 1 when some check FAILs or is INCONCLUSIVE, 2 "
    "on bad input (the message names the field, e.g. checks[1].expression)."
)
_FALSIFY_HELP = (
    "Exit status: 0 when no counterexample was found within the budget, 1 when one was found (it is printed, "
    "shrunk, with a line that reproduces it), 2 on bad input. Built-in ids: exactly those `fedbound falsify --list` "
    "prints, planted variants included, whose id carries their fixed parameter (quote it in the shell: "
    "'li2020.lemma3[constant=0.01]'); other parameter values are not built in. Your own claim: FILE.py:NAME (a "
    "file, its path relative to the current directory) or MODULE:NAME (an installed module, not one of Python's "
    "standard library) naming a proofs_check.FalsifiableClaim; that file or module runs."
)

_PARTITION_HELP = (
    "Partition an image data set among N clients with a recipe (shards: Li et al.'s k labels per client; dirichlet: "
    "Dirichlet(alpha) label skew with at least 10 rows per client; powerlaw / lognormal: unbalanced sizes, i.i.d. "
    "labels; iid: the control; sorted: rows sorted by label, cut into N equal parts), build Li et al.'s softmax problem on it (lambda = 1e-4) and print the client sizes, "
    "the label histogram and the problem's heterogeneity: Gamma = F* - sum_k p_k F_k*, sigma_G^2 and the (G, B)-BGD "
    "pair. Data: the bundled 8x8 digits run anywhere in seconds; MNIST / Fashion-MNIST IDX files and "
    "cifar-10-python.tar.gz are read from --data-dir/DATASET, $FEDBOUND_DATA/DATASET, the user cache folder, or "
    "(Fashion-MNIST) /usr/share/datasets/fashion-mnist, checked against the published MD5 digests. Exit status 0, "
    "2 on bad input (the message names the field or the file)."
)
_DATA_FETCH_HELP = (
    "Download an image data set's files from their published source (mnist: PyTorch's mirror "
    "ossci-datasets.s3.amazonaws.com/mnist, as yann.lecun.com no longer serves them; fashion-mnist: Zalando's "
    "fashion-mnist.s3-website.eu-central-1.amazonaws.com; cifar10: www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz) "
    "into DIR/NAME, by default $FEDBOUND_DATA/NAME or the user cache folder's NAME (where `fedbound partition` and "
    "load_images look first). Each file streams into a temporary file and is moved into place only when its MD5 is "
    "the published digest; a file already in place and verified is not downloaded again; nothing is resumed. Exit "
    "status 0 when every file is in place and verified, 2 on an error (the message names the file and its URL)."
)


def _positive_int(name: str, minimum: int = 1) -> Callable[[str], int]:
    """An argparse type: decimal digits only (no sign, spaces or underscores) giving an int >= ``minimum``."""
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or int(text) < minimum:
            raise argparse.ArgumentTypeError(f"{name}: expected an integer >= {minimum}, got {text!r}")
        return int(text)

    return parse


def _positive_real(name: str) -> Callable[[str], float]:
    """An argparse type: a finite number > 0."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value != float("inf")):
            raise argparse.ArgumentTypeError(f"{name}: expected a number > 0, got {text!r}")
        return value

    return parse


def _path(name: str) -> Callable[[str], str]:
    """An argparse type: a non-blank path."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{name}: expected a path, got {text!r}")
        return text

    return parse


def _add_sweep_options(parser: argparse.ArgumentParser, store_note: str) -> None:
    """The options of a command that runs sweeps into a report folder (verify, run): --out, --jobs,
    --force-jobs, --no-progress, --store (``store_note`` says what a rerun does with it), --no-cache, --scheduler."""
    parser.add_argument("--out", type=_path("--out"), default="fedbound-report",
                        help="output directory (default: ./fedbound-report)")
    parser.add_argument("--jobs", type=_positive_int("--jobs"), default=None,
                        help="worker processes (default: one per CPU core, here "
                        f"{os.cpu_count() or 1}; capped at the CPU count unless --force-jobs)")
    parser.add_argument("--force-jobs", action="store_true", help="allow --jobs above the CPU count")
    parser.add_argument("--no-progress", action="store_true", help="print no progress (only the verdict table)")
    parser.add_argument("--store", type=_path("--store"), metavar="PATH",
                        help=f"run store (SQLite) for finished runs (default: OUT/runs.sqlite){store_note}")
    parser.add_argument("--no-cache", action="store_true", help="recompute runs even when the store has them")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="run sweeps on this Dask scheduler (tcp://host:port)")
    _add_budget_option(parser)


def _add_budget_option(parser: argparse.ArgumentParser) -> None:
    """--max-cpu-hours: the limit a request's estimated cost must stay under (convergence.budget)."""
    parser.add_argument("--max-cpu-hours", type=_positive_real("--max-cpu-hours"), metavar="H",
                        help="refuse, before anything runs, a request estimated at more than H CPU-hours (default: "
                        "$FEDBOUND_MAX_CPU_HOURS, else 24); the estimate counts runs, client-steps and memory from "
                        "the plan")


def checked_jobs(args: argparse.Namespace) -> int:
    """--jobs checked against the CPU count (unless --force-jobs) and --scheduler checked to answer."""
    from convergence import check_jobs, check_scheduler

    jobs = check_jobs((os.cpu_count() or 1) if args.jobs is None else args.jobs, force=args.force_jobs, name="--jobs")
    if args.scheduler is not None:
        check_scheduler(args.scheduler, name="--scheduler")
    return jobs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fedbound", description="Verify convergence theorems of federated and local SGD numerically."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="run claims and write the report (HTML, Markdown, JSON, PNG/SVG)",
                            description="Run claims and write the report folder. " + _CLAIM_IDS_HELP
                            + " Running some claims into a folder that holds a report made with the same mode and "
                            "seeds merges into it; with other settings it is refused. Exit status: 0 when the report "
                            "was written (a FAILing claim is a finding, not an error), 1 with --power when a claim or "
                            "planted variant is not as expected, 2 on bad input.")
    verify.add_argument("--quick", action="store_true", help="smaller grids and horizons (about a minute)")
    verify.add_argument("--full", action="store_true", help="larger horizons (several minutes)")
    verify.add_argument("--seeds", type=_positive_int("--seeds"), default=4, help="seeds for stochastic runs (default 4)")
    verify.add_argument("--claim", action="append", metavar="ID",
                        help="run only this claim (repeatable), optionally with parameters: ID[name=value,...]; ids "
                        "and parameters from `fedbound list`")
    _add_sweep_options(verify, "; reruns reuse them, and `fedbound report` rebuilds the report from it")
    verify.add_argument("--power", action="store_true",
                        help="power self-test: also run each selected claim's planted false variants (they must FAIL) "
                        "and add the power table; exit status 1 if any claim or variant is not as expected")

    falsify = sub.add_parser("falsify", help="search for a counterexample to a claim's inequality (hypothesis)",
                             description="Search with hypothesis for an input that violates a claim's inequality, "
                             "then shrink it. " + _FALSIFY_HELP)
    falsify.add_argument("claim", nargs="?",
                         help="a built-in falsifiable claim id (see --list), or module:attribute of your own FalsifiableClaim")
    falsify.add_argument("--list", action="store_true", help="list the built-in falsifiable claims and exit")
    falsify.add_argument("--budget", type=_positive_int("--budget"), default=100,
                         help="examples to try before giving up (default 100); shrinking a found one is counted apart")
    falsify.add_argument("--seed", type=int, default=0, help="search seed (default 0); the result reproduces with it")
    falsify.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_budget_option(falsify)

    experiment = sub.add_parser("run", help="run your own experiment: a TOML file with a problem, an algorithm, a "
                                "grid and the checks to apply", description=_RUN_HELP)
    experiment.add_argument("experiment", metavar="EXPERIMENT", type=_path("EXPERIMENT"),
                            help="the experiment file (TOML), e.g. examples/fedavg_rate.toml")
    _add_sweep_options(experiment, "; a rerun reuses them")

    report = sub.add_parser("report", help="rebuild a report from the runs in a run store, computing none",
                            description=_REPORT_HELP)
    report.add_argument("store", metavar="STORE", type=_path("STORE"),
                        help="run store written by `fedbound verify` (e.g. fedbound-report/runs.sqlite)")
    report.add_argument("--out", type=_path("--out"), default="fedbound-report",
                        help="output directory (default: ./fedbound-report)")
    report.add_argument("--claim", action="append", metavar="ID",
                        help="rebuild only this claim of the stored verification (repeatable; with its parameters)")
    report.add_argument("--no-progress", action="store_true", help="print no progress (only the verdict table)")

    export = sub.add_parser("export", help="write the metrics of a run store's runs as a tidy table (claim, run, "
                            "seed, round, local step, metric, value; CSV, or Parquet with pyarrow)")
    export.add_argument("store", help="run store path (e.g. fedbound-report/runs.sqlite)")
    export.add_argument("table", help="output file: .csv or .parquet")
    export.add_argument("--iterates", action="store_true",
                        help="add the coordinates of every recorded model (metric 'iterate', d rows per record)")

    listing = sub.add_parser("list", help="list the claims fedbound can verify, with their parameters")
    listing.add_argument("--falsifiable", action="store_true", help="list the claims `fedbound falsify` takes instead")

    partition = sub.add_parser("partition", help="partition an image data set among clients and report its "
                               "heterogeneity (sizes, label histograms, Gamma, sigma_G^2, BGD)",
                               description=_PARTITION_HELP)
    partition.add_argument("dataset", nargs="?", default="digits", metavar="DATASET",
                           help="digits (bundled with scikit-learn, the default), mnist, fashion-mnist or cifar10")
    partition.add_argument("--recipe", default="shards", metavar="RECIPE",
                           help="shards, dirichlet, powerlaw, lognormal, iid or sorted (default shards)")
    partition.add_argument("--clients", type=_positive_int("--clients"), default=10, help="clients N (default 10)")
    partition.add_argument("--alpha", type=float, help="Dirichlet concentration (dirichlet only; required there)")
    partition.add_argument("--shards-per-client", type=_positive_int("--shards-per-client"),
                           help="labels per client k (shards only; default 2)")
    partition.add_argument("--seed", type=_positive_int("--seed", minimum=0), default=0,
                           help="partition seed (default 0)")
    partition.add_argument("--split", default="train", help="train (default) or test")
    partition.add_argument("--data-dir", type=_path("--data-dir"), metavar="DIR",
                           help="folder searched first for DATASET's files (in DIR/DATASET/), where the problem's "
                           "arrays file is written too (default: $FEDBOUND_DATA or the user cache folder)")
    partition.add_argument("--json", action="store_true", help="print the report as JSON")

    data = sub.add_parser("data", help="image data sets: download them (fetch)")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    fetch = data_sub.add_parser("fetch", help="download an image data set from its published source, checked "
                                "against the published MD5", description=_DATA_FETCH_HELP)
    fetch.add_argument("name", metavar="NAME", choices=("mnist", "fashion-mnist", "cifar10"),
                       help="mnist, fashion-mnist or cifar10 (the digits come with scikit-learn)")
    fetch.add_argument("--data-dir", type=_path("--data-dir"), metavar="DIR",
                       help="download into DIR/NAME (default: $FEDBOUND_DATA or the user cache folder)")
    fetch.add_argument("--no-progress", action="store_true",
                       help="draw no progress bar (none is drawn when stderr is not a terminal)")

    pep = sub.add_parser("pep", help="the exact worst case of FedAvg over a function class (performance estimation)",
                         description="Solve the performance-estimation program of FedAvg (proofs_check.pep): the worst "
                         "case over every set of N clients, each L-smooth and mu-strongly convex (or quadratic), of "
                         "||x_R - x*||^2 or F(x_R) - F* after R rounds of E constant steps, or of the bias of its limit "
                         "(--limit). The value is the same for every N >= 2 (with equal weights, or none above 1/2). Exit status: 0 when the program is solved "
                         "to tolerance, 1 when it is not (the value is then not to be trusted), 2 on bad input.")
    pep.add_argument("--clients", type=_positive_int("--clients"), default=2, help="clients N (default 2)")
    pep.add_argument("--local-steps", type=_positive_int("--local-steps"), required=True, help="local steps E per round")
    pep.add_argument("--rounds", type=_positive_int("--rounds"), help="rounds R (required unless --limit)")
    pep.add_argument("--L", type=float, default=1.0, help="smoothness L of every f_i (default 1)")
    pep.add_argument("--mu", type=float, required=True, help="strong convexity mu of every f_i (0: convex)")
    pep.add_argument("--step", type=float, required=True, help="constant local step eta")
    pep.add_argument("--zeta", type=float, help="sum_i p_i ||grad f_i(x*)||^2 <= zeta^2 (default: not bounded)")
    pep.add_argument("--Gamma", type=float, help="F* - sum_i p_i f_i* <= Gamma (default: not bounded)")
    pep.add_argument("--G", type=float, help="||grad f_i||^2 <= G^2 at every local iterate (default: not bounded)")
    pep.add_argument("--r0", type=float, default=1.0, help="||x_0 - x*|| <= r0 (default 1)")
    pep.add_argument("--server-step", type=float, default=1.0, help="server step s (default 1, plain FedAvg)")
    pep.add_argument("--metric", choices=("distance", "gap"), default="distance",
                     help="distance: ||x_R - x*||^2 (default); gap: F(x_R) - F*")
    pep.add_argument("--mu-prox", type=float, default=0.0,
                     help="FedProx's proximal coefficient mu_prox (default 0: FedAvg)")
    pep.add_argument("--bgd", type=float, nargs=2, metavar=("G", "B"),
                     help="(G, B)-BGD: sum_i p_i ||grad f_i(x)||^2 <= G^2 + B^2 ||grad F(x)||^2 at x* and the server "
                          "models (--limit: at x* and w~; default: not bounded)")
    pep.add_argument("--weights", type=float, nargs="+", metavar="P",
                     help="the clients' weights p_1 ... p_N, summing to 1 (default 1/N; not with --limit)")
    pep.add_argument("--quadratic", action="store_true", help="every f_i a quadratic (a subclass)")
    pep.add_argument("--limit", action="store_true", help="the worst-case bias ||w~ - x*||^2 of the limit w~ instead")
    pep.add_argument("--blocks", type=_positive_int("--blocks"),
                     help="MM-PSGD on M blocks instead (Ding et al. 2020, Algorithm 1): --rounds is E, the rounds per "
                     "block, --local-steps is I, with --cycles, --B and --G; the metric is Theorem 1's mini-max gap "
                     "(1/M) sum_m F_m(x~_m) - F(x*), the class ||x|| <= B and ||grad F_m^i|| <= G at the points used")
    pep.add_argument("--cycles", type=_positive_int("--cycles"), default=1, help="with --blocks: cycles C (default 1)")
    pep.add_argument("--B", type=float, help="with --blocks: the ball radius B of Assumption 5 (required there)")
    pep.add_argument("--json", action="store_true", help="print the result as JSON")

    bench = sub.add_parser("bench", help="compare the kernels with the NumPy reference, vectorised NumPy, JAX and "
                                         "PyTorch peers, the floor and 2 threads, engines alternated in pairs "
                                         "(the linear workloads and the CNN step)")
    bench.add_argument("--json", action="store_true", help="print machine-readable JSON")
    bench.add_argument("--repeats", type=_positive_int("--repeats", minimum=3), default=5,
                       help="alternated pairs per comparison after a warm-up (medians of per-pair ratios; at least 3)")
    bench.add_argument("--quick", action="store_true",
                       help="keep it short: the CNN kernel's calls at 200 images' steps instead of 1000, and no "
                       "1-vs-2-process sweep timing")
    return parser
