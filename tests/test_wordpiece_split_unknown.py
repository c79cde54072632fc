"""WordPiece with ``split_unknown_characters=True``: a character no piece matches becomes the
unknown token on its own and the rest of its word is still matched (the lecture's
``Hugg ##i ##n [UNK]``). Checked against the naive oracle (tests/oracle.py), with offsets, through
every cache path, in batches, in the trace, in bytepair's file, and refused by the HF writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import WordPieceTokenizer, train_wordpiece_from_iterator
from bytepair.analysis.trace import WordPieceStep, trace
from bytepair.errors import BytepairError, FormatError
from tests import oracle

# The lecture's vocabulary (cased: it has upper-case tokens).
LECTURE = [
    "[UNK]", "##a", "##h", "##i", "##n", "##s", "##t", "##u", "H", "T", "a", "b", "c", "g", "h", "i", "s", "t",
    "u", "w", "y", "ab", "##fu", "Fa", "Fac", "##ct", "##ful", "##full", "##fully", "Th", "ch", "##hm", "Hu",
    "Hug", "Hugg",
]

# Tokens over a few letters and an accented one; words are drawn from more letters than the
# tokens cover, so that positions without a match are common, at the start and inside words.
TOKENS = ["[UNK]", "a", "b", "ab", "ba", "é", "##a", "##b", "##ab", "##aab", "##é", "##éa", "c"]
word_letters = st.text(st.sampled_from(list("aabbcdé")), min_size=1, max_size=70)


def split(tok: WordPieceTokenizer, text: str) -> list[str]:
    return [tok.id_to_token(i) or "" for i in tok.encode(text)]


def test_the_lecture_example() -> None:
    tok = WordPieceTokenizer(LECTURE, lowercase=False, split_unknown_characters=True)
    assert split(tok, "Hugging") == ["Hugg", "##i", "##n", "[UNK]"]
    # the default stays BERT's: the whole word
    assert split(WordPieceTokenizer(LECTURE, lowercase=False), "Hugging") == ["[UNK]"]
    assert tok.split_unknown_characters and not WordPieceTokenizer(LECTURE).split_unknown_characters


@given(words=st.lists(word_letters, min_size=1, max_size=12), max_chars=st.integers(1, 80))
def test_matches_the_oracle_with_offsets(words: list[str], max_chars: int) -> None:
    text = " ".join(words)
    tok = WordPieceTokenizer(TOKENS, lowercase=False, split_unknown_characters=True, max_input_chars_per_word=max_chars)
    want = [t for w in words for t in oracle.wordpiece_word(w, TOKENS, "[UNK]", "##", max_chars, split_unknown=True)]
    for _ in range(2):  # first pass fills the word cache, the second reads it
        assert split(tok, text) == want
    # Offsets: each unknown token covers its one character; word pieces spell their word.
    ids, offsets = tok.encode_with_offsets(text)
    at = 0
    spans = []
    for w in words:
        start = text.index(w, at)
        pieces = oracle.wordpiece_word(w, TOKENS, "[UNK]", "##", max_chars, split_unknown=True)
        if pieces == ["[UNK]"] and len(w) > max_chars:
            spans.append((start, start + len(w)))
        else:
            pos = start
            for p in pieces:
                n = 1 if p == "[UNK]" else len(p) - (2 if p.startswith("##") else 0)
                spans.append((pos, pos + n))
                pos += n
        at = start + len(w)
    assert [tuple(o) for o in offsets] == spans
    # batches (one per text, and all at once on threads) agree
    assert tok.encode_batch(words + [text], num_threads=2)[-1] == ids
    flat, ends = tok.encode_batch_numpy(words, num_threads=2)
    assert flat.tolist() == [i for w in words for i in tok.encode(w)]


def test_unknown_first_character_then_continuations() -> None:
    """After an unknown first character the word goes on with ``##`` pieces, as after any piece."""
    tok = WordPieceTokenizer(TOKENS, lowercase=False, split_unknown_characters=True)
    assert split(tok, "dab") == ["[UNK]", "##ab"]
    assert split(tok, "ddé") == ["[UNK]", "[UNK]", "##é"]
    # a word over max_input_chars_per_word is one unknown token, as without the option
    short = WordPieceTokenizer(TOKENS, lowercase=False, split_unknown_characters=True, max_input_chars_per_word=3)
    assert split(short, "abab dab") == ["[UNK]", "[UNK]", "##ab"]


