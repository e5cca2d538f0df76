"""Image data sets, offline: MNIST, Fashion-MNIST, CIFAR-10 from files, and the bundled 8x8 digits.

``load_images(name, split, data_dir=None)`` returns an ``ImageDataset``: images (n, H, W, C)
float64 in [0, 1] (the stored bytes / 255; the digits' 0..16 intensities / 16), labels (n,) int64
in 0..9, the data set's name, the split, where it was read from and how its files were checked.

Data sets (``IMAGE_DATASETS``):

* ``digits``: scikit-learn's bundled 8 x 8 handwritten digits (``sklearn.datasets.load_digits``:
  1,797 real images, the test part of UCI's optdigits), available on every machine with no
  download. They come as one set; here row i (in scikit-learn's order) is in "test" when
  i mod 5 = 4 and in "train" otherwise (1,438 / 359 rows, every writer's block spread over both).
* ``mnist``, ``fashion-mnist``: the four IDX files (``problems.idx``) ``train-images-idx3-ubyte``,
  ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each
  gzipped (``.gz``, preferred when both are present) or not; 28 x 28 x 1 (an image file of
  another size, or with no image, is refused naming the file).
* ``cifar10``: ``cifar-10-python.tar.gz`` (``problems.cifar``); 32 x 32 x 3.

Discovery, in order (the first folder holding any file of the requested split is used; a missing
or broken file there is an error naming it, never a silent fall-through): ``data_dir/NAME`` when
``data_dir`` is given, ``data_folder()/NAME`` (``$FEDBOUND_DATA``, else the user cache folder:
``problems.data_folder``, the convention of ``from_arrays``), and for Fashion-MNIST
``/usr/share/datasets/fashion-mnist``, where Debian's ``dataset-fashion-mnist`` package installs it.

"auto" (``resolve_image_dataset``): a claim that runs on "the richest image data present" names an
order of preference, e.g. Li et al.'s MNIST > Fashion-MNIST > digits or Ding et al.'s CIFAR-10 >
Fashion-MNIST > MNIST > digits, and gets the first data set whose training files are found (the
digits, bundled, always are). A claim resolves "auto" before it builds any spec, so a run id names
the data set it ran on and never depends on the machine.

Checksums (``PUBLISHED_MD5``): every gzipped file and the CIFAR archive is checked against the MD5
digests published for it; a file whose digest matches none of them is an error naming the file.
Sources: MNIST, the digests torchvision lists for the four ``.gz`` files (``torchvision/datasets/
mnist.py``, ``MNIST.resources``; the MNIST page itself prints none); Fashion-MNIST, the table of
zalandoresearch/fashion-mnist's README and, for Debian's recompressed copies, the ``md5sums`` of
package dataset-fashion-mnist 0.0~git20200523.55506a9-1; CIFAR-10, the MD5 printed on the CIFAR
page (https://www.cs.toronto.edu/~kriz/cifar.html). Nobody publishes digests of the uncompressed
IDX files: those are checked by their header and exact length only, and the dataset's
``verified`` says so. ``checksums=`` replaces the table (file name -> accepted digests), e.g. for
files one made oneself.

Cache: reading, checking and decoding a file-based split costs about 1-2 CPU s on (Fashion-)MNIST
(the float64 images alone are 376 MB for the 60,000 training images), and a verify builds Li's image
problems several times. The last ``_LOADS_KEPT`` (2: one data set's train and test split) loads are
kept per process, keyed by each file's identity (``file_checksum.file_identity``: resolved path,
size, modification time) and the digests it was checked against: a file replaced or rewritten
since, or another ``checksums=``, reads the files again; a failed load is never kept. The
datasets are immutable (read-only arrays), so callers share them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .data_folder import data_folder
from .cifar import parse_cifar10
from .file_checksum import FileIdentity, check_digests, file_identity, read_checked
from .idx import parse_idx
from .validation import ProblemError

__all__ = [
    "BUNDLED",
    "DEBIAN_FASHION_MNIST",
    "IMAGE_DATASETS",
    "PUBLISHED_MD5",
    "SPLITS",
    "AvailableDataset",
    "ImageDataset",
    "available_image_datasets",
    "image_folders",
    "load_images",
    "resolve_image_dataset",
]

IMAGE_DATASETS = ("digits", "mnist", "fashion-mnist", "cifar10")
"""The data sets ``load_images`` reads."""
SPLITS = ("train", "test")
BUNDLED = "bundled"
"""The ``source`` of the digits: shipped inside scikit-learn, not read from a data folder."""
DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
"""Where Debian's dataset-fashion-mnist package installs the four gzipped IDX files."""

