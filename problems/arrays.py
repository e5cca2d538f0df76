"""A federated problem from a user's own arrays: ``from_arrays`` and the ``arrays`` family.

``from_arrays(X, y, client_of_row, loss=..., l2=...)`` takes rows X (n, f), targets y (n,) and the
client of every row, client_of_row (n,) with ids 0..N-1, and builds the problem

    F_k(w) = (1/n_k) sum_{i: client_of_row[i] = k} loss(w; x_i, y_i) + (l2/2) ||w||^2,
    F(w)   = sum_k p_k F_k(w),

so mu = l2 (the l2 term of ``FederatedProblem``), with p_k = n_k / n unless ``weights`` are given
(the weighted objective (1) of Li et al., ICLR 2020). The loss is one of ``FederatedProblem``'s:
least squares (real y), logistic (y in {0, 1}) or softmax (integer labels y in {0..C-1}, d = f C).
A client's rows keep their order; clients are stacked by id (a stable sort of client_of_row).

So that other processes can rebuild the problem (the process-pool and Dask workers rebuild every
problem from its spec), the packed arrays (X, y, offsets, weights) are written once to a data
folder as a standard ``.npz`` (``numpy.load`` reads it), content-addressed: the file's name is the
SHA-256 of its bytes, which are a function of the arrays alone (stored entries, a fixed time
stamp). The spec is the ``arrays`` family's, ``{"family": "arrays", "params": {"file", "sha256",
"loss", "l2", "n_classes", "name", "data_dir"}}``: the same arrays and settings give the same spec
and so the same run ids. Building it reads the file and checks its SHA-256 before use; a changed,
truncated or missing file is a ProblemError naming the file.

The data folder: ``data_dir`` when given (then recorded in the spec, as an absolute path, so that
every process reads the same folder), else ``$FEDBOUND_DATA``, else the user cache folder
(``platformdirs.user_cache_dir("fedbound")`` when platformdirs is installed, else
``~/.cache/fedbound``). Specs made with the default folder hold no path, so they are the same on
every machine: copy the file to another machine's folder and its runs are the same runs.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ._base import FederatedProblem, LossKind, ProblemError
from ._params import as_choice
from .registry import build_problem
from .spec import FamilySpec
from .data_folder import DATA_ENV, data_folder
from .digest import file_digest, is_hex_digest
from .validation import check_array, check_int, check_real

__all__ = ["arrays_problem", "from_arrays"]

_LOSSES = tuple(kind.value for kind in LossKind)
_ENTRIES = ("X", "y", "offsets", "weights")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry: fixed, so the bytes are too
_WEIGHT_TOLERANCE = 1e-9  # as FederatedProblem's check of sum_k p_k = 1


def from_arrays(
    X: Any,
    y: Any,
    client_of_row: Any,
    *,
    loss: str | LossKind,
    l2: float = 0.0,
    weights: Any = None,
    n_classes: int | None = None,
    name: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> FederatedProblem:
    """The federated problem of a user's arrays (module docstring), its data written to the data folder.

    Shapes: X (n, f) real, y (n,) real, client_of_row (n,) integer ids 0..N-1 (every client
    non-empty), weights (N,) non-negative summing to 1 (default n_k / n). ``loss`` and ``l2`` are
    parameters, not data (an experiment file gives them as keys of its ``[problem]`` table, beside
    ``from_arrays``): client k's objective is F_k(w) = (1/n_k) sum_{i of client k} loss(x_i, y_i; w)
    + (l2/2) ||w||^2 over every coordinate of w (a bias column of X included), and F = sum_k p_k F_k,
    so mu = ``l2`` >= 0. ``loss``: "least_squares" ((x'w - y)^2 / 2), "logistic" (y in {0, 1}) or
    "softmax" (integer labels in [0, n_classes), n_classes defaulting to max(y) + 1; only softmax
    takes n_classes).
    ``name`` labels the problem (default: "arrays <first 12 hex digits of the file's SHA-256>").
    Each bad input raises one ProblemError naming the argument.
    """
    loss_name = as_choice("loss", loss.value if isinstance(loss, LossKind) else loss, _LOSSES)
    l2 = check_real("l2", l2, minimum=0.0)
    if name is not None and not isinstance(name, str):
        raise ProblemError(f"name: expected a string or None, got {name!r}")
    X = _real_array("X", X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ProblemError(f"X: expected a 2-d array (rows, features) with at least one of each, got shape {X.shape}")
    n = X.shape[0]
    y = _real_array("y", y)
    if y.shape != (n,):
        raise ProblemError(f"y: expected shape ({n},), one target per row of X, got {y.shape}")
    clients = _client_ids(client_of_row, n)
    sizes = np.bincount(clients)
    C = _classes(loss_name, y, n_classes)
    p = sizes / n if weights is None else _weights(weights, sizes.size)
    order = np.argsort(clients, kind="stable")
    arrays = {
        "X": np.ascontiguousarray(X[order]),
        "y": np.ascontiguousarray(y[order]),
        "offsets": np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
        "weights": np.ascontiguousarray(p, dtype=np.float64),
    }
    folder = data_folder(data_dir)
    file, sha256 = _write(folder, arrays)
    return build_problem(FamilySpec("arrays", {
        "file": file, "sha256": sha256, "loss": loss_name, "l2": l2, "n_classes": C, "name": name,
        "data_dir": None if data_dir is None else str(folder),
    }))


def arrays_problem(
    file: str,
    sha256: str,
    loss: str,
    l2: float = 0.0,
    n_classes: int = 1,
    name: str | None = None,
    data_dir: str | None = None,
) -> FederatedProblem:
    """The ``arrays`` family: the problem of an arrays file written by ``from_arrays``.

    Reads ``file`` from ``data_folder(data_dir)``, checks that its SHA-256 is ``sha256`` and builds
    the problem with the given loss, mu = l2 and n_classes (module docstring). ProblemError naming
    ``file`` when it is missing, changed or truncated, or not an arrays file.
    """
    if not isinstance(file, str) or not file or Path(file).name != file:
        raise ProblemError(f"file: expected a file name in the data folder, got {file!r}")
    if not is_hex_digest(sha256, "sha256"):
        raise ProblemError(f"sha256: expected 64 lower-case hex digits, got {sha256!r}")
    path = data_folder(data_dir) / file
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise ProblemError(
            f"file: cannot read {path} ({exc.strerror or exc}); it is written by problems.from_arrays "
            f"to the data folder (${DATA_ENV} or the user cache folder)"
        ) from None
    found = hashlib.sha256(content).hexdigest()
    if found != sha256:
        raise ProblemError(
            f"file: {path} has SHA-256 {found[:12]}..., not the {sha256[:12]}... its spec records: "
            "the file was changed or truncated; rebuild it with problems.from_arrays"
        )
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as stored:
            X, y, offsets, weights = (stored[key] for key in _ENTRIES)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ProblemError(f"file: {path} is not an arrays file of problems.from_arrays ({exc})") from None
    return FederatedProblem(
        name=f"arrays {sha256[:12]}" if name is None else name,
        loss=as_choice("loss", loss, _LOSSES),
        X=X,
        y=y,
        offsets=offsets,
        weights=weights,
        mu=check_real("l2", l2, minimum=0.0),
        n_classes=check_int("n_classes", n_classes, minimum=1),
        spec=FamilySpec("arrays", {"file": file, "sha256": sha256, "loss": loss, "l2": l2, "n_classes": n_classes,
                                   "name": name, "data_dir": data_dir}),
        notes=f"A user's arrays (problems.from_arrays), file {file}.",
    )


def _real_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array of finite real numbers; ProblemError naming ``name`` otherwise."""
    array = check_array(name, value, "iuf", "real numbers").astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ProblemError(f"{name}: contains NaN or infinite values")
    return array


def _client_ids(value: Any, n: int) -> np.ndarray:
    """client_of_row as an int64 array of ids 0..N-1, each used; ProblemError naming ``client_of_row``."""
    ids = check_array("client_of_row", value, "iu", "integer client ids")
    if ids.shape != (n,):
        raise ProblemError(f"client_of_row: expected shape ({n},), one client id per row of X, got {ids.shape}")
    if ids.min() < 0:
        raise ProblemError(f"client_of_row: client ids are 0..N-1, got {ids.min()}")
    sizes = np.bincount(ids.astype(np.int64))
    if np.any(sizes == 0):
        raise ProblemError(
            f"client_of_row: client {int(np.argmin(sizes))} has no rows; ids must cover 0..{sizes.size - 1}, "
            "every client with at least one row"
        )
    return ids.astype(np.int64)


def _classes(loss: str, y: np.ndarray, n_classes: Any) -> int:
    """The number of classes C (1 unless softmax), checking the labels; ProblemError naming y or n_classes."""
    if loss != LossKind.SOFTMAX.value:
        if n_classes is not None:
            raise ProblemError(f"n_classes: only a softmax problem has classes, got {n_classes!r} for loss {loss!r}")
        if loss == LossKind.LOGISTIC.value and not np.all((y == 0) | (y == 1)):
            raise ProblemError("y: logistic labels must be 0 or 1")
        return 1
    if np.any(y != np.round(y)) or y.min() < 0:
        raise ProblemError("y: softmax labels must be non-negative integers")
    C = int(y.max()) + 1 if n_classes is None else check_int("n_classes", n_classes, minimum=2)
    if C < 2:
        raise ProblemError(f"n_classes: softmax needs at least 2 classes, the labels give {C}")
    if y.max() >= C:
        raise ProblemError(f"y: softmax labels must be integers in [0, {C}), got {int(y.max())}")
    return C


def _weights(value: Any, n_clients: int) -> np.ndarray:
    """Client weights p_k: (N,), finite, non-negative, summing to 1; ProblemError naming ``weights``."""
    p = _real_array("weights", value)
    if p.shape != (n_clients,):
        raise ProblemError(f"weights: expected one weight per client, shape ({n_clients},), got {p.shape}")
    if np.any(p < 0):
        raise ProblemError("weights: client weights p_k must be non-negative")
    if abs(p.sum() - 1.0) > _WEIGHT_TOLERANCE:
        raise ProblemError(f"weights: client weights p_k must sum to 1 (they sum to {p.sum():.12g})")
    return p


def _write(folder: Path, arrays: dict[str, np.ndarray]) -> tuple[str, str]:
    """Write ``arrays`` to ``folder`` as a content-addressed .npz once; (file name, SHA-256 of its bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key in _ENTRIES:
            entry = io.BytesIO()
            np.lib.format.write_array(entry, arrays[key], allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_TIME), entry.getvalue())
    content = buffer.getvalue()
    sha256 = hashlib.sha256(content).hexdigest()
    file = f"{sha256}.npz"
    path = folder / file
    try:
        if path.is_file() and file_digest(path, "sha256") == sha256:
            return file, sha256
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{file}.{os.getpid()}.partial"
        partial.write_bytes(content)
        os.replace(partial, path)
    except OSError as exc:
        raise ProblemError(f"data_dir: cannot write the arrays to {folder} ({exc.strerror or exc})") from None
    return file, sha256
