"""``fedbound report STORE``: a report rebuilt from the runs of a run store, computing none.

``verify --store`` records in the store which verification it holds (mode, seeds, claims with
their parameters, those run with --power); ``report`` evaluates them again with the store opened
read-only and must give the same verdicts, number for number. A run the store does not hold, a
store that holds no verification and a claim the stored verification did not run are clear errors,
never a silent recomputation. Also: the README's command synopsis matches the parser."""

from __future__ import annotations

import dataclasses
import contextlib
import io
import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from convergence import SweepOptions
from convergence import MissingRunError, RunStore, StoreError, SweepTask, run_sweep
from proofs_check import VerifySettings
from reports.cli import build_parser, main
from reports.verification import RECORD_NAME, VerificationRecord, read_verification, record_verification
from reports.verify import rebuild_report

README = Path(__file__).resolve().parent.parent / "README.md"
CONTROL = "control.constant-step-rate"
SHORT = "control.constant-step-rate[rounds=20000]"
SHORTER = "control.constant-step-rate[rounds=10000]"


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick verification in two commands sharing one store: the control and a shorter run of it with
    --power, then a still shorter run without (merged: same mode and seeds)."""
    root = tmp_path_factory.mktemp("verified")
    base = ["verify", "--quick", "--seeds", "2", "--no-progress", "--out", str(root / "first"),
            "--store", str(root / "runs.sqlite")]
    assert main([*base, "--claim", CONTROL, "--claim", SHORT, "--power"]) == 0
    assert main([*base, "--claim", SHORTER]) == 0
    return root


def _claims(out: Path) -> list[dict]:
    """The claim objects of a report, each grid without its count of reused runs (a rebuild reuses them all)."""
    claims = json.loads((out / "verdicts.json").read_text())["claims"]
    for claim in claims:
        for sweep in claim["grid"]:
            sweep.pop("reused")
    return claims


def test_the_store_records_the_verification_it_holds(verified: Path) -> None:
    with RunStore(verified / "runs.sqlite", readonly=True) as store:
        record = read_verification(store)
        keys = set(store.keys())
    assert dataclasses.replace(record, runs={}) == VerificationRecord("quick", 2, (CONTROL, SHORT, SHORTER),
                                                                      (CONTROL, SHORT))
    assert set(record.runs) == {CONTROL, SHORT, SHORTER}  # the runs each claim read, for `fedbound export`
    assert all(record.runs.values()) and set().union(*record.runs.values()) <= keys
    assert set(record.runs[SHORT]).isdisjoint(record.runs[SHORTER])  # other rounds, other runs


def test_report_rebuilds_the_same_verdicts_computing_no_run(verified: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = verified / "runs.sqlite"
    with RunStore(store, readonly=True) as opened:
        keys = sorted(opened.keys())
    out = verified / "again"
    assert main(["report", str(store), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"\d+ run\(s\) reused from the store, 0 computed", printed)
    assert _claims(out) == _claims(verified / "first")  # every number, status, hypothesis, figure name and grid
    first = json.loads((verified / "first" / "verdicts.json").read_text())
    again = json.loads((out / "verdicts.json").read_text())
    assert again["power"] == first["power"] and len(again["power"]) == 4  # the power rows of the two controls
    assert again["meta"]["mode"] == "quick" and again["meta"]["seeds"] == 2
    assert "without computing any run" in again["meta"]["rebuilt"]
    assert all((out / f["png"]).is_file() for c in again["claims"] for f in c["figures"])
    with RunStore(store, readonly=True) as opened:
        assert sorted(opened.keys()) == keys  # nothing was written
    # a subset, with the parameters as the verification ran them
    subset = rebuild_report(store, verified / "subset", claims=[f" {SHORT} "], progress=False)
    assert [v.claim_id for v in subset.verdicts] == [SHORT] and subset.meta["cache"].endswith(" 0 computed")


def test_a_missing_run_is_an_error_naming_the_claim_and_the_command(verified: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = verified / "missing.sqlite"
    with sqlite3.connect(verified / "runs.sqlite") as source, sqlite3.connect(store) as copy:
        source.backup(copy)  # the store's WAL included
    with RunStore(store) as opened:
        keys = opened.keys()
        for key in keys:  # the record stays: the store still says which verification it holds
            opened.delete(key)
    out = verified / "missing-report"
    assert main(["report", str(store), "--out", str(out), "--no-progress", "--claim", SHORT]) == 2
    err = capsys.readouterr().err.strip()
    match = re.fullmatch(
        rf"fedbound: error: run (\S+) of claim {re.escape(SHORT)} is not in {re.escape(str(store))} \(1 run\(s\) of "
        rf"that sweep are missing; fedbound report computes none\); run `fedbound verify --store "
        rf"{re.escape(str(store))} --quick --seeds 2 --claim '{re.escape(SHORT)}'` first", err)
    assert match and match.group(1) in keys, err
    assert not (out / "verdicts.json").exists()
    with RunStore(store, readonly=True) as opened:
        assert len(opened) == 0  # nothing recomputed


def test_a_store_without_a_verification_is_reported_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "sweeps.sqlite"
    with RunStore(store) as opened:  # a store filled by a sweep of one's own: runs, but no verification
        run_sweep([SweepTask("a", _square, (2.0,), {"x": 2.0})], SweepOptions(executor="serial", store=opened, progress=False))
    assert main(["report", str(store), "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"fedbound: error: STORE: '{store}' holds no verification record (it was not filled by `fedbound verify "
        f"--store` or `fedbound run`, or it was by an older fedbound); `fedbound verify --store {store}` runs every "
        f"shipped claim into it, `fedbound run EXPERIMENT.toml --store {store}` an experiment of yours")
    assert main(["report", str(tmp_path / "absent.sqlite"), "--out", str(tmp_path / "r")]) == 2
    assert "STORE: no run store at" in capsys.readouterr().err
    assert not (tmp_path / "absent.sqlite").exists()


def test_report_refuses_claims_and_folders_of_another_verification(verified: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = str(verified / "runs.sqlite")
    assert main(["report", store, "--out", str(verified / "x"), "--claim", "lemmas"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"fedbound: error: --claim: lemmas is not part of the verification '{store}' holds: {CONTROL}, {SHORT}, "
        f"{SHORTER} (quick mode, 2 seed(s); --power: {CONTROL}, {SHORT})")
    # a folder that holds a report of another verification (3 seeds) is not mixed with this one
    other = verified / "other"
    assert main(["verify", "--quick", "--seeds", "3", "--no-progress", "--out", str(other), "--claim",
                 "control.constant-step-rate[rounds=5000]"]) == 0
    before = (other / "verdicts.json").read_bytes()
    assert main(["report", store, "--out", str(other), "--no-progress"]) == 2
    assert "holds a report of control.constant-step-rate[rounds=5000] made in quick mode with 3 seed(s)" in \
        capsys.readouterr().err
    assert (other / "verdicts.json").read_bytes() == before


def test_the_record_merges_same_settings_and_is_replaced_by_others(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert read_verification(store) is None
        record_verification(store, "quick", 2, ["a", "b"], ["a"])
        assert record_verification(store, "quick", 2, ["b", "c"]) == VerificationRecord("quick", 2, ("a", "b", "c"), ("a",))
        assert record_verification(store, "quick", 2, ["a"]) == VerificationRecord("quick", 2, ("b", "c", "a"))
        assert record_verification(store, "default", 2, ["d"], ["d"]) == VerificationRecord("default", 2, ("d",), ("d",))
        assert read_verification(store) == VerificationRecord("default", 2, ("d",), ("d",))
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    db.execute("UPDATE records SET value = replace(value, 'default', 'full') WHERE name = ?", (RECORD_NAME,))
    db.commit()
    db.close()
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        with pytest.raises(StoreError, match="record 'verification' is corrupt: it fails its checksum"):
            read_verification(store)


def test_the_runs_of_each_claim_merge_with_the_claims(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        record_verification(store, "default", 2, ["e"], runs={"e": ("k1", "k2")})
        assert record_verification(store, "default", 2, ["f"], runs={"f": ("k2",)}).runs == {"e": ("k1", "k2"),
                                                                                             "f": ("k2",)}
        assert record_verification(store, "default", 2, ["e"]).runs == {"f": ("k2",)}  # e run again: its keys now
        assert record_verification(store, "quick", 2, ["g"], runs={"g": ("k3",)}).runs == {"g": ("k3",)}


@pytest.mark.parametrize("data, field", [
    ({"kind": "something else"}, "kind"),
    ({"kind": "fedbound verification", "version": 2}, "version"),
    ({"kind": "fedbound verification", "version": 1, "mode": "slow", "seeds": 2, "claims": ["a"], "power": []}, "mode"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick", "seeds": 0, "claims": ["a"], "power": []}, "seeds"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick", "seeds": 2, "claims": [], "power": []}, "claims"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick", "seeds": 2, "claims": ["a"], "power": ["b"]},
     "power"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick"}, "verification record"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick", "seeds": 2, "claims": ["a"], "power": [],
      "runs": {"b": ["k"]}}, "runs"),
    ({"kind": "fedbound verification", "version": 1, "mode": "quick", "seeds": 2, "claims": ["a"], "power": [],
      "runs": {"a": "k"}}, "runs"),
])
def test_a_malformed_record_names_its_field(data: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        VerificationRecord.from_json(data)


def test_a_sweep_over_a_read_only_store_computes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run_sweep([SweepTask("a", _square, (2.0,), {"x": 2.0})], SweepOptions(executor="serial", store=store, progress=False))
    with RunStore(path, readonly=True) as store:
        results = run_sweep([SweepTask("a", _refuse, (2.0,), {"x": 2.0})], SweepOptions(executor="serial", store=store, progress=False))
        assert results["a"]["y"] == 4.0 and results.cached == {"a"}  # read back, not recomputed
        tasks = [SweepTask(k, _refuse, (3.0,), {"x": 3.0, "k": k}) for k in ("a", "b", "c")]
        with pytest.raises(MissingRunError, match=r"^run b is not in the run store .* \(2 run\(s\) of this sweep are "
                                                  r"missing") as error:
            run_sweep(tasks[1:], SweepOptions(executor="serial", store=store, progress=False))
        assert (error.value.key, error.value.missing) == ("b", 2)
        assert len(store) == 1
    with pytest.raises(ValueError, match="^store_readonly: "):
        VerifySettings(store=None, store_readonly=True)


def _square(x: float) -> dict[str, np.ndarray]:
    return {"y": np.array(x * x)}


def _refuse(x: float) -> dict[str, np.ndarray]:
    raise AssertionError("a read-only sweep computed a run")


# ------------------------------------------------------------------------- the README's synopsis
def _synopsis() -> dict[str, set[str]]:
    """Subcommand -> the options the README's command synopsis gives it."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fedbound [--debug]"))
    block = lines[start: lines.index("```", start)]
    commands: dict[str, set[str]] = {}
    current = ""
    for line in block:
        line = line.split("#")[0]
        if line.startswith("fedbound"):
            words = [t for t in line.split()[1:] if not t.startswith(("[", "-"))]
            current = words[0]
            if len(words) > 1 and words[1].isalpha() and words[1].islower():  # a subcommand: `data fetch`
                current = f"{current} {words[1]}"
        commands.setdefault(current, set()).update(re.findall(r"--[a-z][a-z-]*", line))
    return commands


