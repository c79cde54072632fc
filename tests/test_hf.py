"""Hugging Face tokenizer.json both ways, proven by running ``tokenizers`` on the same text."""

from __future__ import annotations

import copy
import json
import pathlib
from typing import Any

import pytest
import tokenizers
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, pre_tokenizers

import bytepair
from bytepair import _core
from bytepair.formats._regex_dialect import from_oniguruma, to_oniguruma
from bytepair.formats.gpt2 import BYTE_TO_UNICODE, bytes_to_unicode
from bytepair.formats.hf import from_hf_dict, save_hf, to_hf_dict
from tests.interop_texts import DATA, texts, training_text
from tests.strategies import text as any_text

FIXTURES = ["hf_gpt2_style", "hf_split_style", "hf_transformers_gpt2"]


def hf_of(tok: bytepair.Tokenizer) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(json.dumps(to_hf_dict(tok)))


def assert_same(tok: bytepair.Tokenizer, hf: tokenizers.Tokenizer, text: str) -> None:
    ids = tok.encode(text, allowed_special="all")
    assert ids == hf.encode(text, add_special_tokens=False).ids, text[:200]
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


# ------------------------------------------------------------------ the pattern dialects


def onig_split(pattern: str, text: str) -> list[str]:
    return [p for p, _ in pre_tokenizers.Split(Regex(pattern), behavior="isolated").pre_tokenize_str(text)]


@pytest.mark.parametrize("preset", ["gpt2", "gpt4", "o200k"])
def test_rewritten_presets_split_like_bytepair_in_oniguruma(preset: str) -> None:
    rewritten = to_oniguruma(bytepair.PATTERNS[preset])
    for text in texts():
        assert onig_split(rewritten, text) == _core.split_pieces(text, bytepair.PATTERNS[preset])


@given(any_text)
def test_rewritten_presets_split_like_bytepair_on_any_text(text: str) -> None:
    for preset in ("gpt2", "gpt4", "o200k"):
        assert onig_split(to_oniguruma(bytepair.PATTERNS[preset]), text) == _core.split_pieces(text, bytepair.PATTERNS[preset])


def test_copying_the_pattern_unchanged_would_split_differently() -> None:
    # The finding: Oniguruma reads cl100k's possessive \p{N}{1,3}+ as (\p{N}{1,3})+.
    text = "in 2024 there were 1234567 of them \n"
    assert onig_split(bytepair.PATTERNS["gpt4"], text) != _core.split_pieces(text, bytepair.PATTERNS["gpt4"])
    assert onig_split(to_oniguruma(bytepair.PATTERNS["gpt4"]), text) == _core.split_pieces(text, bytepair.PATTERNS["gpt4"])


@pytest.mark.parametrize(
    ("onig", "text"),
    [
        (r"\p{N}{1,3}+|\D+", "ab 12345 c"),
        (r"\s+$|\S+|\s", "a  \n b  \n"),
        (r"^\s+|\S+|\s", " a\n  b"),
        (r"(?i:'s|'t)|[a-z]+|.", "It's TOM'S"),
    ],
)
def test_oniguruma_patterns_read_back_with_their_meaning(onig: str, text: str) -> None:
    assert _core.split_pieces(text, from_oniguruma(onig)) == onig_split(onig, text)


def test_byte_table_is_gpt2s() -> None:
    assert set(BYTE_TO_UNICODE.values()) == set(pre_tokenizers.ByteLevel.alphabet())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    sample = "".join(chr(c) for c in range(1, 0x800) if not 0xD800 <= c < 0xE000) + "😀"
    assert [p for p, _ in byte_level.pre_tokenize_str(sample)] == [bytes_to_unicode(sample.encode())]


# ------------------------------------------------------------------ reading real files


@pytest.mark.parametrize("fixture", FIXTURES)
def test_imported_files_encode_like_tokenizers(fixture: str) -> None:
    path = DATA / fixture / "tokenizer.json"
    tok, hf = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    for text in texts() + ["<|endoftext|>a<|begin_of_text|> <tool>x<|eot_id|>"]:
        assert_same(tok, hf, text)


def test_split_style_file_keeps_its_layout() -> None:
    tok = bytepair.load(DATA / "hf_split_style/tokenizer.json")
    assert tok.normalization == "nfc"
    assert tok.pattern_name is None and tok.pattern is not None
    assert set(tok.special_tokens) == {"<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<tool>"}
    assert json.loads((DATA / "hf_split_style/tokenizer.json").read_text())["model"]["ignore_merges"] is True


def test_gpt2_style_file_uses_the_gpt2_preset() -> None:
    assert bytepair.load(DATA / "hf_gpt2_style/tokenizer.json").pattern_name == "gpt2"


