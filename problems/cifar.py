"""CIFAR-10's python batches (Krizhevsky 2009, https://www.cs.toronto.edu/~kriz/cifar.html).

``cifar-10-python.tar.gz`` holds ``cifar-10-batches-py/data_batch_1`` .. ``data_batch_5`` (the
50,000 training images) and ``test_batch`` (10,000), each a Python pickle of a dict with ``data``, a
uint8 array (10000, 3072) -- per row 1024 red, then 1024 green, then 1024 blue values of a 32 x 32
image in row-major order -- and ``labels``, a list of 10000 ints in 0..9.

Unpickling: the batches are pickles, and a pickle may name any importable callable. They are read
with a restricted ``pickle.Unpickler`` whose ``find_class`` allows only what a NumPy array needs to
be rebuilt -- ``numpy.ndarray``, ``numpy.dtype``, the array reconstructor ``_reconstruct`` of
``numpy.core.multiarray`` / ``numpy._core.multiarray`` (mapped to the one this NumPy has) and
``_codecs.encode`` (Python 3's protocol-2 form of bytes) -- and refuses every other global, so
reading a batch cannot run arbitrary code. Arrays are rebuilt only as NumPy pickles them: empty,
then filled from bytes in the file (``_empty_array``), so a batch cannot make the reader allocate
more memory than its bytes hold. ``encoding="latin1"`` decodes the Python 2 strings of
the published files (NumPy's documented way to read Python 2 array pickles).

``parse_cifar10(content, split, name)`` returns the images (n, 32, 32, 3) uint8 and labels (n,)
int64 of a split from the bytes of the archive; every malformed archive or batch is one
ProblemError naming the file and the member.
"""

from __future__ import annotations

import codecs
import io
import pickle
import tarfile
from typing import Any

import numpy as np

from .validation import ProblemError

__all__ = ["CIFAR10_MEMBERS", "parse_cifar10"]

_FOLDER = "cifar-10-batches-py"
CIFAR10_MEMBERS = {
    "train": tuple(f"{_FOLDER}/data_batch_{i}" for i in range(1, 6)),
    "test": (f"{_FOLDER}/test_batch",),
}
"""The archive members that make up each split."""

_SIDE = 32
_PIXELS = 3 * _SIDE * _SIDE
_RECONSTRUCT = np.zeros(1).__reduce__()[0]  # this NumPy's array reconstructor, by its public pickling hook
_EMPTY = (0,)  # the shape a pickled array is reconstructed with, before its state fills it from its bytes
_NDARRAY = object()  # what the pickle's global numpy.ndarray stands for: only _empty_array's argument


def _empty_array(subtype: object, shape: tuple[int, ...], dtype: object) -> np.ndarray:
    """The array reconstructor as NumPy's own pickles call it, ``_reconstruct(ndarray, (0,), b'b')``:
    an empty array whose pickled state (``__setstate__``) then fills it from bytes that are in the
    file. Any other call is refused: a pickle that asked for a shape directly would allocate memory
    the file does not hold (262,144 images declared in a few hundred bytes)."""
    if subtype is not _NDARRAY or tuple(shape) != _EMPTY:
        raise pickle.UnpicklingError(f"an array reconstructed with shape {shape!r} rather than from its bytes")
    return _RECONSTRUCT(np.ndarray, _EMPTY, dtype)


_ALLOWED = {
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _empty_array,
    ("numpy._core.multiarray", "_reconstruct"): _empty_array,
    ("_codecs", "encode"): codecs.encode,
}


class _ArrayUnpickler(pickle.Unpickler):
    """An Unpickler that rebuilds dicts, lists, strings and NumPy arrays, and nothing callable else."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a CIFAR-10 batch") from None


def parse_cifar10(content: bytes, split: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Images (n, 32, 32, 3) uint8 and labels (n,) int64 of ``split`` ("train" or "test") of the archive bytes."""
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:gz") as archive:
            batches = [_batch(archive, member, name) for member in CIFAR10_MEMBERS[split]]
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ProblemError(f"{name}: not a readable tar.gz archive, truncated or corrupt ({exc})") from None
    images = np.concatenate([b[0] for b in batches]).reshape(-1, 3, _SIDE, _SIDE).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), np.concatenate([b[1] for b in batches])


def _batch(archive: tarfile.TarFile, member: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    where = f"{name}, member {member}"
    try:
        stream = archive.extractfile(member)
    except KeyError:
        raise ProblemError(f"{where}: missing from the archive") from None
    if stream is None:
        raise ProblemError(f"{where}: not a regular file")
    try:
        batch = _ArrayUnpickler(io.BytesIO(stream.read()), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, LookupError) as exc:
        raise ProblemError(f"{where}: not a CIFAR-10 batch ({exc})") from None
    if not isinstance(batch, dict):
        raise ProblemError(f"{where}: expected a pickled dict, got {type(batch).__name__}")
    batch = {key.decode("latin1") if isinstance(key, bytes) else key: value for key, value in batch.items()}
    data, labels = batch.get("data"), batch.get("labels")
    if (not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[0] == 0
            or data.shape[1] != _PIXELS):
        raise ProblemError(f"{where}: 'data' must be a non-empty uint8 array (n, {_PIXELS})")
    labels = np.asarray(labels)
    if labels.shape != (data.shape[0],) or labels.dtype.kind not in "iu" or labels.min() < 0 or labels.max() > 9:
        raise ProblemError(f"{where}: 'labels' must be {data.shape[0]} integers in 0..9")
    return data, labels.astype(np.int64)
