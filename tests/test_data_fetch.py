"""`fedbound data fetch` against a local HTTP server on 127.0.0.1 (an ephemeral port, a thread):
tiny files in the real formats (gzipped IDX files, a CIFAR-style tar.gz), their URLs and digests
passed through ``fetch_dataset(sources=...)``. A fetched set loads through ``load_images``; a
corrupt byte, a 404, a short body and a foreign file in place are refused, each naming the file;
a file already in place and verified is not requested again. Nothing is downloaded from the internet."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import pickle
import struct
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import problems.data_fetch as data_fetch
from problems import FETCHABLE, PUBLISHED_MD5, SOURCES, FetchError, ProblemError, RemoteFile, fetch_dataset, load_images
from reports.cli import main

RNG = np.random.default_rng(11)


class _Server:
    """Files served by path; every GET path is logged. ``short`` paths announce 10 bytes more than they send."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.short: set[str] = set()
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                extra = 10 if self.path in server.short else 0
                self.send_header("Content-Length", str(len(body) + extra))
                self.end_headers()
                self.wfile.write(body)
                if extra:
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def remote(self, name: str, content: bytes, *, md5: str | None = None) -> RemoteFile:
        """Serve ``content`` as /NAME; its RemoteFile with the true digest (or ``md5``)."""
        self.files[f"/{name}"] = content
        return RemoteFile(name, f"{self.base}/{name}", md5 or hashlib.md5(content).hexdigest())


@pytest.fixture
def server() -> Iterator[_Server]:
    served = _Server()
    yield served
    served.httpd.shutdown()
    served.httpd.server_close()


@pytest.fixture(autouse=True)
def no_machine_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEDBOUND_DATA", str(tmp_path / "env"))