# ------------------------------------------------------------------ writing


@pytest.fixture(scope="module", params=["gpt2", "gpt4", "o200k", None, r"\p{L}+|\p{N}{1,2}+|[^\s\p{L}\p{N}]+|\s+$|\s+"])
def trained(request: pytest.FixtureRequest) -> bytepair.Tokenizer:
    return bytepair.train_from_iterator(
        training_text(), vocab_size=520, pattern=request.param, special_tokens=["<|endoftext|>", "<|fim|>"]
    )


def test_exported_tokenizers_encode_like_bytepair(trained: bytepair.Tokenizer) -> None:
    hf = hf_of(trained)
    for text in texts() + ["a<|endoftext|>b<|fim|>"]:
        assert_same(trained, hf, text)
    assert from_hf_dict(to_hf_dict(trained)) == trained


@pytest.mark.parametrize("normalization", ["nfc", "nfkc+lowercase"])
def test_normalization_is_exported(normalization: str) -> None:
    tok = bytepair.train_from_iterator(training_text()[:200], vocab_size=400, normalization=normalization)
    hf = hf_of(tok)
    # capital sigmas ending words: tokenizers' Lowercase has no final form (each character alone)
    for text in texts()[:60] + ["ÉCOLE ﬁne Ⅻ", "ΟΔΟΣ ΣΑΣ. ΌΣΟΣ\u0301Σ x"]:
        assert_same(tok, hf, text)
    assert from_hf_dict(to_hf_dict(tok)) == tok


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_pretrained_encodings_export_with_ignore_merges(name: str) -> None:
    tok = bytepair.get_encoding(name)
    doc = to_hf_dict(tok)
    assert doc["model"]["ignore_merges"] is True
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for text in texts()[:100] + [texts()[-1]]:
        assert_same(tok, hf, text)
    back = from_hf_dict(doc)
    assert back.encode(texts()[-1], allowed_special="all") == tok.encode(texts()[-1], allowed_special="all")


def test_save_hf_and_load_back(tmp_path: pathlib.Path, trained: bytepair.Tokenizer) -> None:
    save_hf(trained, tmp_path / "tokenizer.json")
    assert bytepair.load(tmp_path / "tokenizer.json") == trained
    assert bytepair.load_hf(tmp_path / "tokenizer.json") == trained


# ------------------------------------------------------------------ bad files


def base_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "hf_split_style/tokenizer.json").read_text(encoding="utf-8"))
    return doc


def edit(path: str, value: Any) -> dict[str, Any]:
    doc = base_doc()
    node: Any = doc
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if k.isdigit() else node[k]
    last = keys[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return doc


BAD = [
    ("normalizer", {"type": "Replace", "pattern": {"String": "a"}, "content": "b"}, "normalizer: Replace"),
    ("normalizer", {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}]}, "normalizer.normalizers[1]: Strip"),
    ("pre_tokenizer.pretokenizers.0.behavior", "Removed", "pre_tokenizer.pretokenizers[0].behavior"),
    ("pre_tokenizer.pretokenizers.1.add_prefix_space", True, "pre_tokenizer.pretokenizers[1].add_prefix_space"),
    # (a Metaspace file without ByteLevel is SentencePiece-style: bytepair.formats.hf_spm reads it)
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Metaspace", "replacement": "▁"}]},
     "pre_tokenizer.pretokenizers[1]: Metaspace"),
    ("pre_tokenizer", {"type": "Whitespace"}, "pre_tokenizer: Whitespace"),
    ("decoder", {"type": "Metaspace"}, "decoder: Metaspace"),
    ("model.type", "Unigram", "model.vocab: must be a non-empty list of [piece, score]"),  # read by hf_spm
    ("model.dropout", 0.1, "model.dropout"),
    ("model.byte_fallback", True, "model.byte_fallback"),
    ("added_tokens.0.lstrip", "yes", "added_tokens[0].lstrip must be true or false"),  # lstrip=true is read
    ("added_tokens.1.id", 800, "the id 800 is given to both"),
    ("added_tokens.0.id", 300, "has the id 300, which is the ordinary token"),
    ("added_tokens.0.id", 2**31, "far beyond the"),
    ("model.vocab.Ġthe", 2**31, "too sparse"),
    ("model.merges.5", ["Ġt", "zzzz"], "'zzzz' is not a token"),
    ("model.merges.7", "nonsense", "expected two tokens"),
    ("model.merges.9", ["a", "b", "c"], "model.merges[9]"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=[b[0] + ":" + str(b[2])[:20] for b in BAD])
def test_unsupported_or_broken_parts_name_the_json_path(path: str, value: Any, message: str, tmp_path: pathlib.Path) -> None:
    f = tmp_path / "tokenizer.json"
    f.write_text(json.dumps(edit(path, value)), encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match=str(f).replace("\\", "\\\\")) as e:
        bytepair.load(f)
    assert message in str(e.value)


