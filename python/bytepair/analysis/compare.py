"""Comparing tokenizers across languages or domains.

For each tokenizer and each named corpus (:func:`compare`):

- ``fertility``: tokens per word (words as in :mod:`bytepair.analysis.words`: in scripts without
  spaces, per character);
- ``split_share``: share of words whose bytes are cut by at least one token boundary, i.e. that
  take two or more tokens (a token that holds a word plus its leading space does not cut it);
- ``bytes_per_token``: UTF-8 bytes / tokens;
- ``parity``: on parallel text (the corpora are translations of one another), tokens of this
  corpus / tokens of the reference corpus: the "premium" of Petrov et al. (2023), "Language
  Model Tokenizers Introduce Unfairness Between Languages"; 1 = parity.

Byte-level BPE, WordPiece and SentencePiece models can be compared with one another. Token
boundaries come from the tokens' bytes (BPE) or from their character offsets in the text
(WordPiece, SentencePiece ``.model`` files; byte pieces that share a character's span end where
their bytes do, so a character in byte pieces is cut as a byte-level BPE's bytes cut it). A
SentencePiece-family tokenizer.json gives no
offsets: its words are cut where the text its tokens spell out (the normalized text, ``▁`` read
as a space, the unknown token as nothing) is cut, which is the same wherever normalization
keeps word boundaries where they were. Bytes are the text's, except for BPE (the bytes its tokens
cover).

Per tokenizer, ``gini``: the Gini coefficient of the token counts across corpora on parallel
text (0 = every language costs the same), or of fertility when the text is not parallel.
``G = sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from bytepair import _core
from bytepair._progress import Progress, wanted
from bytepair.analysis.corpus import Corpus
from bytepair.analysis.stats import AnyTokenizer
from bytepair.analysis.words import _CLASS, byte_offsets
from bytepair.arrays import with_repair
from bytepair.errors import BytepairError, CorpusError
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer
    from bytepair.views.pieces import PieceTexts

__all__ = ["CompareRow", "Comparison", "compare", "gini", "measure"]


def gini(values: Sequence[float]) -> float:
    """Gini coefficient of non-negative ``values`` (0 when all are equal)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0 or x.mean() == 0:
        return 0.0
    return float(np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean()))


@dataclass
class CompareRow:
    tokenizer: str
    corpus: str
    tokens: int
    words: int
    split_words: int
    text_bytes: int
    parity: float | None = None

    @property
    def fertility(self) -> float:
        return self.tokens / self.words if self.words else float("nan")

    @property
    def split_share(self) -> float:
        return self.split_words / self.words if self.words else float("nan")

    @property
    def bytes_per_token(self) -> float:
        return self.text_bytes / self.tokens if self.tokens else float("nan")


@dataclass
class Comparison:
    rows: list[CompareRow]
    gini: dict[str, float] = field(default_factory=dict)
    reference: str | None = None


Measure = tuple[int, int, int, int]

# The word class of each code point below 65,536 (words._CLASS) as the extension reads it.
_CLASS_BYTES = _CLASS.tobytes()


def measure(tok: AnyTokenizer, text: str) -> Measure:
    """``(tokens, words, words cut by a token boundary, bytes)`` of one text."""
    return _measure_all([tok], text)[0]


def _measure_all(toks: Sequence[AnyTokenizer], text: str) -> list[Measure]:
    """:func:`measure` of one text by each of ``toks``. Byte-level BPE tokenizers are measured
    in the extension (``_core.compare_block``: the text's words found once, then each
    tokenizer's ids encoded and walked once, no array coming back), those that normalize on the
    text they encode; the others here, with the words of each text kept for the next."""
    out: dict[int, Measure] = {}
    bpe = [(k, t) for k, t in enumerate(toks) if isinstance(t, Tokenizer)]
    plain = [(k, t) for k, t in bpe if t.normalization is None]
    calls = [(text, plain)] if plain else []
    calls += [(t._norm(text), [(k, t)]) for k, t in bpe if t.normalization is not None]
    for block, group in calls:
        encoders = [t._core for _, t in group]
        # A lone surrogate (no UTF-8) is encoded as U+FFFD, as encode does; both are 3 bytes of
        # a word character, so the words are the same.
        words, rows = with_repair(lambda ts: _core.compare_block(ts[0], encoders, _CLASS_BYTES), [block])
        for (k, _), (n_tokens, cut, n_bytes) in zip(group, rows):
            # BPE's bytes are those its tokens cover (the text's, unless a surrogate was replaced)
            out[k] = (n_tokens, words, cut, n_bytes)
    seen: dict[str, _Words] = {}
    return [out[k] if k in out else _measure(t, text, seen) for k, t in enumerate(toks)]


