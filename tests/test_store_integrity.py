"""Run store integrity: corrupt rows are detected and recomputed, only fedbound stores are opened.

The corruption cases edit a real store behind fedbound's back with sqlite3 (as a stray script, a
disk fault or a hand edit would), then run the same sweep again: every case must warn, naming the
run and the store, and give back the bit-identical results of a clean run (so a corrupt row was
recomputed, never used). The file cases check that anything that is not a fedbound store is
refused with one StoreError naming the field and the path, and left byte-identical. The seed
cases check that a per-seed run is keyed by its own seed: growing the seed list reuses the
stored seeds, and the store grows linearly in the number of seeds.
"""

from __future__ import annotations

from operator import attrgetter

import hashlib
import json
import os
import re
import shutil
import sqlite3
import warnings
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from convergence import (
    FedAvgCyclicConfig,
    SweepOptions,
    CorruptRunError,
    CorruptRunWarning,
    FedAvgConfig,
    RunConfig,
    RunRequest,
    RunStore,
    StepSize,
    StoreError,
    MMPSGDConfig,
    execute,
)
from convergence.sweep_runs import seed_task
from problems import build_problem, exact_optimum, problem_spec
from reports.cli import main

SEEDS = (0, 1)
FIELDS = ("iterates", "gap", "dist_sq", "extras.max_radius_sq", "extras.max_grad_sq")


def _request(seeds: tuple[int, ...] = SEEDS) -> RunRequest:
    """A small minibatch FedAvg run on a synthetic problem (6 clients), tracked."""
    spec = problem_spec("synthetic", alpha=1.0, beta=1.0, n_clients=6, l2=0.05, seed=3)
    config = FedAvgConfig(3, 10, StepSize.per_round(0.05), 4, 1.0, (0, 2, 10), seeds)
    return RunRequest(RunConfig(spec, config), exact_optimum(build_problem(spec), crosscheck=False), track=True)


def _block_cyclic_request(seeds: tuple[int, ...]) -> RunRequest:
    """MM-PSGD on 4 clients x 3 blocks (least squares), 2 cycles of E = 2 rounds of 3 steps."""
    spec = problem_spec("block_cyclic_quadratic", n_clients=4, n_blocks=3, dim=5, samples_per_client=7, seed=0)
    config = MMPSGDConfig(cycles=2, rounds_per_block=2, local_steps=3, step_size=StepSize.inverse_time(0.08, 0.02),
                          batch_size=2, record_rounds=(0, 1, 5, 12), seeds=seeds)
    return RunRequest(RunConfig(spec, config), exact_optimum(build_problem(spec), crosscheck=False))


def _keys() -> tuple[str, str]:
    """The store keys of the two seeds of the request."""
    request = _request()
    return seed_task(request, SEEDS[0], "numba").key, seed_task(request, SEEDS[1], "numba").key


def _assert_identical(first: list, second: list) -> None:
    for a, b in zip(first, second, strict=True):
        for field in FIELDS:
            x, y = attrgetter(field)(a), attrgetter(field)(b)
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True), field


def _sql(path: Path, *statements: str) -> None:
    """Edit the store file directly, behind fedbound's back."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            db.execute(statement)
    finally:
        db.close()


def _swap(path: Path, a: str, b: str) -> None:
    """Exchange the 'records' arrays (dtype, shape, bytes and digest) of runs a and b."""
    _sql(path, f"UPDATE arrays SET key = 'swap' WHERE key = '{a}' AND name = 'records'",
         f"UPDATE arrays SET key = '{a}' WHERE key = '{b}' AND name = 'records'",
         f"UPDATE arrays SET key = '{b}' WHERE key = 'swap' AND name = 'records'")


def _swap_runs(path: Path, a: str, b: str) -> None:
    """Exchange the whole run rows (config, metadata, digest) of runs a and b, arrays left in place."""
    _sql(path, f"UPDATE runs SET key = 'swap' WHERE key = '{a}'", f"UPDATE runs SET key = '{a}' WHERE key = '{b}'",
         f"UPDATE runs SET key = '{b}' WHERE key = 'swap'")


def _misfiled(path: Path, a: str, b: str) -> None:
    """Store run b's config and result, with valid checksums, under a's key (a row for another config)."""
    with RunStore(path) as store:
        other = store.load(b)
        store.put(a, other.config, other.result, other.meta)


def _edit_records(path: Path, key: str, edit: Callable[[bytes], bytes]) -> None:
    """Replace the bytes of run ``key``'s 'records' array by ``edit`` of them."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        (data,) = db.execute(f"SELECT data FROM arrays WHERE {_records(key)}").fetchone()
        db.execute(f"UPDATE arrays SET data = ? WHERE {_records(key)}", (edit(data),))
    finally:
        db.close()


