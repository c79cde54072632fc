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

Per tokenizer, ``gini``: the Gini coefficient of the token counts across corpora on parallel
text (0 = every language costs the same), or of fertility when the text is not parallel.
``G = sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bytepair._progress import Progress, wanted
from bytepair.analysis.corpus import Corpus
from bytepair.analysis.words import byte_offsets, word_spans
from bytepair.errors import BytepairError, CorpusError
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

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


def measure(tok: Tokenizer | WordPieceTokenizer, text: str) -> tuple[int, int, int, int]:
    """``(tokens, words, words cut by a token boundary, bytes)`` of one text."""
    return _measure(tok, text, {})


def _measure(
    tok: Tokenizer | WordPieceTokenizer, text: str, spans: dict[str, npt.NDArray[np.int64]]
) -> tuple[int, int, int, int]:
    """:func:`measure`, with the word spans of each text measured kept in ``spans`` (every
    tokenizer of a comparison measures the same block)."""
    if isinstance(tok, WordPieceTokenizer):
        # WordPiece: token ends from its character offsets (into the original text,
        # whose whitespace it drops); bytes are the text's.
        ids, offsets = tok.encode_with_offsets(text)
        ends = byte_offsets(text)[np.asarray([e for _, e in offsets], dtype=np.int64)]
        n_tokens = len(ids)
        n_bytes = len(text.encode("utf-8", "surrogatepass"))
    else:
        if tok.normalization is not None:
            text = tok._norm(text)
        ids_array = tok.encode_to_numpy(text, disallowed_special=(), dtype=np.uint32)
        ends = np.cumsum(_token_lengths(tok)[ids_array])
        n_tokens = len(ids_array)
        n_bytes = int(ends[-1]) if len(ends) else 0
    words = spans.get(text)
    if words is None:
        words = spans[text] = word_spans(text)
    if len(words) == 0:
        return n_tokens, 0, 0, n_bytes
    # A word [s, e) is cut when a token ends strictly inside it: count the ends up to each byte.
    size = max(n_bytes, int(words[-1, 1]), int(ends[-1]) if len(ends) else 0)
    marks = np.zeros(size + 1, dtype=np.int32)
    marks[ends] = 1
    upto = np.cumsum(marks, dtype=np.int32)
    inside = upto[words[:, 1] - 1] - upto[words[:, 0]]
    return n_tokens, len(words), int(np.count_nonzero(inside)), n_bytes


def _token_lengths(tok: Tokenizer) -> npt.NDArray[np.int64]:
    """Bytes of each id (special tokens: of their text), kept on the tokenizer."""
    cached: npt.NDArray[np.int64] | None = tok.__dict__.get("_token_lengths")
    if cached is None:
        vocab = tok.vocab
        specials = tok.special_tokens
        ids = np.fromiter(vocab.keys(), dtype=np.int64, count=len(vocab))
        lengths = np.fromiter(map(len, vocab.values()), dtype=np.int64, count=len(vocab))
        size = max([*specials.values(), int(ids.max()) if len(ids) else -1]) + 1
        cached = np.zeros(size, dtype=np.int64)
        cached[ids] = lengths
        for text, i in specials.items():
            cached[i] = len(text.encode("utf-8"))
        tok.__dict__["_token_lengths"] = cached
    return cached


def compare(
    tokenizers: Sequence[tuple[str, Tokenizer | WordPieceTokenizer]],
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
    bar = Progress("comparing", total=sum(c.size() for c in corpora), unit="bytes") if wanted(progress) else None
    done = 0
    try:
        for c in corpora:
            has_text = False
            for block in c.blocks():
                has_text = has_text or not block.isspace() and bool(block)
                spans: dict[str, npt.NDArray[np.int64]] = {}
                for tname, tok in tokenizers:
                    acc = totals[tname, c.name]
                    for k, v in enumerate(_measure(tok, block, spans)):
                        acc[k] += v
                done += len(block.encode("utf-8", "surrogatepass"))
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
