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

__all__ = ["NO_SPACE_SCRIPTS", "WORD_DEFINITION", "byte_offsets", "count_words", "word_spans"]

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
    """``(n, 2)`` array of the words' ``[start, end)`` UTF-8 byte offsets (numpy, no Python
    object per word)."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if len(cps) == 0:
        return np.empty((0, 2), dtype=np.int64)
    cls = _classes(cps)
    word = cls == 0
    alone = cls == 2
    starts = word.copy()
    starts[1:] &= ~word[:-1]
    ends = word.copy()
    ends[:-1] &= ~word[1:]
    starts |= alone
    ends |= alone
    offsets = byte_offsets(text)
    spans = np.empty((int(starts.sum()), 2), dtype=np.int64)
    spans[:, 0] = offsets[np.flatnonzero(starts)]
    spans[:, 1] = offsets[np.flatnonzero(ends) + 1]
    return spans


def _classes(cps: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint8]:
    """0 word character, 1 space, 2 a character of a script without spaces, for each code point."""
    # annotated: numpy < 2.4's stubs type fancy indexing as Any
    cls: npt.NDArray[np.uint8] = _CLASS[np.minimum(cps, 0xFFFF)]
    high = cps > 0xFFFF
    if high.any():
        cls[high] = np.where((cps[high] >= 0x20000) & (cps[high] <= 0x3FFFF), 2, 0)
    return cls


# Character classes of the first 65,536 code points: 0 word character, 1 space, 2 a character of
# a script without spaces (the same characters as NO_SPACE_SCRIPTS); above, only Han (U+20000..)
# is of class 2. A table lookup is one numpy pass; range tests would be ten.
_CLASS = np.zeros(0x10000, dtype=np.uint8)
for _lo, _hi in ((0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x31F0, 0x31FF),
                 (0xFF66, 0xFF9F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)):
    _CLASS[_lo : _hi + 1] = 2
_CLASS[[i for i in range(0x3001) if chr(i).isspace()]] = 1
_CHUNK = 1 << 22  # characters per numpy pass (bounded memory for big documents)


def count_words(text: str) -> int:
    """``len(word_spans(text))``, computed with numpy a few million characters at a time."""
    n = 0
    prev_word = False
    for start in range(0, len(text), _CHUNK):
        cps = np.frombuffer(text[start : start + _CHUNK].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if len(cps) == 0:
            continue
        cls = _classes(cps)
        other = cls == 0
        starts = other.copy()
        starts[1:] &= ~other[:-1]
        if prev_word and other[0]:
            starts[0] = False
        n += int(starts.sum()) + int((cls == 2).sum())
        prev_word = bool(other[-1])
    return n
