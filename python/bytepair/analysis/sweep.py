"""Vocabulary-size sweeps from one training run.

BPE vocabularies are nested: the tokenizer of size ``V`` is the first ``V - 256`` merges of the
largest. So :func:`sweep` trains once, at the largest size asked for, encodes the corpus once
with that tokenizer, and derives every smaller size from the token counts
(:mod:`bytepair.analysis.nested`): no retraining and no re-encoding per point.

Per size ``V`` (special tokens aside):

- ``bytes_per_token``: UTF-8 bytes of the corpus / tokens; ``tokens_per_word``: tokens / words
  (words as in :mod:`bytepair.analysis.words`);
- ``coverage``: share of the word list whose word, preceded by a space (as it stands inside a
  sentence), is a single token; ``coverage_bare``: the same for the word alone (as it stands at
  the start of a text or after a newline);
- ``embedding_params``: ``V * d_model`` (one embedding matrix; double it for an untied output);
- ``attention_cost``: the cost of attention over the whole corpus relative to the smallest size,
  ``(tokens_V / tokens_smallest) ** 2`` (attention is quadratic in sequence length and linear in
  ``d_model``, which cancels).

:func:`alpha_table` trains once per ``alpha`` (mixing changes the merges) and reports each
source's share of the mix and tokens per word at that ``alpha``.

Performance notes. A sweep costs one training run; the sizes themselves are free (O(merges)
each). The token counts at the largest size come from the training run itself: the merge loop
ends holding every distinct piece as its final tokens, and ``train`` returns how often each id
occurs (``Tokenizer._training_counts``, when no source is weighted). Only when they are missing
(a tokenizer given by the caller, special tokens, weighted sources) is the corpus encoded again
(with the array encoder, no Python int per token, and no document frequencies). Measured with
bench/bench_analysis.py, 8 sizes up to 65,536 on the 50.3 MB mixed corpus of bench/make_corpus.py,
2 cores: sweep 1.87x the training run when it encoded the corpus again, 1.25x and 1.32x (two
runs) with the training's counts; what is left is reading the corpus once more to count words.
Tried and dropped: counting the corpus' pieces with the
training's counter and encoding each distinct piece once (weighted by its count) gave the same
counts but took 0.29 s against 0.21 s for encoding the 4.5 MB outright (counting alone was
0.15 s): counting costs about what encoding does, so it only pays if the training run shares
its counts.
Words are counted with one numpy table lookup per few million characters, not with a regex.
"""

from __future__ import annotations

import importlib.resources
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from bytepair.analysis.corpus import Corpus
from bytepair.analysis.merges import nested_merges
from bytepair.analysis.nested import tokens_at_every_size
from bytepair.analysis.stats import token_stats
from bytepair.analysis.words import count_words
from bytepair.errors import BytepairError, BytepairWarning, CorpusError
from bytepair.tokenizer import Tokenizer

__all__ = ["AlphaRow", "SweepResult", "alpha_table", "default_words", "sweep"]

WORDS_RESOURCE = "common_english_words.txt"


def default_words() -> list[str]:
    """The shipped word list (see the header of ``data/common_english_words.txt`` for its source)."""
    text = importlib.resources.files("bytepair").joinpath("data", WORDS_RESOURCE).read_text("utf-8")
    return [w for w in (line.strip() for line in text.splitlines()) if w and not w.startswith("#")]


@dataclass
class SweepResult:
    """Numbers at each vocabulary size of ``sizes`` (and ``curve``: tokens at every size)."""

    sizes: list[int]
    tokens: list[int]
    text_bytes: int
    words: int
    coverage: list[float]
    coverage_bare: list[float]
    d_model: int
    curve: npt.NDArray[np.int64]  # curve[V] = tokens at size V, V in 256..largest
    tokenizer: Tokenizer
    unreached: list[int] = field(default_factory=list)  # sizes asked for beyond what training reached

    def rows(self) -> list[dict[str, Any]]:
        base = self.tokens[0]
        out = []
        for v, t, c, bare in zip(self.sizes, self.tokens, self.coverage, self.coverage_bare):
            out.append(
                {
                    "vocab_size": v,
                    "tokens": t,
                    "bytes_per_token": self.text_bytes / t if t else float("nan"),
                    "tokens_per_word": t / self.words if self.words else float("nan"),
                    "coverage": c,
                    "coverage_bare": bare,
                    "embedding_params": v * self.d_model,
                    "attention_cost": (t / base) ** 2 if base else float("nan"),
                }
            )
        return out


def _check_sizes(vocab_sizes: Sequence[int]) -> list[int]:
    sizes = sorted(set(int(v) for v in vocab_sizes))
    if not sizes:
        raise BytepairError("no vocabulary size given")
    if sizes[0] < 256:
        raise BytepairError(f"vocabulary size {sizes[0]} is below 256 (the single bytes)")
    return sizes


