"""The naive textbook algorithms, written for clarity, not speed: the reference the fast
implementation is tested against.

Training: count each piece over the corpus; repeatedly merge the most frequent adjacent pair
(ties: the lexicographically greatest (bytes, bytes)), replacing it in every piece left to
right; stop at the vocabulary size or when the best count is below min_frequency.
Encoding: per piece, repeatedly merge the adjacent pair that was learned first, until none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import regex


def split_specials(text: str, specials: Sequence[str]) -> list[tuple[str, bool]]:
    """Splits text at special tokens (leftmost, then longest match): [(stretch, is_special)]."""
    out: list[tuple[str, bool]] = []
    i = start = 0
    while i < len(text):
        hits = [s for s in specials if text.startswith(s, i)]
        if hits:
            if start < i:
                out.append((text[start:i], False))
            best = max(hits, key=len)
            out.append((best, True))
            i = start = i + len(best)
        else:
            i += 1
    if start < len(text):
        out.append((text[start:], False))
    return out


def pieces(text: str, pattern: str | None) -> list[str]:
    if pattern is None:
        return [text] if text else []
    return [p for p in regex.findall(pattern, text) if p]


def merge(word: list[bytes], pair: tuple[bytes, bytes]) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def count_pieces(texts: Iterable[str], pattern: str | None, specials: Sequence[str]) -> Counter[bytes]:
    counts: Counter[bytes] = Counter()
    for text in texts:
        for stretch, is_special in split_specials(text, specials):
            if not is_special:
                counts.update(p.encode("utf-8") for p in pieces(stretch, pattern))
    return counts


def train_counts(counts: dict[bytes, int], n_merges: int, min_frequency: int) -> list[tuple[bytes, bytes]]:
    words = [([bytes([b]) for b in piece], c) for piece, c in counts.items()]
    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < n_merges:
        stats: Counter[tuple[bytes, bytes]] = Counter()
        for word, c in words:
            for pair in zip(word, word[1:]):
                stats[pair] += c
        if not stats:
            break
        best = max(stats, key=lambda p: (stats[p], p))
        if stats[best] < min_frequency:
            break
        merges.append(best)
        words = [(merge(w, best), c) for w, c in words]
    return merges


def train(
    texts: Iterable[str], vocab_size: int, pattern: str | None, specials: Sequence[str] = (), min_frequency: int = 2
) -> list[tuple[bytes, bytes]]:
    counts = count_pieces(texts, pattern, specials)
    return train_counts(counts, vocab_size - 256 - len(specials), min_frequency)


def encode_piece(piece: bytes, ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    word = [bytes([b]) for b in piece]
    while len(word) > 1:
        pairs = [p for p in zip(word, word[1:]) if p in ranks]
        if not pairs:
            break
        word = merge(word, min(pairs, key=lambda p: ranks[p]))
    return word


def encode(
    text: str,
    merges: Sequence[tuple[bytes, bytes]],
    pattern: str | None,
    specials: dict[str, int] | None = None,
) -> list[int]:
    """Ids of a trained tokenizer: bytes 0..255, merge i -> 256 + i, then the special tokens."""
    ranks = {pair: i for i, pair in enumerate(merges)}
    ids = {bytes([b]): b for b in range(256)}
    for i, (a, b) in enumerate(merges):
        ids[a + b] = 256 + i
    out: list[int] = []
    specials = specials or {}
    for stretch, is_special in split_specials(text, list(specials)):
        if is_special:
            out.append(specials[stretch])
            continue
        for p in pieces(stretch, pattern):
            out.extend(ids[t] for t in encode_piece(p.encode("utf-8"), ranks))
    return out
