"""problems.li_images: Li et al.'s (ICLR 2020) App. D.1 / Table 2 image recipe, on the bundled digits and
on small MNIST-format files written here (every machine has both)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from problems import (
    LI_TABLE2_SAMPLES, FamilySpec, ProblemError, build_problem, li_images, resolve_li_dataset,
)
from problems.families import find_family


def _labels_per_device(problem) -> list[set[int]]:
    return [set(problem.y[problem.offsets[k]:problem.offsets[k + 1]].astype(int)) for k in range(problem.n_clients)]


def test_balanced_digits_every_device_holds_two_labels_and_the_same_count() -> None:
    problem = li_images(dataset="digits", balanced=True)
    sizes = np.diff(problem.offsets)
    assert problem.n_clients == 100 and sizes.sum() == 1600 and np.all(sizes == 16)
    labels = _labels_per_device(problem)
    assert all(len(held) == 2 for held in labels)
    holders = np.bincount([c for held in labels for c in held], minlength=10)
    assert np.all(holders == 20)  # each label on 2N/C devices
    for k in range(problem.n_clients):  # two equal shares: 8 rows of each label
        y = problem.y[problem.offsets[k]:problem.offsets[k + 1]].astype(int)
        assert sorted(np.bincount(y)[np.bincount(y) > 0]) == [8, 8]
    assert problem.X.shape == (1600, 17) and np.all(problem.X[:, -1] == 1.0)  # 4x4 pooled pixels + bias
    assert problem.dim == 170 and problem.mu == pytest.approx(2e-4)
    np.testing.assert_allclose(problem.weights, 0.01)
    assert "digits" in problem.name and "digits" in problem.notes


def test_unbalanced_sizes_are_power_law_like_sum_to_n_and_keep_two_labels() -> None:
    problem = li_images(dataset="digits", balanced=False)
    sizes = np.diff(problem.offsets)
    assert sizes.sum() == 1600
    assert all(len(held) == 2 for held in _labels_per_device(problem))
    assert sizes.max() >= 3 * np.median(sizes) and sizes.std() / sizes.mean() > 0.3  # a heavy right tail
    np.testing.assert_allclose(problem.weights, sizes / 1600)
    smaller = li_images(dataset="digits", balanced=False, n_samples=1000, seed=3)
    assert np.diff(smaller.offsets).sum() == 1000
    assert all(len(held) == 2 for held in _labels_per_device(smaller))
    # a heavier tail (smaller Pareto shape) spreads the sizes more
    heavy = np.diff(li_images(dataset="digits", balanced=False, n_samples=1000, seed=3, power_law_shape=1.2).offsets)
    assert heavy.std() > np.diff(smaller.offsets).std()


def test_same_seed_same_problem_other_seed_other_partition() -> None:
    a = li_images(dataset="digits", balanced=False, seed=5)
    b = build_problem(FamilySpec("li_images", {"dataset": "digits", "balanced": False, "seed": 5}))
    assert a.fingerprint == b.fingerprint and a.spec == b.spec
    assert np.array_equal(a.X, b.X) and np.array_equal(a.offsets, b.offsets)
    c = li_images(dataset="digits", balanced=False, seed=6)
    assert c.fingerprint != a.fingerprint
    assert find_family("li_images").shipped


def _write_idx(folder: Path, images: np.ndarray, labels: np.ndarray, split: str) -> None:
    """Raw IDX files (big-endian header: magic 0x0803 / 0x0801, then the dimensions) of uint8 data."""
    names = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}[split]
    header = np.array([0x0803, images.shape[0], 28, 28], dtype=">u4").tobytes()
    (folder / names[0]).write_bytes(header + images.astype(np.uint8).tobytes())
    (folder / names[1]).write_bytes(np.array([0x0801, labels.size], dtype=">u4").tobytes() + labels.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def fake_mnist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    folder = root / "mnist"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 600), ("test", 200)):
        _write_idx(folder, rng.integers(0, 256, (n, 28, 28)), np.arange(n) % 10, split)
    return root


def test_auto_prefers_mnist_files_and_pools_28x28_to_7x7(fake_mnist: Path) -> None:
    assert resolve_li_dataset("auto", str(fake_mnist)) == "mnist"
    assert resolve_li_dataset("digits", str(fake_mnist)) == "digits"
    problem = li_images(dataset="auto", n_samples=800, data_dir=str(fake_mnist))
    assert problem.X.shape == (800, 50) and problem.dim == 500  # (7 x 7 + 1) x 10
    assert "mnist" in problem.name and problem.spec.params["dataset"] == "auto"
    assert np.all(np.diff(problem.offsets) == 8)
    pixels = li_images(dataset="mnist", n_samples=800, pool=1, data_dir=str(fake_mnist))
    assert pixels.X.shape == (800, 785)  # the paper's 784 pixels + bias
    # Table 2's count is the default on 28x28 data: 54,200 rows need 5,420 of each label
    assert LI_TABLE2_SAMPLES == {True: 54_200, False: 62_864}
    with pytest.raises(ProblemError, match=r"^n_samples: 54200 rows need 5420 rows of label"):
        li_images(dataset="mnist", data_dir=str(fake_mnist))
    with pytest.raises(ProblemError, match=r"^n_samples: mnist has 800 images, fewer than 62864"):
        li_images(dataset="mnist", balanced=False, data_dir=str(fake_mnist))


@pytest.mark.parametrize("params, field", [
    ({"dataset": "cifar10"}, "dataset"),
    ({"n_clients": 55}, "n_clients"),
    ({"n_samples": 1100}, "n_samples"),  # balanced: not a multiple of 2N = 200
    ({"n_samples": 2000}, "n_samples"),  # 200 rows per label, the digits' rarest has 174
    ({"pool": 3}, "pool"),
    ({"pool": 0}, "pool"),
    ({"power_law_shape": 0.0}, "power_law_shape"),
    ({"balanced": "yes"}, "balanced"),
    ({"seed": -1}, "seed"),
    ({"l2": -1.0}, "l2"),
])
def test_bad_fields_are_named(params: dict, field: str) -> None:
    with pytest.raises(ProblemError, match=f"^{field}: "):
        li_images(**{"dataset": "digits", **params})


def test_missing_files_are_an_error_naming_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path))  # no MNIST in any folder searched
    with pytest.raises(ProblemError, match=r"^dataset: no mnist files found"):
        li_images(dataset="mnist", data_dir=str(tmp_path))


def test_unbalanced_needs_two_rows_per_device() -> None:
    with pytest.raises(ProblemError, match=r"^n_samples: every device holds two labels, so n >= 2N = 200"):
        li_images(dataset="digits", balanced=False, n_samples=150)
