"""Fuzzed inputs end in fedbound's own errors, naming the field, or are accepted unchanged.

Hypothesis draws (i) command lines for every subcommand with exactly one bad argument among valid
ones, run through ``reports.cli.main`` (each fails validation before any heavy work), and
(ii) bad and good values for the fields of the algorithm configs, the step-size constructors,
the problem families and ``FederatedProblem``. A bad value must raise the project's error type
with a message that starts with (or, on the command line, contains) the field's name; never a
traceback, a bare exception or silent acceptance. A good value must come back unchanged.

The module counts what it tried (printed at the end with ``pytest -s``, and written to
``fedbound-fuzz-counts.json`` in the temporary directory) so that the figures can be quoted.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convergence import ConfigError, FedAvgConfig, ScheduleError, StepSize
from convergence import FedAvgCyclicConfig, MMPSGDConfig, PRSGDConfig
from problems import FederatedProblem, ProblemError, build_problem, problem_spec
from reports.cli import main

COUNTS: Counter[str] = Counter()
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEED_MAX = 2**63 - 1
FAMILIES = (
    "li_counterexample", "random_quadratic", "synthetic", "block_cyclic_quadratic", "block_cyclic_softmax",
    "identical_quadratic",
)


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    """Print and record the counts of inputs tried and clean errors once the module is done."""
    yield
    path = Path(tempfile.gettempdir()) / "fedbound-fuzz-counts.json"
    path.write_text(json.dumps(dict(COUNTS), indent=2, sort_keys=True))
    print(f"\nfuzzed inputs: {dict(sorted(COUNTS.items()))} (written to {path})")


def _refused(make: Callable[[], Any], error: type[Exception], field: str) -> None:
    """``make()`` must raise ``error`` whose message starts with ``field``; count the outcome."""
    COUNTS["inputs"] += 1
    with pytest.raises(error) as info:
        make()
    assert str(info.value).startswith(field), f"{info.value!r} does not name {field!r}"
    COUNTS["clean_errors"] += 1


def _accepted() -> None:
    COUNTS["inputs"] += 1
    COUNTS["accepted_round_trips"] += 1


# ------------------------------------------------------------------------------------ the CLI
_BAD_INTS = st.one_of(
    st.sampled_from(["0", "-1", "1.5", "2.0", "x", "", " 3", "+3", "1_0", "1e3", "３", "True"]),
    st.integers(max_value=0).map(str),
    st.floats(allow_nan=True).map(str),
    st.text(max_size=4).filter(lambda s: not (s.isascii() and s.isdigit())),
)
_BAD_ADDRESSES = st.one_of(
    st.sampled_from(["", "nonsense", "foo://h:1", "tcp://h:0", "tcp://h:70000", "tcp://:8786", "tcp://h:x", "h"]),
    st.text(alphabet="abc:/", max_size=8).filter(lambda s: not s.rpartition(":")[2].isdigit()),
)


def _bad_verify_argument() -> st.SearchStrategy[tuple[list[str], str]]:
    """(arguments, the field they must be refused by) for ``verify``."""
    return st.one_of(
        st.tuples(st.sampled_from(["--seeds", "--jobs"]), _BAD_INTS).map(lambda a: ([a[0], a[1]], a[0])),
        st.sampled_from(["--out", "--store"]).flatmap(
            lambda opt: st.sampled_from(["", " ", "\t"]).map(lambda v: ([opt, v], opt))
        ),
        st.text(alphabet="abcz.1", min_size=1, max_size=10).map(
            lambda cid: (["--claim", "zz." + cid], "unknown claim id")
        ),
        _BAD_ADDRESSES.map(lambda a: (["--scheduler", a], "--scheduler")),
        st.just((["--quick", "--full"], "--quick/--full")),
        st.just((["--seeds", str(10**15)], "--seeds")),
    )


def _bad_command() -> st.SearchStrategy[tuple[list[str], str]]:
    """A whole command line with one bad argument, and the field its error must name."""
    fillers = st.lists(st.sampled_from(["--no-progress", "--no-cache"]), max_size=2, unique=True)
    verify = st.tuples(_bad_verify_argument(), fillers).map(lambda a: (["verify", *a[1], *a[0][0]], a[0][1]))
    falsify = st.one_of(
        st.text(alphabet="abz.", min_size=1, max_size=6).map(lambda c: (["falsify", "zz" + c], "claim")),
        _BAD_INTS.map(lambda v: (["falsify", "li2020.lemma1", "--budget", v], "--budget")),
        st.integers(max_value=-1).map(lambda v: (["falsify", "li2020.lemma1", f"--seed={v}"], "--seed")),
    )
    export = st.text(alphabet="abc", min_size=1, max_size=5).map(
        lambda name: (["export", f"/nonexistent/{name}.sqlite", "out.csv"], "store")
    )
    bench = _BAD_INTS.map(lambda v: (["bench", "--repeats", v], "--repeats"))
    listing = st.sampled_from(["--all", "x"]).map(lambda extra: (["list", extra], "unrecognized arguments"))
    return st.one_of(verify, falsify, export, bench, listing)


@settings(FUZZ, max_examples=200)
@given(_bad_command())
def test_bad_command_lines_fail_cleanly(case: tuple[list[str], str]) -> None:
    argv, field = case
    COUNTS["inputs"] += 1
    COUNTS["cli_inputs"] += 1
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse: usage and one error line
            status = exit_.code
    text = err.getvalue()
    assert status == 2, f"{argv}: exit {status}\n{text}"
    assert "Traceback" not in text and "internal error" not in text, text
    assert field in text.strip().splitlines()[-1], f"{argv}: {field!r} not named in {text!r}"
    COUNTS["clean_errors"] += 1


# ---------------------------------------------------------------------------- config fields
_NOT_INTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3), st.booleans(), st.none(),
    st.lists(st.integers(0, 3), max_size=2), st.just(np.float64(2.0)), st.just(np.bool_(True)),
)
_BASE_STEP = StepSize.constant(0.1)


def _fedavg(**fields: Any) -> FedAvgConfig:
    return FedAvgConfig(**{"local_steps": 2, "rounds": 5, "step_size": _BASE_STEP, **fields})


def _mm(**fields: Any) -> MMPSGDConfig:
    return MMPSGDConfig(**{"cycles": 1, "rounds_per_block": 2, "local_steps": 2, "step_size": _BASE_STEP, **fields})


def _cyclic(**fields: Any) -> FedAvgCyclicConfig:
    return FedAvgCyclicConfig(**{"cycles": 1, "rounds_per_block": 2, "local_steps": 2, "step_size": _BASE_STEP,
                                 **fields})


def _prsgd(**fields: Any) -> PRSGDConfig:
    return PRSGDConfig(**{"rounds": 5, "sync_interval": 2, "step_size": _BASE_STEP, **fields})


INT_FIELDS = [
    (_fedavg, "local_steps", 1), (_fedavg, "rounds", 1), (_fedavg, "batch_size", 0),
    (_mm, "cycles", 1), (_mm, "rounds_per_block", 1), (_mm, "local_steps", 1), (_mm, "batch_size", 0),
    (_mm, "participants", 1), (_cyclic, "cycles", 1), (_cyclic, "local_steps", 1),
    (_prsgd, "rounds", 1), (_prsgd, "sync_interval", 1), (_prsgd, "batch_size", 0), (_prsgd, "participants", 1),
]


@pytest.mark.parametrize("make,field,minimum", INT_FIELDS, ids=lambda x: getattr(x, "__name__", str(x)))
@FUZZ
@given(bad=st.one_of(_NOT_INTS, st.integers(-(2**70), -1)), good=st.integers(1, 2**40))
def test_integer_config_fields(make: Callable[..., Any], field: str, minimum: int, bad: Any, good: int) -> None:
    if field == "participants" and bad is None:
        return  # None means "all clients"
    if isinstance(bad, int) and not isinstance(bad, bool) and bad >= minimum:
        return
    _refused(lambda: make(**{field: bad}), ConfigError, field)
    value = np.int64(good) if good % 2 else good
    config = make(**{field: value})
    assert getattr(config, field) == good and type(getattr(config, field)) is int
    _accepted()


_BAD_SEEDS = st.one_of(
    _NOT_INTS.filter(lambda v: not isinstance(v, list)).map(lambda v: (v,)),
    st.integers(SEED_MAX + 1, 2**80).map(lambda v: (v,)),
    st.integers(-(2**70), -1).map(lambda v: (0, v)),
    st.just(()), st.just((1, 1)), st.just("12"), st.integers(0, 5),
)


@pytest.mark.parametrize("make", [_fedavg, _mm, _cyclic, _prsgd], ids=lambda f: f.__name__)
@FUZZ
@given(bad=_BAD_SEEDS, good=st.lists(st.integers(0, SEED_MAX), min_size=1, max_size=4, unique=True))
def test_seeds(make: Callable[..., Any], bad: Any, good: list[int]) -> None:
    _refused(lambda: make(seeds=bad), ConfigError, "seeds")
    assert make(seeds=[np.uint64(s) if s % 2 else s for s in good]).seeds == tuple(good)
    _accepted()


@pytest.mark.parametrize("make", [_fedavg, _mm, _prsgd], ids=lambda f: f.__name__)
@FUZZ
@given(bad=st.one_of(_NOT_INTS.map(lambda v: (0, v)), st.just((3, 2)), st.just((1, 1)), st.just(7), st.just("0")),
       good=st.sets(st.integers(0, 5), max_size=4))
def test_record_rounds(make: Callable[..., Any], bad: Any, good: set[int]) -> None:
    _refused(lambda: make(record_rounds=bad), ConfigError, "record_rounds")
    record = tuple(sorted(good))
    assert make(record_rounds=record).record_rounds == (record or make().record_rounds)
    _accepted()


_BAD_REALS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x)), st.text(max_size=3),
    st.booleans(), st.none(), st.lists(st.floats(0.1, 1.0), max_size=1), st.complex_numbers(max_magnitude=1),
)
STEP_CASES = [
    (lambda v: StepSize.constant(v), "step_size.eta0"),
    (lambda v: StepSize.inverse_time(v, 0.1), "step_size.eta0"),
    (lambda v: StepSize.inverse_time(0.1, v), "step_size.decay"),
    (lambda v: StepSize.per_round(v), "step_size.eta0"),
    (lambda v: StepSize.li(v, 1.0, 2), "step_size.mu"),
    (lambda v: StepSize.li(0.1, v, 2), "step_size.L"),
]


@pytest.mark.parametrize("make,field", STEP_CASES, ids=[f for _, f in STEP_CASES])
@FUZZ
@given(bad=st.one_of(_BAD_REALS, st.floats(max_value=-1e-300, allow_nan=False)),
       good=st.floats(1e-6, 1e6))
def test_step_size_constructors(make: Callable[[Any], StepSize], field: str, bad: Any, good: float) -> None:
    _refused(lambda: make(bad), ScheduleError, field)
    step, attribute = make(good), field.split(".")[1]
    expected = max(8.0 * good / 0.1, 2.0) if attribute == "L" else good
    assert (step.gamma if attribute == "L" else getattr(step, attribute)) == expected
    _accepted()


@FUZZ
@given(bad=st.one_of(_NOT_INTS, st.integers(-5, 0)))
def test_li_local_steps(bad: Any) -> None:
    _refused(lambda: StepSize.li(0.1, 1.0, bad), ScheduleError, "step_size.local_steps")


# ------------------------------------------------------------------------------ problems
def _int_params(family: str) -> list[str]:
    return [name for name, value in problem_spec(family).params.items() if type(value) is int]


FAMILY_INTS = [(family, name) for family in FAMILIES for name in _int_params(family)]


@pytest.mark.parametrize("family,field", FAMILY_INTS, ids=[f"{f}.{n}" for f, n in FAMILY_INTS])
@FUZZ
@given(bad=_NOT_INTS, good=st.integers(0, 2**40))
def test_family_integer_parameters(family: str, field: str, bad: Any, good: int) -> None:
    _refused(lambda: problem_spec(family, **{field: bad}), ProblemError, field)
    assert problem_spec(family, **{field: np.int32(good % 2**31)}).params[field] == good % 2**31
    _accepted()


HUGE = [
    ("synthetic", {"n_clients": 10**9}, "n_clients"),
    ("random_quadratic", {"dim": 10**5, "samples_per_client": 10**5}, "dim"),
    ("random_quadratic", {"n_clients": 10**9}, "n_clients"),
    ("block_cyclic_softmax", {"samples_per_client": 10**12}, "samples_per_client"),
    ("block_cyclic_quadratic", {"n_blocks": 10**8}, "n_blocks"),
    ("identical_quadratic", {"n_clients": 10**10}, "n_clients"),
    ("li_counterexample", {"N": 10**4, "p": 10**4}, "N, p"),
]


@pytest.mark.parametrize("family,params,field", HUGE, ids=[f"{f}-{n}" for f, _, n in HUGE])
def test_huge_problem_sizes_refused_before_allocation(family: str, params: dict, field: str) -> None:
    COUNTS["inputs"] += 1
    with pytest.raises(ProblemError, match="would need about") as info:
        build_problem(problem_spec(family, **params))
    assert field in str(info.value).split(":")[0]
    COUNTS["clean_errors"] += 1


_PROBLEM_FIELDS = {
    "mu": st.one_of(_BAD_REALS, st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False)),
    "weights": st.one_of(st.just(["a", "b"]), st.just([0.5, [0.5]]), st.just([True, False]), st.just([0.5, 0.6]),
                         st.just([0.5, None]), st.just([1.0])),
    "n_classes": _NOT_INTS,
    "X": st.one_of(st.just(np.zeros((2, 0))), st.just([["a"], ["b"]]), st.just(np.ones(2)),
                   st.just([[1.0, 2.0], [3.0]])),
    "offsets": st.one_of(st.just([0.0, 1.0, 2.0]), st.just([0, 2, 2]), st.just(["0", "1", "2"]), st.just([0, 1])),
    "loss": st.one_of(st.text(max_size=5), st.none(), st.integers()),
}


@pytest.mark.parametrize("field", list(_PROBLEM_FIELDS))
@FUZZ
@given(data=st.data())
def test_federated_problem_fields(field: str, data: st.DataObject) -> None:
    bad = data.draw(_PROBLEM_FIELDS[field])
    args = dict(name="t", loss="least_squares", X=np.eye(2), y=np.ones(2), offsets=[0, 1, 2], weights=[0.5, 0.5],
                mu=0.1)
    if field == "loss" and bad in ("least_squares", "logistic", "softmax"):
        return
    _refused(lambda: FederatedProblem(**{**args, field: bad}), ProblemError, field)
    problem = FederatedProblem(**args)
    assert problem.mu == 0.1 and problem.offsets.tolist() == [0, 1, 2] and problem.weights.tolist() == [0.5, 0.5]
    _accepted()