def _records(key: str) -> str:
    return f"key = '{key}' AND name = 'records'"


def _rewritten(path: Path, key: str, **columns: str) -> None:
    """Set text columns (config, meta) of run ``key`` and rewrite its run checksum to match, as
    someone who knows the store's format would: SHA-256 of [key, config, meta, sorted (name, array
    digest) pairs] in JSON (``convergence.store``, "Integrity")."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        config, meta = db.execute(f"SELECT config, meta FROM runs WHERE key = '{key}'").fetchone()
        config, meta = columns.get("config", config), columns.get("meta", meta)
        arrays = sorted(db.execute(f"SELECT name, digest FROM arrays WHERE key = '{key}'").fetchall())
        digest = hashlib.sha256(json.dumps([key, config, meta, [list(a) for a in arrays]]).encode()).hexdigest()
        db.execute(f"UPDATE runs SET config = ?, meta = ?, digest = ? WHERE key = '{key}'", (config, meta, digest))
    finally:
        db.close()


def _restored(path: Path, key: str, edit: Callable[[np.ndarray], np.ndarray]) -> None:
    """Store run ``key`` again through the store's own API (valid checksums) with its 'records' array
    replaced by ``edit`` of it: values or a shape that the run cannot have."""
    with RunStore(path) as store:
        run = store.load(key)
        store.put(key, run.config, {**run.result, "records": edit(run.result["records"])}, run.meta)


@dataclass(frozen=True)
class Corruption:
    """An edit of runs a and b of a store; ``runs``: which of them (0: a, 1: b) it damages;
    ``checksums``: whether the store's checksums catch it (else the sweep's config check does)."""

    edit: Callable[[Path, str, str], None]
    runs: tuple[int, ...] = (0,)
    checksums: bool = True


CORRUPTIONS: dict[str, Corruption] = {
    "array bytes edited": Corruption(lambda p, a, b: _edit_records(p, a, lambda data: data[:8] + b"\x01" + data[9:])),
    "array bytes edited into text": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE arrays SET data = CAST(data AS TEXT) || 'x' WHERE {_records(a)}")),
    "config edited into invalid UTF-8": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE runs SET config = CAST(X'FF' || config AS TEXT) WHERE key = '{a}'")),
    "array dtype changed": Corruption(lambda p, a, b: _sql(p, f"UPDATE arrays SET dtype = '<i8' WHERE {_records(a)}")),
    "array shape changed": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE arrays SET shape = '[' || json_extract(shape, '$[1]') || ',' || json_extract(shape, '$[0]') "
           f"|| ']' WHERE {_records(a)}")),
    "array bytes truncated": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE arrays SET data = substr(data, 1, length(data) - 8) WHERE {_records(a)}")),
    "array row deleted": Corruption(lambda p, a, b: _sql(
        p, f"DELETE FROM arrays WHERE key = '{a}' AND name = 'diverged'")),
    "arrays swapped between runs": Corruption(_swap, (0, 1)),
    "run rows swapped": Corruption(_swap_runs, (0, 1)),
    "config edited": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE runs SET config = replace(config, '\"engine\": \"numba\"', '\"engine\": \"numpy\"') "
           f"WHERE key = '{a}'")),
    "metadata edited": Corruption(lambda p, a, b: _sql(
        p, f"UPDATE runs SET meta = json_set(meta, '$.seconds', 1e9) WHERE key = '{a}'")),
    "checksummed row for another config": Corruption(_misfiled, checksums=False),
    "config not JSON, checksum rewritten": Corruption(lambda p, a, b: _rewritten(p, a, config="not json")),
    "metadata not a JSON object, checksum rewritten": Corruption(lambda p, a, b: _rewritten(p, a, meta="[1, 2]")),
    "config nested too deeply, checksum rewritten": Corruption(lambda p, a, b: _rewritten(
        p, a, config="[" * 100_000 + "]" * 100_000)),
    "NaN records, checksummed": Corruption(lambda p, a, b: _restored(p, a, lambda r: np.full_like(r, np.nan)),
                                           checksums=False),
    "records of another shape, checksummed": Corruption(lambda p, a, b: _restored(p, a, lambda r: r[:-1]),
                                                        checksums=False),
}


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """A store holding both seeds of the request, and the trajectories computed into it."""
    path = tmp_path_factory.mktemp("clean") / "runs.sqlite"
    with RunStore(path) as store:
        trajectories = execute([_request()], SweepOptions(progress=False, store=store))
    return path, trajectories


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_corrupt_run_is_reported_and_recomputed(case: str, clean_store: tuple[Path, list], tmp_path: Path) -> None:
    clean, expected = clean_store
    path = tmp_path / "runs.sqlite"
    shutil.copyfile(clean, path)
    keys = _keys()
    corruption = CORRUPTIONS[case]
    corruption.edit(path, *keys)
    with RunStore(path) as store:
        for index in corruption.runs:
            with pytest.raises(CorruptRunError, match=keys[index]) if corruption.checksums else nullcontext():
                store.load(keys[index])
        with pytest.warns(CorruptRunWarning) as caught:
            again = execute([_request()], SweepOptions(progress=False, store=store))
        warned = [str(warning.message) for warning in caught if issubclass(warning.category, CorruptRunWarning)]
        assert len(warned) == len(corruption.runs)
        for index, message in zip(corruption.runs, warned):
            assert keys[index] in message and str(path) in message and "recomputing" in message
        _assert_identical(expected, again)  # recomputed: a corrupt row would give other values or fail
        with warnings.catch_warnings():
            warnings.simplefilter("error", CorruptRunWarning)  # healed: read back with no warning
            healed = execute([_request()], SweepOptions(progress=False, store=store))
        assert all(store.load(key) is not None for key in keys)
    _assert_identical(expected, healed)


def test_verify_recomputes_an_edited_store_and_keeps_its_verdict(tmp_path: Path) -> None:
    # The headline case: editing a stored array used to change a verdict with exit status 0.
    out, store = tmp_path / "report", tmp_path / "runs.sqlite"
    args = ["verify", "--quick", "--claim", "control.constant-step-rate", "--out", str(out), "--store", str(store),
            "--no-progress"]
    assert main(args) == 0
    clean = json.loads((out / "verdicts.json").read_text())["claims"]
    with RunStore(store) as opened:
        keys = opened.keys()
    for key in keys:  # every trajectory scaled by 10: plausible numbers, another verdict if used
        _edit_records(store, key, lambda data: (np.frombuffer(data) * 10.0).tobytes())
    with pytest.warns(CorruptRunWarning) as caught:
        assert main(args) == 0
    messages = " ".join(str(warning.message) for warning in caught)
    assert all(key in messages for key in keys) and str(store) in messages
    again = json.loads((out / "verdicts.json").read_text())["claims"]
    assert [(c["status"], c["measured"]) for c in again] == [(c["status"], c["measured"]) for c in clean]


@pytest.mark.parametrize("case", ["array dtype changed", "config edited into invalid UTF-8"])
def test_export_refuses_a_corrupt_run_and_leaves_the_output_alone(
    case: str, clean_store: tuple[Path, list], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, table = tmp_path / "runs.sqlite", tmp_path / "table.csv"
    shutil.copyfile(clean_store[0], path)
    table.write_text("previous table\n")
    key = _keys()[1]
    CORRUPTIONS[case].edit(path, key, _keys()[0])
    assert main(["export", str(path), str(table)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedbound: error: ") and key in err and str(path) in err
    assert table.read_text() == "previous table\n" and list(_snapshot(tmp_path)) == ["runs.sqlite", "table.csv"]


# ---------------------------------------------------------------- files that are not fedbound stores
def _foreign_db(path: Path) -> None:
    _sql(path, "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('ada')")


def _older_store(path: Path) -> None:
    _sql(path, "CREATE TABLE runs (key TEXT PRIMARY KEY, config TEXT NOT NULL, meta TEXT NOT NULL)",
         "PRAGMA user_version=1")


def _truncated_store(path: Path) -> None:
    with RunStore(path) as store:
        for i in range(40):
            store.put(f"run{i}", {"i": i}, {"values": np.arange(500, dtype=np.float64) * i}, {"seconds": 0.1})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


NOT_STORES: dict[str, tuple[Callable[[Path], None], str]] = {
    "foreign sqlite database": (_foreign_db, "is a SQLite database but not a fedbound run store"),
    "empty file": (lambda p: p.write_bytes(b""), "is an empty file"),
    "text file": (lambda p: p.write_text("seed,gap\n0,1.5\n"), "is not a SQLite database"),
    "header only": (lambda p: p.write_bytes(b"SQLite format 3\x00\x10\x00"), "is a truncated SQLite file"),
    "truncated store": (_truncated_store, "is a damaged fedbound run store"),
    "older fedbound store": (_older_store, "looks like a run store of an older fedbound"),
}


def _snapshot(directory: Path) -> dict[str, bytes]:
    """The files of ``directory`` and their bytes, except the side files SQLite keeps beside a WAL
    database it reads (``-wal``, ``-shm``: present whenever a store is open, never the store itself)."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())
            if not path.name.endswith(("-wal", "-shm"))}


