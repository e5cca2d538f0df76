"""`fedbound data fetch`: download an image data set's files from their published source, checked.

``fetch_dataset(name, data_dir=None)`` downloads every file of ``mnist``, ``fashion-mnist`` or
``cifar10`` into ``data_folder(data_dir) / NAME`` -- by default ``$FEDBOUND_DATA/NAME`` or the
user cache folder's ``NAME``, the folder ``image_data.load_images`` searches first when no
``data_dir`` is given (with ``data_dir``, the folder it searches first then). Sources
(``SOURCES``; the digests are ``image_data.PUBLISHED_MD5``'s, the first one listed):

* MNIST: ``https://ossci-datasets.s3.amazonaws.com/mnist/`` -- PyTorch's mirror, the first entry
  of torchvision's ``MNIST.mirrors``. The original host, http://yann.lecun.com/exdb/mnist/, no
  longer serves the files to scripts (it answers 403 / asks for a login), so the mirror is used;
  the digests are those torchvision lists, and the files are byte-identical to LeCun's.
* Fashion-MNIST: ``http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/``, the location
  zalandoresearch/fashion-mnist's README links (plain HTTP: an S3 website endpoint has no TLS;
  the published MD5 is what protects the content).
* CIFAR-10: ``https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz`` (Krizhevsky's page).

Per file: a file already in place whose MD5 is a published digest is skipped (not downloaded
again); one in place with another digest is an error naming it and both digests (it is never
overwritten: delete it to fetch again). Otherwise the body is streamed in 64 KiB chunks into a
fresh temporary file ``.NAME.*.part`` in the destination folder while its MD5 is computed; the
temporary file is moved into place (``os.replace``, atomic on one file system) only when the
digest matches (and the length matches the server's Content-Length, when it sent one). A
mismatch, a short body, an HTTP error, no network or a disk error deletes the temporary file and
raises ``FetchError`` naming the file and its URL. Nothing is ever resumed: a partial download
from an interrupted run is never in place, and a new run starts each file from its first byte.
Only the standard library's ``urllib.request`` talks to the network.

``sources=`` replaces the table for one call (tests serve small files from 127.0.0.1 that way).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .data_folder import data_folder
from .digest import file_digest, is_hex_digest
from .image_data import PUBLISHED_MD5
from .validation import ProblemError

__all__ = ["FETCHABLE", "SOURCES", "FetchError", "FetchedFile", "RemoteFile", "fetch_dataset"]

_CHUNK = 1 << 16
_TIMEOUT_S = 60.0
_MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
_FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
_CIFAR_URL = "https://www.cs.toronto.edu/~kriz/"


class FetchError(ProblemError):
    """A download that failed: the message names the file and its URL."""


@dataclass(frozen=True)
class RemoteFile:
    """One published file: its ``name`` in the data set's folder, its ``url`` and its MD5 digest."""

    name: str
    url: str
    md5: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or Path(self.name).name != self.name:
            raise ProblemError(f"name: expected a plain file name, got {self.name!r}")
        if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
            raise ProblemError(f"url: expected an http:// or https:// URL for {self.name}, got {self.url!r}")
        if not is_hex_digest(self.md5, "md5"):
            raise ProblemError(f"md5: expected 32 lower-case hex digits for {self.name}, got {self.md5!r}")


def _published(name: str, base_url: str) -> tuple[RemoteFile, ...]:
    return tuple(RemoteFile(file, base_url + file, digests[0]) for file, digests in PUBLISHED_MD5[name].items())


SOURCES: Mapping[str, tuple[RemoteFile, ...]] = {
    "mnist": _published("mnist", _MNIST_URL),
    "fashion-mnist": _published("fashion-mnist", _FASHION_URL),
    "cifar10": _published("cifar10", _CIFAR_URL),
}
"""Each fetchable data set's files, where they are published and their digests (module docstring)."""

FETCHABLE = tuple(SOURCES)
"""The data sets ``fetch_dataset`` downloads (the digits come with scikit-learn)."""


@dataclass(frozen=True)
class FetchedFile:
    """What ``fetch_dataset`` did with one file: ``downloaded`` (False: already present and verified)."""

    path: Path
    url: str
    md5: str
    size: int
    downloaded: bool

    def describe(self) -> str:
        """One line: the file, what was done, its size and digest."""
        how = f"downloaded from {self.url}" if self.downloaded else "already present"
        return f"{self.path}: {how}, {self.size:,} bytes, MD5 {self.md5} matches the published digest"


