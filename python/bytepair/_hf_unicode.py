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

__all__ = ["NEWER", "normalize"]

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


def normalize(form: Literal["NFC", "NFD", "NFKC", "NFKD"], text: str) -> str:
    """``unicodedata.normalize(form, text)``, leaving the code points of ``NEWER`` as they are."""
    # isascii is a flag of the string, not a scan
    if text.isascii() or _CUT.search(text) is None:
        return unicodedata.normalize(form, text)
    # re.split with a group keeps the cut characters at the odd indexes
    return "".join(p if k % 2 else unicodedata.normalize(form, p) for k, p in enumerate(_CUT.split(text)))
