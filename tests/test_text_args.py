"""Text arguments read from the strings' own code units (rust/src/py/utf8.rs).

CPython keeps a ``str`` as Latin-1, UCS-2 or UCS-4. The extension converts a non-ASCII one to
UTF-8 itself, into a buffer it reuses, instead of asking CPython for the UTF-8 that CPython then
keeps on the string; a batch's check for disallowed special tokens reads only the texts that
hold the first two characters of one. These tests give every call shape texts of each storage
kind (ids against tiktoken), check that no UTF-8 is left on the strings, and check the special
token search against a plain ``in`` over the texts, with tokens starting in and out of ASCII.
"""

from __future__ import annotations

import ctypes
import functools
import random
import sys
from typing import Any

import numpy as np
import pytest

import bytepair
from bytepair.errors import DisallowedSpecialTokenError

from tests.test_encodings import Pair, pair, rank_dir  # noqa: F401  (fixtures)

ABI3 = bytepair._core.__file__.endswith(".abi3.so")

# Alphabets that make CPython store a text in each of its kinds (ASCII is Latin-1 with one
# byte a character, and lent as is). '<' and '|' come often: the special-token search looks
# for the pair.
_ASCII = list("ab Z09.,'-\n\t<|>")
KINDS = {
    "ascii": _ASCII,
    "latin1": _ASCII + list("éÿßñ\xa0\x80"),
    "ucs2": _ASCII + list("éЖя日本語の文字ー。한국\u07ff\u0800\uffff"),
    "ucs4": _ASCII + list("éЖ日本😀𝔘𠀀\U0010ffff"),
}


def _texts(seed: int, kind: str, count: int, length: int = 60) -> list[str]:
    rng = random.Random(seed)
    alphabet = KINDS[kind]
    return ["".join(rng.choices(alphabet, k=rng.randint(0, length))) for _ in range(count)]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_storage_kind_matches_tiktoken(pair: Pair, kind: str) -> None:  # noqa: F811
    ours, ref = pair
    # Short texts (encoded with the GIL held) and long ones (the GIL released, ASCII runs long
    # enough for the 16-unit steps); texts above a round of 8 MiB are test_interrupt.py's.
    texts = _texts(3, kind, 60) + _texts(4, kind, 4, length=20_000)
    want = [ref.encode_ordinary(t) for t in texts]
    for t, w in zip(texts, want):
        assert ours.encode_ordinary(t) == w
        assert ours.encode(t) == w
        assert ours.count(t) == len(w)
    assert ours.encode_ordinary_batch(texts, num_threads=1) == want
    assert ours.encode_batch(texts, num_threads=2) == want
    assert ours.count_batch(texts) == [len(w) for w in want]
    ids, offsets = ours.encode_batch_numpy(texts, num_threads=1, dtype=np.uint32)
    assert ids.tolist() == [i for w in want for i in w]
    assert offsets.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()


def _cache_utf8(text: str) -> None:
    """What ``&str`` extraction did: CPython's UTF-8 of ``text``, kept on it."""
    fn = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.py_object, ctypes.c_void_p]
    assert fn(text, None)


@functools.cache
def _models() -> dict[str, object]:
    from importlib.resources import files

    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[:60_000]
    mixed = [sample, "".join(random.Random(1).choices(KINDS["ucs4"], k=20_000))]
    return {
        "bpe": bytepair.get_encoding("o200k_base"),
        "wordpiece": bytepair.train_wordpiece_from_iterator(mixed, vocab_size=400),
        "unigram": bytepair.train_unigram_from_iterator(mixed, vocab_size=400),
        "spm-bpe": bytepair.train_sentencepiece_from_iterator(mixed, vocab_size=400, model_type="bpe"),
    }


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram", "spm-bpe"])
def test_no_utf8_is_left_on_the_strings(kind: str) -> None:
    enc: Any = _models()[kind]
    kinds = ("latin1", "ucs2", "ucs4")
    texts = [t for k in kinds for t in _texts(5, k, 30, length=3_000) + _texts(6, k, 30, length=63)]
    # The abi3 build reads texts under 64 characters through CPython (rust/src/py/utf8.rs).
    texts = [t for t in texts if not t.isascii() and (len(t) >= 64 or not ABI3)]
    assert any(len(t) < 64 for t in texts) or ABI3
    sizes = [sys.getsizeof(t) for t in texts]
    enc.encode_batch(texts)
    enc.encode_batch_numpy(texts)
    if kind == "bpe":
        enc.count_batch(texts)
        enc.encode_batch([t + "<|endoftext|>" for t in texts], allowed_special="all")
        for t in texts:
            enc.encode_ordinary(t)
            enc.count(t)
    for t in texts:
        enc.encode(t)
    assert [sys.getsizeof(t) for t in texts] == sizes
    # The measure sees a kept UTF-8: sizes grow once CPython makes it.
    for t in texts:
        _cache_utf8(t)
    assert all(sys.getsizeof(t) > s for t, s in zip(texts, sizes))