_IDX_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
_IDX_SIDES = (28, 28)  # MNIST and Fashion-MNIST images are 28 x 28 (LeCun et al.; Xiao et al. 2017)
_CIFAR_ARCHIVE = "cifar-10-python.tar.gz"
_DIGITS_TEST_EVERY = 5  # row i of the digits is in "test" when i % 5 == 4
_DIGITS_LEVELS = 16.0  # the digits' intensities are integers 0..16
_BYTE_LEVELS = 255.0
_LOADS_KEPT = 2  # loads cached per process: one data set's train and test split (li_images reads both)

PUBLISHED_MD5: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "mnist": {  # torchvision/datasets/mnist.py, MNIST.resources
        "train-images-idx3-ubyte.gz": ("f68b3c2dcbeaaa9fbdd348bbdeb94873",),
        "train-labels-idx1-ubyte.gz": ("d53e105ee54ea40749a09fcbcd1e9432",),
        "t10k-images-idx3-ubyte.gz": ("9fb629c4189551a2d022fa330f9573f3",),
        "t10k-labels-idx1-ubyte.gz": ("ec29112dd5afa0611ce80d1b7f02629c",),
    },
    "fashion-mnist": {  # zalandoresearch/fashion-mnist README; Debian dataset-fashion-mnist md5sums
        "train-images-idx3-ubyte.gz": ("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "cf8536b0aa1a6ac5fa3f23001093305c"),
        "train-labels-idx1-ubyte.gz": ("25c81989df183df01b3e8a0aad5dffbe", "10bea18fdb374794d4bb42e356e600c9"),
        "t10k-images-idx3-ubyte.gz": ("bef4ecab320f06d8554ea6380940ec79", "f78720b4224f21cce2f2ccf2d7a94c9a"),
        "t10k-labels-idx1-ubyte.gz": ("bb300cfdad3c16e7a12a480ee83cd310", "0d30e22e447f3c33dab9ed536400ac01"),
    },
    "cifar10": {_CIFAR_ARCHIVE: ("c58f30108f718f92721af3b95e74349a",)},  # https://www.cs.toronto.edu/~kriz/cifar.html
}
"""Accepted MD5 digests of each data set's files (module docstring gives the sources)."""


