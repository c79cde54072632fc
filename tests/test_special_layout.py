"""Special tokens at chosen ids at training time (special_tokens={token: id}, --special-first):
the ordinary tokens are those of the default layout, moved to the ids left free, and every
writer and reader keeps the layout (bytepair JSON, Hugging Face tokenizer.json, checked with
tokenizers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.cli import main

SAMPLE = Path(bytepair.__file__).parent / "data" / "tinyshakespeare.txt"
TEXT = SAMPLE.read_text(encoding="utf-8")[:60_000]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXTS = st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=50) | st.sampled_from(["To be, or not to be", "<pad> a<|endoftext|>b"])


@pytest.fixture(scope="module")
def plain() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator([TEXT], vocab_size=300, progress=False)


@pytest.fixture(scope="module")
def first() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator([TEXT], vocab_size=302, special_tokens={"<pad>": 0, "<unk>": 1}, progress=False)


@pytest.fixture(scope="module")
def lecture() -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(
        [TEXT], vocab_size=302, special_tokens={"<|endoftext|>": 256}, reserved_special_tokens=1, progress=False
    )


def test_the_ids_are_where_they_were_asked_for(first: bytepair.Tokenizer, lecture: bytepair.Tokenizer, plain: bytepair.Tokenizer) -> None:
    assert first.special_tokens == {"<pad>": 0, "<unk>": 1}
    assert [first.encode_single_token(bytes([b])) for b in range(256)] == list(range(2, 258))
    assert first.merges == plain.merges
    assert lecture.special_tokens["<|endoftext|>"] == 256
    assert [lecture.encode_single_token(bytes([b])) for b in range(256)] == list(range(256))
    first_merge = b"".join(plain.merges[0])
    assert lecture.encode_single_token(first_merge) == 257
    assert lecture.reserved_special_tokens == ["<|reserved_0|>"] and lecture.special_tokens["<|reserved_0|>"] == 301
    assert lecture.vocab_size == first.vocab_size == 302


@SETTINGS
@given(text=TEXTS)
def test_the_tokens_are_those_of_the_default_layout(
    text: str, plain: bytepair.Tokenizer, first: bytepair.Tokenizer, lecture: bytepair.Tokenizer
) -> None:
    want = plain.decode_tokens_bytes(plain.encode_ordinary(text))
    for tok in (first, lecture):
        ids = tok.encode_ordinary(text)
        assert tok.decode_tokens_bytes(ids) == want
        assert tok.decode(ids) == plain.decode(plain.encode_ordinary(text))
    assert lecture.encode("a<|endoftext|>", allowed_special="all")[-1] == 256


@SETTINGS
@given(text=TEXTS)
def test_files_keep_the_layout(text: str, first: bytepair.Tokenizer, lecture: bytepair.Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    d = tmp_path_factory.mktemp("layout")
    for n, tok in enumerate((first, lecture)):
        path = d / f"t{n}.json"
        tok.save(path)
        assert bytepair.load(path).encode_ordinary(text) == tok.encode_ordinary(text)
        hf_path = d / f"hf{n}.json"
        bytepair.save_hf(tok, hf_path)
        hf = tokenizers.Tokenizer.from_file(str(hf_path))
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allowed_special="all")


def test_bad_layouts_are_named() -> None:
    with pytest.raises(bytepair.BytepairError, match="both ask for the id 3"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, special_tokens={"<a>": 3, "<b>": 3})
    with pytest.raises(bytepair.BytepairError, match=r"in \[0, vocab_size=300\)"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, special_tokens={"<a>": 300})
    with pytest.raises(bytepair.BytepairError, match="an int"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, special_tokens={"<a>": True})  # type: ignore[dict-item]
    base = bytepair.train_from_iterator(["ab ab ab"], vocab_size=258, progress=False)
    with pytest.raises(bytepair.BytepairError, match="training from bytes"):
        bytepair.train_from_iterator(["ab"], vocab_size=300, special_tokens={"<a>": 0}, base=base)


def test_cli_special_first(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "tok.json"
    argv = ["train", str(corpus), "--vocab-size", "302", "--special", "<pad>", "--special", "<unk>", "--special-first", "-o", str(out)]
    assert main(argv) == 0
    tok = bytepair.load(out)
    assert tok.special_tokens == {"<pad>": 0, "<unk>": 1}
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["special_tokens"] == {"<pad>": 0, "<unk>": 1}