@pytest.mark.parametrize("case", list(NOT_STORES))
def test_a_file_that_is_not_a_fedbound_store_is_refused_and_left_unchanged(case: str, tmp_path: Path) -> None:
    make, reason = NOT_STORES[case]
    path = tmp_path / "runs.sqlite"
    make(path)
    before = _snapshot(tmp_path)
    for readonly in (False, True):
        with pytest.raises(StoreError, match=f"^--store: {re.escape(repr(str(path)))} {reason}") as raised:
            RunStore(path, readonly=readonly, field="--store")
        assert not isinstance(raised.value, CorruptRunError)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("case", list(NOT_STORES))
def test_export_of_a_file_that_is_not_a_store_is_one_error_and_changes_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, reason = NOT_STORES[case]
    path = tmp_path / "foreign.db"
    make(path)
    before = _snapshot(tmp_path)
    assert main(["export", str(path), str(tmp_path / "table.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fedbound: error: store: '{path}' {reason}") and err.count("\n") == 1
    assert _snapshot(tmp_path) == before  # no table written, no table added to the database
    if case != "truncated store":  # refused from its header alone: SQLite never opened it
        assert [p.name for p in tmp_path.iterdir()] == ["foreign.db"]


def test_verify_names_its_store_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "mine.db"
    _foreign_db(store)
    before = store.read_bytes()
    args = ["verify", "--quick", "--claim", "control.constant-step-rate", "--out", str(tmp_path / "report"),
            "--store", str(store), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"fedbound: error: --store: '{store}' is a SQLite database but not a fedbound run store" in err
    assert store.read_bytes() == before


def test_a_directory_or_fifo_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StoreError, match=f"^--store: '{tmp_path}' is a directory"):
        RunStore(tmp_path, field="--store")
    assert main(["export", str(tmp_path), str(tmp_path / "table.csv")]) == 2
    assert f"fedbound: error: store: '{tmp_path}' is a directory" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it to read the header would block
    with pytest.raises(StoreError, match="is not a regular file"):
        RunStore(fifo, field="--store")


def test_a_missing_path_is_a_new_store_but_nothing_to_export(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "new.sqlite"
    assert main(["export", str(path), str(tmp_path / "table.csv")]) == 2
    assert f"fedbound: error: store: no run store at '{path}'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    with RunStore(path) as store:
        assert len(store) == 0
    with RunStore(path, readonly=True) as store:  # created whole: a fedbound store from the start
        assert len(store) == 0
    with pytest.raises(StoreError, match="cannot create a run store"):
        RunStore(tmp_path / "missing-dir" / "runs.sqlite")


def test_export_refuses_the_store_itself_as_output(clean_store: tuple[Path, list], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.sqlite"
    shutil.copyfile(clean_store[0], path)
    (tmp_path / "link.csv").symlink_to(path)
    before = path.read_bytes()
    for output in (str(path), str(tmp_path / "." / "runs.sqlite"), str(tmp_path / "link.csv")):
        assert main(["export", str(path), output]) == 2
        assert "fedbound: error: table: " in capsys.readouterr().err
    assert path.read_bytes() == before
    with RunStore(path) as store:
        assert set(store.keys()) == set(_keys())
    assert main(["export", str(path), str(tmp_path / "table.csv")]) == 0


def test_export_is_read_only(clean_store: tuple[Path, list], tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    shutil.copyfile(clean_store[0], path)
    path.chmod(0o444)
    before = path.read_bytes()
    assert main(["export", str(path), str(tmp_path / "table.csv")]) == 0
    assert path.read_bytes() == before
    with RunStore(path, readonly=True) as store, pytest.raises(StoreError, match="is read-only here"):
        store.delete(_keys()[0])


# ---------------------------------------------------------------- per-seed keys and metadata
def _stored_bytes(path: Path) -> int:
    """Bytes of every stored config, metadata and array."""
    db = sqlite3.connect(path)
    try:
        runs = db.execute("SELECT SUM(LENGTH(config) + LENGTH(meta)) FROM runs").fetchone()[0]
        return runs + db.execute("SELECT SUM(LENGTH(data)) FROM arrays").fetchone()[0]
    finally:
        db.close()


def _finished(store: RunStore) -> dict[str, str]:
    return {key: store.load(key).meta["finished"] for key in store.keys()}


def _two_then_four_seeds(
    store: RunStore, request: Callable[[tuple[int, ...]], RunRequest]
) -> tuple[Any, Any, dict[str, str], dict[str, str]]:
    """Run ``request((0, 1))`` then ``request((0, 1, 2, 3))`` on ``store``: both results and the
    finish times of the stored seeds after each."""
    (two,) = execute([request((0, 1))], SweepOptions(store=store, progress=False))
    before = _finished(store)
    (four,) = execute([request((0, 1, 2, 3))], SweepOptions(store=store, progress=False))
    return two, four, before, _finished(store)


def test_more_block_cyclic_seeds_reuse_the_stored_ones(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        two, four, before, after = _two_then_four_seeds(store, _block_cyclic_request)
        assert len(before) == 2 and len(after) == 4
        assert {key: after[key] for key in before} == before  # the two stored seeds were not recomputed
        key = seed_task(_block_cyclic_request((0, 1, 2, 3)), 2, "numba").key
        stored = store.load(key)
        assert stored.config["algorithm"]["seeds"] == [2] and stored.config["seed"] == 2
        assert "seconds" not in stored.result and stored.meta["seconds"] > 0  # wall clock is metadata
    with RunStore(tmp_path / "fresh.sqlite") as store:
        (fresh,) = execute([_block_cyclic_request((0, 1, 2, 3))], SweepOptions(store=store, progress=False))
    np.testing.assert_array_equal(four.iterates[:2], two.iterates)
    np.testing.assert_array_equal(four.iterates, fresh.iterates)
    np.testing.assert_array_equal(four.extras.predictors, fresh.extras.predictors)


def test_more_fedavg_seeds_reuse_the_stored_ones(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        two, four, before, after = _two_then_four_seeds(store, _request)
    assert len(before) == 2 and len(after) == 4 and {key: after[key] for key in before} == before
    np.testing.assert_array_equal(four.iterates[:2], two.iterates)


@pytest.mark.parametrize("kind", ["fedavg", "block_cyclic"])
def test_stored_size_grows_linearly_in_the_seeds(kind: str, tmp_path: Path) -> None:
    sizes = []
    for seeds in (2, 8):
        path = tmp_path / f"{kind}-{seeds}.sqlite"
        with RunStore(path) as store:
            if kind == "fedavg":
                execute([_request(tuple(range(seeds)))], SweepOptions(store=store, progress=False))
            else:
                execute([_block_cyclic_request(tuple(range(seeds)))], SweepOptions(store=store, progress=False))
        sizes.append(_stored_bytes(path))
    # The same bytes per seed (up to the digits of the recorded seconds in the metadata).
    assert sizes[1] == pytest.approx(4 * sizes[0], rel=0.01)


def test_export_emits_results_only(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    with RunStore(tmp_path / "runs.sqlite") as store:
        execute([_block_cyclic_request((0, 1))], SweepOptions(store=store, progress=False))
        execute([_request((0,))], SweepOptions(store=store, progress=False))
    assert main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "table.csv")]) == 0
    metrics = set(pd.read_csv(tmp_path / "table.csv")["metric"])
    assert metrics == {"gap", "dist_sq", "loss", "grad_norm_sq", "block_gap", "predictor_gap", "minimax_gap"}


def test_stored_record_steps_are_the_runs_own_when_the_config_leaves_them_to_the_problem(tmp_path: Path) -> None:
    # FedAvg-cyclic's empty record_rounds means "the end of every block visit", resolved against the
    # problem (M = 3 blocks, E = 2 rounds of I = 3 steps, C = 2 cycles: rounds 2, 4, ..., 12).
    spec = problem_spec("block_cyclic_quadratic", n_clients=4, n_blocks=3, dim=5, samples_per_client=7, seed=0)
    config = FedAvgCyclicConfig(cycles=2, rounds_per_block=2, local_steps=3, step_size=StepSize.constant(0.05))
    with RunStore(tmp_path / "runs.sqlite") as store:
        (result,) = execute([RunRequest(RunConfig(spec, config))], SweepOptions(store=store, progress=False))
        (key,) = store.keys()
        assert store.load(key).config["record_steps"] == [3 * r for r in range(2, 13, 2)]
    assert result.steps.tolist() == [3 * r for r in range(2, 13, 2)]
