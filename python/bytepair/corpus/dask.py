"""``encode_corpus(..., backend="dask")``: input files encoded on a Dask cluster.

Each task encodes one input file (cut into the same units as a local run: documents, or pieces
of a large text file) into a temporary file ``OUTDIR/.part_NNNNNN.<id>.tmp`` of ids, separators
included, and returns the units' token offsets and document flags. This process then feeds the
parts, in input order, to the same shard writer a local run uses (memory-mapped, so memory stays
bounded), which is why the shards and the manifest are byte-identical to a local run's. The
tokenizer travels as its file format (a JSON string) and is rebuilt once per worker process.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bytepair.corpus.encode import _Writer
    from bytepair.sources import SourceFile
    from bytepair.tokenizer import Tokenizer

_TOKENIZERS: dict[str, Tokenizer] = {}  # per worker process, by tokenizer hash


def _worker_tokenizer(text: str, key: str) -> Tokenizer:
    tok = _TOKENIZERS.get(key)
    if tok is None:
        from bytepair._fileformat import from_dict

        tok = _TOKENIZERS[key] = from_dict(json.loads(text))
    return tok


def _encode_file(
    tok_json: str,
    tok_key: str,
    f: SourceFile,
    text_field: str,
    dtype: str,
    separator: tuple[int, bool] | None,
    num_threads: int | None,
    batch_bytes: int,
    part: str,
    limits: tuple[int, int],
) -> tuple[list[int], list[bool], list[bool]]:
    """Encodes one file into ``part``; returns its units' offsets and start / end flags."""
    from bytepair.corpus import encode as e

    e.STREAM_BYTES, e.BLOCK_CHARS = limits  # the client's, so that units are cut the same way
    tok = _worker_tokenizer(tok_json, tok_key)
    dt = np.dtype(dtype)
    offsets = [0]
    starts: list[bool] = []
    ends: list[bool] = []
    with open(part, "wb") as out:
        batch: list[e.Unit] = []
        size = 0

        def flush() -> None:
            ids, offs = e.encode_units(tok, batch, dt, separator, num_threads)
            out.write(ids.tobytes())
            base = offsets[-1]
            offsets.extend((offs[1:] + base).tolist())
            flags = e.unit_flags(batch)
            starts.extend(flags[0].tolist())
            ends.extend(flags[1].tolist())

        for unit, _ in e._units([f], text_field, "strict", tok):
            if batch and batch[-1].kind() != unit.kind():
                flush()
                batch, size = [], 0
            batch.append(unit)
            size += unit.size()
            if size >= batch_bytes:
                flush()
                batch, size = [], 0
        if batch:
            flush()
    return offsets, starts, ends


def encode_on_dask(
    client: Any,
    tok: Tokenizer,
    files: list[SourceFile],
    out: str,
    state: _Writer,
    text_field: str,
    dt: np.dtype[Any],
    separator: tuple[int, bool] | None,
    num_threads: int | None,
    batch_bytes: int,
    start_unit: int,
    start_skip: int,
) -> None:
    from bytepair._fileformat import to_dict
    from bytepair.corpus import encode as e
    from bytepair.corpus.manifest import tokenizer_hash
    from bytepair.distributed import _get_client

    dask_client = _get_client(client)
    tok_json = json.dumps(to_dict(tok))
    key = tokenizer_hash(tok)
    run = uuid.uuid4().hex
    parts = [os.path.join(out, f".part_{i:06d}.{run}.tmp") for i in range(len(files))]
    futures = [
        dask_client.submit(
            _encode_file, tok_json, key, f, text_field, str(dt), separator, num_threads, batch_bytes, part,
            (e.STREAM_BYTES, e.BLOCK_CHARS), pure=False,
        )
        for f, part in zip(files, parts)
    ]
    try:
        first = 0
        for future, part in zip(futures, parts):
            offsets_list, starts, ends = future.result()
            n_units = len(starts)
            if n_units and first + n_units > start_unit:
                ids: Any = np.memmap(part, dtype=dt.newbyteorder("<"), mode="r")
                offsets = np.asarray(offsets_list, dtype=np.int64)
                units = [e.Unit("", start=s, end=t) for s, t in zip(starts, ends)]
                u = max(start_unit - first, 0)
                skip = start_skip if u == start_unit - first else 0
                base = int(offsets[u])
                state.add(ids[base:], offsets[u:] - base, first + u, units[u:], skip)
                del ids
            first += n_units
            os.unlink(part)
    finally:
        for future in futures:
            future.cancel()
        for part in parts:
            try:
                os.unlink(part)
            except FileNotFoundError:
                pass
