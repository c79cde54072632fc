"""The shard formats: how a shard's tokens (and, for Megatron, its document index) are laid out.

``llmc`` (the default) is the token file llm.c and modded-nanogpt load, as their own writer
(llm.c ``dev/data/data_common.py``) and loaders (llm.c ``llmc/dataloader.h``, modded-nanogpt
``_load_data_shard``) define it: a header of 256 little-endian int32 -- ``[0]`` the magic,
``[1]`` the version, ``[2]`` the number of tokens, the rest zero -- then the tokens.
uint16 tokens use magic 20240520 and version 1 (what both loaders accept); uint32 tokens use
magic 20240801 and version 7 (llm.c's writer for Llama 3; a uint16 loader refuses them, as it
should). The token count is an int32, so a shard holds fewer than 2**31 tokens.

``megatron`` is Megatron-LM's indexed dataset (``megatron/core/datasets/indexed_dataset.py``):
``NAME.bin`` holds the tokens, ``NAME.idx`` the index: ``b"MMIDIDX\\x00\\x00"``, version 1 as
``<Q``, the dtype code as ``<B`` (8 = uint16, 4 = int32), the number of sequences ``<Q`` and of
document-index entries ``<Q``, then the sequence lengths (int32), the byte offset of each
sequence (int64), and the document index (int64: ``0`` then the end of each document, in
sequences). Each document is one sequence; a shard ends at a document boundary.

``npy``: one NumPy ``.npy`` array (format 1.0) per shard, ``<u2`` or ``<u4``: ``b"\\x93NUMPY"``,
bytes 1 and 0 (the version), the header's length as ``<H``, then the header, a dict literal
padded with spaces and ended by a newline so that the tokens start at byte 128 (NumPy's own
writer pads it the same way, leaving room for the shape to grow). The header is written here,
always 128 bytes, so that the last shard's count is patched in place whatever its digits and
whatever NumPy's version.
"""

from __future__ import annotations

import os
import struct
import uuid
import zlib
from typing import Any

import numpy as np

from bytepair.corpus import checksum
from bytepair.corpus.direct import ShardFile, file_hash

FORMATS = ("llmc", "megatron", "npy")

LLMC_HEADER_INTS = 256
LLMC_HEADER_BYTES = LLMC_HEADER_INTS * 4
LLMC_MAGIC = {2: 20240520, 4: 20240801}
LLMC_VERSION = {2: 1, 4: 7}
LLMC_MAX_TOKENS = 2**31 - 1

MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_CODES = {2: 8, 4: 4}  # uint16, int32

EOT_POSITION = {"llmc": "prepend", "npy": "prepend", "megatron": "append"}


def shard_names(fmt: str, index: int) -> list[str]:
    base = f"shard_{index:06d}"
    if fmt == "megatron":
        return [base + ".bin", base + ".idx"]
    return [base + (".npy" if fmt == "npy" else ".bin")]


def llmc_header(itemsize: int, tokens: int) -> bytes:
    header = np.zeros(LLMC_HEADER_INTS, dtype="<i4")
    header[0] = LLMC_MAGIC[itemsize]
    header[1] = LLMC_VERSION[itemsize]
    header[2] = tokens
    return header.tobytes()


NPY_HEADER_BYTES = 128


def npy_header(itemsize: int, tokens: int) -> bytes:
    descr = "<u2" if itemsize == 2 else "<u4"
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({tokens},), }}"
    lead = b"\x93NUMPY\x01\x00" + struct.pack("<H", NPY_HEADER_BYTES - 10)
    pad = NPY_HEADER_BYTES - len(lead) - len(text) - 1  # room for 61 digits: never short
    return lead + (text + " " * pad + "\n").encode("ascii")


def megatron_index(itemsize: int, lengths: list[int]) -> bytes:
    n = len(lengths)
    lens = np.asarray(lengths, dtype="<i4")
    pointers = np.zeros(n, dtype="<i8")
    if n > 1:
        np.cumsum(lens[:-1].astype("<i8") * itemsize, out=pointers[1:])
    doc_index = np.arange(n + 1, dtype="<i8")
    return b"".join(
        [
            MEGATRON_MAGIC,
            struct.pack("<Q", 1),
            struct.pack("<B", MEGATRON_CODES[itemsize]),
            struct.pack("<Q", n),
            struct.pack("<Q", n + 1),
            lens.tobytes(),
            pointers.tobytes(),
            doc_index.tobytes(),
        ]
    )


def header_bytes(fmt: str, itemsize: int, tokens: int) -> bytes:
    if fmt == "llmc":
        return llmc_header(itemsize, tokens)
    if fmt == "npy":
        return npy_header(itemsize, tokens)
    return b""


def _tmp(path: str) -> str:
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")


class ShardWriter:
    """Writes one shard to temporary files as tokens come, then renames them into place
    (``close``): a reader (or a resumed run) never sees a half-written shard."""

    def __init__(self, outdir: str, fmt: str, itemsize: int, index: int, expected_tokens: int) -> None:
        self.fmt = fmt
        self.itemsize = itemsize
        self.names = shard_names(fmt, index)
        self.paths = [os.path.join(outdir, n) for n in self.names]
        self.tmps = [_tmp(p) for p in self.paths]
        self.tokens = 0
        self.lengths: list[int] = []
        self.header = header_bytes(fmt, itemsize, expected_tokens)
        self.file = ShardFile(self.tmps[0])  # O_DIRECT where possible (corpus/direct.py)
        self.file.write(self.header)
        # The body's CRC alone: the last shard's header changes at its end (corpus/checksum.py).
        self.body_crc = 0
        self.body_bytes = 0

    def write(self, ids: np.ndarray[Any, Any]) -> None:
        if len(ids):
            data = np.ascontiguousarray(ids).data.cast("B")
            self.file.write(data)
            self.body_crc = zlib.crc32(data, self.body_crc)
            self.body_bytes += len(data)
            self.tokens += len(ids)

    def close(self) -> list[dict[str, Any]]:
        """Finishes the shard; returns ``[{"name", "bytes", "crc32"}]`` for its files."""
        header = header_bytes(self.fmt, self.itemsize, self.tokens)
        if header != self.header:  # only the last shard; every format's header has a fixed length
            self.file.patch(0, header)
        self.file.sync()
        self.file.close()
        digests = [checksum.combine(zlib.crc32(header), self.body_crc, self.body_bytes)]
        if self.fmt == "megatron":
            index = megatron_index(self.itemsize, self.lengths)
            with open(self.tmps[1], "wb") as f:
                f.write(index)
                f.flush()
                os.fsync(f.fileno())
            digests.append(zlib.crc32(index))
        out = []
        for name, path, tmp, digest in zip(self.names, self.paths, self.tmps, digests):
            os.replace(tmp, path)
            out.append({"name": name, "bytes": os.path.getsize(path), "crc32": checksum.hexdigest(digest)})
        return out

    def abort(self) -> None:
        try:
            self.file.close()
        finally:
            for tmp in self.tmps:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass


def file_matches(path: str, entry: dict[str, Any]) -> bool:
    """Whether the file at ``path`` has the size and checksum of its manifest ``entry``: its
    ``crc32``, or the ``sha256`` that manifests of earlier versions carried."""
    if os.path.getsize(path) != entry["bytes"]:
        return False
    kind = "crc32" if "crc32" in entry else "sha256"
    return bool(file_hash(path, kind).hexdigest() == entry[kind])
