"""The table of algorithms x models x participation schemes (optax's habit, DESIGN.md): every
combination agrees with its NumPy reference, runs bit-identically on every executor, and is
stored and reused by the run store.

The axes come from the code, not from a hand list:

* algorithms: ``convergence.algorithms.ALGORITHM_NAMES`` (the engine registry). Each needs a row in
  ``SCHEDULES`` (the values of its config's required fields) and ``LAYOUTS`` (the kind of problem
  it runs on); ``test_every_registered_algorithm_has_a_row`` fails, naming it, for one that has none.
* models: ``problems.models.MODEL_NAMES`` (least squares, logistic, softmax) and ``"cnn"`` (the
  smallest shipped network, ``digits_net``, on a few dozen bundled 8x8 digits, float64).
* schemes: read from the fields the algorithm's config declares (``config_type(name)``): a
  ``participation`` field takes every scheme of ``PARTICIPATION_SCHEMES`` (FedAvg: full, Li et
  al.'s Schemes I, II, transformed II and McMahan et al.'s original, each with K sampled
  clients); a ``participants`` field alone takes "full" (None) and "partial" (K < N, a uniform
  subset); neither (FedProx, FedAvg-cyclic) takes "full" only.

Problems (one per layout and model; tiny: 3-4 clients, 2-3 features or 60-80 images, 2 seeds):
"federated" (FedAvg, FedProx) is a user's arrays (``problems.from_arrays``) with unequal client
sizes, so p_k = n_k / n differ and the five FedAvg schemes give five trajectories; "block_cyclic"
(MM-PSGD, MC-PSGD, FedAvg-cyclic) is Ding et al.'s data of 2 blocks (``block_cyclic_quadratic``,
``block_cyclic_softmax`` with 2 or 3 classes, ``block_cyclic_images``); "one_block" (PR-SGD, which
averages with weights 1/N over one block) the same families with one block.

What each case must satisfy:

1. ``test_kernel_agrees_with_reference``: ``run(engine="numba")`` and ``run(engine="numpy")`` (the
   switch ``_base.ENGINES``, as tests/test_fedavg_kernel.py and tests/test_block_cyclic.py use it),
   tracked, agree on every float array of the result (iterates, gap, dist_sq and every array of
   the typed extras) to relative error <= RTOL = 1e-10 with the absolute floor RTOL * max|reference|
   of tests/test_block_cyclic.py (``assert_close``; the 1e-10 is DESIGN.md's contract "Numba kernel
   and NumPy reference agree (relative error <= 1e-10 on float64)", the CNN problems are float64
   for that reason), and exactly on integer arrays (selections, blocks). The run must have moved
   (max |w_T - w_0| > 1e-3, as tests/test_fedavg_kernel.py asks), so a kernel that returns w_0
   cannot agree by accident.
2. ``test_executors_are_bit_identical``: the same RunConfigs through ``execute`` with
   ``SweepOptions(executor="serial")`` and with a process pool (``jobs=2``) give the same run ids
   and bit-identical arrays (``np.array_equal``, NaN = NaN). DESIGN.md: "Same config and seed give
   bit-identical trajectories, whatever the executor or job count."
3. ``test_the_store_gives_back_what_it_stored``: a second serial ``execute`` with the same run
   store computes nothing (counted by a ``SweepMonitor``: every task cached, none finished) and
   returns bit-identical arrays.
4. ``test_schemes_give_different_trajectories``: within an (algorithm, model), the schemes' final
   iterates differ pairwise, so a scheme silently ignored (run as full participation) is caught.

Parts 2-4 run the whole table in one sweep per executor (module-scoped fixture), not a subset.

Refused combinations are rows of the table too (``REFUSED``): FedProx runs on linear models
only, so FedProx x CNN raises ConfigError naming ``problem`` (``FedProxEngine.plan``), and
``test_refused_combinations_name_the_field`` checks that it still does. Beyond the table,
``test_participants_beyond_n`` takes every sampling scheme with K = N + 1: schemes that sample
without replacement refuse it with ConfigError naming ``participants``; Scheme I draws with
replacement (Li et al., Assumption 5) and runs.

Cost (2-core shared machine, load ~4-5, ``nice``): 51 runnable cases, 176 tests, 10-18 s with a
warm Numba cache; a fresh checkout first compiles every kernel it reaches (about 6 minutes, as
the rest of the suite would).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from convergence import (
    PARTICIPATION_SCHEMES, ConfigError, RunConfig, RunRequest, RunResult, RunStore, StepSize, SweepOptions, execute, run,
)
from convergence.algorithms import ALGORITHM_NAMES, algorithm_for, config_type
from problems import ProblemSpec, from_arrays, problem_spec
from problems.models import MODEL_NAMES

RTOL = 1e-10
"""Kernel vs reference, relative (DESIGN.md; tests/test_block_cyclic.py's RTOL and floor)."""
MOVED = 1e-3
"""max |w_T - w_0| a case must exceed (tests/test_fedavg_kernel.py)."""
SEEDS = (0, 1)
K = 2
"""Clients sampled per round by every sampling scheme (N = 3 or 4)."""
STEP = StepSize.constant(0.1)

MODELS = (*MODEL_NAMES, "cnn")

SCHEDULES: Mapping[str, Mapping[str, Any]] = {
    "fedavg": dict(local_steps=2, rounds=3, step_size=STEP, batch_size=2, record_rounds=(0, 1, 3)),
    "fedavg_cyclic": dict(cycles=2, rounds_per_block=1, local_steps=2, step_size=STEP, batch_size=2,
                          record_rounds=(0, 1, 4)),
    "mm_psgd": dict(cycles=2, rounds_per_block=1, local_steps=2, step_size=STEP, batch_size=2, record_rounds=(0, 1, 4)),
    "mc_psgd": dict(cycles=2, rounds_per_block=1, local_steps=2, step_size=STEP, batch_size=2, record_rounds=(0, 1, 4),
                    block_step_size=StepSize.constant(0.05)),
    "pr_sgd": dict(rounds=3, sync_interval=2, step_size=STEP, batch_size=2, record_rounds=(0, 1, 3)),
    "fedprox": dict(local_steps=2, rounds=3, step_size=STEP, mu_prox=0.5, batch_size=2, record_rounds=(0, 1, 3)),
    "scaffold": dict(local_steps=2, rounds=3, step_size=STEP, batch_size=2, record_rounds=(0, 1, 3)),
}
"""Per registered algorithm, its config's fields besides seeds and participation: a few rounds of
2 local steps on minibatches of 2 rows (the samplers' streams are compared too)."""

LAYOUTS: Mapping[str, str] = {
    "fedavg": "federated", "fedprox": "federated", "fedavg_cyclic": "block_cyclic", "mm_psgd": "block_cyclic",
    "mc_psgd": "block_cyclic", "pr_sgd": "one_block", "scaffold": "federated",
}
"""Per registered algorithm, the problem it runs on (module docstring)."""

REFUSED: Mapping[tuple[str, str, str], tuple[type[Exception], str]] = {
    ("fedprox", "cnn", "full"): (ConfigError, "problem"),
}
"""(algorithm, model, scheme) -> the error refusing it and the field it names."""


def schemes(algorithm: str) -> tuple[str, ...]:
    """The participation schemes ``algorithm``'s config declares (module docstring)."""
    fields = {field.name for field in dataclasses.fields(config_type(algorithm))}
    if "participation" in fields:
        return tuple(PARTICIPATION_SCHEMES)
    if "participants" in fields:
        return ("full", "partial")
    return ("full",)


def scheme_fields(algorithm: str, scheme: str, participants: int = K) -> dict[str, Any]:
    """The config fields that select ``scheme`` with ``participants`` sampled clients."""
    if scheme == "full":
        return {}
    if "participation" in {field.name for field in dataclasses.fields(config_type(algorithm))}:
        return {"participation": scheme, "participants": participants}
    return {"participants": participants}


def make_config(algorithm: str, scheme: str, participants: int = K) -> Any:
    """The config of one case: its algorithm's schedule, the scheme's fields and SEEDS."""
    return config_type(algorithm)(**SCHEDULES[algorithm], **scheme_fields(algorithm, scheme, participants),
                                  seeds=SEEDS)


CASES = [(a, m, s) for a in ALGORITHM_NAMES if a in SCHEDULES for m in MODELS for s in schemes(a)]
RUNNABLE = [case for case in CASES if case not in REFUSED]


def case_id(case: tuple[str, str, str]) -> str:
    return "-".join(case)


# ------------------------------------------------------------------------------------------ problems
def _arrays_spec(model: str, folder: str) -> ProblemSpec:
    """4 clients with 3, 4, 6 and 7 rows of 2 features (p_k = n_k / 20, unequal), l2 = 0.1:
    real targets (least squares), labels in {0, 1} (logistic) or in {0, 1, 2} (softmax)."""
    rng = np.random.default_rng(7)
    clients = np.repeat(np.arange(4), [3, 4, 6, 7])
    X = rng.normal(size=(clients.size, 2))
    targets = {"least_squares": rng.normal(size=clients.size), "logistic": rng.integers(0, 2, clients.size),
               "softmax": rng.integers(0, 3, clients.size)}
    if model not in targets:
        raise KeyError(f"the table has no federated problem for model {model!r}: add one to _arrays_spec")
    return from_arrays(X, targets[model].astype(float), clients, loss=model, l2=0.1, data_dir=folder).spec


def _block_cyclic_spec(model: str, n_blocks: int) -> ProblemSpec:
    """``n_blocks`` blocks of 3 clients (PR-SGD: one block), 5 rows each (linear) or 80 digits in all."""
    if model == "least_squares":
        return problem_spec("block_cyclic_quadratic", n_clients=3, n_blocks=n_blocks, dim=2, samples_per_client=5)
    if model in ("logistic", "softmax"):
        return problem_spec("block_cyclic_softmax", n_clients=3, n_blocks=n_blocks, n_features=2,
                            n_classes=2 if model == "logistic" else 3, samples_per_client=5, l2=0.05)
    if model == "cnn":
        labels = 6 if n_blocks > 1 else 10
        return problem_spec("block_cyclic_images", n_blocks=n_blocks, clients_per_block=3, labels_per_block=labels,
                            n_train=80, n_test=40, dtype="float64")
    raise KeyError(f"the table has no block-cyclic problem for model {model!r}: add one to _block_cyclic_spec")


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], ProblemSpec]:
    """(layout, model) -> the problem's spec (module docstring)."""
    folder = str(tmp_path_factory.mktemp("table_arrays"))
    out = {}
    for model in MODELS:
        out["federated", model] = (problem_spec("image_classification", n_clients=4, n_train=60, n_test=20,
                                                dtype="float64", recipe="dirichlet", alpha=0.5, min_size=5)
                                   if model == "cnn" else _arrays_spec(model, folder))
        out["block_cyclic", model] = _block_cyclic_spec(model, 2)
        out["one_block", model] = _block_cyclic_spec(model, 1)
    return out


