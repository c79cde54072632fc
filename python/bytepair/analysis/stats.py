"""Corpus and token statistics: byte and byte-pair frequencies, token frequencies, Zipf.

All counts are exact integers from numpy ``bincount``; shares are fractions of the total (of
bytes, of byte pairs, of tokens). Pairs are adjacent bytes within a document (none across
documents). Token statistics encode each document with ``Tokenizer.encode_batch``, special-token
text encoded as ordinary text; a WordPiece or SentencePiece model encodes as its ``encode``
does (SentencePiece: the ids ``SentencePieceProcessor.encode`` gives, no BOS / EOS).

Zipf: tokens sorted by frequency (rank 1 = most frequent); the slope is the least-squares fit of
``log10(frequency)`` against ``log10(rank)`` over every token seen at least once (about -1 for
text that follows Zipf's law).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import numpy.typing as npt

from bytepair.errors import CorpusError
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["AnyTokenizer", "ByteStats", "TokenStats", "byte_stats", "token_stats", "zipf_fit"]

Ints = npt.NDArray[np.int64]
#: The tokenizers the statistics take: byte-level BPE, WordPiece and SentencePiece models.
AnyTokenizer = Union[Tokenizer, WordPieceTokenizer, "SentencePieceTokenizer"]
_BATCH_DOCS = 256
_BATCH_BYTES = 4 << 20


@dataclass
class ByteStats:
    """``bytes[b]``: occurrences of byte ``b``; ``pairs[a * 256 + b]``: of ``a`` followed by ``b``."""

    bytes: Ints
    pairs: Ints
    documents: int

    @property
    def total_bytes(self) -> int:
        return int(self.bytes.sum())

    def top_bytes(self, n: int) -> list[tuple[int, int, float]]:
        """``(byte, count, share of all bytes)``, most frequent first (ties: lower byte first)."""
        return _top(self.bytes, n)

    def top_pairs(self, n: int) -> list[tuple[tuple[int, int], int, float]]:
        """``((a, b), count, share of all adjacent pairs)``, most frequent first."""
        return [((int(i) // 256, int(i) % 256), c, s) for i, c, s in _top(self.pairs, n)]


def _top(counts: Ints, n: int) -> list[tuple[int, int, float]]:
    total = int(counts.sum())
    order = np.lexsort((np.arange(len(counts)), -counts))[:n]
    return [(int(i), int(counts[i]), int(counts[i]) / total if total else 0.0) for i in order if counts[i] > 0]


def byte_stats(documents: Iterable[str]) -> ByteStats:
    """Byte and adjacent byte-pair counts over ``documents`` (UTF-8)."""
    byte_counts = np.zeros(256, dtype=np.int64)
    pair_counts = np.zeros(65536, dtype=np.int64)
    n = 0
    for doc in documents:
        n += 1
        data = np.frombuffer(doc.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        if len(data) == 0:
            continue
        byte_counts += np.bincount(data, minlength=256)
        if len(data) > 1:
            pair_counts += np.bincount(data[:-1].astype(np.int64) * 256 + data[1:], minlength=65536)
    if n == 0:
        raise CorpusError("the corpus has no documents")
    if not byte_counts.any():
        raise CorpusError(f"the corpus is empty ({n:,} empty document{'s' if n > 1 else ''})")
    return ByteStats(byte_counts, pair_counts, n)


def zipf_fit(counts: Ints) -> tuple[float, float]:
    """``(slope, intercept)`` of ``log10(freq) = slope * log10(rank) + intercept`` over counts > 0."""
    freq = np.sort(counts[counts > 0])[::-1].astype(np.float64)
    if len(freq) < 2:
        raise CorpusError("a Zipf fit needs at least two distinct tokens")
    ranks = np.arange(1, len(freq) + 1, dtype=np.float64)
    slope, intercept = np.polyfit(np.log10(ranks), np.log10(freq), 1)
    return float(slope), float(intercept)


@dataclass
class TokenStats:
    """Token counts over a corpus (index = token id) and in how many documents each id occurs."""

    counts: Ints
    document_counts: Ints
    documents: int
    text_bytes: int
    vocab_size: int
    rare_threshold: float = field(default=0.0001)

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def top(self, n: int) -> list[tuple[int, int, float]]:
        """``(id, count, share of all tokens)``, most frequent first (ties: lower id first)."""
        return _top(self.counts, n)

    def top_share(self, n: int = 100) -> float:
        """Share of all tokens taken by the ``n`` most frequent tokens."""
        total = self.total
        return float(np.sort(self.counts)[::-1][:n].sum()) / total if total else 0.0

    def rare_share(self) -> float:
        """Share of the vocabulary seen in fewer than ``rare_threshold`` (0.01%) of the documents
        (tokens never seen included)."""
        df = np.zeros(self.vocab_size, dtype=np.int64)
        k = min(self.vocab_size, len(self.document_counts))
        df[:k] = self.document_counts[:k]
        return float((df < self.rare_threshold * self.documents).sum()) / self.vocab_size

    def zipf(self) -> tuple[Ints, Ints, float, float]:
        """``(ranks, frequencies, slope, intercept)`` of the tokens seen, most frequent first."""
        freq = np.sort(self.counts[self.counts > 0])[::-1]
        slope, intercept = zipf_fit(self.counts)
        return np.arange(1, len(freq) + 1, dtype=np.int64), freq, slope, intercept


def _batches(documents: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if len(batch) >= _BATCH_DOCS or size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _encode_batch(tok: AnyTokenizer, batch: list[str], num_threads: int | None) -> tuple[npt.NDArray[Any], Ints]:
    """``(ids, offsets)`` of ``batch``: every id in one array, text ``i``'s at
    ``ids[offsets[i]:offsets[i + 1]]``."""
    if isinstance(tok, Tokenizer):
        return tok.encode_batch_numpy(batch, disallowed_special=(), num_threads=num_threads)
    if isinstance(tok, WordPieceTokenizer):  # the same array path
        return tok.encode_batch_numpy(batch, num_threads=num_threads)
    # SentencePiece (a .model, or a tokenizer.json of the family, which encodes in Python)
    lists = tok.encode_batch(batch, num_threads=num_threads)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids in lists], out=offsets[1:])
    ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(offsets[-1]))
    return ids, offsets


def token_stats(
    tok: AnyTokenizer, documents: Iterable[str], *, num_threads: int | None = None, document_frequencies: bool = True
) -> TokenStats:
    """Encodes every document (the array path, no Python int per token) and counts tokens and
    document frequencies (left at zero with ``document_frequencies=False``, which saves a sort)."""
    n = tok.vocab_size
    # The tables grow to the largest id the text gives, not to the largest id the tokenizer
    # file names: a special token with id 2**32 - 1 would have asked for 32 GiB here.
    counts = np.zeros(n, dtype=np.int64)
    dfs = np.zeros(n, dtype=np.int64)
    docs = 0
    text_bytes = 0
    for batch in _batches(documents):
        docs += len(batch)
        text_bytes += sum(len(d.encode("utf-8", "surrogatepass")) for d in batch)
        ids, offsets = _encode_batch(tok, batch, num_threads)
        batch_counts = np.bincount(ids, minlength=len(counts))
        if len(batch_counts) > len(counts):
            counts = np.pad(counts, (0, len(batch_counts) - len(counts)))
            dfs = np.pad(dfs, (0, len(batch_counts) - len(dfs)))
        size = len(counts)
        counts += batch_counts
        if not document_frequencies:
            continue
        if len(batch) == 1:
            dfs += batch_counts > 0
            continue
        # Document frequencies: each (document, id) pair once, as one int64 key per token.
        doc_of = np.repeat(np.arange(len(batch), dtype=np.int64), np.diff(offsets))
        seen = np.unique(doc_of * size + ids.astype(np.int64))
        dfs += np.bincount(seen % size, minlength=size)
    if docs == 0:
        raise CorpusError("the corpus has no documents")
    return TokenStats(counts, dfs, docs, text_bytes, n)
