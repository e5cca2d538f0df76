"""`fedbound export`: tidy rows of the metrics the claims read (issue 28, "Results as data").

The quadratic case checks the exported gap, distance and gradient norm against closed forms
computed here from the problem's arrays alone (no fedbound optimum or objective): for least squares
F(w) = sum_k p_k [ (1/(2 n_k)) ||X_k w - y_k||^2 + (mu/2) ||w||^2 + c_k ] is quadratic with Hessian
H = sum_k p_k (X_k'X_k / n_k + mu I) and linear term b = sum_k p_k X_k'y_k / n_k, so w* = H^{-1} b,
F(w) - F* = (1/2) (w - w*)' H (w - w*) and grad F(w) = H (w - w*).
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from convergence import (
    DivergenceError, FedAvgConfig, MMPSGDConfig, RunConfig, RunRequest, RunStore, StepSize, StoreError, SweepOptions,
    TableSummary, execute, export_table,
)
from convergence.run_metrics import COLUMNS, MetricRow
from problems import build_problem, problem_spec
from proofs_check import VerifySettings
from proofs_check.experiments import load_experiment
from reports.cli import main
from reports.verification import read_experiment, read_verification
from reports.verify import rebuild_report, run_experiment, verify

ROOT = Path(__file__).resolve().parents[1]
SPEC = problem_spec("random_quadratic", n_clients=3, dim=4, samples_per_client=6, L=2.0, mu=0.5, heterogeneity=1.0,
                    seed=2)


def _quadratic_store(path: Path) -> None:
    """FedAvg on a 3-client least-squares problem, 2 seeds, 4 record points, into a store at ``path``."""
    config = FedAvgConfig(local_steps=3, rounds=6, step_size=StepSize.constant(0.1), batch_size=2,
                          record_rounds=(0, 1, 3, 6), seeds=(0, 1))
    with RunStore(path) as store:
        execute([RunRequest(RunConfig(SPEC, config))], SweepOptions(store=store, progress=False))


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or ()), list(reader)


def _closed_form() -> tuple[np.ndarray, np.ndarray]:
    """(H, w*) of SPEC from its arrays (module docstring)."""
    problem = build_problem(SPEC)
    H = np.zeros((problem.dim, problem.dim))
    b = np.zeros(problem.dim)
    for k in range(problem.n_clients):
        lo, hi = problem.offsets[k], problem.offsets[k + 1]
        X, y = problem.X[lo:hi], problem.y[lo:hi]
        H += problem.weights[k] * (X.T @ X / (hi - lo) + problem.mu * np.eye(problem.dim))
        b += problem.weights[k] * X.T @ y / (hi - lo)
    return H, np.linalg.solve(H, b)


def test_the_table_is_tidy_with_claim_metric_and_value_columns(tmp_path: Path) -> None:
    _quadratic_store(tmp_path / "runs.sqlite")
    assert main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "table.csv")]) == 0
    columns, rows = _read(tmp_path / "table.csv")
    assert tuple(columns) == COLUMNS == tuple(f.name for f in dataclasses.fields(MetricRow))
    assert {"claim", "run_id", "seed", "round", "local_step", "metric", "value"} <= set(columns)
    assert {row["metric"] for row in rows} == {"gap", "dist_sq", "loss", "grad_norm_sq"}  # no coordinates
    assert len(rows) == 2 * 4 * 4  # seeds x record points x metrics
    assert {row["algorithm"] for row in rows} == {"fedavg"} and {row["local_steps"] for row in rows} == {"3"}
    assert {(row["round"], row["local_step"]) for row in rows} == {("0", "0"), ("1", "3"), ("3", "9"), ("6", "18")}
    assert len({row["config_id"] for row in rows}) == 1 and len({row["run_id"] for row in rows}) == 2


def test_the_exported_gap_is_the_closed_form_one(tmp_path: Path) -> None:
    _quadratic_store(tmp_path / "runs.sqlite")
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        export_table(store, tmp_path / "table.csv", iterates=True)
    _, rows = _read(tmp_path / "table.csv")
    H, w_star = _closed_form()
    points: dict[tuple[str, str], dict[str, float]] = {}
    models: dict[tuple[str, str], dict[int, float]] = {}
    for row in rows:
        point = (row["run_id"], row["round"])
        if row["metric"] == "iterate":
            models.setdefault(point, {})[int(row["index"])] = float(row["value"])
        else:
            points.setdefault(point, {})[row["metric"]] = float(row["value"])
    assert len(points) == 8 and models.keys() == points.keys()
    for point, metrics in points.items():
        w = np.array([models[point][i] for i in range(w_star.size)])
        assert metrics["gap"] == pytest.approx(0.5 * (w - w_star) @ H @ (w - w_star), rel=0, abs=1e-12)
        assert metrics["dist_sq"] == pytest.approx(float((w - w_star) @ (w - w_star)), rel=0, abs=1e-12)
        assert metrics["grad_norm_sq"] == pytest.approx(float(np.sum((H @ (w - w_star)) ** 2)), rel=0, abs=1e-12)
    assert max(m["gap"] for m in points.values()) > 0.01  # far enough from w* for the comparison to mean something


def test_iterates_add_the_recorded_coordinates_and_nothing_else(tmp_path: Path) -> None:
    _quadratic_store(tmp_path / "runs.sqlite")
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        plain = export_table(store, tmp_path / "plain.csv")
        with_iterates = export_table(store, tmp_path / "iterates.csv", iterates=True)
        records = {run.key: run.result["records"] for run in store.runs()}
    _, plain_rows = _read(tmp_path / "plain.csv")
    _, rows = _read(tmp_path / "iterates.csv")
    coordinates = [row for row in rows if row["metric"] == "iterate"]
    assert with_iterates.rows - plain.rows == len(coordinates) == 2 * 4 * 4  # seeds x records x d
    assert [row for row in rows if row["metric"] != "iterate"] == plain_rows
    for row in coordinates:
        p = [0, 1, 3, 6].index(int(row["round"]))
        assert float(row["value"]) == records[row["run_id"]][p, int(row["index"])]  # exact


def test_parquet_has_the_same_rows_typed(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    _quadratic_store(tmp_path / "runs.sqlite")
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        assert export_table(store, tmp_path / "t.parquet") == export_table(store, tmp_path / "t.csv")
        assert export_table(store, tmp_path / "t.csv").rows == 32
    parquet, text = pd.read_parquet(tmp_path / "t.parquet"), pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    assert list(parquet.columns) == list(COLUMNS)
    assert parquet["value"].dtype == np.float64 and parquet["seed"].dtype == np.int64
    assert parquet["value"].tolist() == text["value"].tolist()


def test_block_cyclic_runs_have_per_block_gaps(tmp_path: Path) -> None:
    spec = problem_spec("block_cyclic_quadratic", n_clients=4, n_blocks=3, dim=5, samples_per_client=7, seed=0)
    config = MMPSGDConfig(cycles=2, rounds_per_block=2, local_steps=3, step_size=StepSize.inverse_time(0.08, 0.02),
                          batch_size=2, record_rounds=(0, 1, 5, 12), seeds=(0,))
    with RunStore(tmp_path / "runs.sqlite") as store:
        execute([RunRequest(RunConfig(spec, config))], SweepOptions(store=store, progress=False))
        export_table(store, tmp_path / "table.csv")
    _, rows = _read(tmp_path / "table.csv")
    by_metric: dict[str, set[str]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], set()).add(row["index"])
    assert by_metric["block_gap"] == by_metric["predictor_gap"] == {"0", "1", "2"}
    assert by_metric["gap"] == by_metric["minimax_gap"] == {""}


def test_the_claim_column_names_the_claim_that_read_each_run(tmp_path: Path) -> None:
    claim = "control.constant-step-rate[rounds=20000]"
    settings = VerifySettings(seeds=2, quick=True, progress=False, store=str(tmp_path / "runs.sqlite"))
    verify([claim], settings, tmp_path / "report")
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        record = read_verification(store)
        assert record is not None and set(record.runs[claim]) == set(store.keys())
    assert main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "table.csv")]) == 0
    _, rows = _read(tmp_path / "table.csv")
    assert rows and {row["claim"] for row in rows} == {claim} and "gap" in {row["metric"] for row in rows}


def test_an_experiment_store_points_to_fedbound_run(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "fedavg_rate.toml").read_text(encoding="utf-8")
    text = text.replace("seeds = 16", "seeds = 2").replace("rounds = 4000", "rounds = 40")
    text = text[: text.index("[[checks]]")] + '[[checks]]\nkind = "rate"\nname = "r"\nexponent = -1.0\ntolerance = 0.2\n'
    (tmp_path / "small.toml").write_text(text, encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    run_experiment(load_experiment(tmp_path / "small.toml"), tmp_path / "out", store=str(store), progress=False,
                   figures=False)
    with RunStore(store, readonly=True) as opened:
        experiment = read_experiment(opened)
        assert experiment is not None and experiment.name == "fedavg-rate" and set(experiment.runs) == set(opened.keys())
    with pytest.raises(ValueError, match=r"fedbound run .*small\.toml --store") as raised:
        rebuild_report(store, tmp_path / "again", progress=False)
    assert "fedbound verify" not in str(raised.value)
    assert main(["export", str(store), str(tmp_path / "table.csv")]) == 0
    _, rows = _read(tmp_path / "table.csv")
    assert {row["claim"] for row in rows} == {"fedavg-rate"}


def test_a_bad_option_or_format_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _quadratic_store(tmp_path / "runs.sqlite")
    assert main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "table.xlsx")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "format: unknown table format 'xlsx'" in err
    with pytest.raises(SystemExit) as exited:
        main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "table.csv"), "--iterate-all"])
    assert exited.value.code == 2 and "unrecognized arguments: --iterate-all" in capsys.readouterr().err
    assert not (tmp_path / "table.csv").exists()


def test_a_run_that_cannot_be_read_back_is_named(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        store.put("odd", {"problem": {"family": "nope", "params": {}}, "algorithm": {"algorithm": "fedavg"}},
                  {"records": np.zeros((1, 2))}, {})
        with pytest.raises(StoreError, match=r"run odd: cannot be read back as a fedbound run"):
            export_table(store, tmp_path / "table.csv")
    assert not (tmp_path / "table.csv").exists()


def test_a_diverged_run_is_left_out_and_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _quadratic_store(tmp_path / "runs.sqlite")
    blowing_up = FedAvgConfig(local_steps=3, rounds=40, step_size=StepSize.constant(50.0), batch_size=2,
                              record_rounds=(0, 40), seeds=(0,))
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(DivergenceError):  # stored as it finished, refused when its result is built
            execute([RunRequest(RunConfig(SPEC, blowing_up))], SweepOptions(store=store, progress=False))
        assert len(store) == 3
        summary = export_table(store, tmp_path / "table.csv")
    assert summary.rows == 32 and summary.runs == 2 and summary.others == 0
    assert len(summary.diverged) == 1 and "diverged: seed 0, round" in summary.diverged[0]
    assert main(["export", str(tmp_path / "runs.sqlite"), str(tmp_path / "again.csv")]) == 0
    printed = capsys.readouterr().out
    assert "wrote 32 rows of 2 run(s)" in printed and "left out: run " in printed
    assert isinstance(summary, TableSummary)
