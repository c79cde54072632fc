"""The pre-tokenizer's 64-byte mask windows (rust/src/text/pretok/masks.rs and
masks_gpt2.rs) against tiktoken, for cl100k_base, o200k_base and r50k_base (GPT-2's pattern):
texts of a few hundred bytes over an alphabet rich in piece boundaries (both cases, digits,
spaces, tabs, CR/LF, apostrophes and contraction letters, slashes, punctuation), so that pieces
cross the window edges everywhere, with now and then a non-ASCII character (which stops a
window) and texts ending inside a whitespace run or a contraction. Each text is encoded twice
(cold, then warm) through the array path, as a string and as a file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from tests.interop_texts import reference
from tests.textfile import text_file

# bytepair's name and tiktoken's reference for it (r50k_base is GPT-2's ranks and pattern).
NAMES = [("cl100k_base", "cl100k_base"), ("o200k_base", "o200k_base"), ("r50k_base", "gpt2")]

ATOMS = list("aAzZsStTlLevrdm019 \t\n\r'./,-") + [
    "  ",
    "'s",
    "'LL",
    "'ve",
    "'ll",
    "'re",
    "'t",
    "\r\n",
    "\n//",
    # Words whose pieces tokenize differently when split elsewhere (after an apostrophe: `'Tim`
    # is `'`, `Tim` for GPT-2, whose contractions are lowercase only).
    "Tim",
    "Sam",
    "Lloyd",
    "Reno",
    "the",
    "ll",
    "vet",
    "é",
    "ſ",  # U+017F, a contraction letter under case folding
    "\u00a0",
    "中",
]


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=300))
    return "".join(parts)


@pytest.fixture(scope="module", params=NAMES, ids=[ours for ours, _ in NAMES])
def pair(request: pytest.FixtureRequest) -> tuple[bytepair.Tokenizer, object]:
    ours, theirs = request.param
    return bytepair.get_encoding(ours), reference(theirs)


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
