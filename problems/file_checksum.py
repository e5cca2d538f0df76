"""MD5 digests of data files, checked against the digests their publishers print.

MD5 is what the publishers of MNIST (through torchvision's mirror list), Fashion-MNIST and CIFAR-10
print beside their files; it guards against truncated and corrupted downloads, not against
tampering. ``read_checked(path, accepted)`` reads a file whole and, when ``accepted`` names digests,
requires the MD5 of its bytes to be one of them; every failure is one ProblemError naming the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .validation import ProblemError

__all__ = ["read_checked"]


def read_checked(path: Path, accepted: tuple[str, ...] = ()) -> bytes:
    """The bytes of ``path``; when ``accepted`` is not empty its MD5 hex digest must be one of them.

    ProblemError naming the file when it is missing or unreadable, or when its digest is none of
    the accepted ones (a truncated, partial or corrupt copy); ProblemError naming ``accepted`` when a
    digest is not 32 lower-case hex digits.
    """
    if isinstance(accepted, str):
        raise ProblemError(f"accepted: expected a tuple of MD5 digests, got the string {accepted!r}")
    for md5 in accepted:
        if not isinstance(md5, str) or len(md5) != 32 or any(c not in "0123456789abcdef" for c in md5):
            raise ProblemError(f"accepted: expected MD5 digests of 32 lower-case hex digits, got {md5!r}")
    try:
        content = Path(path).read_bytes()
    except OSError as exc:
        raise ProblemError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if accepted:
        found = hashlib.md5(content).hexdigest()
        if found not in accepted:
            raise ProblemError(
                f"{path}: MD5 {found} is not the published {' or '.join(accepted)}: the file is truncated or corrupt "
                "(download it again)"
            )
    return content