def fetch_dataset(
    name: str,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    sources: Mapping[str, Sequence[RemoteFile]] | None = None,
    progress: bool = False,
    timeout: float = _TIMEOUT_S,
) -> tuple[FetchedFile, ...]:
    """Download data set ``name``'s files into ``data_folder(data_dir) / name`` (module docstring).

    ``progress`` draws a transient byte-count bar per file on stderr (tqdm). ``timeout`` (seconds)
    bounds each network wait. Returns one ``FetchedFile`` per file, in the table's order. Raises
    ProblemError naming ``name`` for an unknown data set, FetchError naming the file and URL for a
    failed download.
    """
    table = SOURCES if sources is None else sources
    if name not in table:
        raise ProblemError(f"name: cannot fetch {name!r}; fetchable: {', '.join(table)} (digits come with scikit-learn)")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ProblemError(f"timeout: expected a positive number of seconds, got {timeout!r}")
    files = tuple(table[name])
    if not files or not all(isinstance(f, RemoteFile) for f in files):
        raise ProblemError(f"sources: expected a non-empty sequence of RemoteFile for {name!r}")
    folder = data_folder(data_dir) / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"{folder}: cannot create the data folder ({exc.strerror or exc})") from None
    return tuple(_fetch_file(remote, folder, progress, float(timeout)) for remote in files)


def _fetch_file(remote: RemoteFile, folder: Path, progress: bool, timeout: float) -> FetchedFile:
    """One file: skipped when present and verified, else downloaded, checked and moved into place."""
    path = folder / remote.name
    if path.exists():
        try:
            present = file_digest(path, "md5")
        except OSError as exc:
            raise FetchError(f"{path}: cannot read the file in place ({exc.strerror or exc}); "
                             f"source {remote.url}") from None
        if present != remote.md5:
            raise FetchError(
                f"{path}: already present with MD5 {present}, not the published {remote.md5} (from {remote.url}); "
                "it is left as it is: delete it and fetch again"
            )
        return FetchedFile(path, remote.url, present, path.stat().st_size, False)
    try:
        handle = tempfile.NamedTemporaryFile(dir=folder, prefix=f".{remote.name}.", suffix=".part", delete=False)
    except OSError as exc:
        raise FetchError(f"{path}: cannot create a temporary file in {folder} ({exc.strerror or exc})") from None
    temporary = Path(handle.name)
    try:
        with handle:
            size, found = _download(remote, handle, progress, timeout)
        if found != remote.md5:
            raise FetchError(
                f"{remote.name}: downloaded from {remote.url} with MD5 {found}, not the published {remote.md5}: "
                "the download is corrupt (nothing was kept)"
            )
        os.replace(temporary, path)
    except OSError as exc:
        raise FetchError(f"{path}: cannot write the file downloaded from {remote.url} ({exc.strerror or exc})") from None
    finally:
        temporary.unlink(missing_ok=True)
    return FetchedFile(path, remote.url, found, size, True)


def _download(remote: RemoteFile, sink, progress: bool, timeout: float) -> tuple[int, str]:
    """Stream ``remote.url`` into ``sink``; (bytes written, their MD5 hex digest). Network errors are
    FetchErrors naming the file and URL; a failed write to ``sink`` propagates as an OSError."""
    where = f"{remote.name} ({remote.url})"
    try:
        response = urllib.request.urlopen(remote.url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{where}: the server answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"{where}: cannot reach the server ({exc.reason}); check the network") from None
    except TimeoutError:
        raise FetchError(f"{where}: no answer within {timeout:g} s; check the network") from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(f"{where}: cannot reach the server ({exc!r}); check the network") from None
    digest = hashlib.md5()
    size = 0
    with response:
        length = response.headers.get("Content-Length")
        total = int(length) if length is not None and length.isdigit() else None
        with _progress_bar(remote.name, total, progress) as bar:
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except TimeoutError:
                    raise FetchError(f"{where}: the server stopped sending for {timeout:g} s") from None
                except (OSError, http.client.HTTPException) as exc:
                    raise FetchError(f"{where}: the connection broke during the download ({exc!r})") from None
                if not chunk:
                    break
                digest.update(chunk)
                sink.write(chunk)
                size += len(chunk)
                bar.update(len(chunk))
    if total is not None and size != total:
        raise FetchError(f"{where}: received {size:,} of the {total:,} bytes announced: the download was cut short")
    return size, digest.hexdigest()


def _progress_bar(name: str, total: int | None, shown: bool):
    """A tqdm byte bar on stderr (transient), disabled when not ``shown``."""
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="B", unit_scale=True, unit_divisor=1024, leave=False,
                disable=not shown)
