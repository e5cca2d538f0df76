"""The IDX format of MNIST and Fashion-MNIST (LeCun et al., http://yann.lecun.com/exdb/mnist/).

A file is a 4-byte magic number -- two zero bytes, a type code (0x08 unsigned byte, 0x09 signed
byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64) and the number of dimensions D -- then
D big-endian uint32 sizes, then the prod(sizes) values in big-endian C order. MNIST's image files
are (n, 28, 28) unsigned bytes (magic 0x00000803), its label files (n,) (magic 0x00000801). Files
may be gzip-compressed (``.gz``, recognised by the gzip magic bytes 1f 8b, not by the name).

``parse_idx(content, name)`` decodes bytes; every malformed input (short header, zero magic bytes
missing, unknown type, a body shorter or longer than the header says, a broken gzip stream) is
one ProblemError naming the file.
"""

from __future__ import annotations

import gzip
import math
import zlib

import numpy as np

from .validation import ProblemError

__all__ = ["parse_idx"]

_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def parse_idx(content: bytes, name: str) -> np.ndarray:
    """The array an IDX file holds (gzipped or not), in its stored dtype (native byte order)."""
    if content[:2] == _GZIP_MAGIC:
        try:
            content = gzip.decompress(content)
        except (OSError, EOFError, zlib.error) as exc:
            raise ProblemError(f"{name}: broken gzip stream, the file is truncated or corrupt ({exc})") from None
    if len(content) < 4 or content[:2] != b"\x00\x00":
        raise ProblemError(f"{name}: not an IDX file (the magic number must start with two zero bytes)")
    code, ndim = content[2], content[3]
    if code not in _TYPES:
        raise ProblemError(f"{name}: unknown IDX type code 0x{code:02X}")
    header = 4 + 4 * ndim
    if ndim == 0 or len(content) < header:
        raise ProblemError(f"{name}: IDX header truncated ({len(content)} bytes, {ndim} dimensions)")
    shape = tuple(int(s) for s in np.frombuffer(content, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_TYPES[code])
    expected = header + math.prod(shape) * dtype.itemsize  # Python ints: a product of sizes never wraps round
    if len(content) != expected:
        raise ProblemError(
            f"{name}: the IDX header gives shape {shape} ({expected} bytes in all), the file has {len(content)} bytes: "
            "truncated or corrupt"
        )
    values = np.frombuffer(content, dtype=dtype, offset=header).reshape(shape)
    return values.astype(dtype.newbyteorder("="))
