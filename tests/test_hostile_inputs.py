"""Hostile inputs end in one clear line naming the field or the file, exit status 2, and leave
nothing behind; none escapes as an internal error, blocks, or is accepted silently.

The classes (issue 30): experiment files that exhaust the TOML parser's recursion, hold integers
beyond float64 or give a config an integer beyond 64 bits, an empty record list, files that are
not regular files (a FIFO blocks a reader for ever, /dev/zero never ends), problem parameters that
overflow float64, image files whose sizes are wrong, overflow, or are absent, CIFAR batches that
call a codec that does not exist or declare arrays their bytes do not hold, claim parameters of
5000 digits and claim ids with a line break before their bracket; and every config-level error of
`fedbound run`, which must be refused before its report folder or run store is created. A read
that could block runs in a daemon thread with a deadline, so a regression fails instead of hanging.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from problems import ProblemError, load_images
from reports.cli import main

EXPERIMENT = """\
seeds = 2
record_rounds = [1, 5, 10]

[problem]
family = "synthetic"
params = {alpha = 1.0, beta = 1.0, n_clients = 4, n_features = 3, n_classes = 2, l2 = 1.0, seed = 1}

[algorithm]
name = "fedavg"
rounds = 10
local_steps = 2
step_size = {kind = "constant", eta0 = 0.05}