def _measure(tok: AnyTokenizer, text: str, seen: dict[str, _Words]) -> Measure:
    """:func:`measure` of a WordPiece or SentencePiece tokenizer, with the words of each text
    measured kept in ``seen`` (every tokenizer of a comparison measures the same block: its
    words are found once)."""
    if not isinstance(tok, WordPieceTokenizer):
        assert not isinstance(tok, Tokenizer)  # measured by _measure_all
        return _measure_pieces(tok, text, seen)
    # WordPiece: token ends from its character offsets (into the original text, whose
    # whitespace it drops); bytes are the text's.
    ids, offsets = tok.encode_with_offsets(text)
    ends = byte_offsets(text)[np.asarray([e for _, e in offsets], dtype=np.int64)]
    words = _words(text, seen)
    return len(ids), words.count, words.cut_any(ends), words.n_bytes


def _words(text: str, seen: dict[str, _Words]) -> _Words:
    words = seen.get(text)
    if words is None:
        words = seen[text] = _Words(text)
    return words


def _measure_pieces(tok: SentencePieceTokenizer, text: str, seen: dict[str, _Words]) -> tuple[int, int, int, int]:
    """:func:`_measure` of a SentencePiece model: a ``.model`` file's token ends from their
    character offsets in ``text``; a tokenizer.json of the family (no offsets) cut where the
    text its tokens spell out is (see the module doc)."""
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer

    words = _words(text, seen)
    pieces = _piece_texts(tok)
    if isinstance(tok, HFSentencePieceTokenizer):
        ids = tok.encode(text)
        parts = [pieces.token_bytes(i) for i in ids]
        spelled = b"".join(parts).decode("utf-8", "replace")  # byte pieces come as whole characters
        ends = np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)))
        return len(ids), words.count, _Words(spelled).cut_any(ends), words.n_bytes
    ids, offsets = tok.encode_with_offsets(text)
    if not ids:
        return 0, words.count, 0, words.n_bytes
    spans = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    at = byte_offsets(text)
    ends = at[spans[:, 1]]
    # Tokens that share one span (the byte pieces of characters the vocabulary lacks, pieces of
    # a character that normalization expands): each ends where its bytes end within the span,
    # so that a character in three byte pieces is cut, as a byte-level BPE's bytes cut it.
    prev, pos = -2, 0
    for k in np.flatnonzero((spans[1:] == spans[:-1]).all(axis=1)).tolist():  # k shares with k + 1
        if k != prev + 1:
            pos = int(at[spans[k, 0]])
        pos += len(pieces.token_bytes(ids[k]))
        ends[k] = min(pos, int(ends[k]))
        prev = k
    return len(ids), words.count, words.cut_any(ends), words.n_bytes


def _piece_texts(tok: SentencePieceTokenizer) -> PieceTexts:
    """The model's :class:`~bytepair.views.pieces.PieceTexts`, kept on it (each piece's bytes are
    found once per model, not once per block)."""
    from bytepair.views.pieces import PieceTexts

    cached: PieceTexts | None = tok.__dict__.get("_piece_texts")
    if cached is None:
        cached = tok.__dict__["_piece_texts"] = PieceTexts(tok)
    return cached


