"""The HTML token view: the terminal view as one self-contained page, with a tooltip per token
(id, bytes in hex, and the merge that made it: ``' th' + 'e' -> ' the'``; for a SentencePiece
piece, what kind of piece it is).

Byte-level BPE tokens and SentencePiece pieces reach the page the same way: each id's bytes (a
piece's: the text it stands for, :mod:`bytepair.views.pieces`) and its quoted display, in the
JSON block that :func:`bytepair.views.page.build_page` escapes; the page's script draws them as
text nodes. SentencePiece pages add ``marks`` (``{id: "byte" | "unknown"}``: drawn with their hex
or with ``‹unk›``), ``notes`` (``{id: a line of its tip}``) and ``surface`` (``{index: hex}``:
the text the unknown piece at that index replaced).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bytepair._atomic import write_atomic
from bytepair.tokenizer import Tokenizer
from bytepair.views.page import MergeInfo, build_page, vocab_entries
from bytepair.views.segments import ViewTokenizer

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["render_html", "write_html"]


def render_html(
    tok: ViewTokenizer,
    ids: Sequence[int],
    *,
    title: str | None = None,
    show_ids: bool = False,
    name: str | None = None,
    text: str | None = None,
) -> str:
    """The page for ``ids``. For a SentencePiece model, ``text`` (what the ids were encoded
    from) shows what its unknown pieces replaced, and gives the summary's byte count."""
    ids = [int(i) for i in ids]
    if isinstance(tok, Tokenizer):
        vocab, tree = vocab_entries(tok, ids, MergeInfo(tok))
        label = name or tok.name or "tokenizer"
        data: dict[str, Any] = {
            "tokenizer": label,
            "ids": ids,
            "vocab": vocab,
            "tree": tree,
            "special": sorted(tok.special_tokens.values()),
            "show_ids": show_ids,
            "n_bytes": sum(len(tok.token_bytes(i)) for i in ids),
        }
    else:
        label = name or "SentencePiece model"
        data = {"tokenizer": label, **_piece_data(tok, ids, text), "show_ids": show_ids}
    return build_page("viz.html", title or f"bytepair viz: {label}", data)


def _piece_data(tok: SentencePieceTokenizer, ids: list[int], text: str | None) -> dict[str, Any]:
    from bytepair.views.pieces import BYTE, CONTROL, UNKNOWN, PieceTexts

    pieces = PieceTexts(tok)
    parts = pieces.parts(ids, text)
    seen = sorted(set(ids))
    kinds = {i: pieces.kind(i) for i in seen}
    return {
        "ids": ids,
        "vocab": {i: [pieces.token_bytes(i).hex(), pieces.display(i)] for i in seen},
        "tree": {},
        "special": [i for i in seen if kinds[i] == CONTROL],
        "marks": {i: k for i, k in kinds.items() if k in (BYTE, UNKNOWN)},
        "notes": {i: pieces.note(i) for i in seen},
        "surface": {k: parts[k].hex() for k, i in enumerate(ids) if kinds[i] == UNKNOWN and parts[k]},
        # the text's bytes (the pieces' text is the normalized text, with its dummy-prefix space)
        "n_bytes": sum(len(p) for p in parts) if text is None else len(text.encode("utf-8", "surrogatepass")),
    }


def write_html(path: str | os.PathLike[str], tok: ViewTokenizer, ids: Sequence[int], **options: object) -> None:
    page = render_html(tok, ids, **options)  # type: ignore[arg-type]
    write_atomic(path, page.encode("utf-8"))