[[checks]]
kind = "bound"
name = "b"
expression = "1e6"
"""
RATE_CHECK = 'kind = "rate"\nname = "r"\nx = "X"\nexponent = -1\ntolerance = 0.1'
QUADRATIC = 'family = "random_quadratic"\nparams = {n_clients = 4, dim = 3, mu = MU, L = L, samples_per_client = 5}'


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()`` in a daemon thread; fails the test when it has not returned within ``seconds`` (a read
    blocked on a FIFO stays blocked, so it cannot be interrupted, only abandoned)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _edited(**replacements: tuple[str, str]) -> str:
    """The base experiment with each (old, new) text of ``replacements`` replaced, in order."""
    text = EXPERIMENT
    for old, new in replacements.values():
        assert old in text, old
        text = text.replace(old, new)
    return text


def _run_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, field: str,
               file: Path | None = None) -> str:
    """`fedbound run` of the experiment ``text`` (or of ``file``): exit status 2, one line that names
    ``field``, and neither the report folder nor its run store created."""
    if file is None:
        file = tmp_path / "experiment.toml"
        file.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert _within(120, lambda: main(["run", str(file), "--out", str(out), "--no-progress"])) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fedbound: error: {field}") and err.count("\n") == 1, err
    assert not out.exists()
    return err


# ---------------------------------------------------------------- experiment files
EXPERIMENT_CASES = {
    "arrays nested 100,000 deep": ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "EXPERIMENT: ", "nests"),
    "tables nested 5,000 deep": ("x = " + "{a=" * 5_000 + "1" + "}" * 5_000 + "\n", "EXPERIMENT: ", "nests"),
    "a 401-digit integer in an expression": (
        _edited(a=("rounds = 10", f'rounds = "ceil({"1" * 401})"')), "algorithm.rounds: ",
        "the integer of 401 digits is beyond the largest float64"),
    "a 401-digit integer in a bound": (
        _edited(a=('expression = "1e6"', f'expression = "{"9" * 401} * T"')), "checks[0].expression: ",
        "401 digits"),
    "rounds = ceil(1e300)": (_edited(a=("rounds = 10", 'rounds = "ceil(1e300)"')), "algorithm.rounds: ",
                             "'ceil(1e300)' gives 1e+300, beyond the largest integer"),
    "record_rounds = []": (_edited(a=("record_rounds = [1, 5, 10]", "record_rounds = []")), "record_rounds: ",
                           "the list is empty"),
    "synthetic alpha = 1e308": (_edited(a=("alpha = 1.0", "alpha = 1e308")), "problem.params.alpha",
                                "overflows float64"),
    "random_quadratic mu = 1e300, L = 1e308": (
        _edited(a=('family = "synthetic"\nparams = {alpha = 1.0, beta = 1.0, n_clients = 4, n_features = 3, '
                   'n_classes = 2, l2 = 1.0, seed = 1}', QUADRATIC.replace("MU", "1e300").replace("L = L", "L = 1e308"))),
        "problem.params.L: ", "must be at most 1e+150"),
    "random_quadratic mu = 1e100, L = 1e101": (
        _edited(a=('family = "synthetic"\nparams = {alpha = 1.0, beta = 1.0, n_clients = 4, n_features = 3, '
                   'n_classes = 2, l2 = 1.0, seed = 1}', QUADRATIC.replace("MU", "1e100").replace("L = L", "L = 1e101"))),
        "problem.params: ", "the exact optimum of random_quadratic"),
}


@pytest.mark.parametrize("case", list(EXPERIMENT_CASES))
def test_a_hostile_experiment_file_is_one_line_naming_the_field(case: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    text, field, words = EXPERIMENT_CASES[case]
    assert words in _run_fails(tmp_path, capsys, text, field)


def test_a_fifo_or_a_device_is_no_experiment_or_data_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer for ever
    assert "not a regular file" in _run_fails(tmp_path, capsys, None, f"EXPERIMENT: {fifo}", file=fifo)
    assert "not a regular file" in _run_fails(tmp_path, capsys, None, "EXPERIMENT: /dev/zero", file=Path("/dev/zero"))
    os.mkfifo(tmp_path / "data.npz")
    arrays = _edited(a=('family = "synthetic"\nparams = {alpha = 1.0, beta = 1.0, n_clients = 4, n_features = 3, '
                        'n_classes = 2, l2 = 1.0, seed = 1}', 'from_arrays = "data.npz"\nloss = "least_squares"'))
    assert "not a regular file" in _run_fails(tmp_path, capsys, arrays, f"problem.from_arrays: {tmp_path / 'data.npz'}")


def test_an_experiment_file_of_megabytes_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.toml"
    big.write_text(EXPERIMENT + "# " + "x" * (1 << 20) + "\n", encoding="utf-8")
    assert "an experiment file has at most" in _run_fails(tmp_path, capsys, None, "EXPERIMENT: ", file=big)


# ---------------------------------------------------------------- fedbound run creates nothing on bad input
NOTHING_CREATED = {  # errors the old code raised after creating --out (and, for the checks, the run store)
    "a grid cell's field out of range": ({"a": ("local_steps = 2\n", ""), "b": (
        "[[checks]]", "[grid]\nlocal_steps = [1, 0]\n\n[[checks]]")}, "grid.local_steps (cell local_steps=0)"),
    "an integer field's expression not integral": ({"a": ("rounds = 10", 'rounds = "10.5 * kappa"')},
                                                    "algorithm.rounds: '10.5 * kappa' gives"),
    "participants more than the clients": ({"a": ("local_steps = 2\n", "local_steps = 2\nparticipants = 9\n")},
                                           "algorithm.participants: "),
    "a bound check with record round 0": ({"a": ("record_rounds = [1, 5, 10]", "record_rounds = [0, 5, 10]")},
                                          "record_rounds: round 0 (T = 0) is a record point"),
    "a bound <= 0": ({"a": ('expression = "1e6"', 'expression = "gap0 - 1e6"')}, "checks[0].expression: the bound"),
    "a rate's x that does not grow": ({"a": ('kind = "bound"\nname = "b"\nexpression = "1e6"',
                                             RATE_CHECK.replace("X", "T - T + 1"))}, "checks[0].x: "),
    "a rate's x that does not depend on T": ({"a": ('kind = "bound"\nname = "b"\nexpression = "1e6"',
                                                    RATE_CHECK.replace("X", "kappa"))}, "checks[0].x: "),
}


@pytest.mark.parametrize("case", list(NOTHING_CREATED))
def test_run_refuses_config_errors_before_creating_anything(case: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    replacements, field = NOTHING_CREATED[case]
    _run_fails(tmp_path, capsys, _edited(**replacements), field)


# ---------------------------------------------------------------- image data files
def _idx(shape: tuple[int, ...], data: bytes | None = None) -> bytes:
    """An IDX file of unsigned bytes: magic 0x0000080D (D dimensions), the sizes, then the values."""
    header = bytes([0, 0, 0x08, len(shape)]) + b"".join(struct.pack(">I", size) for size in shape)
    return header + (bytes(int(np.prod(shape))) if data is None else data)


def _mnist(tmp_path: Path, images: bytes | Path, labels: bytes) -> Path:
    """A data folder whose mnist/ holds the training files (the images as bytes, or a link to a path)."""
    folder = tmp_path / "data" / "mnist"
    folder.mkdir(parents=True)
    if isinstance(images, Path):
        (folder / "train-images-idx3-ubyte").symlink_to(images)
    else:
        (folder / "train-images-idx3-ubyte").write_bytes(images)
    (folder / "train-labels-idx1-ubyte").write_bytes(labels)
    return tmp_path / "data"


IMAGE_CASES = {
    "1 x 1 images": (lambda t: _mnist(t, _idx((100, 1, 1)), _idx((100,))), "expected (n, 28, 28) unsigned bytes"),
    "no image": (lambda t: _mnist(t, _idx((0, 28, 28)), _idx((0,))), "holds 0 images"),
    "sizes whose product wraps to 0 in int64": (
        lambda t: _mnist(t, _idx((2**16,) * 4, b""), _idx((10,))), "the IDX header gives shape (65536, 65536, 65536, 65536)"),
    "/dev/zero": (lambda t: _mnist(t, Path("/dev/zero"), _idx((10,))), "not a regular file"),
}


@pytest.mark.parametrize("case", list(IMAGE_CASES))
def test_a_bad_image_file_is_one_error_naming_it(case: str, tmp_path: Path) -> None:
    make, words = IMAGE_CASES[case]
    data = make(tmp_path)
    with pytest.raises(ProblemError) as raised:
        _within(60, lambda: load_images("mnist", "train", data, checksums={}))
    assert str(raised.value).startswith(f"{data / 'mnist' / 'train-images-idx3-ubyte'}: ") and words in str(raised.value)


def test_a_fifo_image_file_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mnist"
    folder.mkdir()
    os.mkfifo(folder / "train-images-idx3-ubyte")
    (folder / "train-labels-idx1-ubyte").write_bytes(_idx((10,)))
    assert _within(120, lambda: main(["partition", "mnist", "--data-dir", str(tmp_path), "--clients", "2"])) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fedbound: error: {folder / 'train-images-idx3-ubyte'}: not a regular file")


def _cifar(tmp_path: Path, batch: bytes) -> Path:
    """A data folder whose cifar10/ archive holds ``batch`` as each of the five training batches."""
    folder = tmp_path / "cifar10"
    folder.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for i in range(1, 6):
            info = tarfile.TarInfo(f"cifar-10-batches-py/data_batch_{i}")
            info.size = len(batch)
            archive.addfile(info, io.BytesIO(batch))
    (folder / "cifar-10-python.tar.gz").write_bytes(buffer.getvalue())
    return tmp_path


def _declared_batch(rows: int) -> bytes:
    """A protocol-2 pickle, {'data': _reconstruct(ndarray, (rows, 3072), 'u1'), 'labels': the same with
    (rows,)}: arrays of a shape asked for directly, with no bytes behind them (a few hundred bytes)."""
    def array(*shape: int) -> bytes:
        sizes = b"".join(b"J" + struct.pack("<i", size) for size in shape)
        return (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n(" + sizes + b"tX\x02\x00\x00\x00u1\x87R")
    return (b"\x80\x02}(X\x04\x00\x00\x00data" + array(rows, 3072) + b"X\x06\x00\x00\x00labels" + array(rows)
            + b"u.")


CIFAR_CASES = {
    "a codec that does not exist (LookupError)": (
        pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 1]}, protocol=2).replace(
            b"X\x06\x00\x00\x00latin1", b"X\x06\x00\x00\x00nocode"), "unknown encoding: nocode"),
    "262,144 images declared in a few hundred bytes": (_declared_batch(262_144),
                                                       "reconstructed with shape (262144, 3072)"),
}


@pytest.mark.parametrize("case", list(CIFAR_CASES))
def test_a_hostile_cifar_batch_is_one_error_naming_the_file_and_member(case: str, tmp_path: Path) -> None:
    batch, words = CIFAR_CASES[case]
    assert len(batch) < 7000
    data = _cifar(tmp_path, batch)
    with pytest.raises(ProblemError) as raised:
        load_images("cifar10", "train", data, checksums={})
    message = str(raised.value)
    assert message.startswith(f"{data / 'cifar10' / 'cifar-10-python.tar.gz'}, member cifar-10-batches-py/data_batch_1: ")
    assert words in message


def test_a_gzipped_idx_file_is_still_read(tmp_path: Path) -> None:
    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    data = _mnist(tmp_path, gzip.compress(_idx(images.shape, images.tobytes())), _idx((3,), bytes([1, 2, 3])))
    loaded = load_images("mnist", "train", data, checksums={})
    np.testing.assert_array_equal(loaded.images[..., 0] * 255, images)


# ---------------------------------------------------------------- claim ids and parameters
def test_a_5000_digit_parameter_names_the_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--quick", "--claim", f"li2020.thm1[E={'1' * 5000}]", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedbound: error: E: claim 'li2020.thm1' needs an integer") and "5000 digits" in err
    assert "set_int_max_str_digits" not in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text", ["control.constant-step-rate\n[step=li]", "control.constant-step-rate [step=li]",
                                  "li2020.\nthm1"])
def test_white_space_inside_a_claim_id_is_refused(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--quick", "--claim", text, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedbound: error: claim: ") and "white space in its id" in err


def test_falsify_help_promises_only_the_built_in_ids(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["falsify", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "ID[param=value]" not in help_text and "other parameter values are not built in" in help_text
    assert main(["falsify", "li2020.lemma3[constant=0.5]"]) == 2  # as the help says
    assert "unknown falsifiable claim 'li2020.lemma3[constant=0.5]'" in capsys.readouterr().err
