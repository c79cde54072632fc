"""The terminal token view: each token on its id's background colour (24-bit ANSI colour).

Whitespace is marked (``·`` space, ``→`` tab, ``↵`` newline, then the line break itself). A
character split across tokens is one segment, its characters shown once and followed by each
token's bytes in hex, ``‹e5 ad|97›``. With ``ids=True`` every segment is followed by its ids.
Without colour (``color=False``) tokens are separated by ``│``.

SentencePiece models too (:mod:`bytepair.views.segments`): a piece is the text it stands for
(``▁`` a space, so ``·``), byte pieces are followed by their hex even when whole (``↵‹0a›``), and
the unknown piece by ``‹unk›``, after the text it replaced when that is known.
"""

from __future__ import annotations

from collections.abc import Sequence

from bytepair.views.segments import ViewTokenizer, colour, hex_bytes, segments, visible

__all__ = ["UNKNOWN_MARK", "render_terminal"]

UNKNOWN_MARK = "‹unk›"  # after the text an unknown piece replaced

_RESET = "\x1b[0m"
_DIM = "\x1b[2m"


def _paint(text: str, key: int, color: bool) -> str:
    if not color:
        return text
    r, g, b = colour(key)
    return f"\x1b[48;2;{r};{g};{b}m\x1b[38;2;0;0;0m{text}{_RESET}"


def render_terminal(
    tok: ViewTokenizer, ids: Sequence[int], *, show_ids: bool = False, color: bool = True, text: str | None = None
) -> str:
    """The view of ``ids``; ``text``, what they were encoded from, shows what a SentencePiece
    model's unknown pieces replaced."""
    out: list[str] = []
    sep = "" if color else "│"
    for seg in segments(tok, ids, text=text):
        shown = visible(seg.text) if seg.text is not None else ""
        if not seg.whole:
            shown += "‹" + "|".join(hex_bytes(p) for p in seg.parts) + "›"
        if seg.unknown:
            shown += UNKNOWN_MARK
        out.append(_paint(shown, seg.ids[0], color))
        if show_ids:
            label = "[" + "+".join(str(i) for i in seg.ids) + "]"
            out.append(f"{_DIM}{label}{_RESET}" if color else label)
        out.append(sep)
        if seg.text is not None and seg.text.endswith("\n"):
            out.append("\n")
    rendered = "".join(out)
    return rendered if rendered.endswith("\n") else rendered + "\n"
