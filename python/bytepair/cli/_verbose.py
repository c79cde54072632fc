"""``bytepair train --verbose``: the merges in the order they were learned, in the readable
``'t' + 'he' -> 'the'`` form, with how many times each was applied to the training text.

The counts come from one encoding of the training text with the new tokenizer
(:func:`bytepair.analysis.nested.merge_counts`): a merge is applied once per final token it
made and once per such token later merged into a bigger one. They are raw counts: with several
sources mixed by ``--alpha``, training ranked pairs by weighted counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

import numpy as np
import numpy.typing as npt

from bytepair._display import token_repr
from bytepair.analysis.merges import merge_tree
from bytepair.analysis.nested import merge_counts
from bytepair.analysis.stats import _batches
from bytepair.tokenizer import Tokenizer

__all__ = ["print_merges"]


def _counts(tok: Tokenizer, documents: Iterable[str], size: int) -> npt.NDArray[np.int64]:
    counts = np.zeros(size, dtype=np.int64)
    for batch in _batches(documents):
        for ids in tok.encode_batch(batch, allowed_special="all"):
            a = np.asarray(ids, dtype=np.int64)
            counts += np.bincount(a[a < size], minlength=size)
    return counts


def print_merges(tok: Tokenizer, documents: Iterator[str], out: TextIO, *, first: int = 0) -> None:
    """Prints merges with ids from ``256 + first`` on (``first``: merges of a base tokenizer)."""
    tree = merge_tree(tok)
    applied = merge_counts(tree, _counts(tok, documents, len(tree)))
    vocab = tok._vocab
    start = 256 + first
    width = len(f"{len(tree) - 256:,}")
    for m in range(start, len(tree)):
        left, right = int(tree[m, 0]), int(tree[m, 1])
        if left < 0:
            continue
        line = f"{m - 255:>{width},}  {token_repr(vocab[left])} + {token_repr(vocab[right])} -> {token_repr(vocab[m])}"
        out.write(f"{line}  ({int(applied[m]):,})\n")
