"""Named split patterns (pre-tokenization regexes, in Python ``regex`` syntax).

A tokenizer first splits text into pieces with its pattern; BPE never merges across pieces.

- ``"gpt2"``: GPT-2 / r50k_base.
- ``"gpt4"``: GPT-4 / cl100k_base.
- ``"o200k"``: GPT-4o / o200k_base.
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

__all__ = ["PATTERNS", "resolve"]

#: The preset patterns by name.
PATTERNS: dict[str, str] = dict(_core.preset_patterns())

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
