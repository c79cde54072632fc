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
import unicodedata


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
    """The matches of ``pattern``, and the text between them as pieces of their own
    (lossless: the pieces join to ``text``); empty matches make no piece."""
    if pattern is None:
        return [text] if text else []
    out: list[str] = []
    end = 0
    for m in regex.finditer(pattern, text):
        if m.start() > end:
            out.append(text[end : m.start()])
        if m.group():
            out.append(m.group())
        end = m.end()
    if end < len(text):
        out.append(text[end:])
    return out


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


def train_counts(
    counts: dict[bytes, int],
    n_merges: int,
    min_frequency: int,
    *,
    base_merges: Sequence[tuple[bytes, bytes]] = (),
    max_token_length: int | None = None,
) -> list[tuple[bytes, bytes]]:
    """The textbook loop. With ``base_merges``, each piece starts as its encoding with them
    (continued training) and only new merges are returned. A pair whose merged bytes would be
    longer than ``max_token_length`` is never chosen."""
    ranks = {pair: i for i, pair in enumerate(base_merges)}
    words = [(encode_piece(piece, ranks), c) for piece, c in counts.items()]
    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < n_merges:
        stats: Counter[tuple[bytes, bytes]] = Counter()
        for word, c in words:
            for pair in zip(word, word[1:]):
                if max_token_length is None or len(pair[0]) + len(pair[1]) <= max_token_length:
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


WEIGHT_DENOMINATOR = 1 << 16


def mix(per_source: Sequence[Counter[bytes]], sizes: Sequence[int], alpha: float) -> Counter[bytes]:
    """Temperature mixing: source i's counts times (n_max / n_i) ** (1 - alpha), the weight
    rounded to a multiple of 1/65536, each scaled count rounded to the nearest integer (halves
    up); pieces whose scaled count is 0 dropped."""
    n_max = max(sizes, default=0)
    total: Counter[bytes] = Counter()
    for counts, n in zip(per_source, sizes):
        if alpha == 1 or n == 0:
            m = WEIGHT_DENOMINATOR
        else:
            m = round((n_max / n) ** (1 - alpha) * WEIGHT_DENOMINATOR)
        for piece, c in counts.items():
            scaled = (c * m + WEIGHT_DENOMINATOR // 2) // WEIGHT_DENOMINATOR
            if scaled:
                total[piece] += scaled
    return total


def _lower(text: str) -> str:
    """Each character lowercased alone (no final sigma), as tokenizers' Lowercase does it."""
    return "".join(c.lower() for c in text)


def normalize(text: str, steps: str | None, specials: Sequence[str] = ()) -> str:
    """Normalizes each stretch between special tokens; steps joined by '+', applied in order."""
    if steps is None:
        return text
    out = []
    for stretch, is_special in split_specials(text, specials):
        if not is_special:
            for step in steps.split("+"):
                stretch = _lower(stretch) if step == "lowercase" else unicodedata.normalize(step.upper(), stretch)
        out.append(stretch)
    return "".join(out)


def encode_piece(piece: bytes, ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    """Per piece: merge the pair learned earliest, leftmost on ties, until none is left."""
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


# ---- WordPiece ----------------------------------------------------------------------------


def wordpiece_word(
    word: str,
    vocab: Sequence[str] | set[str],
    unk: str,
    prefix: str = "##",
    max_chars: int = 100,
    split_unknown: bool = False,
) -> list[str]:
    """Greedy longest-match-first WordPiece of one (normalized) word, the textbook way: from each
    position try every end from the longest down; a word with no full split, or longer than
    max_chars characters, is [unk]. With split_unknown (the lecture's ``Hugg ##i ##n [UNK]``), a
    position where nothing matches gives [unk] for its one character, and matching goes on at
    the next character (as a continuation, with the prefix)."""
    vocab = set(vocab)
    if len(word) > max_chars:
        return [unk]
    out = []
    start = 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                out.append(piece)
                start = end
                break
        else:
            if not split_unknown:
                return [unk]
            out.append(unk)
            start += 1
    return out


def wordpiece_train(
    word_counts: dict[str, int],
    *,
    vocab_size: int,
    algorithm: str,
    min_frequency: int,
    special_tokens: Sequence[str],
    prefix: str = "##",
    record: list[tuple[str, str, int, int, int]] | None = None,
) -> tuple[list[str], bool]:
    """WordPiece training, recounting everything before each merge. Initial vocabulary: the
    special tokens, the characters in code-point order, the `##` characters in code-point
    order. "hf": the most frequent pair; "score": the highest count(ab) / (count(a) count(b)),
    then the higher count(ab); both then the smallest (id(a), id(b)). Pairs below min_frequency
    (and below 1) are never merged. Returns the vocabulary, and whether some merge made a token
    that was already in it (HF's trainer then merges such a pair word set by word set: see
    rust/src/wordpiece/train.rs; tests compare the "hf" rule with this one only without them).
    ``record``, when given, gets one row per merge, recounted from the words as they are before
    it: (left token, right token, count(ab), count(a), count(b))."""
    from fractions import Fraction

    vocab: list[str] = []
    ids: dict[str, int] = {}
    repeated = False

    def add(t: str) -> int:
        if t not in ids:
            ids[t] = len(vocab)
            vocab.append(t)
        return ids[t]

    for s in special_tokens:
        add(s)
    for c in sorted({c for w in word_counts for c in w}):
        add(c)
    for c in sorted({c for w in word_counts for c in w[1:]}):
        add(prefix + c)
    words = [([ids[w[0]]] + [ids[prefix + c] for c in w[1:]], n) for w, n in sorted(word_counts.items())]
    while len(vocab) < vocab_size:
        pairs: Counter[tuple[int, int]] = Counter()
        unit: Counter[int] = Counter()
        for syms, n in words:
            for s in syms:
                unit[s] += n
            for p in zip(syms, syms[1:]):
                pairs[p] += n
        cands = [p for p, n in pairs.items() if n >= max(1, min_frequency)]
        if not cands:
            break
        if algorithm == "hf":
            a, b = max(cands, key=lambda p: (pairs[p], -p[0], -p[1]))
        else:
            a, b = max(cands, key=lambda p: (Fraction(pairs[p], unit[p[0]] * unit[p[1]]), pairs[p], -p[0], -p[1]))
        if record is not None:
            record.append((vocab[a], vocab[b], pairs[a, b], unit[a], unit[b]))
        right = vocab[b][len(prefix):] if vocab[b].startswith(prefix) else vocab[b]
        text = vocab[a] + right
        repeated = repeated or text in ids
        new = add(text)
        for syms, _ in words:
            i = 0
            while i + 1 < len(syms):
                if syms[i] == a and syms[i + 1] == b:
                    syms[i : i + 2] = [new]
                i += 1
    return vocab, repeated
