"""Token ids as numpy arrays: one flat buffer of ``uint16`` / ``uint32`` ids and document offsets,
made in Rust without a Python object per token (``rust/src/bpe/flat.rs``).

The methods :meth:`Tokenizer.encode_to_numpy`, :meth:`Tokenizer.encode_batch_numpy` and
:meth:`Tokenizer.encode_files` call these functions. The extension fills a ``bytearray`` in
place (on all threads) and numpy views it with ``frombuffer``: the array is writable and no
copy is made.

Batches return ``(ids, offsets)``: ``offsets`` has one more entry than there are documents, and
document ``i`` is ``ids[offsets[i]:offsets[i + 1]]`` (the layout of Arrow list arrays and of
Megatron's document index). The dtype is ``uint16`` when every id of the tokenizer (special
tokens included) is below 65,536, else ``uint32``; a dtype that cannot hold every id is refused
before anything is encoded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from bytepair.errors import BytepairError, CorpusError

if TYPE_CHECKING:
    from numpy.typing import DTypeLike, NDArray

    from bytepair.tokenizer import DisallowedSet, SpecialSet, Tokenizer

__all__ = ["encode_batch_numpy", "encode_documents", "encode_files", "encode_to_numpy", "id_dtype", "max_id"]

_DTYPES = {np.dtype(np.uint16): 2, np.dtype(np.uint32): 4}


def max_id(tok: Tokenizer) -> int:
    """The largest id the tokenizer can produce (ordinary or special)."""
    cached: int | None = getattr(tok, "_max_id_cache", None)
    if cached is None:
        if tok._vocab_dict is None:  # the extension's vocabulary: its largest id without a dict of it
            top = tok._core.vocab_table()[1]
            ids = ([] if top is None else [top]) + list(tok.special_tokens.values())
        else:
            ids = list(tok._vocab.keys()) + list(tok.special_tokens.values())
        cached = max(ids) if ids else 0
        tok._max_id_cache = cached  # type: ignore[attr-defined]
    return cached


def id_dtype(tok: Tokenizer, dtype: DTypeLike | None = None) -> np.dtype[Any]:
    """The dtype for the tokenizer's ids: ``dtype`` if given (checked), else the smallest of
    ``uint16`` / ``uint32`` that holds the largest id."""
    return dtype_for(max_id(tok), dtype)


def dtype_for(top: int, dtype: DTypeLike | None = None) -> np.dtype[Any]:
    """The dtype for ids up to ``top``, of any model kind: ``dtype`` if given (checked), else the
    smallest of ``uint16`` / ``uint32`` that holds ``top``."""
    if dtype is None:
        return np.dtype(np.uint16) if top < 1 << 16 else np.dtype(np.uint32)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise BytepairError(f"dtype must be uint16 or uint32, got {dtype!r}") from None
    if dt not in _DTYPES:
        raise BytepairError(f"dtype must be uint16 or uint32, got {dt}")
    if top >= 1 << (8 * dt.itemsize):
        raise BytepairError(f"the tokenizer's ids go up to {top}, which does not fit in {dt}; use uint32")
    return dt


def _arrays(raw: tuple[bytearray | memoryview, bytearray], dt: np.dtype[Any]) -> tuple[NDArray[Any], NDArray[np.int64]]:
    ids, offsets = raw
    return np.frombuffer(ids, dtype=dt.newbyteorder("<")).view(dt), np.frombuffer(offsets, dtype="<i8").view(np.int64)


_T = TypeVar("_T")


def with_repair(encode: Callable[[list[str]], _T], texts: list[str]) -> _T:
    """``encode(texts)``, or, when a text holds a lone surrogate (which has no UTF-8), the same
    with such code points as U+FFFD, as the encoder treats them."""
    try:
        return encode(texts)
    except UnicodeEncodeError:
        from bytepair.tokenizer import _repair_surrogates

        return encode([_repair_surrogates(t) for t in texts])


def encode_documents(
    tok: Tokenizer,
    texts: list[str],
    *,
    allowed: list[int],
    dt: np.dtype[Any],
    separator: tuple[int, bool] | None = None,
    num_threads: int | None = None,
    edges: list[tuple[bool, bool]] | None = None,
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """Encodes texts that are already checked and normalized: the common core of the array path.
    ``separator`` = ``(id, prepend)`` puts that id before (or after) each document; with
    ``edges``, text ``i`` is a piece of a document that starts it if ``edges[i][0]`` and ends
    it if ``edges[i][1]``, and only those get the separator."""
    core = tok._core
    width = _DTYPES[dt]
    raw = with_repair(
        lambda ts: core.encode_flat(ts, allowed, width=width, separator=separator, num_threads=num_threads, edges=edges),
        texts,
    )
    return _arrays(raw, dt)


def encode_to_numpy(
    tok: Tokenizer,
    text: str,
    *,
    allowed_special: SpecialSet,
    disallowed_special: DisallowedSet,
    num_threads: int | None,
    dtype: DTypeLike | None,
) -> NDArray[Any]:
    from bytepair.tokenizer import _check_threads

    if not isinstance(text, str):
        raise TypeError(f"encode_to_numpy() takes a str, not {type(text).__name__}")
    num_threads = _check_threads(num_threads)
    dt = id_dtype(tok, dtype)
    text = tok._norm(text)
    tok._check_disallowed(text, allowed_special, disallowed_special)
    ids, _ = encode_documents(tok, [text], allowed=tok._allowed_ids(allowed_special), dt=dt, num_threads=num_threads)
    return ids


def encode_batch_numpy(
    tok: Tokenizer,
    texts: Sequence[str],
    *,
    allowed_special: SpecialSet,
    disallowed_special: DisallowedSet,
    num_threads: int | None,
    dtype: DTypeLike | None,
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    from bytepair.tokenizer import _check_threads

    num_threads = _check_threads(num_threads)
    dt = id_dtype(tok, dtype)
    checked = tok._batch(texts, "encode_batch_numpy", allowed_special, disallowed_special)
    return encode_documents(tok, checked, allowed=tok._allowed_ids(allowed_special), dt=dt, num_threads=num_threads)


def encode_files(
    tok: Tokenizer,
    paths: Sequence[str | os.PathLike[str]],
    *,
    errors: str,
    num_threads: int | None,
    dtype: DTypeLike | None,
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    from bytepair.tokenizer import _check_threads

    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("encode_files() takes a list of paths; for one file pass [path]")
    if errors not in ("strict", "replace"):
        raise BytepairError(f'errors must be "strict" or "replace", got {errors!r}')
    num_threads = _check_threads(num_threads)
    names = [os.fspath(p) for p in paths]
    for p in names:
        if not isinstance(p, str):
            raise TypeError(f"paths must be str or os.PathLike[str], got {type(p).__name__}")
    dt = id_dtype(tok, dtype)
    from bytepair._files import check_regular
    from bytepair.sources import SourceFile, documents

    # The rule of train() and encode_corpus(): a FIFO or device is refused (the extension would
    # read it as empty: it reads a file up to the size stat gives), a regular file is read to its
    # end whatever that size (procfs files say 0).
    sizes = [check_regular(p, CorpusError).st_size for p in names]
    if tok._normalize is not None:
        # Normalization is Python's (unicodedata): read the files here and normalize them.
        plain = [SourceFile(p, size, None, False) for p, size in zip(names, sizes)]
        texts = [tok._normalize("".join(documents(f, errors=errors))) for f in plain]
        return encode_documents(tok, texts, allowed=[], dt=dt, num_threads=num_threads)
    # Files that say they are empty are read here; those with text (procfs) are encoded apart.
    unsized: dict[int, str] = {}
    for k, size in enumerate(sizes):
        if size == 0 and (text := "".join(documents(SourceFile(names[k], 0, None, False), errors=errors))):
            unsized[k] = text
    sized = [p for k, p in enumerate(names) if k not in unsized]
    ids, offsets, _replaced = tok._core.encode_files(
        sized, [], width=_DTYPES[dt], replace_errors=errors == "replace", num_threads=num_threads
    )
    out = _arrays((ids, offsets), dt)
    if not unsized:
        return out
    more = encode_documents(tok, list(unsized.values()), allowed=[], dt=dt, num_threads=num_threads)
    return _interleave(out, more, [k in unsized for k in range(len(names))])


def _interleave(
    a: tuple[NDArray[Any], NDArray[np.int64]], b: tuple[NDArray[Any], NDArray[np.int64]], from_b: list[bool]
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """Two ``(ids, offsets)`` batches as one, document ``k`` taken from ``b`` where ``from_b[k]``,
    else from ``a``, each in its order."""
    parts = []
    offsets = np.zeros(len(from_b) + 1, dtype=np.int64)
    next_a = next_b = 0
    for k, take_b in enumerate(from_b):
        ids, offs = b if take_b else a
        j = next_b if take_b else next_a
        parts.append(ids[offs[j] : offs[j + 1]])
        offsets[k + 1] = offsets[k] + (offs[j + 1] - offs[j])
        if take_b:
            next_b += 1
        else:
            next_a += 1
    return np.concatenate(parts), offsets
