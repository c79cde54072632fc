"""BPE at every vocabulary size from one encoding at the largest size.

The tokenizer of size ``V`` is the first ``V - 256`` merges of the largest one. Encoding text
with it gives the largest tokenizer's tokens, each split back (recursively, along the merge
tree) until every part has an id below ``V``: BPE applies merges in id order, so the state after
merge ``V - 1`` is the final state with the later merges undone. Hence:

- the token counts at size ``V`` follow from the counts at the largest size by pushing the count
  of every id ``>= V`` down to its two parts, from the highest id down (:func:`counts_at`);
- doing that once from the top gives the number of tokens at *every* size: undoing merge ``m``
  adds one token per occurrence of ``m`` at size ``m + 1`` (:func:`tokens_at_every_size`).

Both cost O(number of merges), not a pass over the corpus. tests/test_analysis.py checks them
against encoding with the truncated tokenizers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["counts_at", "decompose", "merge_counts", "tokens_at_every_size"]

Counts = npt.NDArray[np.int64]


def counts_at(tree: npt.NDArray[np.int64], counts: Counts, size: int) -> Counts:
    """Token counts at vocabulary size ``size`` (ids < size) from the counts at the largest size."""
    c = np.zeros(max(len(tree), len(counts)), dtype=np.int64)
    c[: len(counts)] = counts
    for m in range(len(tree) - 1, size - 1, -1):
        k = c[m]
        if k:
            left, right = tree[m]
            c[left] += k
            c[right] += k
            c[m] = 0
    return c[:size].copy()


def tokens_at_every_size(tree: npt.NDArray[np.int64], counts: Counts) -> Counts:
    """``out[V]`` = number of tokens at vocabulary size ``V``, for every ``V`` in 256..len(tree)."""
    n = len(tree)
    c = np.zeros(n, dtype=np.int64)
    c[: len(counts)] = counts[:n]
    out = np.zeros(n + 1, dtype=np.int64)
    total = int(c.sum())
    out[n] = total
    for m in range(n - 1, 255, -1):
        k = int(c[m])
        if k:
            left, right = tree[m]
            c[left] += k
            c[right] += k
            total += k
        out[m] = total
    out[:256] = 0
    return out


def decompose(ids: Sequence[int], tree: npt.NDArray[np.int64], size: int) -> list[int]:
    """The ids at vocabulary size ``size`` of a text whose ids at the largest size are ``ids``."""
    out: list[int] = []
    for i in ids:
        stack = [int(i)]
        while stack:
            t = stack.pop()
            if t < size or t >= len(tree) or tree[t, 0] < 0:
                out.append(t)
            else:
                stack.append(int(tree[t, 1]))
                stack.append(int(tree[t, 0]))
    return out


def merge_counts(tree: npt.NDArray[np.int64], counts: Counts) -> Counts:
    """``out[m]`` = how many times merge ``m`` is applied when encoding the text whose token counts
    (at the largest size) are ``counts``: each final token ``m`` is one application, and so is
    every token ``m`` later merged into a bigger one. For the training text this is the number
    of replacements the merge made when it was learned (tokens formed inside special tokens aside)."""
    n = len(tree)
    c = np.zeros(n, dtype=np.int64)
    c[: min(n, len(counts))] = counts[:n]
    out = np.zeros(n, dtype=np.int64)
    for m in range(n - 1, -1, -1):
        k = int(c[m])
        left, right = tree[m]
        if left < 0:
            continue
        out[m] = k
        if k:
            c[left] += k
            c[right] += k
    return out
