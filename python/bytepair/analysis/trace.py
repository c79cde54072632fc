"""What encoding does, step by step: the pieces a text is split into (``pre_tokenize``) and the
merges that turn each piece into tokens (``trace``), the way lecture notes show them.

Both give what the encoder itself does: the concatenated ids of a trace are those of
``encode_ordinary`` (byte-level BPE) or ``encode`` (WordPiece) of the same text, which the tests
check on every shipped encoding. A trace replays each piece in Python, one step per merge with
every adjacent pair and its merge number, so it is for texts a person reads: it refuses a text
of more than ``MAX_TRACE_CHARS`` characters instead of printing millions of rounds.

Offsets are in characters of the text as the model sees it: after the tokenizer's
normalization (unchanged when it has none). WordPiece's are in the text as given (BERT's
normalization keeps its own map back, as Hugging Face's does).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from bytepair import _core
from bytepair.errors import BytepairError

if TYPE_CHECKING:
    from bytepair.tokenizer import Tokenizer
    from bytepair.wordpiece import WordPieceTokenizer

    AnyTokenizer = Union[Tokenizer, WordPieceTokenizer]

__all__ = [
    "MAX_TRACE_CHARS",
    "MergeStep",
    "PieceTrace",
    "TrainingRound",
    "WordPieceStep",
    "pre_tokenize",
    "trace",
    "training_trace",
]

MAX_TRACE_CHARS = 10_000
"""The longest text :func:`trace` takes: a piece of n bytes takes up to n - 1 rounds of n pairs."""

Span = tuple[int, int]


@dataclass(frozen=True)
class MergeStep:
    """One round of byte-level BPE on a piece.

    ``pairs`` are the adjacent pairs before the round, as ``(left id, right id, merge)``, where
    ``merge`` is the pair's merge number (its index in ``tokenizer.merges``: lower merges
    first) or ``None`` when the pair never merges. The round merges the pair with the lowest
    number, the leftmost of equal ones, at ``position`` (an index into the tokens before it)
    into ``new_id``; ``tokens`` are the ids after the round.
    """

    pairs: list[tuple[int, int, int | None]]
    position: int
    merge: int
    new_id: int
    tokens: list[int]


@dataclass(frozen=True)
class WordPieceStep:
    """One longest match of WordPiece: the token ``token`` (with its ``##`` prefix when it
    continues a word) and its ``id``, matched at characters ``span`` of the word. With
    ``split_unknown_characters``, a character nothing matched is a step too: the unknown token
    over that one character, with ``unknown`` set."""

    token: str
    id: int
    span: Span
    unknown: bool = False


@dataclass(frozen=True)
class PieceTrace:
    """How one piece became tokens.

    ``piece`` and ``span`` are as :func:`pre_tokenize` gives them. For byte-level BPE, ``start``
    is the piece's bytes as byte tokens and ``steps`` its merge rounds (:class:`MergeStep`);
    for WordPiece, ``start`` is empty and ``steps`` are its matches (:class:`WordPieceStep`),
    or nothing when the word is unknown. ``ids`` are the piece's tokens.
    """

    piece: str
    span: Span
    start: list[int]
    steps: list[MergeStep] | list[WordPieceStep]
    ids: list[int]


def pre_tokenize(tok: AnyTokenizer, text: str) -> list[tuple[str, Span]]:
    """The pieces ``text`` is split into before any merge, with their character spans: what
    Hugging Face's ``pre_tokenize_str`` gives. Special-token text is split like any text (as
    ``encode_ordinary`` sees it)."""
    from bytepair.tokenizer import Tokenizer
    from bytepair.wordpiece import WordPieceTokenizer

    if not isinstance(text, str):
        raise TypeError(f"pre_tokenize() takes a str, not {type(text).__name__}")
    if isinstance(tok, WordPieceTokenizer):
        from bytepair.wordpiece import _repair_surrogates as repair_wordpiece

        words = _core.bert_pre_tokenize(_repaired(text, repair_wordpiece), **tok.normalizer_options)
        return [(w, (s, e)) for w, (s, e) in words]
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"pre_tokenize() takes a bytepair tokenizer, not {type(tok).__name__}")
    from bytepair.tokenizer import _repair_surrogates

    text = _repaired(_normalized(tok, text), _repair_surrogates)
    out: list[tuple[str, Span]] = []
    at = 0
    for piece in _core.split_pieces(text, tok.pattern):
        # Pieces come in order; a pattern need not match every character (tiktoken drops
        # what it does not match), so each is looked for from the end of the last.
        start = text.find(piece, at)
        out.append((piece, (start, start + len(piece))))
        at = start + len(piece)
    return out


def trace(tok: AnyTokenizer, text: str) -> list[PieceTrace]:
    """Every step of encoding ``text``, piece by piece (see the module docstring)."""
    from bytepair.wordpiece import WordPieceTokenizer

    if not isinstance(text, str):
        raise TypeError(f"trace() takes a str, not {type(text).__name__}")
    if len(text) > MAX_TRACE_CHARS:
        raise BytepairError(
            f"trace() shows every step, for texts a person reads: this one has {len(text):,} characters "
            f"(at most {MAX_TRACE_CHARS:,}); trace a part of it"
        )
    if isinstance(tok, WordPieceTokenizer):
        return _wordpiece_trace(tok, text)
    return _bpe_trace(tok, text)


def _normalized(tok: Tokenizer, text: str) -> str:
    normalize = tok._normalize
    return text if normalize is None else normalize(text)


def _repaired(text: str, repair: Callable[[str], str]) -> str:
    """Lone surrogates made into U+FFFD as the model kind's encoding calls make them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return repair(text)
    return text