def _first_special(texts: list[str], specials: list[str]) -> str | None:
    """The special token the batch check reports: in the first text holding one, the leftmost
    (the longest of those starting there)."""
    for t in texts:
        found = [(t.find(s), -len(s), s) for s in specials if s in t]
        if found:
            return min(found)[2]
    return None


def _with_specials(rng: random.Random, texts: list[str], specials: list[str], rate: float) -> list[str]:
    """``texts`` with a special token, or the start of one, put in some of them."""
    out = []
    for t in texts:
        if rng.random() < rate:
            s = rng.choice(specials)
            piece = s if len(s) == 1 or rng.random() < 0.5 else s[: rng.randint(1, len(s) - 1)]
            at = rng.randint(0, len(t))
            t = t[:at] + piece + t[at:]
        out.append(t)
    return out


def _check_batches(tok: bytepair.Tokenizer, specials: list[str], seed: int) -> None:
    rng = random.Random(seed)
    for kind in KINDS:
        for rate in (0.0, 0.05, 0.3):
            texts = _with_specials(rng, _texts(rng.randrange(1 << 30), kind, 40), specials, rate)
            want = _first_special(texts, specials)
            for call in (tok.encode_batch, tok.count_batch, tok.encode_batch_numpy):
                if want is None:
                    call(texts)
                    continue
                with pytest.raises(DisallowedSpecialTokenError) as e:
                    call(texts)
                assert e.value.token == want, (kind, rate, call)
            ok = tok.encode_batch(texts, allowed_special="all")
            assert ok == [tok.encode(t, allowed_special="all") for t in texts]


def test_disallowed_specials_found_in_batches(pair: Pair) -> None:  # noqa: F811
    ours, _ = pair
    _check_batches(ours, sorted(ours.special_tokens_set), seed=11)


def test_specials_that_start_outside_ascii() -> None:
    """Tokens whose first characters are stored in each kind, one of a single character, and
    one whose start is the start of another."""
    from importlib.resources import files

    specials = ["«s»", "日本語", "😀end", "<|y|>", "<|y", "é", "Жx"]
    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    tok = bytepair.train_from_iterator([sample[:50_000]], vocab_size=300, special_tokens=specials)
    _check_batches(tok, specials, seed=12)


def test_lone_surrogates_in_a_checked_batch() -> None:
    """A text with a lone surrogate has no UTF-8: checked on its own (repaired), wherever it is
    and whether or not it holds the start of a special token."""
    enc = bytepair.get_encoding("cl100k_base")
    bad = "x\ud800y"
    assert enc.encode_batch([bad, "plain"]) == [enc.encode(bad), enc.encode("plain")]
    assert enc.encode_batch([bad + "<|", "é"]) == [enc.encode(bad + "<|"), enc.encode("é")]
    for texts in ([bad, "é<|endoftext|>"], [bad + "<|endoftext|>"], ["<|" + bad + "<|endoftext|>"]):
        with pytest.raises(DisallowedSpecialTokenError) as e:
            enc.encode_batch(texts)
        assert e.value.token == "<|endoftext|>"

def test_training_leaves_no_utf8_on_the_strings() -> None:
    """Training and the piece counts read their texts as the encoders do."""
    texts = [t for t in _texts(8, "ucs2", 200, length=400) if not t.isascii() and (len(t) >= 64 or not ABI3)]
    sizes = [sys.getsizeof(t) for t in texts]
    bytepair.train_from_iterator(texts, vocab_size=300)
    assert [sys.getsizeof(t) for t in texts] == sizes