class _Words:
    """The words of one text (:mod:`bytepair.analysis.words`), kept as what a token boundary
    needs: ``joint[p]``, bytes ``p - 1`` and ``p`` are of one word (a token boundary at byte
    offset ``p`` cuts it), and where words are told apart by more than whitespace (characters
    of scripts without spaces, whitespace past ASCII) ``inside[p]`` = 1 + the index of that
    word, or 0 (made on first use for the others).

    Made with numpy once per text and shared by every tokenizer: a tokenizer then costs a
    gather over its token ends, not a pass over the text's bytes. Every step is a numpy pass
    over the bytes (a Python loop per word or per character would cost more than encoding)."""

    __slots__ = ("_inside", "count", "joint", "n_bytes")

    def __init__(self, text: str) -> None:
        u = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        n = len(u)
        self.n_bytes = n
        self._inside: npt.NDArray[np.int32] | None = None
        space = _ascii_space(u)
        if not text.isascii():
            # Characters past ASCII, by the code point at each first byte (>= 0xC0); most are
            # word characters, and then the text's bytes are classified as ASCII text's are.
            lead = np.flatnonzero(u >= 0xC0)
            cls = _classes(_code_points(u, lead))
            special = cls != 0
            if special.any():
                self._words_with_classes(u, space, lead[special], cls[special])
                return
        # Plain: every byte is of a word character or is ASCII whitespace, and no character is
        # a word of its own. Two bytes are of one word when both are word bytes.
        word = np.zeros(n + 2, dtype=np.bool_)  # False before the first byte and after the last
        np.logical_not(space, out=word[1 : n + 1])
        self.count = int(np.count_nonzero(word[1:] & ~word[:-1]))
        self.joint = word[:-1] & word[1:]

    def _words_with_classes(
        self, u: npt.NDArray[np.uint8], space: npt.NDArray[np.bool_], at: npt.NDArray[np.intp], cls: npt.NDArray[np.uint8]
    ) -> None:
        """Text with whitespace past ASCII or characters of scripts without spaces (class
        ``cls`` at first bytes ``at``): each byte gets a class, 0 word, 1 whitespace, 2 the first
        byte of a character of a script without spaces, 3 a later byte of one; the later bytes
        of other characters take their first byte's class."""
        n = len(u)
        byte_cls = space.view(np.uint8)  # 1 on ASCII whitespace, else 0 (right for the others)
        byte_cls[at] = cls
        first = u[at]
        size = 2 + (first >= 0xE0).astype(np.intp) + (first >= 0xF0)  # bytes of each character
        later = cls + (cls == 2)  # 2 -> 3
        for k in (1, 2, 3):
            has = size > k
            byte_cls[at[has] + k] = later[has]
        is_word = np.empty(n + 1, dtype=np.bool_)  # is_word[p + 1]: byte p is of a word character
        is_word[0] = False
        np.equal(byte_cls, 0, out=is_word[1:])
        starts = (byte_cls == 2) | (is_word[1:] & ~is_word[:-1])
        number = np.zeros(n + 1, dtype=np.int32)  # number[p]: 1 + the index of byte p's word
        np.cumsum(starts, dtype=np.int32, out=number[:n])
        self.count = int(number[n - 1]) if n else 0
        joint = np.zeros(n + 1, dtype=np.bool_)
        joint[1:n] = (is_word[1:n] & is_word[2:]) | (byte_cls[1:] == 3)
        self.joint = joint
        self._inside = number * joint

    def inside(self) -> npt.NDArray[np.int32]:
        if self._inside is None:  # plain text: words numbered where they start
            number = np.cumsum(self.joint[1:] > self.joint[:-1], dtype=np.int32)
            inside = np.zeros(len(self.joint), dtype=np.int32)
            inside[1:] = number
            self._inside = inside * self.joint
        return self._inside

    def cut_any(self, ends: npt.NDArray[Any]) -> int:
        """Words with a token end (byte offsets, in any order) strictly inside."""
        if self.count == 0 or len(ends) == 0:
            return 0
        marks = np.zeros(self.count + 1, dtype=np.bool_)
        marks[np.take(self.inside(), ends, mode="clip")] = True  # an end past the text is in no word
        return int(np.count_nonzero(marks[1:]))


