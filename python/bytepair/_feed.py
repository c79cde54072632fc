"""Feeding training text to a word counter (``_core.WordCounter``: WordPiece and SentencePiece
training): plain text files are read by Rust (nothing crosses into Python), compressed streams
as bytes, JSON lines, Parquet and iterator texts in batches; one progress bar over the bytes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from bytepair import _core, _progress
from bytepair.errors import CorpusError
from bytepair.sources import DECOMPRESS_ERRORS, Replaced, Source, SourceFile, decompress_error, documents, open_stream, resolve
from bytepair.wordpiece import _repair_surrogates

_BATCH_CHARS = 1 << 20  # iterator texts handed to the counter at a time (about 1 M characters)
_READ_BYTES = 1 << 22  # bytes of a compressed stream read at a time
# How Rust cuts texts for its workers and reads files (None: its defaults, 1 MiB and 4 MiB);
# they change no count, and tests make them small.
_UNIT_BYTES: int | None = None
_BLOCK_BYTES: int | None = None


def _add(counter: _core.WordCounter, batch: list[str], num_threads: int | None) -> None:
    try:
        counter.add_texts(batch, num_threads=num_threads)
    except UnicodeEncodeError:  # lone surrogates: U+FFFD, which clean_text drops (as encoding does)
        counter.add_texts([_repair_surrogates(t) for t in batch], num_threads=num_threads)


class Feed:
    """Hands texts and files to the counter: plain text files are read by Rust (nothing crosses
    into Python), compressed streams as bytes, JSON lines and iterator texts in batches of about
    ``_BATCH_CHARS``; one progress bar over the bytes."""

    def __init__(self, counter: _core.WordCounter, num_threads: int | None, bar: _progress.Progress | None) -> None:
        self.counter = counter
        self.num_threads = num_threads
        self.bar = bar
        self.done = 0  # bytes of the files finished (on disk), or of texts counted
        self.batch: list[str] = []
        self.size = 0
        self.in_file = False  # a file's documents are being counted (the bar counts its bytes)
        self.replaced = 0  # bad UTF-8 sequences replaced in Python (JSON lines)

    def tick(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(self.done + n)

    def switch(self, counter: _core.WordCounter) -> None:
        """Counts what comes next into ``counter`` (the next source, counted apart); the
        progress bar goes on."""
        self.flush()
        self.counter = counter

    def text(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"training texts must be str, got {type(text).__name__}")
        self.batch.append(text)
        self.size += len(text)
        if self.size >= _BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        if self.batch:
            _add(self.counter, self.batch, self.num_threads)
            if not self.in_file:
                self.done += self.size
                self.tick(0)
            self.batch, self.size = [], 0

    def file(self, f: SourceFile, s: Source, errors: str) -> None:
        self.flush()
        replace = errors == "replace"
        if f.jsonl or f.parquet:
            self.in_file = True
            before = Replaced.count
            for doc in documents(f, text_field=s.text_field, errors=errors):
                self.text(doc)
            self.flush()
            self.replaced += Replaced.count - before
            self.in_file = False
        elif f.compression is None:
            self.counter.add_file(
                f.path, replace_errors=replace, num_threads=self.num_threads, progress=self.tick if self.bar else None
            )
        else:
            self._stream(f, replace)
        self.done += f.size
        self.tick(0)

    def _stream(self, f: SourceFile, replace: bool) -> None:
        """A compressed text file, decompressed in Python and decoded and counted in Rust."""
        pending = b""
        offset = 0  # stream offset of pending[0]
        with open(f.path, "rb") as raw:
            stream = open_stream(f, raw)
            try:
                while True:
                    block = stream.read(_READ_BYTES)
                    last = not block
                    pending += block
                    try:
                        used = self.counter.add_bytes(
                            pending, last=last, source=f.path, offset=offset, replace_errors=replace,
                            num_threads=self.num_threads,
                        )
                    except CorpusError as e:
                        raise CorpusError(str(e).replace(" (pass", " of the decompressed stream (pass", 1)) from None
                    pending, offset = pending[used:], offset + used
                    self.tick(raw.tell())
                    if last:
                        break
            except DECOMPRESS_ERRORS as e:
                raise decompress_error(f, e) from None


def source_feeds(
    sources: str | os.PathLike[str] | Source | Iterable[str | os.PathLike[str]] | Iterable[Source], errors: str
) -> tuple[list[Callable[[Feed], None]], int | None, list[dict[str, Any]], list[str]]:
    """What feeding ``sources`` (paths, globs, directories, or :class:`Source` objects) takes,
    source by source: for each source the function that feeds it (sources mixed with weights
    are counted apart), their total size in bytes (None when a source is an iterable of texts),
    a record of each source and the paths of their files. Every file is found before any is
    read."""
    if isinstance(sources, (str, os.PathLike, Source)):
        items: list[Any] = [sources]
    else:
        items = list(sources)
    if items and all(isinstance(s, (str, os.PathLike)) for s in items):
        items = [Source(items)]
    srcs: list[Source] = []
    for s in items:
        if not isinstance(s, Source):
            raise TypeError(f"sources must be paths or Source objects, got {type(s).__name__}")
        srcs.append(s)
    plan = [(s, resolve(s, errors == "strict") if s.paths is not None else []) for s in srcs]
    total = sum(f.size for _, files in plan for f in files) if all(s.paths is not None for s in srcs) else None

    def feeder(s: Source, files: list[SourceFile]) -> Callable[[Feed], None]:
        def feed_one(feed: Feed) -> None:
            if s.paths is None:
                assert s.texts is not None
                for text in s.texts:
                    feed.text(text)
            for f in files:
                feed.file(f, s, errors)

        return feed_one

    info: list[dict[str, Any]] = [{"name": s.name, "files": len(files), "bytes": sum(f.size for f in files)} for s, files in plan]
    return [feeder(s, files) for s, files in plan], total, info, [f.path for _, files in plan for f in files]


def sources_feed(
    sources: str | os.PathLike[str] | Source | Iterable[str | os.PathLike[str]] | Iterable[Source], errors: str
) -> tuple[Callable[[Feed], None], int | None, list[dict[str, Any]], list[str]]:
    """What feeding ``sources`` all into one counter takes: :func:`source_feeds` with one
    function that feeds every source in turn."""
    feeds, total, info, paths = source_feeds(sources, errors)

    def feed_all(feed: Feed) -> None:
        for feed_one in feeds:
            feed_one(feed)

    return feed_all, total, info, paths


def count_all(
    counter: _core.WordCounter, feed_all: Callable[[Feed], None], num_threads: int | None, show: bool, total: int | None
) -> Feed:
    """Feeds everything to ``counter`` (with a "counting" bar over ``total`` bytes when
    ``show``); returns the feed, which knows what it replaced."""
    bar = _progress.Progress("counting", total=total, unit="bytes") if show else None
    feed = Feed(counter, num_threads, bar)
    feed_all(feed)
    feed.flush()
    if bar:
        bar.close()
    return feed