class _Merges:
    """pair -> (merge number, new id), and bytes -> id, of one tokenizer (built once)."""

    def __init__(self, tok: Tokenizer) -> None:
        vocab = tok.vocab
        ids = {b: i for i, b in vocab.items()}
        self.bytes = vocab
        self.byte_ids = [ids[bytes([b])] for b in range(256)]
        self.pairs: dict[tuple[int, int], tuple[int, int]] = {}
        for n, (a, b) in enumerate(tok.merges):
            self.pairs.setdefault((ids[a], ids[b]), (n, ids[a + b]))


def _merges(tok: Tokenizer) -> _Merges:
    # Kept on the tokenizer: building it for o200k reads 200,000 merges.
    cached = tok.__dict__.get("_trace_merges")
    if cached is None:
        cached = tok.__dict__["_trace_merges"] = _Merges(tok)
    return cached


def _bpe_trace(tok: Tokenizer, text: str) -> list[PieceTrace]:
    table = _merges(tok)
    out = []
    for piece, span in pre_tokenize(tok, text):
        tokens = [table.byte_ids[b] for b in piece.encode("utf-8")]
        start = list(tokens)
        steps: list[MergeStep] = []
        while len(tokens) > 1:
            pairs = [(a, b, _number(table.pairs.get((a, b)))) for a, b in zip(tokens, tokens[1:])]
            best = min(
                (i for i, p in enumerate(pairs) if p[2] is not None),
                key=lambda i: pairs[i][2],  # type: ignore[arg-type, return-value]
                default=None,
            )
            if best is None:
                break
            merge, new_id = table.pairs[tokens[best], tokens[best + 1]]
            tokens = tokens[:best] + [new_id] + tokens[best + 2 :]
            steps.append(MergeStep(pairs, best, merge, new_id, list(tokens)))
        out.append(PieceTrace(piece, span, start, steps, tokens))
    return out


def _number(found: tuple[int, int] | None) -> int | None:
    return None if found is None else found[0]


