"""The shards' checksums: CRC-32 as ``zlib.crc32`` computes it (gzip's, PNG's), 8 hex digits.

Why not sha256, which manifests before this one carried (and which a resumed run still checks
where a manifest has it): the manifest's checksums are there to catch a shard changed on disk
since it was written, and sha256 cost what the rest of the writing did. On the 2-core machine
(one thread, 48 MB of text, 52 MB of uint32 ids in one shard) it was 4 % of encode-corpus's
run, and 11 % with the last shard's second pass: a shard's header holds its token count, which
for the last shard is known only at its end, so the whole file was read back and hashed again.
CRC-32 runs at 7 GB/s here (sha256 at 2.1) and needs no second pass: the CRC of header + body
follows from the header's CRC, the body's and the body's length (``combine``), so the body is
checked once, as it is written, and the final header on its own.

What CRC-32 gives up is resistance to someone who forges a shard on purpose, which a local
output directory does not need; a changed byte, a torn write or a file swapped for another is
caught as before (with the size check beside it).
"""

from __future__ import annotations

import zlib

# _POWERS[k]: the linear map that runs a CRC register over 2**k zero bytes, as its 32 columns
# (the image of each one-bit register). Made on first use, one squaring per power.
_POWERS: list[list[int]] = []


def _apply(columns: list[int], x: int) -> int:
    out = 0
    i = 0
    while x:
        if x & 1:
            out ^= columns[i]
        x >>= 1
        i += 1
    return out


def _power(k: int) -> list[int]:
    while len(_POWERS) <= k:
        if _POWERS:
            last = _POWERS[-1]
            _POWERS.append([_apply(last, c) for c in last])
        else:
            # zlib.crc32(data, value) is affine in value, and its linear part depends only on
            # len(data): the difference a register bit makes over one zero byte is that part.
            zero = zlib.crc32(b"\0")
            _POWERS.append([zlib.crc32(b"\0", 1 << i) ^ zero for i in range(32)])
    return _POWERS[k]


def combine(crc_a: int, crc_b: int, len_b: int) -> int:
    """``zlib.crc32(a + b)`` from ``zlib.crc32(a)``, ``zlib.crc32(b)`` and ``len(b)``."""
    if len_b < 0:
        raise ValueError(f"len_b must be at least 0, got {len_b}")
    x = crc_a
    k = 0
    while len_b:
        if len_b & 1:
            x = _apply(_power(k), x)
        len_b >>= 1
        k += 1
    return x ^ crc_b


def hexdigest(crc: int) -> str:
    return f"{crc:08x}"


class Crc32:
    """A running CRC-32 with hashlib's ``update`` / ``hexdigest``."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: bytes | memoryview) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return hexdigest(self.value)
