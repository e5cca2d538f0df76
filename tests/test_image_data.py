"""Image data offline: IDX files (gzipped or not) and CIFAR-10 python batches written in their real
formats in tmp_path, checked against digests the tests pass explicitly; the discovery order; the
bundled 8x8 digits; one clear error naming the file for a missing, truncated or corrupt one."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest

import problems.image_data as image_data
from problems import (
    BUNDLED,
    PUBLISHED_MD5,
    ImageDataset,
    ProblemError,
    available_image_datasets,
    image_folders,
    load_images,
)

RNG = np.random.default_rng(7)


def idx_bytes(array: np.ndarray) -> bytes:
    """An IDX file: magic 00 00 08 D, D big-endian uint32 sizes, the unsigned bytes."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist(folder: Path, split: str, n: int, *, gz: bool = True) -> tuple[np.ndarray, np.ndarray, dict]:
    """Images (n, 28, 28) and labels written as the split's two IDX files; their MD5 digests."""
    prefix = "train" if split == "train" else "t10k"
    images = RNG.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = RNG.integers(0, 10, size=n, dtype=np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    digests = {}
    for base, array in ((f"{prefix}-images-idx3-ubyte", images), (f"{prefix}-labels-idx1-ubyte", labels)):
        content = idx_bytes(array)
        name = f"{base}.gz" if gz else base
        if gz:
            content = gzip.compress(content, mtime=0)
        (folder / name).write_bytes(content)
        digests[name] = (hashlib.md5(content).hexdigest(),)
    return images, labels, digests


def cifar_archive(path: Path, batches: dict[str, object]) -> str:
    """A cifar-10-python.tar.gz holding the given pickled members; its MD5."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, payload in batches.items():
            data = payload if isinstance(payload, bytes) else pickle.dumps(payload, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return hashlib.md5(buffer.getvalue()).hexdigest()


def cifar_batch(n: int) -> dict:
    return {b"batch_label": b"test", b"data": RNG.integers(0, 256, size=(n, 3072), dtype=np.uint8),
            b"labels": [int(v) for v in RNG.integers(0, 10, size=n)]}


@pytest.fixture(autouse=True)
def no_machine_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the machine's own data folders never take part: $FEDBOUND_DATA and the Debian folder point into tmp_path
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "env"))
    monkeypatch.setattr(image_data, "DEBIAN_FASHION_MNIST", tmp_path / "debian" / "fashion-mnist")


@pytest.mark.parametrize("gz", [True, False])
def test_idx_files_load_scaled_with_their_digests(tmp_path: Path, gz: bool) -> None:
    images, labels, digests = write_mnist(tmp_path / "mine" / "mnist", "test", 5, gz=gz)
    data = load_images("mnist", "test", tmp_path / "mine", checksums=digests)
    assert isinstance(data, ImageDataset) and data.images.shape == (5, 28, 28, 1)
    np.testing.assert_array_equal(data.images[..., 0], images / 255.0)
    np.testing.assert_array_equal(data.labels, labels)
    assert data.source == str(tmp_path / "mine" / "mnist") and data.name == "mnist" and data.split == "test"
    assert data.verified.count("MD5 matched") == 2
    assert data.features().shape == (5, 784)


def test_uncompressed_files_without_digest_say_they_were_only_structure_checked(tmp_path: Path) -> None:
    write_mnist(tmp_path / "mine" / "mnist", "train", 3, gz=False)
    data = load_images("mnist", "train", tmp_path / "mine")  # the published table has no uncompressed digests
    assert data.verified.count("no published digest, IDX header and length checked") == 2


def test_published_digests_reject_a_file_that_is_not_the_published_one(tmp_path: Path) -> None:
    write_mnist(tmp_path / "mine" / "fashion-mnist", "train", 3)
    with pytest.raises(ProblemError, match=r"train-images-idx3-ubyte\.gz: MD5 [0-9a-f]{32} is not the published"):
        load_images("fashion-mnist", "train", tmp_path / "mine")
    assert PUBLISHED_MD5["fashion-mnist"]["train-images-idx3-ubyte.gz"][0] == "8d4fb7e6c68d591d4c3dfef9ec88bf0d"


def test_corrupt_truncated_and_missing_files_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "mnist"
    _, _, digests = write_mnist(folder, "test", 4)
    path = folder / "t10k-images-idx3-ubyte.gz"
    content = path.read_bytes()
    path.write_bytes(content[:-7])  # a partial download: its digest differs
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte\.gz: MD5 .* truncated or corrupt"):
        load_images("mnist", "test", tmp_path / "mine", checksums=digests)
    # without a digest to compare with, the broken gzip stream is found
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte\.gz: broken gzip stream"):
        load_images("mnist", "test", tmp_path / "mine", checksums={})
    # an uncompressed file one value short: the header's shape and the length disagree
    path.unlink()
    raw = folder / "t10k-images-idx3-ubyte"
    raw.write_bytes(idx_bytes(np.zeros((4, 28, 28), dtype=np.uint8))[:-1])
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte: the IDX header gives shape \(4, 28, 28\)"):
        load_images("mnist", "test", tmp_path / "mine", checksums={})
    raw.write_bytes(b"\x01\x02\x08\x03")
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte: not an IDX file"):
        load_images("mnist", "test", tmp_path / "mine", checksums={})
    raw.unlink()
    (folder / "t10k-labels-idx1-ubyte.gz").rename(folder / "t10k-labels-idx1-ubyte.gz.bak")
    (folder / "t10k-images-idx3-ubyte").write_bytes(idx_bytes(np.zeros((4, 28, 28), dtype=np.uint8)))
    with pytest.raises(ProblemError, match=r"t10k-labels-idx1-ubyte: cannot read the file"):
        load_images("mnist", "test", tmp_path / "mine", checksums={})


def test_labels_that_do_not_match_the_images_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "mnist"
    folder.mkdir(parents=True)
    (folder / "t10k-images-idx3-ubyte").write_bytes(idx_bytes(np.zeros((4, 28, 28), dtype=np.uint8)))
    (folder / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(3, dtype=np.uint8)))
    with pytest.raises(ProblemError, match=r"t10k-labels-idx1-ubyte: expected 4 labels"):
        load_images("mnist", "test", tmp_path / "mine")


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file load_images reads from now on, by name."""
    reads: list[str] = []
    read = image_data.read_checked

    def counted(path: Path, accepted: tuple[str, ...] = ()) -> bytes:
        reads.append(Path(path).name)
        return read(path, accepted)

    monkeypatch.setattr(image_data, "read_checked", counted)
    return reads


def test_an_unchanged_split_is_read_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_reads(monkeypatch)
    _, _, digests = write_mnist(tmp_path / "mine" / "mnist", "test", 3)
    first = load_images("mnist", "test", tmp_path / "mine", checksums=digests)
    assert reads == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    assert load_images("mnist", "test", tmp_path / "mine", checksums=digests) is first  # immutable: shared
    assert len(reads) == 2
    # the same files checked against other digests are read and checked again: a wrong one is refused
    wrong = {name: ("0" * 32,) for name in digests}
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte\.gz: MD5 .* is not the published 0{32}"):
        load_images("mnist", "test", tmp_path / "mine", checksums=wrong)


def test_a_changed_file_is_read_again_not_served_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_reads(monkeypatch)
    folder = tmp_path / "mine" / "mnist"
    images, labels, _ = write_mnist(folder, "test", 3, gz=False)
    path = folder / "t10k-images-idx3-ubyte"
    before = load_images("mnist", "test", tmp_path / "mine")
    np.testing.assert_array_equal(before.images[..., 0], images / 255.0)
    stamp = path.stat().st_mtime_ns
    # the same size, another modification time: rewritten in place, the new bytes are what load_images returns
    path.write_bytes(idx_bytes(255 - images))
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
    after = load_images("mnist", "test", tmp_path / "mine")
    np.testing.assert_array_equal(after.images[..., 0], (255 - images) / 255.0)
    np.testing.assert_array_equal(after.labels, labels)
    assert reads.count("t10k-images-idx3-ubyte") == 2
    # another size (a truncated copy) at the old time: found, not served from the cache
    path.write_bytes(idx_bytes(images)[:-1])
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ProblemError, match=r"t10k-images-idx3-ubyte: the IDX header gives shape \(3, 28, 28\)"):
        load_images("mnist", "test", tmp_path / "mine")
    # replaced by another file (a new path behind the same name)
    path.unlink()
    (folder / "elsewhere").write_bytes(idx_bytes(images))
    path.symlink_to(folder / "elsewhere")
    os.utime(folder / "elsewhere", ns=(stamp + 10**9, stamp + 10**9))  # even at the rewrite's size and time
    np.testing.assert_array_equal(load_images("mnist", "test", tmp_path / "mine").images[..., 0], images / 255.0)


