"""Cutting a token sequence into segments people can read.

A segment is one token, or several consecutive tokens that only together decode to whole UTF-8
characters (a character split across tokens is shown once, as one segment, with each token's bytes
in hex). Nothing is ever shown as U+FFFD: bytes that never complete a character (possible only for
ids given by hand) form a segment with ``text=None`` and are shown as hex.

The bytes of a token: a byte-level BPE token's own; a SentencePiece piece's text (``▁`` a space,
a byte piece its byte, the unknown piece the text it replaced: :mod:`bytepair.views.pieces`).
Byte pieces are shown with their hex even where one is a whole character (``↵‹0a›``: the model
fell back to bytes there), and the unknown piece is marked (``‹unk›``).

Colours are stable per id: the hue is the id times the golden ratio (mod 1), so neighbouring ids
get far-apart hues and an id has the same colour in every view and every run.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from bytepair.tokenizer import Tokenizer

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["MAX_GROUP", "Segment", "ViewTokenizer", "colour", "group", "hex_bytes", "segments", "visible"]

#: What the views draw: byte-level BPE tokenizers and SentencePiece models.
ViewTokenizer = Union[Tokenizer, "SentencePieceTokenizer"]

MAX_GROUP = 8  # tokens; a longer run that never decodes is cut (then shown as hex)
_GOLDEN = 0.6180339887498949
_MARKS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


@dataclass
class Segment:
    ids: list[int]
    parts: list[bytes]
    text: str | None  # the decoded characters; None when the bytes are not whole UTF-8 characters
    fallback: bool = False  # SentencePiece byte pieces (always shown with their hex)
    unknown: bool = False  # the SentencePiece unknown piece (text: what it replaced, "" if not known)

    @property
    def whole(self) -> bool:
        """True when the segment is shown as its text alone: one token of whole characters, not
        a byte piece."""
        return self.text is not None and len(self.ids) == 1 and not self.fallback


def colour(key: int) -> tuple[int, int, int]:
    """A light background colour, the same for the same id everywhere."""
    r, g, b = colorsys.hls_to_rgb((key * _GOLDEN) % 1.0, 0.80, 0.65)
    return round(r * 255), round(g * 255), round(b * 255)


def _decodes(data: bytes) -> str | None | bool:
    """The text, ``None`` when the bytes end inside a character (wait for more), ``False`` when invalid."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None if e.reason == "unexpected end of data" and e.end == len(data) else False


def segments(tok: ViewTokenizer, ids: Sequence[int], *, text: str | None = None) -> list[Segment]:
    """The segments of ``ids``. For a SentencePiece model, ``text`` (what the ids were encoded
    from) gives the text each unknown piece replaced; without it the mark stands alone."""
    ids = [int(i) for i in ids]
    if isinstance(tok, Tokenizer):
        return group(ids, [tok.token_bytes(i) for i in ids])
    from bytepair.views.pieces import BYTE, UNKNOWN, PieceTexts

    pieces = PieceTexts(tok)
    kinds = [pieces.kind(i) for i in ids]
    return group(ids, pieces.parts(ids, text), [k == BYTE for k in kinds], [k == UNKNOWN for k in kinds])


def group(
    ids: Sequence[int],
    parts: Sequence[bytes],
    fallback: Sequence[bool] | None = None,
    unknown: Sequence[bool] | None = None,
) -> list[Segment]:
    """Segments of tokens ``ids`` standing for the bytes ``parts``; ``fallback`` and ``unknown``
    say which are byte pieces and the unknown piece (SentencePiece)."""
    out: list[Segment] = []
    pend_ids: list[int] = []
    pend: list[bytes] = []
    pend_at = 0  # index of the first pending token

    def emit(n: int, text: str | None) -> None:
        nonlocal pend_at
        at = range(pend_at, pend_at + n)
        out.append(
            Segment(
                pend_ids[:n],
                pend[:n],
                text,
                fallback=fallback is not None and any(fallback[k] for k in at),
                unknown=unknown is not None and any(unknown[k] for k in at),
            )
        )
        del pend_ids[:n], pend[:n]
        pend_at += n

    for i, part in zip(ids, parts, strict=True):
        pend_ids.append(i)
        pend.append(part)
        got = _decodes(b"".join(pend))
        if got is False and len(pend) > 1:
            # the new token does not continue the pending bytes: they stay hex; start again from it
            emit(len(pend) - 1, None)
            got = _decodes(pend[0])
        if isinstance(got, str):
            emit(len(pend), got)
        elif got is False or len(pend) >= MAX_GROUP:
            emit(len(pend), None)
    if pend:
        emit(len(pend), None)
    return out


def visible(text: str) -> str:
    """Whitespace made visible (``·`` space, ``→`` tab, ``↵`` newline, ``␍`` CR) and other
    invisible characters escaped as ``\\uXXXX``."""
    out = []
    for c in text:
        if c in _MARKS:
            out.append(_MARKS[c])
        elif c.isprintable():
            out.append(c)
        else:
            out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
    return "".join(out)


def hex_bytes(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)