def test_the_readme_synopsis_matches_the_parser() -> None:
    # the usage lines the parser prints: "usage: fedbound [-h] [--debug] {verify,...} ..." and each command's
    usage = build_parser().format_usage()
    commands = re.search(r"\{([a-z,]+)\}", usage).group(1).split(",")
    synopsis = _synopsis()
    assert {name.split()[0] for name in synopsis} == set(commands)  # every command, and only those
    for name, options in synopsis.items():
        with pytest.raises(SystemExit), contextlib.redirect_stdout(io.StringIO()) as printed:
            main([*name.split(), "--help"])
        own = printed.getvalue().split("\n\n")[0]  # the usage paragraph: options only, no description
        assert options - {"--debug"} == set(re.findall(r"--[a-z][a-z-]*", own)) - {"--help"}, name


def test_verify_leaves_a_store_complete_without_its_write_ahead_log(tmp_path: Path) -> None:
    # The CLI closes the store when it is done: SQLite folds the WAL back into the database, so
    # the store file alone holds every run (a copy of just runs.sqlite is complete).
    out = tmp_path / "report"
    assert main(["verify", "--quick", "--claim", "control.constant-step-rate", "--out", str(out), "--no-progress"]) == 0
    assert (out / "runs.sqlite").exists()
    assert not (out / "runs.sqlite-wal").exists()
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes((out / "runs.sqlite").read_bytes())
    with RunStore(copy, readonly=True) as store:
        assert len(store.keys()) >= 1
