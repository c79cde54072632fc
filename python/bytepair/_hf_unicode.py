"""Unicode normal forms as Hugging Face ``tokenizers`` computes them.

``tokenizers`` normalizes with Unicode tables older than this Python's ``unicodedata``: a code
point assigned since, or given a decomposition or a combining class since, is to it an unassigned
character, a starter that no normal form changes. ``normalize`` treats such code points so: the
text is cut at each of them and the pieces between are normalized by ``unicodedata``. A cut at a
starter changes nothing else, since no canonical reordering crosses a starter and an unassigned
character composes with nothing.

Used by the pipelines of SentencePiece-family ``tokenizer.json`` files (``formats/hf_spm``), which
run in Python text by text. bytepair's own normalization steps (``nfc`` ... ``nfkd``, which BPE
and WordPiece ``tokenizer.json`` files map to) keep ``unicodedata``'s forms: there, on these code
points, ids can differ from ``tokenizers``'.

``NEWER`` holds those code points, as ranges: every code point whose normal forms differ between
``unicodedata`` (Unicode 14.0.0) and ``tokenizers`` 0.23, alone and next to other
marks. ``tests/test_hf_unicode.py`` repeats that comparison over every code point, so a Python
with newer tables that adds differences fails there. One difference is left: U+11938 is now the
canonical composition of U+11935 U+11930, which ``tokenizers`` leaves apart (the pair is not cut
here, so NFC composes it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

__all__ = ["NEWER", "NEWER_MARKS", "normalize", "strip_accents"]

NEWER: tuple[tuple[int, int], ...] = (
    (0x07FD, 0x07FD),
    (0x0899, 0x089B),
    (0x08CF, 0x08D3),
    (0x0C3C, 0x0C3C),
    (0x0D3B, 0x0D3C),
    (0x0EBA, 0x0EBA),
    (0x1715, 0x1715),
    (0x1ABF, 0x1AC0),
    (0x1AC3, 0x1AC4),
    (0x1ACA, 0x1ACA),
    (0x1DF6, 0x1DFA),
    (0x32FF, 0x32FF),
    (0xA7F2, 0xA7F4),
    (0xA82C, 0xA82C),
    (0xAB69, 0xAB69),
    (0x10781, 0x10785),
    (0x10787, 0x107B0),
    (0x107B2, 0x107BA),
    (0x10F46, 0x10F47),
    (0x10F4B, 0x10F4B),
    (0x10F4D, 0x10F50),
    (0x10F83, 0x10F83),
    (0x10F85, 0x10F85),
    (0x11070, 0x11070),
    (0x1133B, 0x1133B),
    (0x11839, 0x1183A),
    (0x11938, 0x11938),
    (0x1193D, 0x1193E),
    (0x11943, 0x11943),
    (0x119E0, 0x119E0),
    (0x11A34, 0x11A34),
    (0x11A47, 0x11A47),
    (0x11A99, 0x11A99),
    (0x11D42, 0x11D42),
    (0x11D44, 0x11D45),
    (0x11D97, 0x11D97),
    (0x16FF0, 0x16FF1),
    (0x1F16C, 0x1F16C),
    (0x1FBF0, 0x1FBF9),
)

_CUT = re.compile("([" + "".join(re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in NEWER) + "])")


# Marks (general category M) that ``tokenizers``' ``StripAccents`` keeps: marks in
# ``unicodedata`` that its older tables do not hold as marks. It drops every mark it knows
# (spacing ones too, such as Devanagari's vowel signs), and U+1CF2, U+1CF3, marks once and letters
# now (``OLDER_MARKS``). ``tests/test_hf_unicode.py`` compares ``strip_accents`` with it on every
# code point.
NEWER_MARKS: tuple[tuple[int, int], ...] = (
    (0x07FD, 0x07FD),
    (0x0898, 0x089F),
    (0x08CA, 0x08D3),
    (0x09FE, 0x09FE),
    (0x0AFA, 0x0AFF),
    (0x0B55, 0x0B55),
    (0x0C04, 0x0C04),
    (0x0C3C, 0x0C3C),
    (0x0D00, 0x0D00),
    (0x0D3B, 0x0D3C),
    (0x0D81, 0x0D81),
    (0x0EBA, 0x0EBA),
    (0x1715, 0x1715),
    (0x180F, 0x180F),
    (0x1ABF, 0x1ACE),
    (0x1CF7, 0x1CF7),
    (0x1DF6, 0x1DFA),
    (0xA82C, 0xA82C),
    (0xA8FF, 0xA8FF),
    (0x10D24, 0x10D27),
    (0x10EAB, 0x10EAC),
    (0x10F46, 0x10F50),
    (0x10F82, 0x10F85),
    (0x11070, 0x11070),
    (0x11073, 0x11074),
    (0x110C2, 0x110C2),
    (0x11145, 0x11146),
    (0x111C9, 0x111C9),
    (0x111CE, 0x111CF),
    (0x1133B, 0x1133B),
    (0x1145E, 0x1145E),
    (0x1182C, 0x1183A),
    (0x11930, 0x11935),
    (0x11937, 0x11938),
    (0x1193B, 0x1193E),
    (0x11940, 0x11940),
    (0x11942, 0x11943),
    (0x119D1, 0x119D7),
    (0x119DA, 0x119E0),
    (0x119E4, 0x119E4),
    (0x11A01, 0x11A0A),
    (0x11A33, 0x11A39),
    (0x11A3B, 0x11A3E),
    (0x11A47, 0x11A47),
    (0x11A51, 0x11A5B),
    (0x11A8A, 0x11A99),
    (0x11D31, 0x11D36),
    (0x11D3A, 0x11D3A),
    (0x11D3C, 0x11D3D),
    (0x11D3F, 0x11D45),
    (0x11D47, 0x11D47),
    (0x11D8A, 0x11D8E),
    (0x11D90, 0x11D91),
    (0x11D93, 0x11D97),
    (0x11EF3, 0x11EF6),
    (0x16F4F, 0x16F4F),
    (0x16F7F, 0x16F87),
    (0x16FE4, 0x16FE4),
    (0x16FF0, 0x16FF1),
    (0x1CF00, 0x1CF2D),
    (0x1CF30, 0x1CF46),
    (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE),
    (0x1E2EC, 0x1E2EF),
)
OLDER_MARKS: tuple[tuple[int, int], ...] = ((0x1CF2, 0x1CF3),)

_NEWER_MARK = re.compile("[" + "".join(re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in NEWER_MARKS) + "]")
_OLDER_MARK = re.compile("[" + "".join(re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in OLDER_MARKS) + "]")


def _stripped(c: str) -> bool:
    if unicodedata.category(c)[0] == "M":
        return _NEWER_MARK.match(c) is None
    return _OLDER_MARK.match(c) is not None


def strip_accents(text: str) -> str:
    """``text`` without the marks ``tokenizers``' ``StripAccents`` drops."""
    if text.isascii():
        return text
    return "".join(c for c in text if not _stripped(c))


def normalize(form: Literal["NFC", "NFD", "NFKC", "NFKD"], text: str) -> str:
    """``unicodedata.normalize(form, text)``, leaving the code points of ``NEWER`` as they are."""
    # isascii is a flag of the string, not a scan
    if text.isascii() or _CUT.search(text) is None:
        return unicodedata.normalize(form, text)
    # re.split with a group keeps the cut characters at the odd indexes
    return "".join(p if k % 2 else unicodedata.normalize(form, p) for k, p in enumerate(_CUT.split(text)))