def test_duplicate_and_missing_tokens(tmp_path: pathlib.Path) -> None:
    doc = base_doc()
    vocab = doc["model"]["vocab"]
    first, second = list(vocab)[300:302]
    vocab[second] = vocab[first]
    f = tmp_path / "tokenizer.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match=f"both have the id {vocab[first]}"):
        bytepair.load(f)
    doc = base_doc()
    del doc["model"]["vocab"]["Ġ"]
    f.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match="no token for the byte 0x20"):
        bytepair.load(f)


def test_truncated_file_is_a_format_error(tmp_path: pathlib.Path) -> None:
    data = (DATA / "hf_split_style/tokenizer.json").read_bytes()
    for cut in (10, len(data) // 2, len(data) - 3):
        f = tmp_path / "tokenizer.json"
        f.write_bytes(data[:cut])
        with pytest.raises(bytepair.FormatError, match="not valid JSON"):
            bytepair.load(f)


def test_exported_json_is_not_changed_by_loading() -> None:
    tok = bytepair.load(DATA / "hf_gpt2_style/tokenizer.json")
    doc = to_hf_dict(tok)
    again = copy.deepcopy(doc)
    from_hf_dict(doc)
    assert doc == again


def test_ignore_merges_tokens_the_merges_do_not_make_are_warned_about(tmp_path: pathlib.Path) -> None:
    # Merges b+c, a+b, ab+c: they make "a", "bc" of the piece "abc", while Hugging Face with
    # ignore_merges takes the token "abc" itself.
    vocab = {bytes_to_unicode(bytes([i])): i for i in range(256)} | {"bc": 256, "ab": 257, "abc": 258}
    doc = to_hf_dict(bytepair.train_from_iterator(["x"], vocab_size=256, pattern="gpt2"))
    doc["model"].update(vocab=vocab, merges=[["b", "c"], ["a", "b"], ["ab", "c"]], ignore_merges=True)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    assert hf.encode("abc").ids == [258]
    with pytest.warns(bytepair.BytepairWarning, match="1 token.*'abc'"):
        tok = from_hf_dict(doc)
    assert tok.encode("abc") == [97, 256]
    doc["model"]["ignore_merges"] = False
    assert hf.encode("abc").ids != tokenizers.Tokenizer.from_str(json.dumps(doc)).encode("abc").ids
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_hf_dict(doc).encode("abc") == tokenizers.Tokenizer.from_str(json.dumps(doc)).encode("abc").ids
        bytepair.load(DATA / "hf_split_style/tokenizer.json")  # a file trained by tokenizers: no warning


QWEN2_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


@pytest.mark.parametrize("layout", ["gpt-neox", "qwen2", "merges-as-strings", "no-split"])
def test_other_real_layouts_encode_like_tokenizers(layout: str) -> None:
    if layout == "gpt-neox":  # ByteLevel(use_regex=True) with an NFC normalizer
        doc = json.loads((DATA / "hf_gpt2_style/tokenizer.json").read_text(encoding="utf-8"))
        doc["normalizer"] = {"type": "NFC"}
    else:
        doc = base_doc()
    if layout == "qwen2":  # Split with single digits, NFC, ignore_merges
        doc["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": QWEN2_PATTERN}
    if layout == "merges-as-strings":  # files written by tokenizers before 0.20
        doc["model"]["merges"] = [" ".join(m) for m in doc["model"]["merges"]]
    if layout == "no-split":
        doc["pre_tokenizer"] = doc["pre_tokenizer"]["pretokenizers"][1]
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok = from_hf_dict(doc)
    for text in texts():
        assert_same(tok, hf, text)


def test_wordpiece_files_are_read_by_load_not_by_the_bpe_reader(tmp_path: pathlib.Path) -> None:
    wp = bytepair.train_wordpiece_from_iterator(["the quick brown fox jumps over the lazy dog"] * 20, vocab_size=60)
    directory = tmp_path / "bert"
    wp.save_pretrained(directory)
    with pytest.raises(bytepair.FormatError, match="model is WordPiece.*bytepair.load"):
        bytepair.load_hf(directory / "tokenizer.json")
    for path in (directory, directory / "tokenizer.json", directory / "vocab.txt"):
        back = bytepair.load(path)
        assert isinstance(back, bytepair.WordPieceTokenizer), path
        assert back.encode("the lazy fox") == wp.encode("the lazy fox")
    wp.save(tmp_path / "wp.json")
    assert isinstance(bytepair.load(tmp_path / "wp.json"), bytepair.WordPieceTokenizer)
