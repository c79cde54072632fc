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
    """``(tokens, words, words cut by a token boundary, bytes)`` of one document."""
    if isinstance(tok, WordPieceTokenizer):
        # WordPiece: token ends from its character offsets (into the original text,
        # whose whitespace it drops); bytes are the text's.
        ids, offsets = tok.encode_with_offsets(text)
        ends = byte_offsets(text)[np.asarray([e for _, e in offsets], dtype=np.int64)]
        n_bytes = len(text.encode("utf-8", "surrogatepass"))
    else:
        if tok.normalization is not None:
            text = tok._norm(text)
        ids = tok.encode(text, disallowed_special=())
        ends = np.cumsum(np.asarray([len(tok.token_bytes(i)) for i in ids], dtype=np.int64))
        n_bytes = int(ends[-1]) if len(ends) else 0
    spans = word_spans(text)
    if len(spans) == 0:
        return len(ids), 0, 0, n_bytes
    inside = np.searchsorted(ends, spans[:, 1], side="left") - np.searchsorted(ends, spans[:, 0], side="right")
    return len(ids), len(spans), int((inside > 0).sum()), n_bytes


def compare(
    tokenizers: Sequence[tuple[str, Tokenizer | WordPieceTokenizer]],
    corpora: Sequence[Corpus],
    *,
    parallel: bool = False,
    reference: str | None = None,
) -> Comparison:
    """Fertility, split share, bytes/token (and parity on ``parallel`` text, against the corpus
    named ``reference``, default the first) of each tokenizer on each corpus."""
    if not tokenizers:
        raise BytepairError("no tokenizer given")
    names = [c.name for c in corpora]
    if parallel:
        reference = reference if reference is not None else names[0]
        if reference not in names:
            raise BytepairError(f"reference {reference!r} is not one of the corpora ({', '.join(names)})")
    docs = {c.name: list(c.documents()) for c in corpora}
    for name, ds in docs.items():
        if not any(d.strip() for d in ds):
            raise CorpusError(f"corpus {name} has no text")
    rows: list[CompareRow] = []
    ginis: dict[str, float] = {}
    for tname, tok in tokenizers:
        mine = []
        for c in corpora:
            t = w = s = b = 0
            for d in docs[c.name]:
                dt, dw, ds_, db = measure(tok, d)
                t, w, s, b = t + dt, w + dw, s + ds_, b + db
            mine.append(CompareRow(tname, c.name, t, w, s, b))
        if parallel:
            ref = next(r for r in mine if r.corpus == reference)
            for r in mine:
                r.parity = r.tokens / ref.tokens if ref.tokens else float("nan")
            ginis[tname] = gini([r.tokens for r in mine])
        else:
            ginis[tname] = gini([r.fertility for r in mine])
        rows += mine
    return Comparison(rows, ginis, reference if parallel else None)
