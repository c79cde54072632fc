"""How each token was made: the merge tree of a tokenizer.

``merge_tree(tok)`` is an ``(n, 2)`` int64 array: row ``i`` holds the ids of the two tokens that
merge into token ``i``, or ``(-1, -1)`` for the single bytes (and ids that are not ordinary
tokens, such as special tokens). Children always have smaller ids than their parent, for trained
tokenizers (a merge joins two tokens that exist already) and for tiktoken rank files (a token of
rank ``r`` is the merge of two tokens of lower rank). This is what makes BPE vocabularies
nested: the tokenizer with the ids below ``V`` is the first ``V - 256`` merges of the largest.

For rank files the pair is recovered as tiktoken's rule implies: encode the token's bytes with
the ranks below its own; what is left is two tokens.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from bytepair.errors import VocabError
from bytepair.tokenizer import Tokenizer

__all__ = ["merge_parts", "merge_tree", "nested_merges", "truncate"]

Tree = npt.NDArray[np.int64]


def _split_by_ranks(token: bytes, rank: int, ranks: Mapping[bytes, int]) -> tuple[int, int] | None:
    parts = [bytes([b]) for b in token]
    while len(parts) > 2:
        best: tuple[int, int] | None = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return None
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2 or parts[0] not in ranks or parts[1] not in ranks:
        return None
    return ranks[parts[0]], ranks[parts[1]]


def merge_tree(tok: Tokenizer) -> Tree:
    """``(n, 2)`` array of each token's two parts (``-1`` for bytes), ``n`` = the largest ordinary id + 1."""
    vocab = tok._vocab
    n = max(vocab) + 1 if vocab else 0
    tree = np.full((n, 2), -1, dtype=np.int64)
    if tok._merges is not None:
        ids = {b: i for i, b in vocab.items()}  # the tokenizer's own rule for a merge's parts (_merge_ids)
        merges = tok._merges
        # Merged tokens get ids in merge order; matching them in order stays right even when two
        # merges make the same bytes.
        made = sorted(i for i, t in vocab.items() if not (i < 256 and len(t) == 1))
        in_order = len(made) == len(merges) and all(vocab[i] == a + b for i, (a, b) in zip(made, merges))
        for k, (a, b) in enumerate(merges):
            tree[made[k] if in_order else ids[a + b]] = (ids[a], ids[b])
        return tree
    ranks = {b: i for i, b in vocab.items()}
    for i, t in vocab.items():
        if len(t) > 1:
            pair = _split_by_ranks(t, i, ranks)
            if pair is not None:
                tree[i] = pair
    return tree


def merge_parts(tok: Tokenizer, token_id: int) -> tuple[int, int] | None:
    """The two tokens that merge into ``token_id``, or ``None`` for a byte or special token."""
    vocab = tok._vocab
    t = vocab.get(token_id)
    if t is None or len(t) < 2:
        return None
    if tok._merges is not None:
        ids = {b: i for i, b in vocab.items()}
        for a, b in tok._merges:
            if a + b == t and ids.get(a + b) == token_id:
                return ids[a], ids[b]
        return None
    return _split_by_ranks(t, token_id, {b: i for i, b in vocab.items()})


def nested_merges(tok: Tokenizer) -> Tree:
    """:func:`merge_tree`, checked to be nested: ids 0..255 are the bytes and every other
    ordinary token is a merge of lower ids (what sweeps and the report's slider rely on)."""
    tree = merge_tree(tok)
    n = len(tree)
    if n < 256 or (tree[:256] != -1).any():
        raise VocabError("this tokenizer's ids 0..255 are not the 256 single bytes: it has no nested sizes")
    ids = np.arange(n)
    rest = tree[256:]
    if (rest < 0).any() or (rest >= ids[256:, None]).any():
        raise VocabError("this tokenizer has tokens that are not a merge of two tokens with lower ids")
    return tree


def truncate(tok: Tokenizer, vocab_size: int) -> Tokenizer:
    """The tokenizer made of the first ``vocab_size - 256`` merges of ``tok`` (no special tokens):
    what training ``tok``'s corpus to ``vocab_size`` gives, since BPE vocabularies are nested."""
    tree = nested_merges(tok)
    if not 256 <= vocab_size <= len(tree):
        raise VocabError(f"vocabulary size {vocab_size} is outside 256..{len(tree)} for this tokenizer")
    vocab = {i: b for i, b in tok._vocab.items() if i < vocab_size}
    merge_ids = [(int(tree[i, 0]), int(tree[i, 1])) for i in range(256, vocab_size)]
    merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
    return Tokenizer._from_merges(vocab, merges, merge_ids, {}, tok.pattern, normalization=tok.normalization)
