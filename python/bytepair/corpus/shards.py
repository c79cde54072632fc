"""``open_shards``: the shards of an output directory as one read-only, memory-mapped sequence
of token ids, the thing a training loop samples from."""

from __future__ import annotations

import os
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
        self.outdir = outdir
        self.manifest = doc
        opts = doc["options"]
        self.format: str = opts["format"]
        self.dtype = np.dtype(opts["dtype"]).newbyteorder("<")
        self.eot: int | None = opts["eot"]
        self.eot_position: str | None = opts["eot_position"]
        self.arrays: list[np.memmap[Any, Any]] = []
        for shard in doc["shards"]:
            path = os.path.join(outdir, shard["files"][0]["name"])
            offset, count = formats.token_region(self.format, path, self.dtype.itemsize)
            if count != shard["tokens"]:
                raise CorpusError(f"{path} holds {count} tokens, the manifest says {shard['tokens']}")
            self.arrays.append(np.memmap(path, dtype=self.dtype, mode="r", offset=offset, shape=(count,)))
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
            for shard in self.manifest["shards"]:
                idx = os.path.join(self.outdir, shard["files"][1]["name"])
                for length in _megatron_lengths(idx):
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


def _megatron_lengths(path: str) -> np.ndarray[Any, Any]:
    with open(path, "rb") as f:
        data = f.read()
    if data[:9] != formats.MEGATRON_MAGIC:
        raise CorpusError(f"{path} is not a Megatron index")
    n = int.from_bytes(data[18:26], "little")
    return np.frombuffer(data, dtype="<i4", count=n, offset=34)


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