def _code_points(u: npt.NDArray[np.uint8], lead: npt.NDArray[np.intp]) -> npt.NDArray[np.uint32]:
    """The code points of the UTF-8 sequences starting at ``lead`` (first bytes >= 0xC0; lone
    surrogates as "surrogatepass" writes them)."""
    b0 = u[lead].astype(np.uint32)
    b1, b2, b3 = (np.take(u, lead + k, mode="clip").astype(np.uint32) & 0x3F for k in (1, 2, 3))
    return np.where(
        b0 >= 0xF0,
        ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3,
        np.where(b0 >= 0xE0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2, ((b0 & 0x1F) << 6) | b1),
    )


def _classes(cps: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint8]:
    """0 word character, 1 whitespace, 2 a character of a script without spaces, for each code
    point (:mod:`bytepair.analysis.words`' table; above it, only Han U+20000..U+3FFFF is 2)."""
    cls = np.take(_CLASS, np.minimum(cps, 0xFFFF))
    high = cps > 0xFFFF
    if high.any():
        cls[high] = np.where((cps[high] >= 0x20000) & (cps[high] <= 0x3FFFF), 2, 0)
    return cls


def _ascii_space(u: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Which bytes are ASCII whitespace (str.isspace: 9-13 and 28-32). Two wrapping subtractions
    and compares: a 256-entry table through np.take costs several times more (the indices are
    widened to 64 bits first)."""
    return ((u - np.uint8(9)) < 5) | ((u - np.uint8(28)) < 5)



def compare(
    tokenizers: Sequence[tuple[str, AnyTokenizer]],
    corpora: Sequence[Corpus],
    *,
    parallel: bool = False,
    reference: str | None = None,
    progress: bool | None = False,
) -> Comparison:
    """Fertility, split share, bytes/token (and parity on ``parallel`` text, against the corpus
    named ``reference``, default the first) of each tokenizer on each corpus.

    The corpora are read once, in blocks (:meth:`Corpus.blocks`), each measured by every
    tokenizer: memory follows the largest block and the tokenizers, not the corpora.
    ``progress=None`` shows a progress bar on stderr when it is a terminal."""
    if not tokenizers:
        raise BytepairError("no tokenizer given")
    names = [c.name for c in corpora]
    if parallel:
        reference = reference if reference is not None else names[0]
        if reference not in names:
            raise BytepairError(f"reference {reference!r} is not one of the corpora ({', '.join(names)})")
    totals = {(t, c.name): [0, 0, 0, 0] for t, _ in tokenizers for c in corpora}
    toks = [tok for _, tok in tokenizers]
    bar = Progress("comparing", total=sum(c.size() for c in corpora), unit="bytes") if wanted(progress) else None
    done = 0
    try:
        for c in corpora:
            has_text = False
            for block in c.blocks():
                has_text = has_text or not block.isspace() and bool(block)
                for (tname, _), measured in zip(tokenizers, _measure_all(toks, block)):
                    acc = totals[tname, c.name]
                    for k, v in enumerate(measured):
                        acc[k] += v
                done += len(block) if block.isascii() else len(block.encode("utf-8", "surrogatepass"))
                if bar is not None:
                    bar.update(done)
            if not has_text:
                raise CorpusError(f"corpus {c.name} has no text")
    finally:
        if bar is not None:
            bar.close()
    rows: list[CompareRow] = []
    ginis: dict[str, float] = {}
    for tname, _ in tokenizers:
        mine = [CompareRow(tname, c.name, *totals[tname, c.name]) for c in corpora]
        if parallel:
            ref = next(r for r in mine if r.corpus == reference)
            for r in mine:
                r.parity = r.tokens / ref.tokens if ref.tokens else float("nan")
            ginis[tname] = gini([r.tokens for r in mine])
        else:
            ginis[tname] = gini([r.fertility for r in mine])
        rows += mine
    return Comparison(rows, ginis, reference if parallel else None)