def test_long_words_outside_the_cache() -> None:
    """Words over the cache's 64 bytes are encoded without it: the same rule."""
    tok = WordPieceTokenizer(TOKENS, lowercase=False, split_unknown_characters=True, max_input_chars_per_word=1000)
    word = "abdé" * 40 + "cd"
    assert split(tok, word) == oracle.wordpiece_word(word, TOKENS, "[UNK]", "##", 1000, split_unknown=True)


def test_saved_and_loaded_and_refused_by_hf(tmp_path: Path) -> None:
    tok = WordPieceTokenizer(LECTURE, lowercase=False, split_unknown_characters=True)
    path = tmp_path / "wp.json"
    tok.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["wordpiece"]["split_unknown_characters"] is True
    back = bytepair.load(path)
    assert isinstance(back, WordPieceTokenizer) and back.split_unknown_characters
    assert split(back, "Hugging") == ["Hugg", "##i", "##n", "[UNK]"]
    # the default writes nothing new
    WordPieceTokenizer(LECTURE, lowercase=False).save(tmp_path / "plain.json")
    assert "split_unknown_characters" not in json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))["wordpiece"]
    with pytest.raises(FormatError, match="split_unknown_characters"):
        tok.save_pretrained(tmp_path / "hf")
    assert not (tmp_path / "hf").exists()
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["wordpiece"]["split_unknown_characters"] = "yes"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError, match="wordpiece.split_unknown_characters"):
        bytepair.load(path)


def test_bad_value_named() -> None:
    with pytest.raises(BytepairError, match="split_unknown_characters"):
        WordPieceTokenizer(LECTURE, split_unknown_characters=1)  # type: ignore[arg-type]


def test_trace_shows_the_unknown_characters() -> None:
    tok = WordPieceTokenizer(LECTURE, lowercase=False, split_unknown_characters=True)
    (t,) = trace(tok, "Hugging")
    assert t.steps == [
        WordPieceStep("Hugg", tok.vocab["Hugg"], (0, 4)),
        WordPieceStep("##i", tok.vocab["##i"], (4, 5)),
        WordPieceStep("##n", tok.vocab["##n"], (5, 6)),
        WordPieceStep("[UNK]", tok.vocab["[UNK]"], (6, 7), unknown=True),
    ]
    assert t.ids == tok.encode("Hugging")


def test_training_and_cli(tmp_path: Path) -> None:
    texts = ["abc abd abe " * 5, "xyz"]
    tok = train_wordpiece_from_iterator(texts, vocab_size=40, split_unknown_characters=True, progress=False)
    assert tok.split_unknown_characters
    vocab = [tok.id_to_token(i) or "" for i in range(tok.vocab_size)]
    for word in ("abq", "qab", "xyzzy", "abcabd"):  # q was never seen; z never first
        assert split(tok, word) == oracle.wordpiece_word(word, vocab, "[UNK]", split_unknown=True)
    assert "[UNK]" in split(tok, "abq")[1:]
    corpus = tmp_path / "c.txt"
    corpus.write_text("hugging hugs\n" * 20, encoding="utf-8")
    out = tmp_path / "wp.json"
    run = subprocess.run(
        [sys.executable, "-m", "bytepair", "train", str(corpus), "--model", "wordpiece", "--vocab-size", "30",
         "--split-unknown-characters", "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert bytepair.load(out).split_unknown_characters
    run = subprocess.run(
        [sys.executable, "-m", "bytepair", "train", str(corpus), "--vocab-size", "300",
         "--split-unknown-characters", "-o", str(tmp_path / "bpe.json")],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode != 0 and "--split-unknown-characters" in run.stderr