def test_cifar_batches_load_in_channel_last_layout(tmp_path: Path) -> None:
    batches = {f"data_batch_{i}": cifar_batch(3) for i in range(1, 6)} | {"test_batch": cifar_batch(2)}
    md5 = cifar_archive(tmp_path / "mine" / "cifar10" / "cifar-10-python.tar.gz", batches)
    train = load_images("cifar10", "train", tmp_path / "mine", checksums={"cifar-10-python.tar.gz": (md5,)})
    assert train.images.shape == (15, 32, 32, 3) and train.n_classes == 10
    first = batches["data_batch_1"][b"data"][0]
    # row layout: 1024 red, 1024 green, 1024 blue values, each plane row-major
    np.testing.assert_array_equal(train.images[0, 1, 2] * 255.0, first[[32 + 2, 1024 + 32 + 2, 2048 + 32 + 2]])
    np.testing.assert_array_equal(train.labels[:3], batches["data_batch_1"][b"labels"])
    np.testing.assert_array_equal(train.labels[12:], batches["data_batch_5"][b"labels"])
    test = load_images("cifar10", "test", tmp_path / "mine", checksums={"cifar-10-python.tar.gz": (md5,)})
    assert test.n == 2 and "MD5 matched" in test.verified


class Payload:
    """Unpickling this would run os.system: the restricted unpickler must refuse it."""

    def __reduce__(self):
        import os

        return (os.system, ("echo pwned > /dev/null",))


