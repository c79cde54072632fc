"""The report page: one self-contained interactive HTML file about a tokenizer and a corpus.

- a vocabulary-size slider: the sample text re-tokenized at the chosen size (in the browser, by
  undoing merges along the merge tree: BPE vocabularies are nested) and a point moving on the
  compression curve (bytes/token of the corpus at every size, precomputed by
  :func:`bytepair.analysis.nested.tokens_at_every_size` from one encoding);
- the Zipf plot (log-log rank vs frequency, fitted slope);
- per-source fertility (tokens/word) at the chosen size;
- the merge table, searchable.

The corpus is encoded once, at the tokenizer's full size. Nothing is fetched when the page is
opened: data, script and styles are inline.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from bytepair._atomic import write_atomic
from bytepair._display import token_repr
from bytepair.analysis.corpus import Corpus
from bytepair.analysis.merges import nested_merges
from bytepair.analysis.nested import tokens_at_every_size
from bytepair.analysis.stats import token_stats, zipf_fit
from bytepair.analysis.words import WORD_DEFINITION, count_words
from bytepair.errors import CorpusError
from bytepair.tokenizer import Tokenizer
from bytepair.views.page import build_page

__all__ = ["SAMPLE_CHARS", "report_data", "write_report"]

SAMPLE_CHARS = 1200
ZIPF_POINTS = 400


def _log_spaced(n: int, k: int) -> list[int]:
    """About ``k`` distinct indices in 0..n-1, evenly spaced in log(rank)."""
    if n <= k:
        return list(range(n))
    idx = np.unique(np.round(np.logspace(0, np.log10(n), k)).astype(np.int64) - 1)
    return [int(i) for i in idx]


def report_data(tok: Tokenizer, corpora: Sequence[Corpus], *, sample_text: str | None = None, name: str | None = None) -> dict[str, Any]:
    tree = nested_merges(tok)
    n = len(tree)
    sources: list[dict[str, Any]] = []
    total = np.zeros(0, dtype=np.int64)
    total_bytes = 0
    first_doc: str | None = None
    for c in corpora:
        docs = list(c.documents())
        if not any(d.strip() for d in docs):
            raise CorpusError(f"corpus {c.name} has no text")
        if first_doc is None:
            first_doc = next(d for d in docs if d.strip())
        st = token_stats(tok, docs)
        words = sum(count_words(d) for d in docs)
        curve = tokens_at_every_size(tree, st.counts)
        sources.append({"name": c.name, "words": words, "bytes": st.text_bytes, "tokens": curve.tolist()})
        total = st.counts.copy() if len(total) == 0 else total + st.counts
        total_bytes += st.text_bytes
    if not sources:
        raise CorpusError("no corpus given")
    curve = tokens_at_every_size(tree, total)
    freq = np.sort(total[total > 0])[::-1]
    slope, intercept = zipf_fit(total)
    keep = _log_spaced(len(freq), ZIPF_POINTS)
    sample = sample_text if sample_text is not None else (first_doc or "")[:SAMPLE_CHARS]
    vocab = {i: [b.hex(), token_repr(b, max_width=60)] for i, b in tok._vocab.items() if i < n}
    return {
        "tokenizer": name or tok.name or "tokenizer",
        "largest": n,
        "tree": {i: [int(tree[i, 0]), int(tree[i, 1])] for i in range(256, n)},
        "vocab": vocab,
        "special": [],
        "sample_ids": tok.encode(sample, disallowed_special=()),
        "text_bytes": total_bytes,
        "curve": curve.tolist(),
        "zipf": {"ranks": [i + 1 for i in keep], "freqs": [int(freq[i]) for i in keep], "slope": slope, "intercept": intercept},
        "sources": sources,
        "word_definition": WORD_DEFINITION,
    }


def write_report(path: str | os.PathLike[str], tok: Tokenizer, corpora: Sequence[Corpus], **options: Any) -> dict[str, Any]:
    """Writes the report page; returns the data embedded in it."""
    data = report_data(tok, corpora, **options)
    write_atomic(path, build_page("report.html", f"bytepair report: {data['tokenizer']}", data).encode("utf-8"))
    return data
