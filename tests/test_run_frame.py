"""RunResult.to_frame: the tidy rows of one run, under the column names of ``fedbound export``'s table
(``convergence.run_metrics.MetricRow``), each row the value of the result's own arrays."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from convergence import FedAvgConfig, RunConfig, StepSize, run
from convergence.run_metrics import MetricRow
from problems import problem_spec

pd = pytest.importorskip("pandas")


def test_to_frame_rows_are_the_results_arrays_under_the_export_column_names() -> None:
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    config = FedAvgConfig(5, 12, StepSize.constant(0.05), 0, 1.0, (4, 12), (0, 3))
    result = run(RunConfig(spec, config))
    frame = result.to_frame()
    export_columns = {field.name for field in dataclasses.fields(MetricRow)}
    assert list(frame.columns) == ["run_id", "seed", "round", "local_step", "metric", "value"]
    assert set(frame.columns) <= export_columns
    # 2 metrics x 2 seeds x 2 record points
    assert len(frame) == 8
    for s, seed in enumerate((0, 3)):
        for p, round_ in enumerate((4, 12)):
            for metric, values in (("gap", result.gap), ("dist_sq", result.dist_sq)):
                row = frame[(frame.seed == seed) & (frame["round"] == round_) & (frame.metric == metric)]
                assert len(row) == 1
                assert int(row.local_step.iloc[0]) == round_ * 5  # r E local steps, E = 5
                assert row.value.iloc[0] == values[s, p]
    assert np.all(frame.run_id == result.run_id)
