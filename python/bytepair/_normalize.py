"""Text normalization, applied identically when training and when encoding.

A normalization is ``None`` (none) or steps joined by ``+``, applied in order: ``nfc``,
``nfd``, ``nfkc``, ``nfkd`` (Unicode normal forms, :func:`unicodedata.normalize`) and
``lowercase`` (:meth:`str.lower` of each character alone, as ``tokenizers``' ``Lowercase``,
which a ``tokenizer.json`` writes it as, lowercases: no final sigma). Special-token text is
never normalized: text is split at special tokens first and each stretch between them is
normalized on its own.

Cutting text after a newline never changes its normalization (a newline is a stable starter
for every normal form, and lowercasing looks at no neighbour), so streams are normalized in
blocks that end after a newline.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Literal

from bytepair import _hf_unicode
from bytepair.errors import BytepairError

STEPS = ("nfc", "nfd", "nfkc", "nfkd", "lowercase")
_FORMS: dict[str, Literal["NFC", "NFD", "NFKC", "NFKD"]] = {"nfc": "NFC", "nfd": "NFD", "nfkc": "NFKC", "nfkd": "NFKD"}

Normalizer = Callable[[str], str]


def canonical(spec: str | None) -> str | None:
    """The stored form of a normalization (``None`` for none); raises for unknown steps."""
    if spec is None:
        return None
    if not isinstance(spec, str):
        raise TypeError(f"normalization must be a str or None, got {type(spec).__name__}")
    if spec.strip().lower() in ("", "none"):
        return None
    steps = [s.strip().lower() for s in spec.split("+")]
    for s in steps:
        if s not in STEPS:
            raise BytepairError(
                f"unknown normalization step {s!r} in {spec!r}; use None or steps joined by '+' from {', '.join(STEPS)}"
            )
    return "+".join(steps)


@functools.lru_cache(maxsize=16)
def function(spec: str | None) -> Normalizer | None:
    """The function applying a canonical normalization, or ``None``."""
    if spec is None:
        return None
    funcs: list[Normalizer] = []
    for step in spec.split("+"):
        if step == "lowercase":
            # each character alone, as tokenizers' Lowercase (which the step is written as) has
            # it: no final sigma. Code points newer than unicodedata's tables keep their case,
            # as the normal forms keep them (`_hf_unicode`).
            funcs.append(_hf_unicode.lower_each)
        else:
            form: Literal["NFC", "NFD", "NFKC", "NFKD"] = _FORMS[step]
            funcs.append(functools.partial(unicodedata.normalize, form))
    if len(funcs) == 1:
        return funcs[0]

    def run(text: str) -> str:
        for f in funcs:
            text = f(text)
        return text

    return run


@functools.lru_cache(maxsize=64)
def special_regex(specials: frozenset[str]) -> re.Pattern[str] | None:
    """Leftmost-longest matcher of the special tokens (longest alternatives first)."""
    if not specials:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True)))


def split(text: str, fn: Normalizer, specials: Collection[str], allowed: Collection[str] = ()) -> list[str]:
    """``text`` cut at the special tokens in ``allowed``: ``[ordinary, special, ordinary, ...,
    ordinary]``, the allowed special tokens at the odd positions, as typed.

    The one implementation of "split at special tokens, then normalize" that every encode path
    goes through: special tokens are found first, leftmost-longest among all of ``specials``,
    on the text as given; each stretch between them is normalized on its own, and a special
    token not in ``allowed`` stays in the ordinary text as typed. Normalizing first and then
    looking for special tokens would let text the user never typed as a special token become
    one (``＜｜endoftext｜＞`` under NFKC, ``<|IM_START|>`` under lowercase).
    """
    rx = special_regex(frozenset(specials))
    if rx is None:
        return [fn(text)]
    out: list[str] = []
    ordinary: list[str] = []
    start = 0
    for m in rx.finditer(text):
        ordinary.append(fn(text[start : m.start()]))
        start = m.end()
        if m.group() in allowed:
            out.append("".join(ordinary))
            out.append(m.group())
            ordinary = []
        else:
            ordinary.append(m.group())
    ordinary.append(fn(text[start:]))
    out.append("".join(ordinary))
    return out


def apply(text: str, fn: Normalizer, specials: Collection[str]) -> str:
    """Normalizes the stretches of ``text`` between special tokens; special tokens stay as
    typed (:func:`split` with none allowed)."""
    return split(text, fn, specials)[0]


def safe_cut(text: str, specials: Collection[str]) -> int:
    """The end of the longest prefix of ``text`` that ends after a newline that no special
    token straddles (0 if none): normalizing the prefix and the rest apart changes nothing."""
    rx = special_regex(frozenset(specials))
    longest = max((len(s) for s in specials), default=0)
    end = len(text)
    while True:
        nl = text.rfind("\n", 0, end)
        if nl < 0:
            return 0
        cut = nl + 1
        if rx is None or not any(
            m.start() < cut < m.end() for m in rx.finditer(text, max(0, cut - longest), cut + longest)
        ):
            return cut
        end = nl


def stream(chunks: Iterable[str], fn: Normalizer, specials: Collection[str], size: int = 1 << 16) -> Iterator[str]:
    """Normalizes a stream of text chunks; the output concatenates to ``apply(whole text)``."""
    buf = ""
    for chunk in chunks:
        buf += chunk
        if len(buf) >= size:
            cut = safe_cut(buf, specials)
            if cut:
                yield apply(buf[:cut], fn, specials)
                buf = buf[cut:]
    if buf:
        yield apply(buf, fn, specials)
