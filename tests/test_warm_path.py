"""The encoder's warm path against tiktoken: pieces read from the text as one or two
words, the tokens of 9 to 16 bytes in their own table, and the piece cache's inline table for
pieces of up to 16 bytes. Texts are built around the lengths where those paths change (8, 9,
15, 16, 17 bytes), pieces that end the text (fewer than 16 bytes after them), and non-ASCII
characters next to ASCII ones; each is encoded twice, so that the second pass reads the cache."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from tests.interop_texts import reference
from tests.textfile import text_file

NAMES = ["gpt2", "cl100k_base", "o200k_base"]

# Letters and marks of several scripts (1 to 4 bytes in UTF-8), digits, punctuation.
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ" + "éüßñçØ" + "абвгдЖ" + "αβγΩ" + "中文字日本" + "🙂"
PUNCT = ".,;:!?'\"()-_/\\#@$%&*+=<>[]{}|~`^"


# 8-byte starts that are tokens: pieces that share one and their length, 2 or 3 tokens, differ
# only after byte 8 (the inline cache table must compare both words).
STEMS = ["national", "interest", " nationa", "Ωζψξ"]


def _word(draw: st.DrawFn) -> str:
    """A run of letters of about 8, 9, 15, 16 or 17 bytes (or any length up to 24), sometimes
    after one of `STEMS`."""
    target = draw(st.sampled_from([1, 2, 7, 8, 9, 15, 16, 17, 24]))
    chars = draw(st.lists(st.sampled_from(LETTERS), min_size=1, max_size=target))
    out = draw(st.sampled_from(["", "", ""] + STEMS))
    target += len(out.encode())
    for c in chars:
        if len((out + c).encode()) > target and out:
            break
        out += c
    return out


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 5))
        if kind <= 2:
            parts.append(draw(st.sampled_from(["", " ", "  ", "\n", "\t"])) + _word(draw))
        elif kind == 3:
            parts.append(draw(st.text(alphabet="0123456789", min_size=1, max_size=17)))
        elif kind == 4:
            parts.append(draw(st.text(alphabet=PUNCT + " \n", min_size=1, max_size=17)))
        else:
            parts.append(draw(st.sampled_from(["'s", "'LL", "\r\n", " \n\n", "   "])))
    return "".join(parts)


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest) -> tuple[bytepair.Tokenizer, object]:
    return bytepair.get_encoding(request.param), reference(request.param)


@settings(max_examples=120, deadline=None)
@given(batch=st.lists(texts(), min_size=1, max_size=6))
def test_arrays_match_tiktoken_cold_and_warm(pair: tuple[bytepair.Tokenizer, object], batch: list[str]) -> None:
    tok, enc = pair
    want = [enc.encode_ordinary(t) for t in batch]  # type: ignore[attr-defined]
    for _ in range(2):  # the second pass finds the pieces in the cache
        ids, offsets = tok.encode_batch_numpy(batch)
        got = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(batch))]
        assert got == want
        assert [tok.encode_ordinary(t) for t in batch] == want


@settings(max_examples=40, deadline=None)
@given(text=texts())
def test_files_ending_right_after_a_piece(pair: tuple[bytepair.Tokenizer, object], text: str) -> None:
    # A file's text ends where its last piece ends: the words of that piece cannot be loaded
    # 8 or 16 bytes at a time past it.
    tok, enc = pair
    want = enc.encode_ordinary(text)  # type: ignore[attr-defined]
    with text_file(text) as path:
        for _ in range(2):
            ids, _offsets = tok.encode_files([path])
            assert ids.tolist() == want


def test_thread_tables_with_many_tokenizers_in_turn(tmp_path: pathlib.Path) -> None:
    """A thread keeps the piece tables of the last four tokenizers it used: six in turn on one
    thread (three shipped encodings, each loaded twice as separate tokenizers) drop and remake
    tables all along, and every text still gets tiktoken's ids; so does a text of more distinct
    pieces than a table holds (it is emptied on the way), encoded twice."""
    import random

    rnd = random.Random(23)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rnd.choice(letters) for _ in range(rnd.randint(3, 9))) for _ in range(20_000)]
    pairs = []
    for name in NAMES:
        path = tmp_path / name
        bytepair.get_encoding(name).save(str(path))
        for _ in range(2):
            # Tokenizers of their own (not get_encoding's shared one), each with its tables.
            pairs.append((bytepair.load(str(path)), reference(name)))
    for _ in range(40):
        text = " ".join(rnd.sample(words, 300)) + rnd.choice(["", ".", "\n", " 1234"])
        for tok, ref in pairs:
            assert tok.encode_ordinary(text) == ref.encode_ordinary(text)  # type: ignore[attr-defined]
    many = set()
    while len(many) < 420_000:
        many.add("".join(rnd.choice(letters) for _ in range(rnd.randint(4, 9))))
    text = " ".join(sorted(many))
    tok, ref = pairs[2]
    expected = ref.encode_ordinary(text)  # type: ignore[attr-defined]
    assert tok.encode_ordinary(text) == expected
    assert tok.encode_ordinary(text) == expected