def run_config(specs: Mapping[tuple[str, str], ProblemSpec], case: tuple[str, str, str]) -> RunConfig:
    algorithm, model, scheme = case
    return RunConfig(specs[LAYOUTS[algorithm], model], make_config(algorithm, scheme))


# ------------------------------------------------------------------------------------ the results
def result_arrays(result: RunResult) -> dict[str, np.ndarray]:
    """Every array of a result by name: the common core and the array fields of its typed extras
    (None ones left out); the extras' other fields (communication counts) under their name as a
    one-element object array, compared by equality."""
    arrays = {name: getattr(result, name) for name in ("rounds", "steps", "iterates", "gap", "dist_sq")}
    for field in dataclasses.fields(result.extras):
        value = getattr(result.extras, field.name)
        arrays[f"extras.{field.name}"] = value if isinstance(value, np.ndarray) or value is None else np.array(
            [value], dtype=object)
    return {name: value for name, value in arrays.items() if value is not None}


def assert_agree(fast: np.ndarray, slow: np.ndarray, name: str) -> None:
    """Kernel vs reference on one array: RTOL relative with the floor RTOL * max|slow| on floats
    (tests/test_block_cyclic.py's assert_close), exact on anything else."""
    if np.issubdtype(slow.dtype, np.floating):
        scale = np.nanmax(np.abs(slow)) if np.any(np.isfinite(slow)) else 0.0
        np.testing.assert_allclose(fast, slow, rtol=RTOL, atol=RTOL * scale, err_msg=name)
    else:
        np.testing.assert_array_equal(fast, slow, err_msg=name)


