"""The API users type in tiktoken and Hugging Face tokenizers, checked against those libraries."""

from __future__ import annotations

import copy
import json
import multiprocessing
import pickle

import numpy as np
import pytest
import tokenizers

import bytepair
from bytepair.formats.hf import to_hf_dict
from tests.interop_texts import DATA, reference, texts, training_text

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def trained() -> bytepair.Tokenizer:
    tok = bytepair.train_from_iterator(training_text(), vocab_size=600, special_tokens=["<|endoftext|>", "<pad>"])
    return tok.with_special_tokens(roles={"eos": "<|endoftext|>", "pad": "<pad>"})


@pytest.mark.parametrize("name", NAMES)
def test_sizes_and_specials_match_tiktoken(name: str) -> None:
    tok, enc = bytepair.get_encoding(name), reference(name)
    assert tok.n_vocab == enc.n_vocab == len(tok)
    assert tok.max_token_value == enc.max_token_value
    assert tok.eot_token == enc.eot_token
    assert tok.special_tokens_set == enc.special_tokens_set
    # vocab_size counts the ids that exist; n_vocab sizes an embedding table.
    assert tok.vocab_size == len(enc._mergeable_ranks) + len(enc._special_tokens)


def test_cl100k_vocab_size_is_not_n_vocab() -> None:
    tok = bytepair.get_encoding("cl100k_base")
    assert (tok.vocab_size, tok.n_vocab, tok.max_token_value) == (100_261, 100_277, 100_276)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_single_tokens_match_tiktoken(name: str) -> None:
    tok, enc = bytepair.get_encoding(name), reference(name)
    for i in [*range(0, enc.n_vocab, 997), *enc._special_tokens.values()]:
        try:
            want = enc.decode_single_token_bytes(i)
        except KeyError:
            with pytest.raises(bytepair.UnknownTokenError):
                tok.decode_single_token_bytes(i)
            continue
        assert tok.decode_single_token_bytes(i) == want
        assert tok.decode_single_token_bytes(np.int64(i)) == want
        assert tok.encode_single_token(want) == enc.encode_single_token(want)
    for text in enc.special_tokens_set:
        assert tok.encode_single_token(text) == enc.encode_single_token(text)
    with pytest.raises(bytepair.VocabError, match="not a single token"):
        tok.encode_single_token("not one token at all")


@pytest.mark.parametrize("name", NAMES)
def test_batches_match_tiktoken(name: str) -> None:
    tok, enc = bytepair.get_encoding(name), reference(name)
    batch = texts()[:200]
    assert tok.encode_ordinary_batch(batch) == enc.encode_ordinary_batch(batch)
    ids = enc.encode_ordinary_batch(batch)
    assert tok.decode_batch(ids) == enc.decode_batch(ids)
    assert tok.decode_tokens_bytes(ids[3]) == enc.decode_tokens_bytes(ids[3])
    with_special = "a<|endoftext|>b"
    assert tok.encode_ordinary_batch([with_special]) == enc.encode_ordinary_batch([with_special])


def test_numpy_ids_are_accepted_everywhere() -> None:
    tok = bytepair.get_encoding("cl100k_base")
    ids = tok.encode("Hello, numpy! ünïcode 漢字")
    for dtype in (np.int32, np.int64, np.uint32, np.uint16 if max(ids) < 2**16 else np.uint32):
        arr = np.array(ids, dtype=dtype)
        assert tok.decode(arr) == tok.decode(ids)
        assert tok.decode_bytes(arr) == tok.decode_bytes(ids)
        assert tok.decode_tokens_bytes(arr) == tok.decode_tokens_bytes(ids)
        assert tok.decode_batch(np.stack([arr, arr])) == [tok.decode(ids)] * 2
        assert tok.token_bytes(arr[0]) == tok.token_bytes(ids[0])
    dec = tok.decoder()
    assert dec.feed(np.array(ids[:2])) + dec.feed(np.int64(ids[2])) + dec.feed(np.array(ids[3:])) == tok.decode(ids)
    with pytest.raises(TypeError, match="float"):
        tok.decode(np.array([1.0, 2.0]))
    with pytest.raises(bytepair.UnknownTokenError):
        tok.decode(np.array([-1]))


