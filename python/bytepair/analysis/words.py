"""What a "word" is, for fertility (tokens per word) and the share of words split into tokens.

A word is a maximal run of characters that are not whitespace, with one exception: in scripts
written without spaces between words (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar,
Tibetan), every character is a word of its own. So "Hello, world!" has 2 words, "東京に行く" has
5, and "GPT-4は" has 2 ("GPT-4" and "は"). Counting characters for those scripts is the usual
stand-in when no word segmenter is at hand; it makes their fertility "tokens per character",
which is stated wherever these numbers are shown.

Word spans are returned in UTF-8 byte offsets, to be compared with token boundaries.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

__all__ = ["NO_SPACE_SCRIPTS", "WORD_DEFINITION", "byte_offsets", "word_spans"]

NO_SPACE_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u0f00-\u0fff"  # Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"  # Han
)
WORD_DEFINITION = (
    "a word is a run of non-space characters; in scripts written without spaces "
    "(Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Tibetan) each character is a word"
)
_WORD = re.compile(f"[{NO_SPACE_SCRIPTS}]|[^\\s{NO_SPACE_SCRIPTS}]+")


def byte_offsets(text: str) -> npt.NDArray[np.int64]:
    """``out[i]`` = UTF-8 byte offset of character ``i`` (``out[len(text)]`` = byte length)."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def word_spans(text: str) -> npt.NDArray[np.int64]:
    """``(n, 2)`` array of the words' ``[start, end)`` UTF-8 byte offsets."""
    starts: list[int] = []
    ends: list[int] = []
    for m in _WORD.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
    offsets = byte_offsets(text)
    spans = np.empty((len(starts), 2), dtype=np.int64)
    spans[:, 0] = offsets[np.asarray(starts, dtype=np.int64)] if starts else 0
    spans[:, 1] = offsets[np.asarray(ends, dtype=np.int64)] if ends else 0
    return spans