def assert_bit_identical(a: RunResult, b: RunResult) -> None:
    assert a.run_id == b.run_id == a.config.run_id
    arrays_a, arrays_b = result_arrays(a), result_arrays(b)
    assert arrays_a.keys() == arrays_b.keys()
    for name, value in arrays_a.items():
        if value.dtype == object:
            assert value.tolist() == arrays_b[name].tolist(), name
        else:
            assert value.dtype == arrays_b[name].dtype and np.array_equal(value, arrays_b[name], equal_nan=True), name


# ---------------------------------------------------------------------------------- the table's rows
def test_every_registered_algorithm_has_a_row() -> None:
    missing = [name for name in ALGORITHM_NAMES if name not in SCHEDULES or name not in LAYOUTS]
    assert not missing, f"registered algorithms without a row in the table (SCHEDULES, LAYOUTS): {missing}"
    assert set(SCHEDULES) == set(LAYOUTS) == set(ALGORITHM_NAMES)
    assert set(REFUSED) <= set(CASES)
    # the axes the brief names are all there (a registry that lost one would shrink the table silently)
    assert {"fedavg", "fedavg_cyclic", "mm_psgd", "mc_psgd", "pr_sgd", "fedprox"} <= set(ALGORITHM_NAMES)
    assert set(schemes("fedavg")) == {"full", "scheme_i", "scheme_ii", "transformed_scheme_ii", "original"}
    assert {"least_squares", "logistic", "softmax"} <= set(MODEL_NAMES)


