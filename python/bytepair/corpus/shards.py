"""``open_shards``: the shards of an output directory as one read-only, memory-mapped sequence
of token ids, the thing a training loop samples from."""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

from bytepair.corpus import formats, manifest
from bytepair.errors import CorpusError


class Shards:
    """All tokens of an ``encode_corpus`` output, in order, without reading them into memory.

    ``len(shards)`` is the number of tokens; ``shards[i]`` is one id, ``shards[a:b]`` a numpy
    array (a view when it lies in one shard, a copy when it spans two); ``shards.arrays`` are
    the per-shard memory maps; ``documents()`` yields each document's ids (the end-of-text
    token included where it was written).
    """

    def __init__(self, outdir: str, doc: dict[str, Any]) -> None:
        """``doc``: the manifest as :func:`manifest.read` returns it, its layout checked."""
        self.outdir = outdir
        self.manifest = doc
        opts = doc["options"]
        self.format: str = opts["format"]
        self.dtype = np.dtype(opts["dtype"]).newbyteorder("<")
        self.eot: int | None = opts["eot"]
        self.eot_position: str | None = opts["eot_position"]
        self.arrays: list[np.memmap[Any, Any]] = []
        self.lengths: list[np.ndarray[Any, Any]] = []  # Megatron: each shard's document lengths
        itemsize = self.dtype.itemsize
        for shard in doc["shards"]:
            names = [f["name"] for f in shard["files"]]
            sizes = [f["bytes"] for f in shard["files"]]
            count = shard["tokens"]
            paths = [os.path.join(outdir, n) for n in names]
            for path, size in zip(paths, sizes):  # truncated or grown since written: not read at all
                if (actual := _regular_size(path)) != size:
                    raise CorpusError(f"{path} holds {actual} bytes, the manifest says {size} (truncated?)")
            offset = _check_header(self.format, paths[0], itemsize, count)
            if self.format == "megatron":
                self.lengths.append(_megatron_lengths(paths[1], itemsize, count))
            self.arrays.append(np.memmap(paths[0], dtype=self.dtype, mode="r", offset=offset, shape=(count,)))
        self.starts = np.zeros(len(self.arrays) + 1, dtype=np.int64)
        np.cumsum([len(a) for a in self.arrays], out=self.starts[1:])

    def __len__(self) -> int:
        return int(self.starts[-1])

    def __repr__(self) -> str:
        return f"<Shards {self.outdir!r}: {len(self):,} tokens in {len(self.arrays)} {self.format} shards, {self.dtype}>"

    def __getitem__(self, key: int | slice) -> Any:
        n = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                return self[start:stop][::step] if stop > start else np.empty(0, self.dtype)
            if stop <= start:
                return np.empty(0, dtype=self.dtype)
            first = int(np.searchsorted(self.starts, start, side="right")) - 1
            last = int(np.searchsorted(self.starts, stop, side="left")) - 1
            if first == last:
                base = int(self.starts[first])
                return self.arrays[first][start - base : stop - base]
            parts = []
            for k in range(first, last + 1):
                base = int(self.starts[k])
                parts.append(self.arrays[k][max(start - base, 0) : min(stop - base, len(self.arrays[k]))])
            return np.concatenate(parts)
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"shard indices must be int or slice, not {type(key).__name__}")
        i = int(key) + (n if key < 0 else 0)
        if not 0 <= i < n:
            raise IndexError(f"token index {key} out of range for {n} tokens")
        k = int(np.searchsorted(self.starts, i, side="right")) - 1
        return self.arrays[k][i - int(self.starts[k])]

    def documents(self) -> Iterator[np.ndarray[Any, Any]]:
        """Each document's ids in order (the Megatron index, or the end-of-text tokens)."""
        if self.format == "megatron":
            pos = 0
            for lengths in self.lengths:
                for length in lengths.tolist():
                    yield self[pos : pos + length]
                    pos += length
            return
        if self.eot is None:
            raise CorpusError("these shards have no end-of-text token between documents: documents cannot be told apart")
        cuts = [np.flatnonzero(a == self.eot) + int(self.starts[k]) for k, a in enumerate(self.arrays)]
        at = np.concatenate(cuts) if cuts else np.empty(0, np.int64)
        bounds = at if self.eot_position == "prepend" else at + 1
        edges = np.unique(np.concatenate([[0], bounds, [len(self)]]))
        for a, b in zip(edges[:-1], edges[1:]):
            yield self[int(a) : int(b)]


def _regular_size(path: str) -> int:
    """The size of ``path``, refused unless a regular file: reading a FIFO blocks until a
    writer comes, and a device (``/dev/zero``) never ends."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise CorpusError(f"{path} is not a regular file")
    return st.st_size


def _check_header(fmt: str, path: str, itemsize: int, count: int) -> int:
    """Where the tokens of a shard's first file start, once its header (the one this module's
    writer puts, byte for byte) and its size agree with ``count`` tokens."""
    header = formats.header_bytes(fmt, itemsize, count)
    with open(path, "rb") as f:
        if f.read(len(header)) != header:
            raise CorpusError(f"{path}: not the {fmt} header of {count:,} tokens of {itemsize * 8}-bit ids (damaged?)")
    if _regular_size(path) != len(header) + count * itemsize:
        raise CorpusError(f"{path} does not hold the {count:,} tokens its header and the manifest give")
    return len(header)


def _megatron_lengths(path: str, itemsize: int, tokens: int) -> np.ndarray[Any, Any]:
    """The document lengths of a Megatron ``.idx``, checked whole: header, counts against the
    file's size, lengths against the ``.bin``'s tokens, byte offsets against the lengths."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:9] != formats.MEGATRON_MAGIC or len(data) < 34:
        raise CorpusError(f"{path} is not a Megatron index")
    version, code, n, ndoc = struct.unpack("<QBQQ", data[9:34])
    if version != 1 or code != formats.MEGATRON_CODES[itemsize]:
        want = formats.MEGATRON_CODES[itemsize]
        raise CorpusError(f"{path}: Megatron index version {version}, dtype code {code}; written: 1 and {want}")
    if ndoc != n + 1 or len(data) != 34 + 20 * n + 8:
        raise CorpusError(f"{path}: {len(data)} bytes, not those of a Megatron index of {n} sequences (damaged?)")
    lengths = np.frombuffer(data, dtype="<i4", count=n, offset=34).astype(np.int64)
    pointers = np.frombuffer(data, dtype="<i8", count=n, offset=34 + 4 * n)
    doc_index = np.frombuffer(data, dtype="<i8", count=n + 1, offset=34 + 12 * n)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    if (lengths < 0).any() or int(starts[-1]) != tokens:
        raise CorpusError(f"{path}: the document lengths do not add up to the {tokens:,} tokens of the .bin (damaged?)")
    if not np.array_equal(pointers, starts[:-1] * itemsize) or not np.array_equal(doc_index, np.arange(n + 1)):
        raise CorpusError(f"{path}: the offsets do not follow the document lengths (damaged?)")
    return lengths


def open_shards(outdir: str | os.PathLike[str]) -> Shards:
    """The shards written by :func:`encode_corpus` in ``outdir``, memory-mapped, read-only.
    Refuses an output that is not complete (a run still going, or stopped)."""
    out = os.fspath(outdir)
    doc = manifest.read(out)
    if doc is None:
        raise FileNotFoundError(2, "no manifest.json: not an encode_corpus output directory", out)
    if not doc["complete"]:
        raise CorpusError(f"{out} is not complete: run encode_corpus again with the same arguments to finish it")
    return Shards(out, doc)
