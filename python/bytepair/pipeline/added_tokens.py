"""Added tokens: texts found in the input before the model sees it, with Hugging Face's flags.

An added token is matched in the text (leftmost, longest first) and becomes its one id. Its flags
say how, as Hugging Face ``tokenizers`` uses them (measured against it in the tests):

- ``special``: a special token (BOS, ``[SEP]``, ...): marked in ``special_tokens_mask``, dropped by
  ``decode(..., skip_special_tokens=True)``. A non-special added token (``special=False``) is an
  ordinary word of the vocabulary that happens to be matched whole: it is always matched, never
  refused as "disallowed special", never skipped.
- ``lstrip`` / ``rstrip``: the match takes the whitespace on its left / right with it (the
  offsets cover it; the whitespace gives no token of its own).
- ``single_word``: matched only where neither neighbour is a word character (Unicode's ``\\w``:
  a letter, a mark, a decimal digit, ``_``...); elsewhere the text is encoded as ordinary text.
- ``normalized``: kept and written back. bytepair matches every added token in the text as given.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bytepair.errors import FormatError

__all__ = ["AddedToken", "AddedVocabulary"]

_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


@dataclass(frozen=True)
class AddedToken:
    """One added token and its flags (see the module doc)."""

    content: str
    id: int
    special: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False

    @property
    def plain(self) -> bool:
        """Matched wherever its text is, taking nothing around it."""
        return not (self.lstrip or self.rstrip or self.single_word)

    def to_hf(self) -> dict[str, Any]:
        """The entry of ``added_tokens`` in a ``tokenizer.json``."""
        return {
            "id": self.id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }

    @classmethod
    def from_hf(cls, entry: Any, where: str) -> AddedToken:
        """An entry of ``added_tokens`` (``where`` names it in errors: ``file: added_tokens[3]``)."""
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str) or not entry["content"]:
            raise FormatError(f"{where} must be an object with a non-empty 'content'")
        i = entry.get("id")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise FormatError(f"{where}.id must be an int in [0, 2**32), got {i!r}")
        flags: dict[str, bool] = {}
        for flag in _FLAGS:
            value = entry.get(flag)
            if value is None:  # absent or null: the default, as tokenizers reads it
                value = flag == "special"
            if not isinstance(value, bool):
                raise FormatError(f"{where}.{flag} must be true or false, got {value!r}")
            flags[flag] = value
        return cls(entry["content"], i, **flags)


def _is_space(c: str) -> bool:
    # Unicode White_Space (Rust's char::is_whitespace): str.isspace also takes U+001C..U+001F.
    return c.isspace() and not "\x1c" <= c <= "\x1f"


def _is_word(c: str) -> bool:
    """A word character as Unicode's ``\\w`` has it (letters, marks, decimal and letter numbers,
    connector punctuation, the joiners): ``²`` and ``½`` are not, ``ª`` and ``Ⅻ`` are."""
    cat = unicodedata.category(c)
    return cat[0] in "LM" or cat in ("Nd", "Nl", "Pc") or c in "\u200c\u200d"


class AddedVocabulary:
    """The added tokens of a tokenizer, ``{text: AddedToken}``, and how they cut a text."""

    def __init__(self, tokens: Iterable[AddedToken] = ()) -> None:
        self._by_text: dict[str, AddedToken] = {}
        for t in tokens:
            self._by_text[t.content] = t

    def __iter__(self) -> Any:
        return iter(self._by_text.values())

    def __len__(self) -> int:
        return len(self._by_text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AddedVocabulary) and self._by_text == other._by_text

    def __hash__(self) -> int:
        return hash(frozenset(self._by_text.values()))

    def get(self, text: str) -> AddedToken | None:
        return self._by_text.get(text)

    @classmethod
    def of(cls, specials: Mapping[str, int], flags: Mapping[str, AddedToken] | None = None) -> AddedVocabulary:
        """The tokens ``{text: id}`` with their flags from ``flags`` (special, no stripping, for
        the others); a flag entry whose text or id changed is not used."""
        flags = flags or {}
        out = []
        for text, i in specials.items():
            f = flags.get(text)
            out.append(AddedToken(text, i) if f is None or f.id != i else f)
        return cls(out)

    @functools.cached_property
    def non_special_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self if not t.special)

    @functools.cached_property
    def special_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self if t.special)

    @functools.cached_property
    def stripping_ids(self) -> frozenset[int]:
        """The tokens that take the whitespace around them (``lstrip`` / ``rstrip``)."""
        return frozenset(t.id for t in self if t.lstrip or t.rstrip)

    @functools.cached_property
    def needs_python(self) -> bool:
        """Some token strips whitespace or needs word boundaries: only :meth:`split` honours that."""
        return any(not t.plain for t in self)

    @functools.cached_property
    def _regex(self) -> re.Pattern[str] | None:
        if not self._by_text:
            return None
        return re.compile("|".join(re.escape(t) for t in sorted(self._by_text, key=len, reverse=True)))

    def split(self, text: str) -> list[tuple[int | None, int, int]]:
        """``text`` cut at its added tokens: ``(id, start, end)`` for a token (``start``/``end``
        covering the whitespace it strips) and ``(None, start, end)`` for ordinary text between
        them (never empty), in order, covering the text."""
        rx = self._regex
        out: list[tuple[int | None, int, int]] = []
        if rx is None:
            return [(None, 0, len(text))] if text else []
        at = 0  # end of the last token taken
        for m in rx.finditer(text):
            start, end = m.span()
            if start < at:
                continue  # inside the whitespace an rstrip token took
            tok = self._by_text[m.group()]
            if tok.single_word and (
                (start > 0 and _is_word(text[start - 1])) or (end < len(text) and _is_word(text[end]))
            ):
                continue
            if tok.lstrip:
                while start > at and _is_space(text[start - 1]):
                    start -= 1
            if tok.rstrip:
                while end < len(text) and _is_space(text[end]):
                    end += 1
            if start > at:
                out.append((None, at, start))
            out.append((tok.id, start, end))
            at = end
        if at < len(text):
            out.append((None, at, len(text)))
        return out
