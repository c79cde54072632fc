"""``encode_corpus``: a corpus to token shards, on all cores, in bounded memory, resumable.

The pipeline (performance and design notes):
- Documents are read in order (``bytepair.sources``), empty ones skipped, and gathered into
  batches of about ``batch_bytes`` of text. A batch is encoded by the Rust array path on all
  threads (GIL released) while this thread reads the next batch and writes the previous one's
  ids: reading, encoding and writing overlap, and nothing holds more than two batches and the
  file being written. Memory does not grow with the corpus.
- Shards are written as the ids come, to a temporary file renamed into place when the shard is
  complete; then ``manifest.json`` is rewritten (atomically) with the shard's hashes and the
  position in the input where the next shard starts: (document index, tokens of that
  document already written). Ids depend only on each document, never on batching or
  threads, so a run killed at any moment restarts from the last manifest, skips the
  documents already written, drops the first tokens of the document a shard ended in, and
  writes the same bytes as a run that was never stopped.
- SentencePiece models take the same pipeline with whole documents as units (their normalizer
  sees a document whole), encoded by ``SentencePieceTokenizer.encode_batch_numpy``; seeded sampling
  draws each document from its index in the corpus, not its batch: ``corpus/spm.py``.

Where the time went (profiled with py-spy and per-stage timers on o200k, 40-50 MB of the bench
corpus, 1 and 2 threads, on the 2-core shared machine):
- A fixed 0.43 s per run before any text was read: ``max_id`` built the 200,000-entry
  ``Tokenizer._vocab`` dict and a list of its keys (0.25 s) and the manifest's
  ``tokenizer_hash`` joined 200,000 Python bytes objects (0.17 s). On the 50 MB bench file
  (0.8 s of encoding at 64 MB/s) that alone was the gap from ``encode_files`` (64 MB/s) to
  encode-corpus (46 MB/s). Both now come from the extension (``Encoder.vocab_table``, a few ms),
  with the same hash and the same largest id.
- Once started, the pipeline overlaps: py-spy shows the encoding thread busy all the run and
  the main thread mostly waiting on it; with per-stage timers the encoder was never idle
  between batches after the first. In CPU seconds per MB, encode-corpus (plain text and JSON
  lines) is within the run-to-run spread of ``encode_files`` at 1 thread. The main thread's
  own work is small against encoding (CPU, 50 MB, 12.8 M ids, 1.08 s to encode): sha256 of
  the ids 2.7 % (hashlib releases the GIL), the file write 1.4 %, one fsync per shard
  (overlapped with the next batch). ``np.insert`` of separators into a file cut into pieces
  cost a copy of the batch's ids (about 5 %; 19 % with one separator per 2,000 ids): Rust now
  puts them (``edges=``). Not overlapped: the first batch's reading (now 1 MiB, ramping up), the
  last batch's write, the last shard's re-hash (its header changes) and its fsync. The
  shards' sha256 (and that re-hash) later gave way to CRC-32 (``corpus/checksum.py``).
- Two threads on two cores (262 MB of the bench mix, o200k, uint32 ids): encode-corpus
  ran at 0.85-0.87x of ``encode_files``. Per-batch timers showed the encoder never idle between
  batches (1-2 ms in all) and the tail of the run short (0.06 s); what was missing was CPU. This
  thread (``time.thread_time``) spent 0.72 s writing shards against ~4 s of encoding: 0.51 s in
  ``write`` and 0.15 s in sha256. At one thread it ran on the idle second core; at two it was
  taken from the encoder. The writes were the page cache's cost: once the kernel must reclaim
  a page for each new one (a run writing more than memory keeps), 2 ms of CPU per MB. Shards
  are now written with ``O_DIRECT`` (``corpus/direct.py``): this thread's CPU 0.72 -> 0.32 s
  (write 0.51 -> 0.09 s, mostly the copy into the aligned staging buffer); against main at
  275da55 in turn, 0.72 / 0.62 -> 0.29 / 0.29 s, and the process's CPU 5.9 / 5.9 -> 5.0 / 4.4 s.
  When the kernel has free pages at hand (the output of the last run just deleted) buffered
  writes cost a tenth of that, and the two ways run alike. Also: a group of
  work in Rust was two 2 MiB chunks (first version of the reused buffers), now one, and a batch
  is cut into chunks of a sixteenth of a thread's share (``arrays::batch_parallel``); with
  per-group timers the threads were busy 94-96 % of each batch's encoding at a quarter and at
  a sixteenth alike on the loaded machine, so that part is not where the time went.
- Large plain-text files never pass through Python (``_file_ranges``: Rust reads byte ranges
  cut at independent cuts on the encoding threads). Small text files are read by
  ``sources.documents``, one ``str`` each.
- Peak memory (/proc/self/status, o200k, one thread, plain text, 2-core machine):
  179 / 210 / 266 MB of peak RSS for 100 MB / 262 MB / 1 GB of input (194 / 236 / 287 before
  Rust read each byte range into a buffer sized once, not grown by doubling). Nothing of
  bytepair's grew with the corpus (the piece caches are bounded); glibc's malloc did: after the
  first large free it raises its mmap threshold (up to 32 MiB), so each batch's texts and ids
  came from the heap, whose freed holes it kept. Tried and dropped: the threshold fixed at
  1 MiB with ``mallopt`` (large buffers mapped and unmapped whole): 156 / 174 / 189 MB, but
  every batch then faults in fresh pages (236 k against 89 k page faults at 262 MB) and the
  run took 1.2x (262 MB: 4.0 / 3.9 s against 3.3 / 3.4 s) to 1.5x (1 GB: 18.0 s against
  12.3 s) as long; ``malloc_trim(0)`` before each batch: 177 MB at 262 MB (before the larger
  piece caches). Now the batch buffers are reused (``Batches``, ``_core.BatchEncoder``): the
  texts Rust reads, the id buffers (one per group of work, ``arrays.rs``) and two output
  ``bytearray`` slots taken in turn (one being written to shards, one being encoded into)
  keep the size of the largest batch: 167 / 199 / 199 MB, page faults 66 k / 81 k / 101 k ->
  46 k / 54 k / 55 k. Part of it (about 210 -> 230 MB with reuse alone) was batches of three
  8 MiB ranges where two fell just short of 16 MiB: a batch now stops at an eighth over its
  limit. With reuse, RSS is flat from the 17th batch of the 1 GB run to its 65th. With the
  shared fixed-size piece cache (main at 275da55): 209 / 270 / 272 MB and 75 k / 121 k / 197 k
  page faults before, 184 / 201 / 203 MB and 50 k / 55 k / 55 k with the reused buffers.
  JSON lines still grow (118 MB / 296 MB of .jsonl: 261 / 282 MB, 249 / 288 before): Python
  reads them in 8 MiB blocks copied twice (``jsonl.py``) and makes a ``str`` per document.
- JSON lines were parsed by Python's ``json`` on this thread (about 110 MB/s on the 16-core
  machine, and a core taken from the encoder on 2 cores): they are now read in Rust
  (``corpus/jsonl.py``, ``rust/src/io/jsonl.rs``), with Python's ``json`` kept for the lines Rust
  is not sure of, so errors and edge cases are Python's, unchanged. Rust first made a ``str``
  of each document, which the encoder then turned back into UTF-8: at two threads ``perf`` put
  the Python threads (loading the tokenizer included) at about two fifths of the samples (the
  JSON string parser 7 %, making and re-encoding those strings, and their allocations, most of
  the rest). The documents of a block
  now stay in one Rust buffer (``TextBlock``) that the encoder takes as it is
  (``BatchEncoder.encode_blocks``, units of ``BLOCK_UNIT_BYTES`` of whole documents), and the
  parser finds string runs with ``memchr``: 296 MB of JSON lines at 2 threads, four pairs run in
  turn, 108-129 -> 134-152 MB/s, CPU 3.9-4.7 -> 3.5-4.0 s.
- Tried and dropped: two batches encoded at once (two lanes into one pool of threads), to fill
  the end of each batch; see ``rust/src/bpe/NOTES.md``, seventh round.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

import numpy as np

from bytepair.corpus import formats, jsonl, manifest, spm
from bytepair.errors import BytepairError, CorpusError

if TYPE_CHECKING:
    from numpy.typing import DTypeLike, NDArray

    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.sources import Source, SourceFile
    from bytepair.tokenizer import Tokenizer

PathLike = str | os.PathLike[str]
EOT_TEXT = "<|endoftext|>"


def _tokenizer(spec: Tokenizer | SentencePieceTokenizer | PathLike) -> Tokenizer | SentencePieceTokenizer:
    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.tokenizer import Tokenizer

    if isinstance(spec, (Tokenizer, SentencePieceTokenizer)):
        return spec
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(
            "tokenizer must be a Tokenizer, a SentencePieceTokenizer, a file path or a pretrained "
            f"encoding's name, not {type(spec).__name__}"
        )
    name = os.fspath(spec)
    if not os.path.exists(name):
        from bytepair.encodings import get_encoding, list_encoding_names

        if name in list_encoding_names():
            return get_encoding(name)
        return Tokenizer.from_file(name)  # its error names the missing file
    from bytepair._detect import load

    tok = load(name)
    if not isinstance(tok, (Tokenizer, SentencePieceTokenizer)):
        raise BytepairError(
            f"{name} is a WordPiece tokenizer; encode_corpus takes byte-level BPE tokenizers and SentencePiece models"
        )
    return tok


def _eot(tok: Tokenizer, eot: str | int | None) -> int | None:
    specials = tok.special_tokens
    if eot is None:
        return None
    if eot == "auto":
        if EOT_TEXT not in specials:
            raise BytepairError(
                f"the tokenizer has no {EOT_TEXT} special token to put between documents: choose one of its "
                f"special tokens ({', '.join(sorted(specials)) or 'it has none'}) with eot=TOKEN (--eot TOKEN), "
                "or no separator with eot=None (--eot none)"
            )
        return specials[EOT_TEXT]
    if isinstance(eot, bool) or not isinstance(eot, (str, int)):
        raise TypeError(f"eot must be a special token's text, an id, None or 'auto', got {eot!r}")
    if isinstance(eot, str):
        if eot not in specials:
            raise BytepairError(f"eot={eot!r} is not a special token of this tokenizer")
        return specials[eot]
    tok.token_bytes(eot)  # raises UnknownTokenError for an id the tokenizer does not have
    return eot


def _sources(inputs: Any, text_field: str) -> Source:
    from bytepair.sources import Source

    if isinstance(inputs, Source):
        return inputs
    return Source(inputs, text_field=text_field)


# A plain-text file larger than this is read in blocks and encoded in pieces ("units") cut
# where the tokenizer's split pattern ends a piece on its own (`safe_prefix`), so that memory
# stays bounded for one huge document and the ids are those of the whole text.
STREAM_BYTES = 32 << 20
# The first batch is this size and each next one twice the last, up to ``batch_bytes``: the
# encoder waits only for the first MB to be read (JSON lines: 16 MB took 0.1-0.4 s), not 16.
FIRST_BATCH_BYTES = 1 << 20
BLOCK_CHARS = 8 << 20


# Documents of a JSON-lines block are gathered into units of about this many bytes of text.
BLOCK_UNIT_BYTES = 1 << 20


class Unit:
    """A document, or a piece of one: its text (or a byte range of a file, read in Rust) and
    whether it starts / ends the document; or ``count`` whole documents of a ``TextBlock``
    (JSON lines read in Rust), ``block = (block, lo, hi)`` of ``nbytes`` bytes."""

    __slots__ = ("block", "count", "end", "nbytes", "range", "start", "text")

    def __init__(
        self, text: str, start: bool = True, end: bool = True, range: tuple[str, int, int] | None = None,
        block: tuple[Any, int, int] | None = None, nbytes: int = 0,
    ) -> None:
        self.text, self.start, self.end, self.range = text, start, end, range
        self.block, self.nbytes = block, nbytes
        self.count = 1 if block is None else block[2] - block[1]

    def size(self) -> int:
        if self.block is not None:
            return self.nbytes
        return self.range[2] - self.range[1] if self.range is not None else len(self.text)

    def kind(self) -> int:
        """What the encoder takes it as: 0 a text, 1 a file range, 2 documents of a block."""
        return 2 if self.block is not None else 1 if self.range is not None else 0

    def after(self, skip: int) -> Unit:
        """This unit less its first ``skip`` documents (a block's; resuming)."""
        assert self.block is not None and 0 <= skip < self.count
        block, lo, hi = self.block
        ends = np.frombuffer(block.ends(), dtype="<u8")
        start = int(ends[lo + skip - 1]) if lo + skip > 0 else 0
        return Unit("", block=(block, lo + skip, hi), nbytes=int(ends[hi - 1]) - start)


def unit_flags(units: list[Unit]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Whether each document or piece of ``units`` (what their offsets index) starts / ends a
    document."""
    counts = [u.count for u in units]
    starts = np.repeat(np.array([u.start for u in units], dtype=bool), counts)
    ends = np.repeat(np.array([u.end for u in units], dtype=bool), counts)
    return starts, ends


def _block_units(block: Any) -> Iterator[Unit]:
    """The documents of a ``TextBlock`` as units of about ``BLOCK_UNIT_BYTES`` (at least one
    document each)."""
    ends = np.frombuffer(block.ends(), dtype="<u8").astype(np.int64)
    lo, base = 0, 0
    while lo < len(ends):
        hi = max(int(np.searchsorted(ends, base + BLOCK_UNIT_BYTES, side="right")), lo + 1)
        yield Unit("", block=(block, lo, hi), nbytes=int(ends[hi - 1]) - base)
        lo, base = hi, int(ends[hi - 1])


def _units(files: list[SourceFile], text_field: str, errors: str, tok: Tokenizer) -> Iterator[tuple[Unit, int]]:
    """Non-empty documents (or pieces of large text files, or runs of JSON lines read in Rust)
    in order, each with its file's index."""
    from bytepair.sources import documents

    for k, f in enumerate(files):
        if f.size > STREAM_BYTES and not f.jsonl and not f.parquet and tok._normalize is None:
            if f.compression is None and errors == "strict":
                for unit in _file_ranges(f, tok):
                    yield unit, k
            else:
                for unit in _stream_text(f, errors, tok):
                    yield unit, k
            continue
        if f.jsonl and not f.parquet and tok._normalize is None:  # JSON lines: in Rust
            for item in jsonl.blocks(f, text_field=text_field, errors=errors):
                if isinstance(item, str):
                    yield Unit(item), k
                else:
                    for unit in _block_units(item):
                        yield unit, k
            continue
        read = jsonl.documents if f.jsonl and not f.parquet else documents
        for doc in read(f, text_field=text_field, errors=errors):
            if doc:
                yield Unit(doc), k


def _file_ranges(f: SourceFile, tok: Tokenizer) -> Iterator[Unit]:
    """A large uncompressed text file as byte ranges of about ``BLOCK_CHARS`` bytes, cut at
    independent cuts (``_core.file_cuts``, the cuts distributed training uses): Rust reads and
    checks each range on the encoding threads, so this thread never touches the text."""
    from bytepair import _core

    targets = list(range(BLOCK_CHARS, f.size, BLOCK_CHARS))
    cuts = _core.file_cuts(f.path, tok._core.pattern, list(tok.special_tokens), targets)
    bounds = sorted({0, f.size, *(c for c in cuts if 0 < c < f.size)})
    pairs = list(zip(bounds[:-1], bounds[1:]))
    for i, (a, b) in enumerate(pairs):
        yield Unit("", start=i == 0, end=i == len(pairs) - 1, range=(f.path, a, b))


def _stream_text(f: SourceFile, errors: str, tok: Tokenizer) -> Iterator[Unit]:
    """One large text file as units of a few MB, cut at independent cuts (same ids as whole)."""
    import codecs

    from bytepair.sources import DECOMPRESS_ERRORS, decompress_error, open_stream, utf8_error

    decoder = codecs.getincrementaldecoder("utf-8")("bytepair.replace" if errors == "replace" else "strict")
    held: Unit | None = None  # one unit behind, to mark the last one as the document's end
    buf = ""
    offset = 0
    with open(f.path, "rb") as raw:
        stream = open_stream(f, raw)
        while True:
            try:
                block = stream.read(BLOCK_CHARS)
            except DECOMPRESS_ERRORS as e:
                raise decompress_error(f, e) from None
            pending = len(decoder.getstate()[0])
            try:
                buf += decoder.decode(block, final=not block)
            except UnicodeDecodeError as e:
                raise utf8_error(f, offset - pending + e.start) from None
            offset += len(block)
            if not block:
                break
            if len(buf) < BLOCK_CHARS:
                continue
            cut = tok._core.safe_prefix(buf)
            if cut > 0:
                if held is not None:
                    yield held
                held = Unit(buf[:cut], start=held is None, end=False)
                buf = buf[cut:]
    if buf:
        if held is not None:
            yield held
        yield Unit(buf, start=held is None, end=True)
    elif held is not None:
        held.end = True
        yield held


class Batches:
    """Encodes batches of units into buffers reused from batch to batch (``_core.BatchEncoder``):
    the texts read in Rust, the id buffers and ``slots`` output bytearrays taken in turn, so
    that memory stays that of the largest batch, whatever the corpus size. The arrays a call
    returns view the output of its slot: they hold until ``slots`` more calls, and must be
    dropped before then (a slot that has to grow while viewed raises ``BufferError``)."""

    def __init__(self, tok: Tokenizer, dt: np.dtype[Any], separator: tuple[int, bool] | None,
                 num_threads: int | None, slots: int = 2) -> None:
        from bytepair import _core

        self.tok, self.dt, self.separator, self.num_threads = tok, dt, separator, num_threads
        self.core = _core.BatchEncoder(tok._core)
        self.outs = [bytearray() for _ in range(slots)]
        self.turn = 0

    def encode(self, units: list[Unit]) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """The ids of a batch of units (all texts, or all file ranges) with their separators
        (put in Rust, before each unit that starts a document or after each that ends one)."""
        out = self.outs[self.turn]
        self.turn = (self.turn + 1) % len(self.outs)
        dt, separator, num_threads = self.dt, self.separator, self.num_threads
        width = dt.itemsize
        edges = None if all(u.start and u.end for u in units) else [(u.start, u.end) for u in units]
        if units[0].block is not None:  # documents of JSON lines read in Rust
            n, raw_offsets = self.core.encode_blocks(
                [u.block for u in units if u.block is not None], [], out=out, width=width, separator=separator,
                num_threads=num_threads,
            )
        elif units[0].range is not None:  # byte ranges of a large file, read in Rust
            ranges = [u.range for u in units if u.range is not None]
            n, raw_offsets, _ = self.core.encode_file_ranges(
                ranges, [], out=out, width=width, separator=separator, num_threads=num_threads, edges=edges
            )
        else:
            tok = self.tok
            texts = [u.text for u in units]
            if tok._normalize is not None:  # as encode_ordinary: special-token text kept as typed
                texts = [tok._normalize(t) for t in texts]
            from bytepair.arrays import with_repair

            n, raw_offsets = with_repair(
                lambda ts: self.core.encode_texts(
                    ts, [], out=out, width=width, separator=separator, num_threads=num_threads, edges=edges
                ),
                texts,
            )
        ids = np.frombuffer(out, dtype=dt.newbyteorder("<"), count=n).view(dt)
        offsets = np.frombuffer(raw_offsets, dtype="<i8").view(np.int64)
        return ids, offsets


def encode_units(
    tok: Tokenizer,
    units: list[Unit],
    dt: np.dtype[Any],
    separator: tuple[int, bool] | None,
    num_threads: int | None,
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """The ids of one batch of units (``Batches.encode`` with buffers of its own)."""
    return Batches(tok, dt, separator, num_threads, slots=1).encode(units)


class _Progress:
    """One line on stderr: MB/s, tokens/s and the time left, redrawn at most 10 times a second."""

    def __init__(self, total_bytes: int, enabled: bool) -> None:
        self.total = total_bytes
        self.enabled = enabled
        self.start = time.perf_counter()
        self.last = 0.0

    def update(self, done_bytes: int, tokens: int, final: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not final and now - self.last < 0.1):
            return
        self.last = now
        from bytepair._progress import _duration, size_text

        elapsed = max(now - self.start, 1e-9)
        rate = done_bytes / elapsed
        frac = min(done_bytes / self.total, 1.0) if self.total else 1.0
        eta = (self.total - done_bytes) / rate if rate > 0 and self.total > done_bytes else 0.0
        line = (
            f"encoding {frac:6.1%} {size_text(done_bytes)}/{size_text(self.total)} "
            f"{size_text(rate)}/s {tokens / elapsed / 1e6:,.2f} M tokens/s "
            f"{tokens:,} tokens {_duration(elapsed)} ETA {_duration(eta)}"
        )
        sys.stderr.write("\x1b[2K" + line + ("\n" if final else "\r"))
        sys.stderr.flush()


def encode_corpus(
    tokenizer: Tokenizer | SentencePieceTokenizer | PathLike,
    inputs: Any,
    outdir: PathLike,
    *,
    format: str = "llmc",
    shard_tokens: int = 100_000_000,
    eot: str | int | None = "auto",
    eot_position: str | None = None,
    dtype: DTypeLike | None = None,
    text_field: str = "text",
    errors: str = "strict",
    num_threads: int | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
    batch_bytes: int = 16 << 20,
    backend: str = "local",
    client: Any = None,
    enable_sampling: bool = False,
    alpha: float = 0.1,
    nbest_size: int = -1,
    seed: int = 0,
) -> dict[str, Any]:
    """Encodes a corpus into token shards in ``outdir`` and returns the manifest.

    ``inputs``: what training takes -- paths, globs, directories, ``.jsonl`` (``text_field``),
    ``.gz`` / ``.zst``, ``.parquet`` (needs ``pyarrow``: ``pip install pyarrow``), or a
    :class:`bytepair.Source`. Each text file, JSON line or Parquet row is one document;
    empty documents are skipped. Documents are encoded as :meth:`Tokenizer.encode_ordinary`
    does (special-token text in a document is ordinary text).

    ``format``: ``"llmc"`` (llm.c / modded-nanogpt ``.bin``), ``"megatron"`` (``.bin`` +
    ``.idx``) or ``"npy"``; shards of ``shard_tokens`` tokens (Megatron shards end at the
    first document end from there). ``eot``: the special token put between documents
    (default ``<|endoftext|>``; ``None`` for none), before each document
    (``eot_position="prepend"``, the default for llmc and npy, as llm.c does) or after
    (``"append"``, the default for Megatron, as its ``--append-eod``). ``dtype``: uint16 when
    every id fits, else uint32; a dtype too small for the tokenizer is refused before
    anything is written.

    A run that stops (killed, out of disk) resumes when started again with the same
    arguments, to the same bytes as a run never stopped; a run into an ``outdir`` that another
    run is writing to raises ``CorpusError`` at once. An ``outdir`` made with another
    tokenizer, other options or changed inputs is refused unless ``overwrite=True``; a shard
    or manifest edited since is detected by its checksum. ``errors="replace"`` turns bytes that
    are not UTF-8 into U+FFFD (counted in the manifest's ``replaced``) instead of failing.

    ``backend="dask"`` with ``client=distributed.Client(...)``: the workers encode one input
    file per task into temporary files in ``outdir`` (which they must see, e.g. a shared file
    system); this process then cuts them into shards exactly as a local run does, so the
    output is byte-identical to ``backend="local"`` (``errors="strict"`` only).

    ``tokenizer`` may be a SentencePiece model (:class:`bytepair.SentencePieceTokenizer`, a
    ``.model`` path, or a SentencePiece-family ``tokenizer.json``): each document is encoded
    whole, with the ids ``SentencePieceProcessor.encode`` gives, and ``eot="auto"`` is the
    model's EOS piece (``</s>``; a model without one needs ``eot=``). ``enable_sampling=True``
    draws each document's segmentation as ``SentencePieceTokenizer.encode`` does with ``alpha``
    and ``nbest_size``, from a seed made of ``seed`` and the document's index in the corpus:
    the shards are the same on any number of threads and after a resume
    (``bytepair/corpus/spm.py``). Sampling takes a ``.model`` file's model; byte-level BPE
    tokenizers do not sample here.
    """
    from bytepair.arrays import id_dtype, max_id
    from bytepair.sources import Replaced, resolve
    from bytepair.tokenizer import Tokenizer, _check_threads

    if format not in formats.FORMATS:
        raise BytepairError(f"format must be one of {', '.join(formats.FORMATS)}, got {format!r}")
    if isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int) or shard_tokens < 1:
        raise BytepairError(f"shard_tokens must be a positive int, got {shard_tokens!r}")
    if format == "llmc" and shard_tokens > formats.LLMC_MAX_TOKENS:
        raise BytepairError(f"llmc shards hold fewer than 2**31 tokens (an int32 count), got shard_tokens={shard_tokens}")
    if errors not in ("strict", "replace"):
        raise BytepairError(f'errors must be "strict" or "replace", got {errors!r}')
    position = eot_position if eot_position is not None else formats.EOT_POSITION[format]
    if position not in ("prepend", "append"):
        raise BytepairError(f'eot_position must be "prepend" or "append", got {eot_position!r}')
    if backend not in ("local", "dask"):
        raise BytepairError(f'backend must be "local" or "dask", got {backend!r}')
    if backend == "dask" and errors != "strict":
        raise BytepairError('backend="dask" takes errors="strict" only')
    if isinstance(batch_bytes, bool) or not isinstance(batch_bytes, int) or batch_bytes < 1:
        raise BytepairError(f"batch_bytes must be a positive int, got {batch_bytes!r}")
    if not isinstance(enable_sampling, bool):
        raise TypeError(f"enable_sampling must be a bool, not {type(enable_sampling).__name__}")
    local_threads = _check_threads(num_threads)  # capped at this machine's cores, as every encode call does
    loaded = _tokenizer(tokenizer)
    sample: dict[str, Any] | None = None
    if isinstance(loaded, Tokenizer):
        tok: Tokenizer | None = loaded
        model: SentencePieceTokenizer | None = None
        if enable_sampling:
            raise BytepairError(
                "enable_sampling (subword sampling) takes a SentencePiece model; "
                "encode_corpus does not sample with byte-level BPE tokenizers (no BPE-dropout)"
            )
        dt = id_dtype(loaded, dtype)
        if format == "megatron" and max_id(loaded) >= 2**31:
            raise BytepairError(f"Megatron stores ids as int32; this tokenizer's go up to {max_id(loaded)}")
        eot_id = _eot(loaded, eot)
        tokenizer_entry = {"name": loaded.name, "sha256": manifest.tokenizer_hash(loaded)}
    else:
        tok, model = None, loaded
        if backend == "dask":
            raise BytepairError(
                'backend="dask" takes byte-level BPE tokenizers only; encode a SentencePiece model with backend="local"'
            )
        dt = spm.id_dtype(loaded, dtype)
        eot_id = spm.eot_id(loaded, eot)
        sample = spm.sampling(loaded, enable_sampling, alpha, nbest_size, seed)
        tokenizer_entry = spm.model_entry(loaded)
    separator = None if eot_id is None else (eot_id, position == "prepend")
    source = _sources(inputs, text_field)
    if source.texts is not None:
        raise BytepairError(
            "encode_corpus reads files (so that a stopped run can resume and its inputs be checked); "
            "write documents held in memory to a .jsonl file first"
        )
    files = resolve(source, strict=errors == "strict")
    out = os.fspath(outdir)

    options = {
        "format": format,
        "shard_tokens": shard_tokens,
        "dtype": str(dt),
        "eot": eot_id,
        "eot_position": position if eot_id is not None else None,
        "text_field": source.text_field,
        "errors": errors,
    }
    if sample is not None:  # absent otherwise: the manifests of runs before sampling existed still resume
        options["sampling"] = sample
    inputs_list = [{"path": f.path, "size": f.size, "mtime_ns": os.stat(f.path).st_mtime_ns} for f in files]
    doc: dict[str, Any] = {
        "format": manifest.FORMAT,
        "version": manifest.VERSION,
        "complete": False,
        "tokenizer": tokenizer_entry,
        "options": options,
        "inputs": inputs_list,
        "shards": [],
        "tokens": 0,
        "documents": 0,
        "replaced": 0,
    }
    with _locked(out):  # made, checked, and this run's alone until it ends
        start_doc, start_skip = _prepare(out, doc, overwrite)
        if doc["complete"]:
            return doc

        itemsize = dt.itemsize
        total_bytes = sum(f.size for f in files)
        show = progress if progress is not None else sys.stderr.isatty()
        meter = _Progress(total_bytes, bool(show))
        Replaced.count = 0
        state = _Writer(out, format, itemsize, shard_tokens, doc)

        encode: Callable[[list[Unit], int], tuple[NDArray[Any], NDArray[np.int64]]]
        if tok is not None:
            bpe = Batches(tok, dt, separator, local_threads)  # two output slots: one encoded, one written

            def encode(units: list[Unit], first: int) -> tuple[NDArray[Any], NDArray[np.int64]]:
                return bpe.encode(units)  # BPE ids do not depend on where a document is

            read = _units(files, source.text_field, errors, tok)
        else:
            assert model is not None
            encode = spm.SpmBatches(model, dt, separator, local_threads, sample).encode
            read = spm.units(files, source.text_field, errors)

        done_files = 0
        read_bytes = 0

        def batches() -> Iterator[tuple[int, list[Unit]]]:
            nonlocal done_files, read_bytes
            index = 0
            batch: list[Unit] = []
            first = start_doc
            size = 0
            limit = min(batch_bytes, FIRST_BATCH_BYTES)  # small first batches: encoding starts sooner
            for unit, k in read:
                if k > done_files:
                    done_files = k
                    read_bytes = sum(f.size for f in files[:k])
                read_bytes += unit.size()
                if index + unit.count <= start_doc:
                    index += unit.count
                    continue
                if index < start_doc:  # resuming inside a unit of several documents
                    unit = unit.after(start_doc - index)
                    index = start_doc
                # A batch is of one kind (texts, file ranges, or documents of JSON-lines blocks), and
                # (unless one unit is) at most an eighth
                # over its limit: two 8 MiB ranges of a large file and not a third (which took peak
                # RSS from about 210 to 230 MB).
                if batch and (batch[-1].kind() != unit.kind() or size + unit.size() > limit + limit // 8):
                    yield first, batch
                    first, batch, size = index, [], 0
                    limit = min(batch_bytes, limit * 2)
                batch.append(unit)
                size += unit.size()
                index += unit.count
                if size >= limit:
                    yield first, batch
                    first, batch, size = index, [], 0
                    limit = min(batch_bytes, limit * 2)
            if batch:
                yield first, batch

        if backend == "dask":
            from bytepair.corpus.dask import encode_on_dask

            assert tok is not None

            try:
                # Each worker caps the threads at its own cores; 2**32 of them is already no cap, and
                # a larger int would not fit the extension's.
                worker_threads = None if num_threads is None else min(num_threads, 2**32)
                encode_on_dask(client, tok, files, out, state, source.text_field, dt, separator, worker_threads,
                               batch_bytes, start_doc, start_skip)
                state.finish(replaced=0)
            except BaseException:
                state.abort()
                raise
            return doc

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bytepair-encode")
        try:
            pending: tuple[Future[tuple[NDArray[Any], NDArray[np.int64]]], int, list[Unit]] | None = None
            skip = start_skip
            for first, units in batches():
                job = pool.submit(encode, units, first)
                if pending is not None:
                    ids, offsets = pending[0].result()
                    state.add(ids, offsets, pending[1], pending[2], skip)
                    del ids, offsets  # views of an output slot the batch after next reuses
                    skip = 0
                    meter.update(min(read_bytes, total_bytes), state.written)
                pending = (job, first, units)
            if pending is not None:
                ids, offsets = pending[0].result()
                state.add(ids, offsets, pending[1], pending[2], skip)
            state.finish(replaced=Replaced.count)
            meter.update(total_bytes, state.written, final=True)
        except BaseException:
            state.abort()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return doc


LOCK_NAME = ".encode-corpus.lock"


@contextmanager
def _locked(out: str) -> Iterator[None]:
    """Makes and checks ``out`` and holds its lock file while the block runs: a second run
    into the same directory would delete the first's temporary shards and write the same
    shards. An ``flock`` is released by the kernel when its process ends, killed or not, so a
    killed run never leaves the directory locked (only the file, taken over by the next run)."""
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise OSError(e.errno, f"cannot create the output directory: {e.strerror}", out) from None
    if not os.path.isdir(out):
        raise CorpusError(f"{out} is not a directory")
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(13, "the output directory is not writable", out)
    if sys.platform == "win32":  # no flock: unlocked, as before
        yield
        return
    import fcntl

    path = os.path.join(out, LOCK_NAME)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise CorpusError(
                f"{out} is in use by another encode-corpus run (process {holder}); "
                "wait for it to finish, or write to another directory"
            ) from None
        except OSError as e:  # a file system without locks (some network ones): unlocked, as before
            if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                os.close(fd)
                raise
        try:  # the run before may have removed the file between our open and our lock
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # named in a second run's error
        yield
    finally:
        with suppress(OSError):
            os.unlink(path)  # while still locked: a run that opened it retries on a new file
        os.close(fd)


def _prepare(out: str, doc: dict[str, Any], overwrite: bool) -> tuple[int, int]:
    """Checks ``out`` (made and locked); returns where to start: (document index, tokens to skip)."""
    for name in os.listdir(out):  # temporary files of a run that was killed
        if name.startswith((".shard_", ".part_", "." + manifest.NAME + ".")) and name.endswith(".tmp"):
            os.unlink(os.path.join(out, name))
    old = None if overwrite else manifest.read(out)
    ours = [n for n in os.listdir(out) if n == manifest.NAME or n.startswith("shard_")]
    if overwrite:
        for name in ours:
            os.unlink(os.path.join(out, name))
    elif old is None and ours:
        raise CorpusError(f"{out} has shard files but no manifest; pass --overwrite to start again")
    if old is None:
        manifest.write(out, doc)
        return 0, 0
    for key, what in (("tokenizer", "another tokenizer"), ("options", "other options"), ("inputs", "other inputs")):
        if old.get(key) != doc[key]:
            raise CorpusError(
                f"{out} was made with {what} ({key} differ: {_diff(old.get(key), doc[key])}); "
                "pass --overwrite to replace it"
            )
    for shard in old["shards"]:
        for f in shard["files"]:
            path = os.path.join(out, f["name"])
            if not os.path.exists(path):
                raise CorpusError(f"{path} is missing; pass --overwrite to start again")
            if not formats.file_matches(path, f):
                raise CorpusError(f"{path} was modified since it was written (its size or checksum differs); pass --overwrite to start again")
    doc.update(old)
    if doc["complete"] or not doc["shards"]:
        return 0, 0
    next_doc, skip = doc["shards"][-1]["next"]
    return int(next_doc), int(skip)


def _diff(a: Any, b: Any) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return ", ".join(f"{k}: {_short(a.get(k))} then, {_short(b.get(k))} now" for k in keys[:3])
    return "the list of files or their sizes/times changed" if isinstance(a, list) else "hash differs"


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 20 else text[:16] + "...'"


class _Writer:
    """Cuts the stream of ids into shards and keeps the manifest up to date."""

    def __init__(self, out: str, fmt: str, itemsize: int, shard_tokens: int, doc: dict[str, Any]) -> None:
        self.out = out
        self.fmt = fmt
        self.itemsize = itemsize
        self.shard_tokens = shard_tokens
        self.doc = doc
        self.shard: formats.ShardWriter | None = None
        self.shard_docs = 0
        self.written = 0
        self.doc_len = 0  # Megatron: tokens so far of a document written in several units

    def add(self, ids: NDArray[Any], offsets: NDArray[np.int64], first: int, units: list[Unit], skip: int) -> None:
        """Adds the ids of ``units``, whose documents and pieces are numbered from ``first`` (the
        ``i``th at ``ids[offsets[i]:offsets[i+1]]``), less the first ``skip`` tokens."""
        n = len(ids)
        starts = offsets[:-1]
        doc_starts, doc_ends = unit_flags(units)
        pos = skip
        while pos < n:
            if self.shard is None:
                index = len(self.doc["shards"])
                self.shard = formats.ShardWriter(self.out, self.fmt, self.itemsize, index, self.shard_tokens)
                self.shard_docs = 0
            room = self.shard_tokens - self.shard.tokens
            if self.fmt == "megatron":  # whole documents only: end at a document's end
                ends = offsets[1:][doc_ends]
                # (room < 1 when a document written in pieces has already filled the shard)
                k = int(np.searchsorted(ends, pos + max(room, 1), side="left"))
                end = int(ends[k]) if k < len(ends) else n
                closable = k < len(ends)  # a Megatron shard never ends inside a document
            else:
                end = min(n, pos + room)
                closable = True
            self._write(ids[pos:end])
            # Documents are counted where they start (a unit skipped into started earlier).
            lo = int(np.searchsorted(starts, pos, side="left"))
            hi = int(np.searchsorted(starts, end, side="left"))
            self.shard_docs += int(doc_starts[lo:hi].sum())
            if self.fmt == "megatron":
                for i in range(lo, hi):
                    self.doc_len += int(offsets[i + 1] - offsets[i])
                    if doc_ends[i]:
                        self.shard.lengths.append(self.doc_len)
                        self.doc_len = 0
            pos = end
            if closable and self.shard.tokens >= self.shard_tokens:
                if pos < n:
                    # ``ids`` hold the first unit whole, its skipped tokens included (``pos``
                    # started at ``skip``): the tokens of unit ``d`` written are ``pos`` less
                    # its offset, with nothing to add for the skip.
                    d = int(np.searchsorted(offsets, pos, side="right")) - 1
                    nxt = (first + d, pos - int(offsets[d]))
                else:
                    nxt = (first + len(starts), 0)
                self._close(nxt, complete=False)

    def _write(self, ids: NDArray[Any]) -> None:
        assert self.shard is not None
        try:
            self.shard.write(ids)
        except OSError as e:
            raise OSError(e.errno, e.strerror, self.shard.paths[0]) from None
        self.written += len(ids)

    def _close(self, nxt: tuple[int, int], *, complete: bool, replaced: int = 0) -> None:
        assert self.shard is not None
        try:
            files = self.shard.close()
        except OSError as e:
            raise OSError(e.errno, e.strerror, self.shard.paths[0]) from None
        self.doc["shards"].append(
            {"files": files, "tokens": self.shard.tokens, "documents": self.shard_docs, "next": list(nxt)}
        )
        self.doc["tokens"] += self.shard.tokens
        self.doc["documents"] += self.shard_docs
        self.shard = None
        if complete:
            self.doc["complete"] = True
            self.doc["replaced"] = replaced
        manifest.write(self.out, self.doc)

    def finish(self, *, replaced: int) -> None:
        if self.shard is not None and self.shard.tokens > 0:
            self._close((-1, 0), complete=True, replaced=replaced)
            return
        if self.shard is not None:
            self.shard.abort()
            self.shard = None
        self.doc["complete"] = True
        self.doc["replaced"] = replaced
        manifest.write(self.out, self.doc)

    def abort(self) -> None:
        if self.shard is not None:
            self.shard.abort()
            self.shard = None