def test_cifar_unpickler_refuses_any_other_global(tmp_path: Path) -> None:
    batches = {f"data_batch_{i}": cifar_batch(1) for i in range(1, 6)}
    batches["data_batch_3"] = pickle.dumps({b"data": Payload()}, protocol=2)
    cifar_archive(tmp_path / "mine" / "cifar10" / "cifar-10-python.tar.gz", batches)
    with pytest.raises(ProblemError, match=r"member cifar-10-batches-py/data_batch_3: not a CIFAR-10 batch "
                                           r"\(global posix\.system is not allowed"):
        load_images("cifar10", "train", tmp_path / "mine", checksums={})


def test_cifar_missing_member_and_truncated_archive_are_named(tmp_path: Path) -> None:
    path = tmp_path / "mine" / "cifar10" / "cifar-10-python.tar.gz"
    cifar_archive(path, {f"data_batch_{i}": cifar_batch(1) for i in range(1, 5)})
    with pytest.raises(ProblemError, match=r"member cifar-10-batches-py/data_batch_5: missing from the archive"):
        load_images("cifar10", "train", tmp_path / "mine", checksums={})
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ProblemError, match=r"cifar-10-python\.tar\.gz: not a readable tar\.gz archive"):
        load_images("cifar10", "train", tmp_path / "mine", checksums={})


def test_discovery_order_data_dir_then_env_then_debian(tmp_path: Path) -> None:
    assert image_folders("fashion-mnist", tmp_path / "mine") == (
        tmp_path / "mine" / "fashion-mnist", tmp_path / "env" / "fashion-mnist", tmp_path / "debian" / "fashion-mnist")
    assert image_folders("mnist") == (tmp_path / "env" / "mnist",)
    _, debian_labels, debian = write_mnist(tmp_path / "debian" / "fashion-mnist", "test", 2)
    assert load_images("fashion-mnist", "test", checksums=debian).source == str(tmp_path / "debian" / "fashion-mnist")
    _, env_labels, env = write_mnist(tmp_path / "env" / "fashion-mnist", "test", 3)
    assert load_images("fashion-mnist", "test", checksums=env).n == 3  # $FEDBOUND_DATA before the Debian folder
    _, _, mine = write_mnist(tmp_path / "mine" / "fashion-mnist", "test", 4)
    assert load_images("fashion-mnist", "test", tmp_path / "mine", checksums=mine).n == 4  # data_dir first
    found = available_image_datasets(tmp_path / "mine")
    assert [(d.name, d.source) for d in found] == [("digits", BUNDLED)]  # only test files there: no training set
    write_mnist(tmp_path / "mine" / "fashion-mnist", "train", 2)
    assert [d.name for d in available_image_datasets(tmp_path / "mine")] == ["digits", "fashion-mnist"]


def test_nothing_found_names_the_folders_searched(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match=r"name: no mnist files found \(searched .*env/mnist\)"):
        load_images("mnist", "train")


def test_bundled_digits_split_four_to_one() -> None:
    train, test = load_images("digits", "train"), load_images("digits", "test")
    assert train.images.shape == (1438, 8, 8, 1) and test.images.shape == (359, 8, 8, 1)
    assert train.source == BUNDLED and "scikit-learn" in train.verified
    assert train.images.min() == 0.0 and train.images.max() == 1.0
    counts = np.bincount(train.labels, minlength=10) + np.bincount(test.labels, minlength=10)
    assert counts.sum() == 1797 and counts.min() >= 170  # every digit about 180 times


@pytest.mark.parametrize(("name", "split", "field"), [("svhn", "train", "name"), ("digits", "val", "split"),
                                                       ("mnist", "all", "split")])
def test_bad_name_or_split_is_named(name: str, split: str, field: str) -> None:
    with pytest.raises(ProblemError, match=rf"^{field}: "):
        load_images(name, split)


def test_checksums_must_be_tuples_of_hex_digests(tmp_path: Path) -> None:
    _, _, digests = write_mnist(tmp_path / "mine" / "mnist", "test", 2)
    bare = {name: value[0] for name, value in digests.items()}  # a string, not a tuple: refused, not split
    with pytest.raises(ProblemError, match=r"^accepted: expected a tuple of MD5 digests"):
        load_images("mnist", "test", tmp_path / "mine", checksums=bare)
