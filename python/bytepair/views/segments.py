"""Cutting a token sequence into segments people can read.

A segment is one token, or several consecutive tokens that only together decode to whole UTF-8
characters (a character split across tokens is shown once, as one segment, with each token's bytes
in hex). Nothing is ever shown as U+FFFD: bytes that never complete a character (possible only for
ids given by hand) form a segment with ``text=None`` and are shown as hex.

Colours are stable per id: the hue is the id times the golden ratio (mod 1), so neighbouring ids
get far-apart hues and an id has the same colour in every view and every run.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass

from bytepair.tokenizer import Tokenizer

__all__ = ["MAX_GROUP", "Segment", "colour", "hex_bytes", "segments", "visible"]

MAX_GROUP = 8  # tokens; a longer run that never decodes is cut (then shown as hex)
_GOLDEN = 0.6180339887498949
_MARKS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


@dataclass
class Segment:
    ids: list[int]
    parts: list[bytes]
    text: str | None  # the decoded characters; None when the bytes are not whole UTF-8 characters

    @property
    def whole(self) -> bool:
        """True when every token of the segment is whole characters by itself."""
        return self.text is not None and len(self.ids) == 1


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


def segments(tok: Tokenizer, ids: Sequence[int]) -> list[Segment]:
    out: list[Segment] = []
    pend_ids: list[int] = []
    pend: list[bytes] = []
    for i in ids:
        pend_ids.append(int(i))
        pend.append(tok.token_bytes(int(i)))
        got = _decodes(b"".join(pend))
        if got is False and len(pend) > 1:
            # the new token does not continue the pending bytes: they stay hex; start again from it
            out.append(Segment(pend_ids[:-1], pend[:-1], None))
            pend_ids, pend = pend_ids[-1:], pend[-1:]
            got = _decodes(pend[0])
        if isinstance(got, str):
            out.append(Segment(pend_ids, pend, got))
            pend_ids, pend = [], []
        elif got is False or len(pend) >= MAX_GROUP:
            out.append(Segment(pend_ids, pend, None))
            pend_ids, pend = [], []
    if pend:
        out.append(Segment(pend_ids, pend, None))
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
