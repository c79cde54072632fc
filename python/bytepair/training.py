"""Training byte-level BPE tokenizers.

Pieces are counted in parallel by the Rust core (files are streamed in blocks, so memory
follows the number of distinct pieces, not the corpus size); the merge loop then learns
merges incrementally. The result is exactly what the textbook algorithm gives
(``tests/oracle.py``): most frequent pair first, ties to the lexicographically greatest
``(bytes, bytes)``, stopping at ``vocab_size`` or when no pair reaches ``min_frequency``.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from bytepair import _core
from bytepair._progress import Progress, wanted
from bytepair.errors import BytepairError, BytepairWarning, CorpusError
from bytepair.patterns import resolve
from bytepair.tokenizer import Tokenizer, _repair_surrogates

__all__ = ["train", "train_from_iterator"]

PathLike = str | os.PathLike[str]

_BATCH_BYTES = 8 << 20
_BATCH_DOCS = 4096


def _version() -> str:
    from bytepair import __version__

    return __version__


def _check_options(vocab_size: int, special_tokens: Sequence[str], min_frequency: int, pattern: str | None) -> None:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str, not a str")
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise BytepairError(f"special tokens must be non-empty str, got {s!r}")
    if len(set(special_tokens)) != len(special_tokens):
        raise BytepairError("special_tokens has duplicates")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    minimum = 256 + len(special_tokens)
    if vocab_size < minimum:
        raise BytepairError(
            f"vocab_size={vocab_size} is too small: the minimum is {minimum} "
            f"(256 single bytes + {len(special_tokens)} special tokens)"
        )
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 1:
        raise BytepairError(f"min_frequency must be an int >= 1, got {min_frequency!r}")
    resolve(pattern)


def _paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        items = [paths]
    else:
        items = list(paths)
    out = []
    for p in items:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths must be str or os.PathLike, got {type(p).__name__}")
        path = os.fspath(p)
        if os.path.isdir(path):
            raise CorpusError(f"{path} is a directory; pass the files in it")
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        if not os.access(path, os.R_OK):
            raise PermissionError(f"{path}: not readable")
        out.append(path)
    return out


def _finish(
    counter: _core.PieceCounter,
    *,
    vocab_size: int,
    pattern: str | None,
    special_tokens: Sequence[str],
    min_frequency: int,
    progress: bool,
    started: float,
    inputs: dict[str, Any],
) -> Tokenizer:
    n_bytes, n_docs, n_replaced = counter.bytes_counted, counter.documents, counter.replaced_bytes
    if n_bytes == 0:
        warnings.warn(
            "the training corpus is empty: the tokenizer has only the 256 byte tokens",
            BytepairWarning,
            stacklevel=3,
        )
    wanted_merges = vocab_size - 256 - len(special_tokens)
    bar = Progress("merging ", total=wanted_merges, unit="merges") if progress else None
    counted = time.perf_counter()
    merge_ids, distinct = counter.train(
        merges=wanted_merges, min_frequency=min_frequency, progress=bar.update if bar else None
    )
    if bar:
        bar.close()
    vocab = {i: bytes([i]) for i in range(256)}
    merges: list[tuple[bytes, bytes]] = []
    for a, b in merge_ids:
        merges.append((vocab[a], vocab[b]))
        vocab[len(vocab)] = vocab[a] + vocab[b]
    specials = {s: len(vocab) + i for i, s in enumerate(special_tokens)}
    _, regex = resolve(pattern)
    training = {
        "bytepair_version": _version(),
        "vocab_size": vocab_size,
        "min_frequency": min_frequency,
        "merges_learned": len(merges),
        "stopped_early": len(merges) < wanted_merges,
        "input": dict(inputs, bytes=n_bytes, documents=n_docs, replaced_bytes=n_replaced),
        "distinct_pieces": distinct,
        "seconds": {
            "counting": round(counted - started, 3),
            "merging": round(time.perf_counter() - counted, 3),
        },
    }
    tok = Tokenizer._from_merges(vocab, merges, merge_ids, specials, regex, training)
    return tok


def _offset_update(bar: Progress, offset: int, done: int) -> None:
    bar.update(offset + done)


def train(
    paths: PathLike | Iterable[PathLike],
    *,
    vocab_size: int,
    pattern: str | None = "gpt4",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    errors: str = "strict",
    progress: bool | None = None,
    backend: str = "local",
    client: Any = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on UTF-8 text files.

    ``paths`` is one path or a list of paths (a ``str`` is always one path). Files are
    streamed, never held whole. ``vocab_size`` counts everything: 256 byte tokens, the
    merges, then ``special_tokens``. Special-token text in the files separates documents and
    is never counted. ``errors="replace"`` replaces bytes that are not UTF-8 instead of
    raising :class:`CorpusError`. ``progress=None`` shows progress bars on stderr only when it
    is a terminal.

    ``backend="dask"`` counts on a Dask cluster (``client``, or the current default client):
    the workers read the files, so the paths must be valid there; see
    :mod:`bytepair.distributed`. The merges are the same as with ``backend="local"``.

    >>> tok = train("corpus.txt", vocab_size=1000)  # doctest: +SKIP
    """
    if backend != "local" or client is not None:
        started = time.perf_counter()
        _check_options(vocab_size, special_tokens, min_frequency, pattern)
        counter, inputs = _count_elsewhere(paths, backend, client, pattern, special_tokens, errors, progress)
        return _finish(
            counter,
            vocab_size=vocab_size,
            pattern=pattern,
            special_tokens=special_tokens,
            min_frequency=min_frequency,
            progress=wanted(progress),
            started=started,
            inputs=inputs,
        )
    files = _paths(paths)
    _check_options(vocab_size, special_tokens, min_frequency, pattern)
    if errors not in ("strict", "replace"):
        raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
    show = wanted(progress)
    started = time.perf_counter()
    _, regex = resolve(pattern)
    counter = _core.PieceCounter(regex, list(special_tokens))
    total = sum(os.path.getsize(f) for f in files)
    bar = Progress("counting", total=total, unit="bytes") if show else None
    done_before = 0
    for f in files:
        on_progress = None
        if bar is not None:
            on_progress = functools.partial(_offset_update, bar, done_before)
        counter.add_file(f, replace_errors=errors == "replace", progress=on_progress)
        done_before += os.path.getsize(f)
        if bar:
            bar.update(done_before)
    if bar:
        bar.close()
    return _finish(
        counter,
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        progress=show,
        started=started,
        inputs={"files": [os.path.basename(f) for f in files]},
    )


