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

__all__ = ["NEWER", "NEWER_LOWER", "NEWER_MARKS", "lower_each", "lowercase", "normalize", "strip_accents"]

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

def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    """A regular expression's class of the code points in ``ranges``."""
    return "[" + "".join(re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in ranges) + "]"


_CUT = re.compile("(" + _class(NEWER) + ")")


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

_NEWER_MARK = re.compile(_class(NEWER_MARKS))
_OLDER_MARK = re.compile(_class(OLDER_MARKS))


def _stripped(c: str) -> bool:
    if unicodedata.category(c)[0] == "M":
        return _NEWER_MARK.match(c) is None
    return _OLDER_MARK.match(c) is not None


def strip_accents(text: str) -> str:
    """``text`` without the marks ``tokenizers``' ``StripAccents`` drops."""
    if text.isascii():
        return text
    return "".join(c for c in text if not _stripped(c))


# ``tokenizers``' ``Lowercase`` maps each character alone (no final sigma: "ΟΔΟΣ" is "οδοσ" to
# it, "οδος" to ``str.lower``), with newer tables: these code points, unassigned in
# ``unicodedata``, have lowercase forms there. Compared on every code point in
# ``tests/test_hf_unicode.py``.
NEWER_LOWER: dict[int, int] = {0x1C89: 0x1C8A, 0xA7CB: 0x0264, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF, 0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5, 0xA7DA: 0xA7DB, 0xA7DC: 0x019B, 0x10D50: 0x10D70, 0x10D51: 0x10D71, 0x10D52: 0x10D72, 0x10D53: 0x10D73, 0x10D54: 0x10D74, 0x10D55: 0x10D75, 0x10D56: 0x10D76, 0x10D57: 0x10D77, 0x10D58: 0x10D78, 0x10D59: 0x10D79, 0x10D5A: 0x10D7A, 0x10D5B: 0x10D7B, 0x10D5C: 0x10D7C, 0x10D5D: 0x10D7D, 0x10D5E: 0x10D7E, 0x10D5F: 0x10D7F, 0x10D60: 0x10D80, 0x10D61: 0x10D81, 0x10D62: 0x10D82, 0x10D63: 0x10D83, 0x10D64: 0x10D84, 0x10D65: 0x10D85, 0x16EA0: 0x16EBB, 0x16EA1: 0x16EBC, 0x16EA2: 0x16EBD, 0x16EA3: 0x16EBE, 0x16EA4: 0x16EBF, 0x16EA5: 0x16EC0, 0x16EA6: 0x16EC1, 0x16EA7: 0x16EC2, 0x16EA8: 0x16EC3, 0x16EA9: 0x16EC4, 0x16EAA: 0x16EC5, 0x16EAB: 0x16EC6, 0x16EAC: 0x16EC7, 0x16EAD: 0x16EC8, 0x16EAE: 0x16EC9, 0x16EAF: 0x16ECA, 0x16EB0: 0x16ECB, 0x16EB1: 0x16ECC, 0x16EB2: 0x16ECD, 0x16EB3: 0x16ECE, 0x16EB4: 0x16ECF, 0x16EB5: 0x16ED0, 0x16EB6: 0x16ED1, 0x16EB7: 0x16ED2, 0x16EB8: 0x16ED3}


_NEWER_UPPER = re.compile(_class(tuple((c, c) for c in NEWER_LOWER)))


def lower_each(text: str) -> str:
    """``str.lower`` of each character alone: no final sigma."""
    if text.isascii():
        return text.lower()
    # a capital sigma made small first: the only rule of ``str.lower`` that looks at neighbours
    return text.replace("\u03a3", "\u03c3").lower()


def lowercase(text: str) -> str:
    """``text`` lowercased as ``tokenizers``' ``Lowercase`` does it: ``lower_each``, and
    ``NEWER_LOWER``."""
    text = lower_each(text)
    if text.isascii() or _NEWER_UPPER.search(text) is None:
        return text
    return text.translate(NEWER_LOWER)


def normalize(form: Literal["NFC", "NFD", "NFKC", "NFKD"], text: str) -> str:
    """``unicodedata.normalize(form, text)``, leaving the code points of ``NEWER`` as they are."""
    # isascii is a flag of the string, not a scan
    if text.isascii() or _CUT.search(text) is None:
        return unicodedata.normalize(form, text)
    # re.split with a group keeps the cut characters at the odd indexes
    return "".join(p if k % 2 else unicodedata.normalize(form, p) for k, p in enumerate(_CUT.split(text)))
