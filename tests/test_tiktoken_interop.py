"""tiktoken both ways: Encodings built from bytepair tokenizers, rank files, merges recovered from ranks."""

from __future__ import annotations

import os
import pathlib

import pytest
import tiktoken
import tiktoken.load

import bytepair
from bytepair.formats.tiktoken import check_ranks_agree, to_tiktoken
from tests.interop_texts import reference, texts, training_text


@pytest.fixture(scope="module", params=["gpt2", "gpt4", "o200k"])
def trained(request: pytest.FixtureRequest) -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(
        training_text(), vocab_size=700, pattern=request.param, special_tokens=["<|endoftext|>", "<|im_start|>"]
    )


def test_to_tiktoken_encodes_like_bytepair(trained: bytepair.Tokenizer) -> None:
    enc = to_tiktoken(trained, name="mine")
    assert enc.n_vocab == trained.n_vocab and enc.eot_token == trained.eot_token
    for text in texts() + ["x<|endoftext|>y<|im_start|>"]:
        ids = trained.encode(text, allowed_special="all")
        assert enc.encode(text, allowed_special="all") == ids
        assert enc.decode(ids) == trained.decode(ids)


def test_dump_tiktoken_is_read_by_tiktoken(trained: bytepair.Tokenizer, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "mine.tiktoken"
    bytepair.dump_tiktoken(trained, path)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding("mine", pat_str=trained.pattern or "", mergeable_ranks=ranks, special_tokens=trained.special_tokens)
    for text in texts()[:100]:
        assert enc.encode_ordinary(text) == trained.encode_ordinary(text)
    back = bytepair.load(path, pattern=trained.pattern, special_tokens=trained.special_tokens)
    # A rank file read back gives the merge list it came from.
    assert back.merges == trained.merges


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_merges_recovered_from_ranks_encode_like_tiktoken(name: str) -> None:
    ranks_tok = bytepair.get_encoding(name)
    merges = ranks_tok._merge_list()
    as_merges = bytepair.Tokenizer(
        ranks_tok.vocab, merges, special_tokens=ranks_tok.special_tokens, pattern=ranks_tok.pattern
    )
    enc = reference(name)
    for text in texts()[:200] + [texts()[-1]]:
        assert as_merges.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    check_ranks_agree(as_merges)  # and it can be written back as ranks


def test_a_merge_list_that_ranks_cannot_express_is_refused(tmp_path: pathlib.Path) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    tok = bytepair.Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], pattern=None)
    # The merge list makes [a, bc] of "abc"; tiktoken with these ids as ranks makes [abc].
    enc = tiktoken.Encoding("x", pat_str=r"[\s\S]+", mergeable_ranks={b: i for i, b in vocab.items()}, special_tokens={})
    assert tok.encode("abc") == [97, 256] and enc.encode("abc") == [258]
    with pytest.raises(bytepair.FormatError, match=r"token 258 \(b'abc'\)"):
        bytepair.dump_tiktoken(tok, tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()
    with pytest.raises(bytepair.FormatError):
        to_tiktoken(tok)


def test_rank_file_of_a_shipped_encoding_is_recognised(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cl100k_base.tiktoken"
    bytepair.dump_tiktoken(bytepair.get_encoding("cl100k_base"), path)
    assert bytepair.load(path) is bytepair.get_encoding("cl100k_base")
    bytepair.dump_tiktoken(bytepair.get_encoding("gpt2"), tmp_path / "other.tiktoken")
    (tmp_path / "other.tiktoken").write_bytes((tmp_path / "other.tiktoken").read_bytes()[:-10])
    with pytest.raises(bytepair.FormatError, match="pattern="):
        bytepair.load(tmp_path / "other.tiktoken")


def test_training_continues_from_a_rank_encoding(tmp_path: pathlib.Path) -> None:
    small = bytepair.train_from_iterator(training_text()[:300], vocab_size=500, special_tokens=["<|endoftext|>"])
    bytepair.dump_tiktoken(small, tmp_path / "small.tiktoken")
    base = bytepair.load(tmp_path / "small.tiktoken", pattern=small.pattern, special_tokens=small.special_tokens)
    assert base._merges is None  # a rank model
    as_merges = bytepair.Tokenizer(base.vocab, base.merges, special_tokens=base.special_tokens, pattern=base.pattern)
    docs = training_text()[300:600]
    tok = bytepair.train_from_iterator(docs, vocab_size=base.vocab_size + 8, base=base)
    same = bytepair.train_from_iterator(docs, vocab_size=base.vocab_size + 8, base=as_merges)
    assert tok.merges[: len(base.merges)] == base.merges
    assert tok.merges == same.merges and len(tok.merges) == len(base.merges) + 8
    assert all(tok.vocab[i] == b for i, b in base.vocab.items())
    for text in texts()[:50]:
        assert tok.decode(tok.encode(text, allowed_special="all")) == text
