"""problems.from_arrays: a user's arrays as a federated problem, stored content-addressed so that any
process rebuilds it from its spec; every bad argument named; the README's "Your own data" example."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from convergence import FedAvgConfig, RunConfig, StepSize
from problems import (
    FederatedProblem,
    LossKind,
    ProblemError,
    ProblemSpec,
    build_problem,
    data_folder,
    from_arrays,
)
from problems.arrays import DATA_ENV, arrays_problem

README = Path(__file__).resolve().parent.parent / "README.md"

X5 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -1.0], [0.5, 0.5]])
CLIENTS5 = np.array([1, 0, 1, 2, 0])


@pytest.fixture
def data_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$FEDBOUND_DATA pointing at an empty folder of this test."""
    folder = tmp_path / "data"
    monkeypatch.setenv(DATA_ENV, str(folder))
    return folder


def test_rows_are_regrouped_per_client_in_a_stable_order(data_env: Path) -> None:
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    problem = from_arrays(X5, y, CLIENTS5, loss="least_squares", l2=0.3)
    # client 0 holds rows 1, 4; client 1 rows 0, 2; client 2 row 3 (each in its original order)
    np.testing.assert_array_equal(problem.X, X5[[1, 4, 0, 2, 3]])
    np.testing.assert_array_equal(problem.y, [2.0, 5.0, 1.0, 3.0, 4.0])
    np.testing.assert_array_equal(problem.offsets, [0, 2, 4, 5])
    np.testing.assert_array_equal(problem.weights, [0.4, 0.4, 0.2])  # n_k / n
    assert problem.mu == 0.3 and problem.loss is LossKind.LEAST_SQUARES and problem.n_classes == 1
    # F(w) = sum_k p_k (1/n_k) sum_i 1/2 (x_i'w - y_i)^2 + (l2/2) ||w||^2, by hand at w = (1, 2)
    w = np.array([1.0, 2.0])
    residual = X5 @ w - y  # (-2, 0, 0, -4, -3.5)
    by_client = [(residual[1] ** 2 + residual[4] ** 2) / 4, (residual[0] ** 2 + residual[2] ** 2) / 4,
                 residual[3] ** 2 / 2]
    assert problem.objective(w) == pytest.approx(0.4 * by_client[0] + 0.4 * by_client[1] + 0.2 * by_client[2]
                                                 + 0.15 * 5.0, rel=1e-14)


def test_weights_losses_and_classes(data_env: Path) -> None:
    weighted = from_arrays(X5, np.arange(5.0), CLIENTS5, loss="least_squares", weights=[0.5, 0.25, 0.25])
    np.testing.assert_array_equal(weighted.weights, [0.5, 0.25, 0.25])
    logistic = from_arrays(X5, [0, 1, 1, 0, 1], CLIENTS5, loss=LossKind.LOGISTIC, l2=0.1)
    assert logistic.loss is LossKind.LOGISTIC and logistic.dim == 2 and logistic.spec.params["loss"] == "logistic"
    softmax = from_arrays(X5, [0, 2, 1, 2, 0], CLIENTS5, loss="softmax", l2=0.1)
    assert softmax.n_classes == 3 and softmax.dim == 6 and softmax.spec.params["n_classes"] == 3
    wider = from_arrays(X5, [0, 2, 1, 2, 0], CLIENTS5, loss="softmax", l2=0.1, n_classes=4, name="four")
    assert wider.n_classes == 4 and wider.name == "four" and wider.spec != softmax.spec


def test_same_arrays_same_spec_and_run_id(data_env: Path) -> None:
    y = np.arange(5.0)
    a = from_arrays(X5, y, CLIENTS5, loss="least_squares", l2=0.1)
    b = from_arrays(X5.tolist(), y.astype(np.int64), CLIENTS5.astype(np.int32), loss="least_squares", l2=0.1)
    alg = FedAvgConfig(2, 3, StepSize.constant(0.1))
    assert a.spec == b.spec and RunConfig(a.spec, alg).run_id == RunConfig(b.spec, alg).run_id
    assert a.spec.params["data_dir"] is None  # the default folder leaves no path in the spec
    changed = from_arrays(X5, y + 1.0, CLIENTS5, loss="least_squares", l2=0.1)
    assert changed.spec.params["sha256"] != a.spec.params["sha256"]
    assert from_arrays(X5, y, CLIENTS5, loss="least_squares", l2=0.2).spec != a.spec
    # content-addressed: the file is named by the SHA-256 of its bytes, a standard .npz
    file = data_env / a.spec.params["file"]
    assert hashlib.sha256(file.read_bytes()).hexdigest() == a.spec.params["sha256"] == file.stem
    with np.load(file, allow_pickle=False) as stored:
        np.testing.assert_array_equal(stored["X"], a.X)
        np.testing.assert_array_equal(stored["offsets"], a.offsets)
    # written once: the same bytes again after the file is removed and written anew
    before = file.read_bytes()
    file.unlink()
    from_arrays(X5, y, CLIENTS5, loss="least_squares", l2=0.1)
    assert file.read_bytes() == before


def test_data_folder_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    default = data_folder()
    assert default.name == "fedbound" and default.is_absolute()
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    assert data_folder() == tmp_path / "env"
    assert data_folder(tmp_path / "given") == tmp_path / "given"
    problem = from_arrays(X5, np.arange(5.0), CLIENTS5, loss="least_squares", data_dir=tmp_path / "given")
    assert problem.spec.params["data_dir"] == str(tmp_path / "given")
    assert (tmp_path / "given" / problem.spec.params["file"]).is_file() and not (tmp_path / "env").exists()


