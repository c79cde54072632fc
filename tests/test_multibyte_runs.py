"""Runs of multi-byte characters against tiktoken, for every shipped encoding.

Pieces of CJK, kana, Hangul, Cyrillic, Greek, Arabic or Devanagari text start their merges from
whole characters where that is provably exact ("atoms"), and long pieces are cut between
characters no token joins, their parts looked up in the thread's table (rust/src/bpe/encode/
atoms.rs). These texts mix such characters with the ASCII letters, digits, spaces and marks
that decide where a character may be an atom, in runs long and short, each encoded again once
its parts are in the table, in a batch, and counted.
"""

from __future__ import annotations

import pathlib
import random

import pytest

import bytepair

from tests.test_encodings import Pair, pair, rank_dir  # noqa: F401  (fixtures)

DATA = pathlib.Path(__file__).parent / "data" / "multilingual.txt"

# Characters of the sample's scripts, and of a few blocks it lacks (kana, Hangul, CJK
# punctuation, fullwidth forms, a character outside the Basic Multilingual Plane).
_SAMPLE = sorted({c for c in DATA.read_text(encoding="utf-8") if ord(c) > 0x7F})
_EXTRA = [chr(c) for c in [*range(0x3041, 0x3097, 3), *range(0x30A1, 0x30FB, 3), *range(0xAC00, 0xAC40)]]
_EXTRA += ["。", "、", "「", "」", "（", "）", "ー", "・", "Ａ", "１", "😀", "𠀀"]
MULTI = _SAMPLE + _EXTRA
ASCII = list("aeZ09 .,'-\n")


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            run = rng.choices(MULTI, k=rng.randint(1, 40))
            parts.append("".join(run))
            parts.append("".join(rng.choices(ASCII, k=rng.randint(0, 3))))
        out.append("".join(parts))
    return out


def test_runs_of_multibyte_characters_match_tiktoken(pair: Pair) -> None:  # noqa: F811
    ours, ref = pair
    texts = _texts(1, 300)
    for text in texts:
        want = ref.encode_ordinary(text)
        assert ours.encode_ordinary(text) == want, text
        assert ours.encode_ordinary(text) == want, text  # parts now in the thread's table
        assert ours.count(text) == len(want), text
    assert ours.encode_ordinary_batch(texts, num_threads=2) == ref.encode_ordinary_batch(texts)


def test_text_of_the_sample_scripts_in_one_long_line(pair: Pair) -> None:  # noqa: F811
    """The sample's sentences without their spaces: runs of hundreds of letters, pieces cut
    into parts and pieces long enough for the linear path."""
    ours, ref = pair
    text = DATA.read_text(encoding="utf-8").replace(" ", "")
    assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    squeezed = "".join(c for c in text if ord(c) > 0x7F)
    assert ours.encode_ordinary(squeezed) == ref.encode_ordinary(squeezed)


@pytest.mark.parametrize("pattern", ["o200k", "gpt4"])
def test_trained_merge_lists_match_tokenizers(pattern: str) -> None:
    """A merge list trained on the sample (its characters become tokens, and so do pairs of
    bytes across their edges), exported to Hugging Face `tokenizers`: the same ids on runs of
    those characters."""
    import json

    import tokenizers

    from bytepair.formats.hf import to_hf_dict

    sample = DATA.read_text(encoding="utf-8")
    tok = bytepair.train_from_iterator([sample] * 20, vocab_size=900, pattern=pattern)
    hf = tokenizers.Tokenizer.from_str(json.dumps(to_hf_dict(tok)))
    for text in _texts(7, 150):
        want = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode_ordinary(text) == want, text
        assert tok.encode_ordinary(text) == want, text