def _wordpiece_trace(tok: WordPieceTokenizer, text: str) -> list[PieceTrace]:
    vocab = tok.vocab
    prefix = tok.continuing_subword_prefix
    unk = vocab[tok.unk_token]
    out = []
    for word, span in pre_tokenize(tok, text):
        steps: list[WordPieceStep] = []
        at = 0
        known = len(word) <= tok.max_input_chars_per_word
        while known and at < len(word):
            for end in range(len(word), at, -1):
                candidate = (prefix if at else "") + word[at:end]
                if candidate in vocab:
                    steps.append(WordPieceStep(candidate, vocab[candidate], (at, end)))
                    at = end
                    break
            else:
                if tok.split_unknown_characters:
                    steps.append(WordPieceStep(tok.unk_token, unk, (at, at + 1), unknown=True))
                    at += 1
                else:
                    known = False
        if not known:
            steps = []
        out.append(PieceTrace(word, span, [], steps, [s.id for s in steps] if known else [unk]))
    return out


@dataclass(frozen=True)
class TrainingRound:
    """One round of byte-level BPE training, replayed (:func:`training_trace`).

    ``pairs`` are the most frequent adjacent pairs of the round, best first, as ``(left id,
    right id, count)`` (count: occurrences in the counted pieces, each piece weighted by how
    often it occurs); the first is the one merged, into ``new_id``, as merge number ``merge``.
    Equal counts are ordered as training breaks ties: the greater bytes (left, then right) first.
    """

    merge: int
    pairs: list[tuple[int, int, int]]
    new_id: int


def training_trace(
    tok: Tokenizer,
    texts: Iterable[str] = (),
    *,
    files: Iterable[str | os.PathLike[str]] = (),
    rounds: int = 10,
    top: int = 5,
) -> list[TrainingRound]:
    """The first ``rounds`` rounds of training ``tok`` on ``texts`` (and ``files``, plain text),
    with the ``top`` most frequent pairs of each: what a training notebook prints.

    The pieces are counted again (with ``tok``'s pattern, normalization and special tokens) and
    the rounds replayed with ``tok.merges``; each merge must be the most frequent pair of its
    round, so a tokenizer trained on other text (or with sources mixed by ``alpha``, or continued
    from a base) is refused with a :class:`~bytepair.BytepairError` naming the round.
    """
    from bytepair.tokenizer import Tokenizer

    if not isinstance(tok, Tokenizer):
        raise TypeError(f"training_trace() takes a byte-level BPE Tokenizer, not {type(tok).__name__}")
    for name, value in (("rounds", rounds), ("top", top)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BytepairError(f"{name} must be a positive integer, not {value!r}")
    if tok.training.get("base"):
        raise BytepairError("training_trace() replays training from bytes; this tokenizer continued another's training")
    counter = _core.PieceCounter(tok.pattern, list(tok.special_tokens))
    batch: list[str] = []
    for text in texts:
        batch.append(_normalized(tok, text))
        if len(batch) >= 1024:
            counter.add_texts(batch)
            batch.clear()
    if batch:
        counter.add_texts(batch)
    for path in files:
        if tok._normalize is not None:
            raise BytepairError("training_trace(files=...) reads files as they are: give a normalizing tokenizer's text as texts")
        counter.add_file(os.fspath(path))
    table = _merges(tok)
    ids = {b: i for i, b in table.bytes.items()}
    words = [([table.byte_ids[b] for b in piece], count) for piece, count in counter.take_counts()]
    merges = tok.merges
    out: list[TrainingRound] = []
    for r in range(min(rounds, len(merges))):
        counts: dict[tuple[int, int], int] = {}
        for word, count in words:
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + count
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], table.bytes[kv[0][0]], table.bytes[kv[0][1]]), reverse=True)
        left, right = merges[r]
        taken = (ids[left], ids[right])
        if not ranked or ranked[0][0] != taken:
            best = "no pair" if not ranked else f"{table.bytes[ranked[0][0][0]]!r} + {table.bytes[ranked[0][0][1]]!r}"
            raise BytepairError(
                f"merge {r} of the tokenizer ({left!r} + {right!r}) is not the most frequent pair of these texts "
                f"({best}): it was trained on other text or with other options"
            )
        new_id = ids[left + right]
        out.append(TrainingRound(r, [(a, b, c) for (a, b), c in ranked[:top]], new_id))
        words = [(_merge_pair(word, taken, new_id), count) for word, count in words]
    return out


def _merge_pair(word: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    if len(word) < 2:
        return word
    out: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out
