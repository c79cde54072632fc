"""Unicode normal forms as Hugging Face ``tokenizers`` computes them (``bytepair._hf_unicode``),
against ``tokenizers`` itself on every code point."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bytepair import _hf_unicode

normalizers = pytest.importorskip("tokenizers.normalizers")

FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def _theirs() -> dict[str, object]:
    return {f: getattr(normalizers, f)() for f in FORMS}


def _wrong_on_every_code_point(theirs: Any, ours: Callable[[str], str]) -> list[tuple[str, str]]:
    """The code points (each alone) where ``ours`` differs from the normalizer ``theirs``: one
    call of theirs over all of them, cut apart at NULs (which every one leaves as it is)."""
    chars = [chr(cp) for cp in range(1, 0x110000) if not 0xD800 <= cp < 0xE000]
    out = theirs.normalize_str("\0".join(chars)).split("\0")
    assert len(out) == len(chars)
    return [(hex(ord(c)), t) for c, t in zip(chars, out) if ours(c) != t]


def test_strip_accents_on_every_code_point() -> None:
    """``StripAccents`` as ``tokenizers`` runs it: each code point, alone, dropped or kept."""
    assert _wrong_on_every_code_point(normalizers.StripAccents(), _hf_unicode.strip_accents) == []
    # a combining accent and a spacing vowel sign dropped; a mark newer than its tables kept
    assert _hf_unicode.strip_accents("e\u0301 \u093e\U00011d31x") == "e \U00011d31x"


def test_lowercase_on_every_code_point_and_sigma() -> None:
    """``Lowercase`` as ``tokenizers`` runs it: each code point alone, and capital sigmas at the
    ends of words (no final form there)."""
    lower = normalizers.Lowercase()
    assert _wrong_on_every_code_point(lower, _hf_unicode.lowercase) == []
    for text in ("ΟΔΟΣ", "ΣΑΣ ΟΔΟΣ.", "AΣ b", "İstanbul ǅ ẞ", "ΌΣΟΣ\u0301Σ"):
        assert _hf_unicode.lowercase(text) == lower.normalize_str(text), text


def test_every_code_point_alone_and_among_marks() -> None:
    theirs = _theirs()
    wrong = []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        texts = [c]
        if unicodedata.combining(c):  # where a newer combining class would reorder marks
            texts += ["a" + c + "\u0301", "a\u0316" + c, "e\u0301" + c]
        for t in texts:
            for f in FORMS:
                want = theirs[f].normalize_str(t)  # type: ignore[attr-defined]
                if _hf_unicode.normalize(f, t) != want:
                    wrong.append((f, hex(cp), t, want))
    assert wrong == []


def test_newer_code_points_are_those_unicodedata_changes() -> None:
    """Each range of NEWER is needed: unicodedata changes every code point in it, in some form or
    beside some mark, where tokenizers does not."""
    theirs = _theirs()
    for a, b in _hf_unicode.NEWER:
        for cp in range(a, b + 1):
            c = chr(cp)
            texts = [c, "a" + c + "\u0301", "a\u0316" + c, "e\u0301" + c]
            assert any(
                unicodedata.normalize(f, t) != theirs[f].normalize_str(t)  # type: ignore[attr-defined]
                for f in FORMS
                for t in texts
            ), hex(cp)


NEWER_CHARS = [chr(cp) for a, b in _hf_unicode.NEWER for cp in range(a, b + 1)]
MIXED = st.text(
    alphabet=st.one_of(
        st.sampled_from(NEWER_CHARS),
        st.sampled_from(list("aeAE \u0301\u0316\u0327\u00e9\u2167\ufb01")),
        st.characters(exclude_categories=("Cs",)),
    ),
    max_size=24,
)


@given(text=MIXED, form=st.sampled_from(FORMS))
def test_texts_with_newer_code_points(text: str, form: str) -> None:
    theirs = _theirs()[form]
    assert _hf_unicode.normalize(form, text) == theirs.normalize_str(text)  # type: ignore[arg-type, attr-defined]
