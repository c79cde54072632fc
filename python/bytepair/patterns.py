"""Named split patterns (pre-tokenization regexes, in Python ``regex`` syntax).

A tokenizer first splits text into pieces with its pattern; BPE never merges across pieces.

- ``"gpt2"``: GPT-2 / r50k_base.
- ``"gpt4"``: GPT-4 / cl100k_base.
- ``"o200k"``: GPT-4o / o200k_base.
- ``"superword"``: superword pieces for SuperBPE's second stage (``superword_pattern(4)``):
  pieces of up to 4 words that never span a sentence end. See :func:`superword_pattern`.
- ``None``: no splitting, the whole text is one piece.

Any other string is used as a custom regex, except a bare name (letters, digits, ``_``,
``-``, ``.``; no regex syntax), which is taken for a mistyped preset name (``"GPT4"``,
``"gpt5"``, ``"none"``) and refused with :class:`~bytepair.errors.PatternError` listing the
presets: write such a literal as ``(?:word)``. Splitting is lossless for every pattern: text
between two matches of a custom regex is a piece of its own, so no text is ever dropped.
The presets run on hand-written scanners;
custom patterns run on a backtracking regex engine (``fancy-regex``), which supports
look-around, possessive quantifiers and Unicode classes like ``\\p{L}``.
"""

from __future__ import annotations

import re

from bytepair import _core
from bytepair.errors import PatternError

__all__ = ["PATTERNS", "SENTENCE_ENDS", "is_superword", "resolve", "superword_pattern"]

#: Characters that end a sentence for :func:`superword_pattern`: no superword piece holds one.
SENTENCE_ENDS = ".!?\u3002\uff01\uff1f"  # . ! ? and the ideographic full stop, ！ and ？

#: The most words a superword piece may hold (``max_words_per_token``).
MAX_SUPERWORD_WORDS = 64


def superword_pattern(max_words: int = 4) -> str:
    """The split pattern of SuperBPE's second stage, with pieces of at most ``max_words`` words.

    A word is a run of letters (``\\p{L}+``) with at most one character before it that is not a
    letter, digit, newline or sentence end (:data:`SENTENCE_ENDS`): ``" cat"``, ``"cat"``,
    ``"'s"``, ``"-based"``. A superword piece is 1 to ``max_words`` consecutive words, as many
    as there are (so a longer run of words is cut into pieces of ``max_words`` words, from the
    left). Everything else splits as GPT-4's pattern does: numbers of 1 to 3 digits,
    punctuation runs with one optional space before them, whitespace runs (the last space of a
    run goes to the next word). So pieces cross single spaces between words but never a
    sentence end (``.``, ``!``, ``?`` and their CJK forms), a newline, two spaces, a digit or a
    two-character gap such as ``", "``; e.g. ``"by the way, it is. Next"`` splits into
    ``"by the way"``, ``","``, ``" it is"``, ``"."``, ``" Next"``.

    This is a plain regex: encoding with it needs no special support, and every format that
    stores a regex (bytepair JSON, Hugging Face ``tokenizer.json``, tiktoken's ``pat_str``)
    can hold it.
    """
    if not isinstance(max_words, int) or isinstance(max_words, bool) or not 1 <= max_words <= MAX_SUPERWORD_WORDS:
        raise PatternError(f"max_words must be an int in [1, {MAX_SUPERWORD_WORDS}], got {max_words!r}")
    word = rf"[^\r\n\p{{L}}\p{{N}}{SENTENCE_ENDS}]?\p{{L}}+"
    return rf"(?:{word}){{1,{max_words}}}|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


#: The preset patterns by name.
PATTERNS: dict[str, str] = dict(_core.preset_patterns())
PATTERNS["superword"] = superword_pattern(4)
_SUPERWORD = {superword_pattern(n) for n in range(1, MAX_SUPERWORD_WORDS + 1)}


def is_superword(regex: str | None) -> bool:
    """Whether ``regex`` is ``superword_pattern(n)`` for some n. Its pieces hold a newline only
    at their end and it has no look-behind, so counting may cut the text after a newline
    followed by an ASCII letter or digit (``PieceCounter(newline_cuts=True)``): files are read
    in blocks and counted by every thread, as for the presets."""
    return regex in _SUPERWORD

_ALIASES = {
    "r50k": "gpt2",
    "r50k_base": "gpt2",
    "cl100k": "gpt4",
    "cl100k_base": "gpt4",
    "o200k_base": "o200k",
}


def resolve(pattern: str | None) -> tuple[str | None, str | None]:
    """Returns ``(preset name or None, regex or None)`` for a preset name, a regex or None."""
    if pattern is None:
        return None, None
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a preset name, a regex string or None, not {type(pattern).__name__}")
    name = _ALIASES.get(pattern, pattern)
    if name in PATTERNS:
        return name, PATTERNS[name]
    for preset, regex in PATTERNS.items():
        if pattern == regex:
            return preset, regex
    if _BARE_NAME.fullmatch(pattern):
        names = ", ".join(list(PATTERNS) + list(_ALIASES))
        raise PatternError(
            f"pattern {pattern!r} is not a preset; the presets are {names} (or None for no splitting). "
            f"A custom regex must use regex syntax: to split on the literal text, write '(?:{pattern})'"
        )
    return None, pattern


# A name, not a regex: nothing but letters, digits, '_', '-' and '.' (a preset mistyped).
_BARE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")
