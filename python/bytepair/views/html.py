"""The HTML token view: the terminal view as one self-contained page, with a tooltip per token
(id, bytes in hex, and the merge that made it: ``' th' + 'e' -> ' the'``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from bytepair._atomic import write_atomic
from bytepair.tokenizer import Tokenizer
from bytepair.views.page import MergeInfo, build_page, vocab_entries

__all__ = ["render_html", "write_html"]


def render_html(tok: Tokenizer, ids: Sequence[int], *, title: str | None = None, show_ids: bool = False, name: str | None = None) -> str:
    ids = [int(i) for i in ids]
    vocab, tree = vocab_entries(tok, ids, MergeInfo(tok))
    label = name or tok.name or "tokenizer"
    data = {
        "tokenizer": label,
        "ids": ids,
        "vocab": vocab,
        "tree": tree,
        "special": sorted(tok.special_tokens.values()),
        "show_ids": show_ids,
        "n_bytes": sum(len(tok.token_bytes(i)) for i in ids),
    }
    return build_page("viz.html", title or f"bytepair viz: {label}", data)


def write_html(path: str | os.PathLike[str], tok: Tokenizer, ids: Sequence[int], **options: object) -> None:
    page = render_html(tok, ids, **options)  # type: ignore[arg-type]
    write_atomic(path, page.encode("utf-8"))
