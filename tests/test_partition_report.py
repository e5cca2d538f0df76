"""The partition report: sizes and label histograms on a hand-sized example, the heterogeneity
measures of Li et al.'s softmax problem on the bundled digits (label skew raises Gamma and sigma_G^2
far above the IID control's), their identities, the JSON and Markdown forms, and `fedbound partition`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from problems import PartitionRecipe, ProblemError, load_images, summarize_partition
from proofs_check import partition_report
from reports.cli import main


@pytest.fixture(autouse=True)
def data_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "data"))  # from_arrays writes here, not to the user's cache


@pytest.fixture(scope="module")
def digits():
    return load_images("digits", "train")


def test_summary_of_a_hand_sized_partition() -> None:
    # labels 0 0 1 2 2 to clients 0 1 1 0 0: client 0 holds one 0 and two 2s, client 1 one 0 and one 1
    summary = summarize_partition(np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1, 0, 0]), 3, dataset="d", recipe="r")
    np.testing.assert_array_equal(summary.label_histogram, [[1, 0, 2], [1, 1, 0]])
    np.testing.assert_array_equal(summary.sizes, [3, 2])
    np.testing.assert_allclose(summary.weights, [0.6, 0.4])
    np.testing.assert_array_equal(summary.labels_per_client, [2, 2])
    assert summary.to_json()["label_histogram"] == [[1, 0, 2], [1, 1, 0]]
    assert "| 0 | 3 | 1 | 0 | 2 |" in summary.to_markdown()
    with pytest.raises(ProblemError, match=r"^client_of_row: client 1 has no rows"):
        summarize_partition(np.array([0, 1]), np.array([0, 2]), 2, dataset="d", recipe="r")
    with pytest.raises(ProblemError, match=r"^labels: must lie in \[0, 2\)"):
        summarize_partition(np.array([0, 2]), np.array([0, 1]), 2, dataset="d", recipe="r")


def test_label_skew_raises_gamma_and_dissimilarity_above_the_iid_control(digits) -> None:
    shards = partition_report(digits, PartitionRecipe("shards", 10, 0))
    iid = partition_report(digits, PartitionRecipe("iid", 10, 0))
    assert np.all(shards.summary.labels_per_client == 2) and shards.summary.sizes.sum() == digits.n
    # Gamma >= 0 always; two digits per client leave each local optimum far from w* (measured on this data:
    # 0.081 vs 0.048: IID clients of 144 rows in d = 640 still overfit their own rows, so their Gamma is not 0)
    assert shards.gamma.value > 1.4 * iid.gamma.value > 0
    # clients' gradients disagree far more (measured: 4.8 vs 0.075)
    assert shards.sigma_G_sq_p.value > 20 * iid.sigma_G_sq_p.value
    for report in (shards, iid):
        # sum_k p_k ||g_k||^2 = ||g||^2 + sum_k p_k ||g_k - g||^2 at every point: G^2(B^2 = 1) = sigma_G^2 (p)
        assert report.bgd[0].B_sq == 1.0
        assert report.bgd[0].G_sq == pytest.approx(report.sigma_G_sq_p.value, rel=1e-9)
        assert [p.G_sq for p in report.bgd] == sorted((p.G_sq for p in report.bgd), reverse=True)
        assert report.gamma.exact and report.sigma_G_sq_uniform.exact


def test_json_and_markdown_forms(digits) -> None:
    report = partition_report(digits, PartitionRecipe("dirichlet", 5, 1, alpha=0.5))
    data = json.loads(json.dumps(report.to_json()))
    assert data["partition"]["recipe"] == "dirichlet(alpha=0.5, min_size=10), N=5, seed 1"
    assert len(data["partition"]["label_histogram"]) == 5 and sum(data["partition"]["sizes"]) == digits.n
    assert data["gamma"]["value"] == report.gamma.value and data["l2"] == 1e-4
    assert [p["B_sq"] for p in data["bgd"]] == [1.0, 2.0, 4.0]
    text = report.to_markdown()
    assert text.startswith("# Partition report: digits (train, 1438 images 8x8x1")
    assert f"| Gamma = F* - sum_k p_k F_k* (Li et al. 2020) | {report.gamma.value:.6g} |" in text


def test_cli_partition_prints_json_and_names_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["partition", "--recipe", "powerlaw", "--clients", "6", "--seed", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["partition"]["recipe"] == "powerlaw(shape=2.3, min_size=10), N=6, seed 2"
    assert data["partition"]["dataset"].startswith("digits (train")
    assert main(["partition", "--recipe", "shards", "--alpha", "0.1"]) == 2
    assert "alpha: the shards recipe does not take it" in capsys.readouterr().err
    assert main(["partition", "mnist", "--data-dir", "nowhere-fedbound-test"]) == 2
    assert "name: no mnist files found" in capsys.readouterr().err
