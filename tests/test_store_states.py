"""Run store states that are not damage: busy, read-only, a full disk; and damage that only a schema
check or a value check finds (a dropped table, a run whose values its config cannot give).

Each state is made for real, not mocked: "busy" is another process holding the store in SQLite's
exclusive locking mode with a write pending; "read-only" is a store file and folder without write
permission, read by a process that cannot override permissions (as root, a child process whose
capability bounding set lacks CAP_DAC_OVERRIDE, through ``setpriv``; otherwise the permissions
alone); a "full disk" is SQLite's own SQLITE_FULL, raised by a connection whose database may not
grow past a page limit (``PRAGMA max_page_count``), exactly as on a full file system. Every state
must be one StoreError line naming the store, saying what it is, never calling a store that passes
its checks damaged or advising to delete it, with exit status 2 at the CLI; a read-only store is
read as it is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import convergence.store_file as store_file
from convergence import CorruptRunError, CorruptRunWarning, RunStore, StoreError, SweepOptions, execute
from reports.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLAIM = ["--quick", "--seeds", "2", "--jobs", "1", "--claim", "control.constant-step-rate", "--no-progress"]


def _store(path: Path) -> Path:
    """A small healthy store with two runs."""
    with RunStore(path) as store:
        for key in ("a", "b"):
            store.put(key, {"key": key}, {"values": np.arange(4.0)}, {"seconds": 0.1})
    return path


def _one_line(err: str) -> str:
    assert err.startswith("fedbound: error: ") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------- busy: another process holds the lock
@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A healthy store that another process holds in exclusive locking mode, a write pending; waits cut to 0.5 s."""
    path = _store(tmp_path / "runs.sqlite")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sqlite3, sys, time
        db = sqlite3.connect({str(path)!r}, isolation_level=None)
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("UPDATE runs SET meta = meta")
        print("held", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(store_file, "BUSY_TIMEOUT_S", 0.5)
        yield path
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.mark.parametrize("readonly", [False, True])
def test_a_store_locked_by_another_process_is_busy_not_damaged(held: Path, readonly: bool) -> None:
    with pytest.raises(StoreError) as raised:
        RunStore(held, readonly=readonly, field="--store")
    message = str(raised.value)
    assert message.startswith(f"--store: run store {str(held)!r} is busy: another process holds it locked")
    assert "not damaged" in message and "damaged fedbound" not in message and "delete" not in message


def test_cli_on_a_busy_store_is_one_line_and_exit_status_two(held: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(held), str(tmp_path / "table.csv")]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "is busy" in err and "delete" not in err
    assert not (tmp_path / "table.csv").exists()


# ---------------------------------------------------------------- read-only file, folder or mount
_READ_ONLY = """
import os, sys
from pathlib import Path
from convergence import RunStore, StoreError
from reports.cli import main

store, table = Path(sys.argv[1]), Path(sys.argv[2])
try:  # the simulation is real: this process cannot write there
    (store.parent / "probe").write_text("x")
    print("WRITABLE")
except PermissionError:
    pass
with RunStore(store, readonly=True, field="STORE") as opened:
    print("read", sorted(opened.keys()), opened.load("a").result["values"].tolist())
try:
    RunStore(store, field="--store")
    print("OPENED FOR WRITING")
except StoreError as exc:
    print("writer:", exc)
print("export", main(["export", str(store), str(table)]))
"""


def _without_permission_override() -> list[str]:
    """The command prefix that runs a child process which cannot override file permissions."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a folder read-only to a child process")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_a_read_only_store_is_read_as_it_is_and_refused_for_writing(tmp_path: Path) -> None:
    folder, out = tmp_path / "readonly", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    store = _store(folder / "runs.sqlite")  # closed: no write-ahead log beside it
    script = tmp_path / "read_only.py"
    script.write_text(_READ_ONLY)
    store.chmod(0o444)
    folder.chmod(0o555)
    try:
        done = subprocess.run([*_without_permission_override(), sys.executable, str(script), str(store),
                               str(out / "table.csv")], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        folder.chmod(0o755)
        store.chmod(0o644)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert "WRITABLE" not in lines and "OPENED FOR WRITING" not in lines
    assert "read ['a', 'b'] [0.0, 1.0, 2.0, 3.0]" in lines  # SQLite's immutable URI: WAL cannot open it here
    writer = next(line for line in lines if line.startswith("writer: "))
    assert f"--store: run store {str(store)!r} is read-only here" in writer
    assert "damaged" not in writer and "delete" not in writer
    assert "export 0" in lines and "wrote 0 rows of 0 run(s)" in done.stdout  # its entries are no engine runs
    assert (out / "table.csv").read_text().startswith("claim,run_id,")
    assert sorted(p.name for p in folder.iterdir()) == ["runs.sqlite"]  # nothing written beside it


# ---------------------------------------------------------------- a full disk
def _disk_of(pages: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every SQLite database opened from now on full once it reaches ``pages`` pages (SQLITE_FULL,
    "database or disk is full", raised by SQLite as on a full file system)."""
    connect = sqlite3.connect

    def limited(*args, **kwargs):
        db = connect(*args, **kwargs)
        db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    monkeypatch.setattr(sqlite3, "connect", limited)


_EXPERIMENT = """
seeds = 2
record_rounds = [1, 5, 10]

[problem]
family = "synthetic"
params = {n_clients = 4, n_features = 10, n_classes = 5, l2 = 1.0, seed = 1}

[algorithm]
name = "fedavg"
rounds = 10
step_size = {kind = "constant", eta0 = 0.05}

[grid]
local_steps = [1, 2, 3, 4]

[[checks]]
kind = "rate"
name = "r"
x = "T"
exponent = -1.0
tolerance = 0.5  # the verdict does not matter here; a decay claim needs a tolerance below 1
"""


def test_a_full_disk_names_the_store_keeps_it_intact_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    experiment, full, out = tmp_path / "tiny.toml", tmp_path / "full", tmp_path / "out"
    experiment.write_text(_EXPERIMENT)
    run = ["run", str(experiment), "--jobs", "1", "--no-progress"]
    assert main([*run, "--out", str(full)]) in (0, 1)  # how large the store of the 8 runs grows
    pages = sqlite3.connect(full / "runs.sqlite").execute("PRAGMA page_count").fetchone()[0]
    capsys.readouterr()
    with monkeypatch.context() as patch:
        _disk_of(pages // 2, patch)  # room for some runs, not all
        assert main([*run, "--out", str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    store = out / "runs.sqlite"
    assert "--store: disk full while writing run " in err and f"in run store {str(store)!r}" in err
    assert "the store is intact" in err and "resumes" in err and "delete" not in err
    with RunStore(store, readonly=True) as opened:
        kept = len(opened)
        assert all(opened.load(key) is not None for key in opened.keys())  # every stored run passes its checks
    assert 0 < kept < 8
    assert main([*run, "--out", str(out)]) in (0, 1)
    assert f"{kept} run(s) reused from the store, {8 - kept} computed" in capsys.readouterr().out


# ---------------------------------------------------------------- damage only a schema check finds
def test_a_store_whose_arrays_table_was_dropped_is_damaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _store(tmp_path / "runs.sqlite")
    db = sqlite3.connect(path)
    db.execute("DROP TABLE arrays")
    db.commit()
    db.close()
    for readonly in (False, True):
        with pytest.raises(StoreError, match=f"^--store: {re.escape(repr(str(path)))} is a damaged fedbound run "
                                             "store \\(its table 'arrays' is missing\\)"):
            RunStore(path, readonly=readonly, field="--store")
    assert main(["export", str(path), str(tmp_path / "table.csv")]) == 2
    assert "is a damaged fedbound run store (its table 'arrays' is missing)" in _one_line(capsys.readouterr().err)


# ---------------------------------------------------------------- values a run cannot have
def test_nan_predictors_with_valid_checksums_are_recomputed_or_refused_read_only(tmp_path: Path) -> None:
    from test_store_integrity import _block_cyclic_request

    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        (clean,) = execute([_block_cyclic_request((0,))], SweepOptions(progress=False, store=store))
        (key,) = store.keys()
        run = store.load(key)
        store.put(key, run.config, {**run.result, "predictors": np.full_like(run.result["predictors"], np.nan)},
                  run.meta)  # through the store's API: every checksum valid
    with RunStore(path, readonly=True, field="STORE") as store, pytest.raises(CorruptRunError) as raised:
        execute([_block_cyclic_request((0,))], SweepOptions(progress=False, store=store))
    assert raised.value.key == key and str(path) in str(raised.value) and "'predictors'" in str(raised.value)
    with RunStore(path) as store, pytest.warns(CorruptRunWarning, match=f"run {key} is corrupt: .*'predictors'"):
        (again,) = execute([_block_cyclic_request((0,))], SweepOptions(progress=False, store=store))
    np.testing.assert_array_equal(again.extras.predictors, clean.extras.predictors)


def test_report_of_a_run_whose_config_is_not_json_names_the_store_and_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_store_integrity import _rewritten

    out = tmp_path / "first"
    assert main(["verify", *CLAIM, "--out", str(out)]) == 0
    store = out / "runs.sqlite"
    with RunStore(store) as opened:
        key = opened.keys()[0]
    _rewritten(store, key, config="not json")
    capsys.readouterr()
    assert main(["report", str(store), "--out", str(tmp_path / "again"), "--no-progress"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"run store {str(store)!r}: run {key} is corrupt: its config is not JSON" in err
    with warnings.catch_warnings(record=True) as caught:  # a writable store recomputes it
        warnings.simplefilter("always")
        assert main(["verify", *CLAIM, "--out", str(out)]) == 0
    assert any(key in str(w.message) and "recomputing" in str(w.message) for w in caught)
    assert json.loads((out / "verdicts.json").read_text())["claims"]