@dataclass(frozen=True, eq=False)
class ImageDataset:
    """A labelled image set: images (n, H, W, C) float64 in [0, 1], labels (n,) int64 in
    [0, n_classes), the data set's ``name``, the ``split``, its ``source`` (the folder read, or
    "bundled") and ``verified``, a sentence saying how its files were checked. The arrays are made
    read-only (in place: a float64 array passed in is kept, not copied)."""

    name: str
    split: str
    images: np.ndarray
    labels: np.ndarray
    n_classes: int
    source: str
    verified: str

    def __post_init__(self) -> None:
        images = np.asarray(self.images, dtype=np.float64)  # no copy of the loaders' float64 arrays
        labels = np.asarray(self.labels)
        if images.ndim != 4 or images.shape[0] == 0:
            raise ProblemError(f"images: expected a non-empty (n, H, W, C) array, got shape {images.shape}")
        if not (np.all(np.isfinite(images)) and images.min() >= 0.0 and images.max() <= 1.0):
            raise ProblemError("images: values must lie in [0, 1]")
        if labels.dtype.kind not in "iu" or labels.shape != (images.shape[0],):
            raise ProblemError(f"labels: expected {images.shape[0]} integer labels, got {labels.dtype} {labels.shape}")
        if labels.min() < 0 or labels.max() >= self.n_classes:
            raise ProblemError(f"labels: must lie in [0, {self.n_classes})")
        for array in (images, labels):
            array.setflags(write=False)
        object.__setattr__(self, "images", images)
        object.__setattr__(self, "labels", labels.astype(np.int64))

    @property
    def n(self) -> int:
        """Number of images."""
        return int(self.images.shape[0])

    def features(self) -> np.ndarray:
        """The images as rows (n, H W C), pixels in row-major order, channels last."""
        return self.images.reshape(self.n, -1)

    def describe(self) -> str:
        """One line: name, split, shape and source."""
        n, H, W, C = self.images.shape
        return f"{self.name} ({self.split}, {n} images {H}x{W}x{C}, {self.n_classes} classes; from {self.source})"


@dataclass(frozen=True)
class AvailableDataset:
    """A data set ``load_images`` can read on this machine, and where it would read it from."""

    name: str
    source: str


def image_folders(name: str, data_dir: str | os.PathLike[str] | None = None) -> tuple[Path, ...]:
    """The folders searched for data set ``name``, in order (module docstring)."""
    _check_name(name)
    folders = [data_folder(data_dir) / name] if data_dir is not None else []
    folders.append(data_folder() / name)
    if name == "fashion-mnist":
        folders.append(DEBIAN_FASHION_MNIST)
    return tuple(dict.fromkeys(folders))


def available_image_datasets(data_dir: str | os.PathLike[str] | None = None) -> tuple[AvailableDataset, ...]:
    """The data sets present on this machine (their training files found; contents are checked on
    loading, not here): always the bundled digits, then each file-based set found."""
    found = [AvailableDataset("digits", BUNDLED)]
    for name in IMAGE_DATASETS[1:]:
        folder = _folder_of(name, "train", data_dir)
        if folder is not None:
            found.append(AvailableDataset(name, str(folder)))
    return tuple(found)


def resolve_image_dataset(dataset: str, order: tuple[str, ...],
                          data_dir: str | os.PathLike[str] | None = None) -> str:
    """The data set a claim runs on: ``dataset`` itself when it is one of ``order``, or for "auto" the
    first of ``order`` present on this machine (``available_image_datasets``; ``order`` ends with the
    bundled "digits", so "auto" always resolves). ProblemError naming ``dataset`` for any other value."""
    if dataset != "auto" and dataset not in order:
        raise ProblemError(f"dataset: expected one of auto, {', '.join(order)}, got {dataset!r}")
    if dataset != "auto":
        return dataset
    found = {entry.name for entry in available_image_datasets(data_dir)}
    return next(name for name in order if name in found)


def load_images(
    name: str,
    split: str = "train",
    data_dir: str | os.PathLike[str] | None = None,
    *,
    checksums: Mapping[str, tuple[str, ...]] | None = None,
) -> ImageDataset:
    """Data set ``name`` ("digits", "mnist", "fashion-mnist", "cifar10"), split "train" or "test",
    found as the module docstring says. ``checksums`` (file name -> accepted MD5 digests) replaces
    the published table for this call. ProblemError naming the field or the file otherwise."""
    _check_name(name)
    if split not in SPLITS:
        raise ProblemError(f"split: expected one of {', '.join(SPLITS)}, got {split!r}")
    if name == "digits":
        return _digits(split)
    folder = _folder_of(name, split, data_dir)
    if folder is None:
        searched = ", ".join(str(f) for f in image_folders(name, data_dir))
        raise ProblemError(
            f"name: no {name} files found (searched {searched}); put them in one of these folders, or use the bundled "
            "'digits'"
        )
    digests = PUBLISHED_MD5[name] if checksums is None else checksums
    files = (folder / _CIFAR_ARCHIVE,) if name == "cifar10" else tuple(_idx_path(folder, b) for b in _IDX_FILES[split])
    checked = tuple((check_digests(digests.get(path.name, ())), file_identity(path)) for path in files)
    return _read_files(name, split, str(folder), checked)