def _count_elsewhere(
    paths: PathLike | Iterable[PathLike],
    backend: str,
    client: Any,
    pattern: str | None,
    special_tokens: Sequence[str],
    errors: str,
    progress: bool | None,
) -> tuple[_core.PieceCounter, dict[str, Any]]:
    """train()'s counting on a backend other than "local" (only "dask" so far)."""
    if backend != "dask":
        if backend == "local":
            raise BytepairError("client= is only used with backend='dask'")
        raise BytepairError(f"backend must be 'local' or 'dask', got {backend!r}")
    from bytepair import distributed

    files = distributed.check_paths(paths)  # the files themselves are checked on the workers
    if errors not in ("strict", "replace"):
        raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
    counter = distributed.count(
        files,
        regex=resolve(pattern)[1],
        special_tokens=special_tokens,
        replace_errors=errors == "replace",
        client=client,
        progress=wanted(progress),
    )
    return counter, {"files": [os.path.basename(f) for f in files]}


def train_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    pattern: str | None = "gpt4",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    progress: bool | None = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on an iterable of ``str`` documents.

    Each document is split on its own (no piece spans two documents). Documents are handed to
    the Rust core in batches, so an iterator over a huge dataset is never held whole.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("train_from_iterator() takes an iterable of str documents, not a single str")
    _check_options(vocab_size, special_tokens, min_frequency, pattern)
    show = wanted(progress)
    started = time.perf_counter()
    _, regex = resolve(pattern)
    counter = _core.PieceCounter(regex, list(special_tokens))
    bar = Progress("counting", total=None, unit="bytes") if show else None
    batch: list[str] = []
    size = 0

    def flush() -> None:
        try:
            counter.add_texts(batch)
        except UnicodeEncodeError:
            counter.add_texts([_repair_surrogates(t) for t in batch])
        batch.clear()

    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"document {i} is {type(text).__name__}, not str")
        batch.append(text)
        size += len(text)
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_DOCS:
            flush()
            size = 0
            if bar:
                bar.update(counter.bytes_counted)
    if batch:
        flush()
    if bar:
        bar.update(counter.bytes_counted)
        bar.close()
    return _finish(
        counter,
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        progress=show,
        started=started,
        inputs={},
    )