@pytest.mark.parametrize("case", RUNNABLE, ids=case_id)
def test_kernel_agrees_with_reference(specs, case) -> None:
    config = run_config(specs, case)
    fast, slow = run(config, track=True), run(config, engine="numpy", track=True)
    arrays_fast, arrays_slow = result_arrays(fast), result_arrays(slow)
    assert arrays_fast.keys() == arrays_slow.keys()
    for name, value in arrays_slow.items():
        if value.dtype == object:
            assert arrays_fast[name].tolist() == value.tolist(), name
        else:
            assert_agree(arrays_fast[name], value, name)
    assert np.all(np.abs(slow.iterates[:, -1] - slow.iterates[:, 0]).max(axis=1) > MOVED)


@pytest.mark.parametrize("case", list(REFUSED), ids=case_id)
def test_refused_combinations_name_the_field(specs, case) -> None:
    error, field = REFUSED[case]
    with pytest.raises(error, match=f"^{field}: "):
        run(run_config(specs, case))


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHM_NAMES if set(schemes(a)) - {"full"}])
def test_participants_beyond_n(specs, algorithm) -> None:
    """K = N + 1 on the least-squares problem: refused, naming ``participants``, by every scheme
    that samples without replacement; Scheme I (with replacement) runs."""
    spec = specs[LAYOUTS[algorithm], "least_squares"]
    N = algorithm_for(make_config(algorithm, "full")).build_problem(spec).n_clients
    for scheme in set(schemes(algorithm)) - {"full"}:
        config = RunConfig(spec, make_config(algorithm, scheme, participants=N + 1))
        if scheme == "scheme_i":
            assert run(config).iterates.shape[0] == len(SEEDS)
        else:
            with pytest.raises(ConfigError, match="^participants: "):
                run(config)


# ------------------------------------------------------------------------- executors and the store
class CountingMonitor:
    """A SweepMonitor counting the tasks a sweep found in its store and those it computed."""

    def __init__(self) -> None:
        self.tasks = self.cached = self.computed = 0

    def sweep_started(self, description: str, configs: Sequence[Mapping[str, Any]], cached: int) -> None:
        self.tasks += len(configs)
        self.cached += cached

    def run_finished(self) -> None:
        self.computed += 1

    def sweep_finished(self, description: str, total: int, cached: int, seconds: float) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class Sweeps:
    """The whole table through ``execute``: serial with a new store, on a pool of 2 without one,
    and serial again with the store; results keyed by case, and the two stored sweeps' monitors."""

    serial: dict[tuple[str, str, str], RunResult]
    pooled: dict[tuple[str, str, str], RunResult]
    reread: dict[tuple[str, str, str], RunResult]
    first: CountingMonitor
    second: CountingMonitor


@pytest.fixture(scope="module")
def sweeps(specs, tmp_path_factory) -> Sweeps:
    requests = [RunRequest(run_config(specs, case), track=True) for case in RUNNABLE]
    first, second = CountingMonitor(), CountingMonitor()
    with RunStore(tmp_path_factory.mktemp("table_store") / "runs.sqlite") as store:
        serial = execute(requests, SweepOptions(executor="serial", store=store, progress=first))
        with pytest.MonkeyPatch.context() as patch:  # on the pool, however small (conftest's ``on_the_pool``)
            patch.setattr("convergence.sweep_batches.IN_PLACE_SECONDS", 0.0)
            pooled = execute(requests, SweepOptions(executor="process", jobs=2, progress=False))
        reread = execute(requests, SweepOptions(executor="serial", store=store, progress=second))
    return Sweeps(*(dict(zip(RUNNABLE, results)) for results in (serial, pooled, reread)), first, second)


@pytest.mark.parametrize("case", RUNNABLE, ids=case_id)
def test_executors_are_bit_identical(sweeps, case) -> None:
    assert_bit_identical(sweeps.serial[case], sweeps.pooled[case])


@pytest.mark.parametrize("case", RUNNABLE, ids=case_id)
def test_the_store_gives_back_what_it_stored(sweeps, case) -> None:
    assert_bit_identical(sweeps.serial[case], sweeps.reread[case])


def test_the_second_sweep_computes_nothing(sweeps) -> None:
    tasks = len(RUNNABLE) * len(SEEDS)
    assert (sweeps.first.tasks, sweeps.first.cached, sweeps.first.computed) == (tasks, 0, tasks)
    assert (sweeps.second.tasks, sweeps.second.cached, sweeps.second.computed) == (tasks, tasks, 0)


@pytest.mark.parametrize("algorithm,model", sorted({(a, m) for a, m, _ in RUNNABLE if len(schemes(a)) > 1}))
def test_schemes_give_different_trajectories(sweeps, algorithm, model) -> None:
    finals = {s: sweeps.serial[algorithm, model, s].iterates[:, -1] for s in schemes(algorithm)}
    for (a, final_a), (b, final_b) in itertools.combinations(finals.items(), 2):
        assert not np.array_equal(final_a, final_b), f"schemes {a} and {b} ran the same trajectory"