def _coverage(tok: Tokenizer, words: Sequence[str], sizes: Sequence[int], prefix: str = " ") -> list[float]:
    if not words:
        return [float("nan")] * len(sizes)
    encoded = tok.encode_batch([prefix + w for w in words], disallowed_special=())
    single = np.asarray([ids[0] if len(ids) == 1 else -1 for ids in encoded], dtype=np.int64)
    return [float(((single >= 0) & (single < v)).sum()) / len(words) for v in sizes]


def _count(tok: Tokenizer, corpora: Sequence[Corpus]) -> tuple[npt.NDArray[np.int64], int, int]:
    counts = np.zeros(0, dtype=np.int64)
    text_bytes = words = 0
    for c in corpora:
        docs = list(c.documents())
        words += sum(count_words(d) for d in docs)
        st = token_stats(tok, docs, document_frequencies=False)
        text_bytes += st.text_bytes
        counts = st.counts if len(counts) == 0 else counts + st.counts
    return counts, text_bytes, words


def sweep(
    corpora: Sequence[Corpus],
    vocab_sizes: Sequence[int],
    *,
    d_model: int = 768,
    words: Sequence[str] | None = None,
    tokenizer: Tokenizer | None = None,
    **train_options: Any,
) -> SweepResult:
    """Compression, coverage and cost at each of ``vocab_sizes`` from one training run on
    ``corpora`` at the largest size (or from ``tokenizer``, already trained at least that large)."""
    sizes = _check_sizes(vocab_sizes)
    trained_here = tokenizer is None
    if tokenizer is None:
        from bytepair.training import train

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BytepairWarning)  # an empty corpus: the error below says it
            tokenizer = train([c.source() for c in corpora], vocab_size=sizes[-1], **train_options)
        if tokenizer.training.get("input", {}).get("bytes") == 0:
            raise CorpusError("the corpus is empty")
    tree = nested_merges(tokenizer)
    largest = len(tree)
    # Sizes past where training stopped are reported at the size it reached (and named).
    unreached = [v for v in sizes if v > largest]
    if unreached:
        warnings.warn(
            f"training stopped at {largest:,} tokens (no pair occurs often enough for more): "
            f"{', '.join(f'{v:,}' for v in unreached)} reported at {largest:,}",
            BytepairWarning,
            stacklevel=2,
        )
        sizes = sorted({v for v in sizes if v <= largest} | {largest})
    if trained_here and tokenizer._training_counts is not None and not tokenizer.special_tokens:
        # The merge loop's final pieces already hold the corpus encoded at the largest size.
        counts = np.asarray(tokenizer._training_counts, dtype=np.int64)
        text_bytes = sum(int(s.get("text_bytes") or 0) for s in tokenizer.training.get("sources", []))
        n_words = sum(count_words(d) for c in corpora for d in c.documents())
    else:
        counts, text_bytes, n_words = _count(tokenizer, corpora)
    if text_bytes == 0:
        raise CorpusError("the corpus is empty")
    curve = tokens_at_every_size(tree, counts)
    tokens = [int(curve[v]) for v in sizes]
    wordlist = default_words() if words is None else list(words)
    return SweepResult(
        sizes,
        tokens,
        text_bytes,
        n_words,
        _coverage(tokenizer, wordlist, sizes),
        _coverage(tokenizer, wordlist, sizes, prefix=""),
        d_model,
        curve,
        tokenizer,
        unreached,
    )


@dataclass
class AlphaRow:
    alpha: float
    source: str
    text_bytes: int
    share: float
    tokens_per_word: float
    bytes_per_token: float


def alpha_table(corpora: Sequence[Corpus], alphas: Sequence[float], *, vocab_size: int, **train_options: Any) -> list[AlphaRow]:
    """For each ``alpha``: train at ``vocab_size`` with that mixing; each source's share of the mix
    (``n_i ** alpha / sum_j n_j ** alpha``) and its tokens per word and bytes per token."""
    from bytepair.training import train

    if len(corpora) < 2:
        raise BytepairError("--alpha needs two or more sources (NAME=PATH)")
    sizes = [c.text_bytes() for c in corpora]
    for c, n in zip(corpora, sizes):
        if n == 0:
            raise CorpusError(f"source {c.name} has no text")
    rows = []
    for a in alphas:
        tok = train([c.source() for c in corpora], vocab_size=vocab_size, alpha=a, **train_options)
        powered = [n**a for n in sizes]
        for c, n, p in zip(corpora, sizes, powered):
            counts, text_bytes, n_words = _count(tok, [c])
            total = int(counts.sum())
            rows.append(
                AlphaRow(a, c.name, n, p / sum(powered), total / n_words if n_words else float("nan"), text_bytes / total)
            )
    return rows
