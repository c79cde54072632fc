"""Showing token bytes to people: quoted like Python's ``repr``, but for byte strings that are
mostly UTF-8 text.

- Valid UTF-8 is shown as its characters: ``b" the"`` is ``' the'``.
- Invisible characters are escaped: ``\\n``, ``\\t``, ``\\r``, and ``\\uXXXX`` (or ``\\UXXXXXXXX``)
  for other whitespace, control and format characters (a no-break space is ``\\u00a0``).
- Bytes that are not (complete) UTF-8, e.g. half of a multi-byte character, are ``\\xNN``.
  Characters are never shown as ``\\xNN``, so ``\\x85`` is always the raw byte 0x85 and
  ``\\u0085`` the character U+0085.

>>> token_repr(b" the")
"' the'"
>>> token_repr("é".encode()[:1] + b"\\n")
"'\\\\xc3\\\\n'"
"""

from __future__ import annotations

import unicodedata

__all__ = ["pad", "token_repr", "width"]

_SIMPLE_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def _char(c: str, quote: str) -> str:
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, smuggled in by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c]
    if c == quote:
        return "\\" + c
    if c == " " or c.isprintable():
        return c
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def token_repr(token: bytes, max_width: int | None = None) -> str:
    """``token`` as a quoted, escaped string (see the module docstring).

    With ``max_width``, a longer result is cut and ends in ``…'``.
    """
    text = token.decode("utf-8", "surrogateescape")
    quote = '"' if "'" in text and '"' not in text else "'"
    parts = [_char(c, quote) for c in text]
    out = quote + "".join(parts) + quote
    if max_width is not None and width(out) > max_width:
        room = max_width - 3  # two quotes and the ellipsis
        kept: list[str] = []
        for part in parts:  # never cut inside an escape
            room -= width(part)
            if room < 0:
                break
            kept.append(part)
        out = quote + "".join(kept) + "…" + quote
    return out


def width(s: str) -> int:
    """Columns ``s`` takes in a terminal (wide East Asian characters take two, combining marks none)."""
    n = 0
    for c in s:
        if unicodedata.combining(c):
            continue
        n += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return n


def pad(s: str, columns: int, *, right: bool = False) -> str:
    """``s`` padded with spaces to ``columns`` terminal columns (on the left if ``right``)."""
    fill = " " * max(columns - width(s), 0)
    return fill + s if right else s + fill