def test_token_to_id_and_id_to_token_match_hugging_face(trained: bytepair.Tokenizer) -> None:
    for tok in (trained, bytepair.load(DATA / "hf_split_style/tokenizer.json")):
        hf = tokenizers.Tokenizer.from_str(json.dumps(to_hf_dict(tok)))
        for i in range(tok.n_vocab + 2):
            assert tok.id_to_token(i) == hf.id_to_token(i)
            s = hf.id_to_token(i)
            if s is not None:
                assert tok.token_to_id(s) == hf.token_to_id(s) == i
        assert tok.token_to_id("no such token") is None
        assert tok.token_to_id(b"e") == hf.token_to_id("e")


@pytest.mark.parametrize("fixture", ["hf_gpt2_style", "hf_split_style"])
def test_offsets_match_hugging_face(fixture: str) -> None:
    path = DATA / fixture / "tokenizer.json"
    tok, hf = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    for text in texts():
        ids, offsets = tok.encode_with_offsets(text, allowed_special="all")
        got = hf.encode(text, add_special_tokens=False)
        assert (ids, offsets) == (got.ids, [tuple(o) for o in got.offsets])


def test_offsets_of_a_trained_tokenizer_match_hugging_face(trained: bytepair.Tokenizer) -> None:
    hf = tokenizers.Tokenizer.from_str(json.dumps(to_hf_dict(trained)))
    for text in texts()[:300] + ["x<|endoftext|>y <pad>"]:
        ids, offsets = trained.encode_with_offsets(text, allowed_special="all")
        got = hf.encode(text, add_special_tokens=False)
        assert (ids, offsets) == (got.ids, [tuple(o) for o in got.offsets])


def test_pickle_deepcopy_and_equality(trained: bytepair.Tokenizer) -> None:
    for tok in (trained, bytepair.get_encoding("gpt2"), bytepair.load(DATA / "hf_split_style/tokenizer.json")):
        for again in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok), copy.copy(tok)):
            assert again == tok and hash(again) == hash(tok)
            assert again.encode(texts()[-1], allowed_special="all") == tok.encode(texts()[-1], allowed_special="all")
            assert again.special_tokens_map == tok.special_tokens_map
    assert pickle.loads(pickle.dumps(bytepair.get_encoding("o200k_base"))) is bytepair.get_encoding("o200k_base")
    other = trained.with_special_tokens(["<extra>"])
    assert other != trained
    assert trained != bytepair.get_encoding("gpt2")
    assert bytepair.Tokenizer(trained.vocab, trained.merges, special_tokens=trained.special_tokens, pattern="gpt4") != trained
    rebuilt = bytepair.Tokenizer(trained.vocab, trained.merges, special_tokens=trained.special_tokens, pattern="gpt4")
    assert rebuilt == rebuilt.with_special_tokens()


def _encode_in_worker(tok: bytepair.Tokenizer, text: str) -> tuple[bytepair.Tokenizer, list[int]]:
    return tok, tok.encode(text, allowed_special="all")


def test_spawned_worker_gets_an_equal_tokenizer(trained: bytepair.Tokenizer) -> None:
    text = texts()[-1][:5000] + "<|endoftext|>"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        back, ids = pool.apply(_encode_in_worker, (trained, text))
        cl_back, cl_ids = pool.apply(_encode_in_worker, (bytepair.get_encoding("cl100k_base"), text))
    assert back == trained and ids == trained.encode(text, allowed_special="all")
    assert cl_ids == reference("cl100k_base").encode(text, allowed_special="all")
    assert cl_back == bytepair.get_encoding("cl100k_base")


def test_eot_token_follows_the_eos_role(trained: bytepair.Tokenizer) -> None:
    assert trained.eot_token == trained.special_tokens["<|endoftext|>"]
    tok = trained.with_special_tokens(["</s>"], roles={"eos": "</s>"})
    assert tok.eot_token == tok.special_tokens["</s>"]
    bare = bytepair.train_from_iterator(["abc abc"], vocab_size=258)
    with pytest.raises(bytepair.VocabError, match="end-of-text"):
        bare.eot_token
