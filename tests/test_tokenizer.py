"""Tokenizer behaviour: construction, special tokens, batch and streaming APIs, decoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import DisallowedSpecialTokenError, Tokenizer, UnknownTokenError, VocabError

from . import oracle
from .strategies import text

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    from importlib.resources import files

    sample = (files("bytepair") / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    return bytepair.train_from_iterator(
        [sample[:300_000]], vocab_size=700, special_tokens=["<|endoftext|>", "<s>", "<s><s>"]
    )


def test_construct_from_memory_matches_trained(tok: Tokenizer) -> None:
    again = Tokenizer(tok.vocab, tok.merges, special_tokens=tok.special_tokens, pattern="gpt4")
    s = "To be, or not to be: that is the question.<s><s><|endoftext|>"
    assert again.encode(s, allowed_special="all") == tok.encode(s, allowed_special="all")
    assert again.vocab_size == tok.vocab_size


def test_special_tokens_as_list_find_or_append() -> None:
    vocab = dict(BYTES) | {256: b"<x>"}
    t = Tokenizer(vocab, [], special_tokens=["<x>", "<y>"], pattern=None)
    assert t.special_tokens == {"<x>": 256, "<y>": 257}
    assert t.vocab_size == 258
    assert t.encode("a<y><x>", allowed_special="all") == [97, 257, 256]


def test_merges_must_name_known_tokens() -> None:
    with pytest.raises(VocabError, match="not in the vocabulary"):
        Tokenizer(BYTES, [(b"a", b"zz")])
    with pytest.raises(VocabError, match="not in the vocabulary"):
        Tokenizer(BYTES, [(b"a", b"b")])  # b"ab" is missing
    with pytest.raises(VocabError, match="single byte 0x00"):
        Tokenizer({i: bytes([i]) for i in range(1, 256)}, [])


def test_longest_special_wins(tok: Tokenizer) -> None:
    sp = tok.special_tokens
    assert tok.encode("<s><s><s>", allowed_special="all") == [sp["<s><s>"], sp["<s>"]]
    # Only the shorter one allowed: it matches twice, then the last one.
    assert tok.encode("<s><s>", allowed_special={"<s>"}, disallowed_special=()) == [sp["<s>"], sp["<s>"]]


def test_disallowed_special_raises_naming_token(tok: Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialTokenError, match=r"'<\|endoftext\|>'.*allowed_special"):
        tok.encode("hi <|endoftext|>")
    with pytest.raises(ValueError):
        tok.encode("x <s>", allowed_special={"<|endoftext|>"})
    # Custom disallowed strings are searched like tiktoken does.
    with pytest.raises(DisallowedSpecialTokenError, match="forbidden"):
        tok.encode("a forbidden word", disallowed_special={"forbidden"})
    assert tok.encode("hi <|endoftext|>", disallowed_special=()) == tok.encode_ordinary("hi <|endoftext|>")


def test_encode_batch_equals_encode(tok: Tokenizer) -> None:
    texts = ["first text", "", "second <|endoftext|> text", "x" * 5000]
    expected = [tok.encode(t, allowed_special="all") for t in texts]
    for n in (None, 1, 2, 3):
        assert tok.encode_batch(texts, num_threads=n, allowed_special="all") == expected
    with pytest.raises(ValueError, match="num_threads"):
        tok.encode_batch(texts, num_threads=0)
    with pytest.raises(DisallowedSpecialTokenError):
        tok.encode_batch(texts)


@given(parts=st.lists(text, max_size=8), seps=st.lists(st.sampled_from(["\n", "\nA", ".\nb", "<s>", "  "]), max_size=8))
def test_encode_iterable_equals_encode(tok: Tokenizer, parts: list[str], seps: list[str]) -> None:
    chunks = [p + s for p, s in zip(parts, seps)] + parts[len(seps) :]
    whole = "".join(chunks)
    assert list(tok.encode_iterable(chunks, allowed_special="all")) == tok.encode(whole, allowed_special="all")


def test_encode_iterable_streams_large_input(tok: Tokenizer) -> None:
    line = "Some line of text, with words.\nAnd another one\n"
    chunks = (line for _ in range(20_000))
    it = tok.encode_iterable(chunks)
    first = next(it)  # produced before the generator is exhausted
    rest = list(it)
    assert [first, *rest] == tok.encode(line * 20_000)


def test_lone_surrogates_become_replacement_char(tok: Tokenizer) -> None:
    assert tok.encode("a\udc80b") == tok.encode("a\ufffdb")
    assert tok.encode_batch(["\ud800"]) == [tok.encode("\ufffd")]


@given(s=text)
def test_decode_roundtrip(tok: Tokenizer, s: str) -> None:
    assert tok.decode(tok.encode_ordinary(s)) == s


def test_decode_unknown_id_names_it(tok: Tokenizer) -> None:
    with pytest.raises(UnknownTokenError, match="123456"):
        tok.decode([1, 123456])
    with pytest.raises(UnknownTokenError, match="-1"):
        tok.decode([-1])
    with pytest.raises(TypeError):
        tok.decode(["a"])  # type: ignore[list-item]
    with pytest.raises(UnknownTokenError):
        tok.token_bytes(10**9)


def test_decode_errors_policy(tok: Tokenizer) -> None:
    ids = tok.encode("é")
    partial = [i for i in ids for _ in range(1)]
    assert tok.decode_bytes(partial) == "é".encode()
    assert tok.decode([0xC3]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode([0xC3], errors="strict")


def test_stream_decoder_holds_partial_utf8(tok: Tokenizer) -> None:
    d = tok.decoder()
    assert d.feed([0xE4]) == ""  # first byte of 中
    assert d.feed([0xB8]) == ""
    assert d.feed([0xAD, 97]) == "中a"
    assert d.feed([0xE4]) == ""
    assert d.flush() == "\ufffd"


def test_token_bytes_and_specials(tok: Tokenizer) -> None:
    assert tok.token_bytes(tok.special_tokens["<s>"]) == b"<s>"
    assert tok.token_bytes(97) == b"a"
    assert tok.decode([tok.special_tokens["<|endoftext|>"]]) == "<|endoftext|>"


def test_hand_made_merges_follow_merge_order() -> None:
    # "abc" is a token via (ab, c) but (b, c) is merged first, so "abc" never forms.
    vocab = dict(BYTES) | {256: b"bc", 257: b"ab", 258: b"abc"}
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    t = Tokenizer(vocab, merges, pattern=None)
    assert t.encode("abc") == [97, 256] == oracle.encode("abc", merges, None)[:1] + [256]


def test_wrong_argument_types() -> None:
    t = Tokenizer(BYTES, [])
    with pytest.raises(TypeError):
        t.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        t.encode_batch("one string")
    with pytest.raises(TypeError):
        Tokenizer(BYTES, [], special_tokens="<s>")


def test_bad_ids_in_constructor() -> None:
    with pytest.raises(VocabError, match="too sparse"):
        Tokenizer(BYTES | {4_000_000_000: b"xy"}, [])
    with pytest.raises(VocabError, match=r"\[0, 2\*\*32\)"):
        Tokenizer(BYTES, [], special_tokens={"<s>": -3})
    with pytest.raises(VocabError, match="already uses"):
        Tokenizer(BYTES, [], special_tokens={"<s>": 97})


def test_batches_name_the_first_disallowed_special(tok: Tokenizer) -> None:
    """The batch calls check every text in one call: the first text holding a disallowed special
    token is reported, with the token it holds; a text that is not UTF-8 (a lone surrogate)
    is checked as a single call would check it; allowed or ordinary batches encode."""
    texts = ["plain", "still plain", "has <s><s> here <|endoftext|>", "<|endoftext|> later"]
    for call in (tok.encode_batch, tok.encode_batch_numpy):
        with pytest.raises(DisallowedSpecialTokenError) as err:
            call(texts)
        assert err.value.token == "<s><s>"
        with pytest.raises(DisallowedSpecialTokenError) as err:
            call(["lone \ud800 surrogate", "x <|endoftext|>"])
        assert err.value.token == "<|endoftext|>"
        with pytest.raises(DisallowedSpecialTokenError) as err:
            call(texts, allowed_special={"<s><s>", "<s>"})
        assert err.value.token == "<|endoftext|>"
    assert tok.encode_batch(texts, disallowed_special=()) == [tok.encode_ordinary(t) for t in texts]
    assert tok.encode_batch(texts[:2]) == [tok.encode_ordinary(t) for t in texts[:2]]


def test_disallowed_error_carries_the_token(tok: Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialTokenError) as err:
        tok.encode("x<s><s>y")
    assert err.value.token == "<s><s>"