def _idx_gz(array: np.ndarray) -> bytes:
    """A gzipped IDX file of unsigned bytes: magic 00 00 08 D, D big-endian uint32 sizes, the values."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return gzip.compress(header + array.astype(np.uint8).tobytes(), mtime=0)


def _mnist_files(server: _Server) -> tuple[tuple[RemoteFile, ...], dict[str, np.ndarray]]:
    """The four MNIST files (3 training and 2 test images), served; the arrays they hold."""
    arrays = {
        "train-images-idx3-ubyte.gz": RNG.integers(0, 256, size=(3, 28, 28)),
        "train-labels-idx1-ubyte.gz": RNG.integers(0, 10, size=3),
        "t10k-images-idx3-ubyte.gz": RNG.integers(0, 256, size=(2, 28, 28)),
        "t10k-labels-idx1-ubyte.gz": RNG.integers(0, 10, size=2),
    }
    return tuple(server.remote(name, _idx_gz(a)) for name, a in arrays.items()), arrays


def _cifar_archive() -> tuple[bytes, np.ndarray, np.ndarray]:
    """A cifar-10-python.tar.gz with 2 images per batch; the test batch's data and labels."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            data = RNG.integers(0, 256, size=(2, 3072), dtype=np.uint8)
            labels = [int(v) for v in RNG.integers(0, 10, size=2)]
            payload = pickle.dumps({b"data": data, b"labels": labels}, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{member}")
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
    return buffer.getvalue(), data, np.array(labels)


def _checksums(files: tuple[RemoteFile, ...]) -> dict[str, tuple[str, ...]]:
    return {f.name: (f.md5,) for f in files}


def test_a_fetched_mnist_loads_through_load_images(server: _Server, tmp_path: Path) -> None:
    files, arrays = _mnist_files(server)
    fetched = fetch_dataset("mnist", tmp_path / "data", sources={"mnist": files})
    assert [f.downloaded for f in fetched] == [True] * 4
    assert all(f.path.parent == tmp_path / "data" / "mnist" for f in fetched)
    test = load_images("mnist", "test", tmp_path / "data", checksums=_checksums(files))
    np.testing.assert_array_equal(test.images[..., 0] * 255, arrays["t10k-images-idx3-ubyte.gz"])
    np.testing.assert_array_equal(test.labels, arrays["t10k-labels-idx1-ubyte.gz"])
    assert "MD5 matched" in test.verified
    assert not list((tmp_path / "data" / "mnist").glob("*.part"))


def test_a_fetched_cifar_archive_loads_through_load_images(server: _Server, tmp_path: Path) -> None:
    archive, data, labels = _cifar_archive()
    files = (server.remote("cifar-10-python.tar.gz", archive),)
    fetch_dataset("cifar10", tmp_path, sources={"cifar10": files})
    test = load_images("cifar10", "test", tmp_path, checksums=_checksums(files))
    expected = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(np.rint(test.images * 255), expected)
    np.testing.assert_array_equal(test.labels, labels)


def test_the_default_folder_is_the_one_discovery_reads_first(server: _Server, tmp_path: Path) -> None:
    files, _ = _mnist_files(server)
    fetched = fetch_dataset("mnist", sources={"mnist": files})
    assert fetched[0].path.parent == tmp_path / "env" / "mnist"  # $FEDBOUND_DATA/NAME, else the user cache folder
    assert load_images("mnist", "train", checksums=_checksums(files)).source == str(tmp_path / "env" / "mnist")


def test_a_corrupt_byte_is_refused_and_nothing_is_kept(server: _Server, tmp_path: Path) -> None:
    content = _idx_gz(RNG.integers(0, 10, size=5))
    published = hashlib.md5(content).hexdigest()
    corrupt = bytearray(content)
    corrupt[-3] ^= 0x01
    remote = server.remote("train-labels-idx1-ubyte.gz", bytes(corrupt), md5=published)
    with pytest.raises(FetchError) as error:
        fetch_dataset("mnist", tmp_path, sources={"mnist": (remote,)})
    message = str(error.value)
    assert remote.name in message and remote.url in message
    assert published in message and hashlib.md5(bytes(corrupt)).hexdigest() in message
    assert list((tmp_path / "mnist").iterdir()) == []  # neither the file nor its temporary file


def test_a_404_names_the_file_and_url(server: _Server, tmp_path: Path) -> None:
    missing = RemoteFile("t10k-labels-idx1-ubyte.gz", f"{server.base}/gone/t10k-labels-idx1-ubyte.gz", "0" * 32)
    with pytest.raises(FetchError, match=r"t10k-labels-idx1-ubyte\.gz .*/gone/t10k-labels-idx1-ubyte\.gz.*HTTP 404"):
        fetch_dataset("mnist", tmp_path, sources={"mnist": (missing,)})
    assert list((tmp_path / "mnist").iterdir()) == []


def test_a_body_shorter_than_announced_is_refused(server: _Server, tmp_path: Path) -> None:
    remote = server.remote("t10k-labels-idx1-ubyte.gz", _idx_gz(RNG.integers(0, 10, size=4)))
    server.short.add("/t10k-labels-idx1-ubyte.gz")
    with pytest.raises(FetchError, match=r"t10k-labels-idx1-ubyte\.gz \(http://127\.0\.0\.1"):
        fetch_dataset("mnist", tmp_path, sources={"mnist": (remote,)})
    assert list((tmp_path / "mnist").iterdir()) == []


def test_a_verified_file_in_place_is_not_downloaded_again(server: _Server, tmp_path: Path) -> None:
    files, _ = _mnist_files(server)
    fetch_dataset("mnist", tmp_path, sources={"mnist": files})
    assert len(server.requests) == 4
    again = fetch_dataset("mnist", tmp_path, sources={"mnist": files})
    assert len(server.requests) == 4  # no request at all the second time
    assert [f.downloaded for f in again] == [False] * 4
    assert all(f.md5 == r.md5 for f, r in zip(again, files))


def test_a_foreign_file_in_place_is_named_and_left_alone(server: _Server, tmp_path: Path) -> None:
    files, _ = _mnist_files(server)
    (tmp_path / "mnist").mkdir()
    foreign = tmp_path / "mnist" / files[0].name
    foreign.write_bytes(b"not the published file")
    with pytest.raises(FetchError, match=rf"{files[0].name}: already present with MD5 "
                                         rf"{hashlib.md5(b'not the published file').hexdigest()}, not the published "
                                         rf"{files[0].md5}"):
        fetch_dataset("mnist", tmp_path, sources={"mnist": files})
    assert foreign.read_bytes() == b"not the published file"
    assert server.requests == []


def test_no_server_is_one_error_naming_the_file(tmp_path: Path) -> None:
    with socket_closed_port() as port:
        remote = RemoteFile("cifar-10-python.tar.gz", f"http://127.0.0.1:{port}/cifar-10-python.tar.gz", "0" * 32)
        with pytest.raises(FetchError, match=r"cifar-10-python\.tar\.gz .*cannot reach the server"):
            fetch_dataset("cifar10", tmp_path, sources={"cifar10": (remote,)}, timeout=5)


def socket_closed_port():
    """A port on 127.0.0.1 that nothing listens on (bound, never listening, for the block's duration)."""
    import contextlib
    import socket

    @contextlib.contextmanager
    def bound() -> Iterator[int]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            yield sock.getsockname()[1]

    return bound()


def test_bad_input_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="name: cannot fetch 'digits'"):
        fetch_dataset("digits", tmp_path)
    with pytest.raises(ProblemError, match="timeout"):
        fetch_dataset("mnist", tmp_path, timeout=0)
    with pytest.raises(ProblemError, match="url: expected an http"):
        RemoteFile("a.gz", "ftp://example.org/a.gz", "0" * 32)
    with pytest.raises(ProblemError, match="md5: expected 32 lower-case hex digits"):
        RemoteFile("a.gz", "https://example.org/a.gz", "ABC")
    with pytest.raises(ProblemError, match="name: expected a plain file name"):
        RemoteFile("../a.gz", "https://example.org/a.gz", "0" * 32)


def test_the_published_table() -> None:
    assert FETCHABLE == ("mnist", "fashion-mnist", "cifar10")
    for name, files in SOURCES.items():
        assert {f.name for f in files} == set(PUBLISHED_MD5[name])
        assert all(f.md5 == PUBLISHED_MD5[name][f.name][0] and f.url.endswith("/" + f.name) for f in files)
    assert SOURCES["cifar10"][0].url == "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"


def test_the_cli_fetches_and_reports_errors_in_one_line(server: _Server, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    files, _ = _mnist_files(server)
    # the CLI reads the published table: point its MNIST entry at the local server for this test
    monkeypatch.setitem(data_fetch.SOURCES, "mnist", files)
    assert main(["data", "fetch", "mnist", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert out.out.count("downloaded from http://127.0.0.1") == 4 and "verified" in out.out
    assert out.err == ""  # stderr is not a terminal here: no progress bar
    server.files.clear()
    monkeypatch.setitem(data_fetch.SOURCES, "mnist", files[:1])
    (tmp_path / "mnist" / files[0].name).unlink()
    assert main(["data", "fetch", "mnist", "--data-dir", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert files[0].name in err and files[0].url in err and "HTTP 404" in err


def test_a_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(FetchError, match=rf"{blocker}/mnist: cannot create the data folder"):
        fetch_dataset("mnist", blocker)


def test_the_progress_bar_goes_to_stderr_when_asked(server: _Server, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    files, _ = _mnist_files(server)
    fetch_dataset("mnist", tmp_path, sources={"mnist": files[:1]}, progress=True)
    out = capsys.readouterr()
    assert out.out == "" and files[0].name in out.err