def test_a_changed_truncated_or_missing_file_is_refused(data_env: Path) -> None:
    problem = from_arrays(X5, np.arange(5.0), CLIENTS5, loss="least_squares")
    params = dict(problem.spec.params)
    file = data_env / params["file"]
    assert arrays_problem(**params).fingerprint == problem.fingerprint
    content = file.read_bytes()
    file.write_bytes(content[:-1] + bytes([content[-1] ^ 1]))
    with pytest.raises(ProblemError, match=f"^file: {re.escape(str(file))} has SHA-256 .* the file was changed"):
        arrays_problem(**params)
    file.write_bytes(content[: len(content) // 2])
    with pytest.raises(ProblemError, match="^file: .* the file was changed or truncated"):
        arrays_problem(**params)
    file.unlink()
    with pytest.raises(ProblemError, match=f"^file: cannot read {re.escape(str(file))}"):
        arrays_problem(**params)
    with pytest.raises(ProblemError, match="^file: expected a file name in the data folder"):
        arrays_problem(**{**params, "file": "../elsewhere.npz"})
    with pytest.raises(ProblemError, match="^sha256: expected 64 lower-case hex digits"):
        arrays_problem(**{**params, "sha256": "abc"})


def test_a_fresh_interpreter_rebuilds_it_from_the_spec(data_env: Path) -> None:
    problem = from_arrays(X5, [0, 2, 1, 2, 0], CLIENTS5, loss="softmax", l2=0.5)
    script = "import json, sys; from problems import build_problem; print(build_problem(json.loads(sys.argv[1])).fingerprint)"
    out = subprocess.run([sys.executable, "-c", script, json.dumps(problem.spec.to_json())], capture_output=True,
                         text=True, check=True, env={**os.environ, DATA_ENV: str(data_env)})
    assert out.stdout.strip() == problem.fingerprint
    assert build_problem(ProblemSpec.from_json(problem.spec.to_json())) is problem  # cached per process


GOOD = dict(X=X5, y=np.arange(5.0), client_of_row=CLIENTS5, loss="least_squares")
BAD = [
    ({"X": np.ones(5)}, "X", "2-d array"),
    ({"X": np.ones((0, 2)), "y": np.ones(0), "client_of_row": np.zeros(0, int)}, "X", "at least one"),
    ({"X": np.where(np.eye(5, 2) > 0, np.nan, X5)}, "X", "NaN"),
    ({"X": X5.astype(str)}, "X", "real numbers"),
    ({"y": np.arange(4.0)}, "y", "one target per row"),
    ({"y": [0.0, 1.0, np.inf, 2.0, 3.0]}, "y", "NaN or infinite"),
    ({"client_of_row": CLIENTS5.astype(float)}, "client_of_row", "integer client ids"),
    ({"client_of_row": CLIENTS5[:4]}, "client_of_row", "one client id per row"),
    ({"client_of_row": np.array([1, 0, 1, -1, 0])}, "client_of_row", "0..N-1"),
    ({"client_of_row": np.array([2, 0, 2, 3, 0])}, "client_of_row", "client 1 has no rows"),
    ({"loss": "hinge"}, "loss", "expected one of"),
    ({"l2": -0.1}, "l2", ">= 0"),
    ({"l2": float("nan")}, "l2", "finite"),
    ({"weights": [0.5, 0.5, 0.5]}, "weights", "sum to 1"),
    ({"weights": [0.5, 0.5]}, "weights", "one weight per client"),
    ({"weights": [1.5, -0.25, -0.25]}, "weights", "non-negative"),
    ({"n_classes": 3}, "n_classes", "only a softmax problem"),
    ({"loss": "logistic", "y": [0, 1, 2, 0, 1]}, "y", "0 or 1"),
    ({"loss": "softmax", "y": [0, 1, 2, 0, 1], "n_classes": 2}, "y", r"in \[0, 2\)"),
    ({"loss": "softmax", "y": [0, 1, 0.5, 0, 1]}, "y", "non-negative integers"),
    ({"loss": "softmax", "y": np.zeros(5)}, "n_classes", "at least 2 classes"),
    ({"name": 3}, "name", "string"),
    ({"data_dir": 3}, "data_dir", "folder path"),
]


@pytest.mark.parametrize("change,field,words", BAD, ids=[f"{field}-{i}" for i, (_, field, _) in enumerate(BAD)])
def test_bad_arguments_are_named(change: dict, field: str, words: str, data_env: Path) -> None:
    args = {**GOOD, **change}
    with pytest.raises(ProblemError, match=f"^{field}: .*{words}"):
        from_arrays(args.pop("X"), args.pop("y"), args.pop("client_of_row"), **args)
    assert not data_env.exists()  # nothing written for refused input


def test_an_unwritable_data_folder_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ProblemError, match="^data_dir: cannot write the arrays to"):
        from_arrays(**GOOD, data_dir=blocker / "data")


def test_readme_your_own_data_runs(data_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "Your own data" block, run as written: FedAvg on load_digits split over clients by label."""
    section = README.read_text(encoding="utf-8").split("## Your own data", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_your_own_data"}
    exec(compile(block, "README.md (Your own data)", "exec"), namespace)
    problem, traj = namespace["problem"], namespace["traj"]
    assert isinstance(problem, FederatedProblem) and problem.n_clients == 5 and problem.dim == 650
    for k in range(5):  # client k holds the digits 2k and 2k + 1
        assert set(np.unique(problem.client_data(k)[1]).astype(int)) == {2 * k, 2 * k + 1}
    assert (data_env / problem.spec.params["file"]).is_file()
    gap = traj.gap.mean(axis=0)
    assert traj.config.problem == problem.spec and gap[-1] < 0.1 * gap[0]
