"""The pre-tokenizer's 64-byte mask windows (issue 11, rust/src/pretok/masks.rs) against
tiktoken: texts of a few hundred bytes over an alphabet rich in piece boundaries (both cases,
digits, spaces, tabs, CR/LF, apostrophes and contraction letters, slashes, punctuation), so that
pieces cross the window edges everywhere, with now and then a non-ASCII character (which stops a
window) and texts ending inside a whitespace run or a contraction. Each text is encoded twice
(cold, then warm) through the array path, as a string and as a file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from tests.interop_texts import reference
from tests.textfile import text_file

NAMES = ["cl100k_base", "o200k_base"]

ATOMS = list("aAzZsStTlLevrdm019 \t\n\r'./,-") + [
    "  ",
    "'s",
    "'LL",
    "'ve",
    "\r\n",
    "\n//",
    "é",
    "ſ",  # U+017F, a contraction letter under case folding
    "\u00a0",
    "中",
]


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=300))
    return "".join(parts)


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest) -> tuple[bytepair.Tokenizer, object]:
    return bytepair.get_encoding(request.param), reference(request.param)


@settings(max_examples=150, deadline=None)
@given(text=texts())
def test_windows_match_tiktoken(pair: tuple[bytepair.Tokenizer, object], text: str) -> None:
    tok, enc = pair
    want = enc.encode_ordinary(text)  # type: ignore[attr-defined]
    with text_file(text) as path:
        for _ in range(2):
            assert tok.encode_ordinary(text) == want
            ids, _offsets = tok.encode_files([path])
            assert ids.tolist() == want