@functools.lru_cache(maxsize=_LOADS_KEPT)
def _read_files(name: str, split: str, folder: str,
                checked: tuple[tuple[tuple[str, ...], FileIdentity], ...]) -> ImageDataset:
    """Split ``split`` of file-based data set ``name`` read from ``folder``'s files, each given with
    its accepted digests and its identity when found (``load_images``' in-process cache: the
    module docstring)."""
    if name == "cifar10":
        ((accepted, file),) = checked
        images, labels = parse_cifar10(read_checked(file.path, accepted), split, str(file.path))
        how = _how(file.path, accepted, "no digest given, archive and batch structure checked")
        return ImageDataset(name, split, images / _BYTE_LEVELS, labels, 10, folder, how)
    arrays, notes = [], []
    for accepted, file in checked:
        arrays.append(parse_idx(read_checked(file.path, accepted), str(file.path)))
        notes.append(_how(file.path, accepted, "no published digest, IDX header and length checked"))
    images, labels = arrays
    (_, image_file), (_, label_file) = checked
    if images.ndim != 3 or images.dtype != np.uint8 or images.shape[1:] != _IDX_SIDES:
        raise ProblemError(f"{image_file.path}: expected (n, {_IDX_SIDES[0]}, {_IDX_SIDES[1]}) unsigned bytes, the "
                           f"{name} images, got {images.dtype} {images.shape}")
    if images.shape[0] == 0:
        raise ProblemError(f"{image_file.path}: holds 0 images (its IDX header gives shape {images.shape})")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0] or labels.dtype.kind not in "iu" or labels.max() > 9:
        raise ProblemError(f"{label_file.path}: expected {images.shape[0]} labels in 0..9, "
                           f"got {labels.dtype} {labels.shape}")
    return ImageDataset(name, split, images[..., None] / _BYTE_LEVELS, labels.astype(np.int64), 10, folder,
                        "; ".join(notes))


def _check_name(name: str) -> None:
    if name not in IMAGE_DATASETS:
        raise ProblemError(f"name: unknown image data set {name!r}; known: {', '.join(IMAGE_DATASETS)}")


def _digits(split: str) -> ImageDataset:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    rows = np.arange(bunch.target.size)
    chosen = (rows % _DIGITS_TEST_EVERY == _DIGITS_TEST_EVERY - 1) == (split == "test")
    images = bunch.images[chosen][..., None] / _DIGITS_LEVELS
    return ImageDataset("digits", split, images, bunch.target[chosen].astype(np.int64), 10, BUNDLED,
                        "bundled with scikit-learn (sklearn.datasets.load_digits), no file to check")


def _idx_path(folder: Path, base: str) -> Path:
    gz = folder / f"{base}.gz"
    return gz if gz.exists() else folder / base


def _folder_of(name: str, split: str, data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The first folder holding any file of ``split`` of ``name``, or None."""
    if name == "cifar10":
        wanted = (_CIFAR_ARCHIVE,)
    else:
        wanted = tuple(f"{base}{suffix}" for base in _IDX_FILES[split] for suffix in (".gz", ""))
    for folder in image_folders(name, data_dir):
        if any((folder / file).exists() for file in wanted):
            return folder
    return None


def _how(path: Path, accepted: tuple[str, ...], otherwise: str) -> str:
    """How a file was checked: by its MD5, or (no digest to compare with) by ``otherwise``."""
    return f"{path.name}: MD5 matched a published digest" if accepted else f"{path.name}: {otherwise}"
