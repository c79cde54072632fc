"""Readers given JSON values of the wrong type: a clear FormatError naming the file and the
field, never a TypeError or a value read by its truth value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair.errors import FormatError


@pytest.fixture(scope="module")
def hf_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tok = bytepair.train_from_iterator(["hello world, ab ab abc"] * 10, vocab_size=265, special_tokens=["<|eot|>"])
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    bytepair.save_hf(tok, path)
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


# A boolean given as a string or a number: Hugging Face refuses it; read by its truth value,
# "false" would be true.
FLAGS = {
    "pre_tokenizer.pretokenizers[1].use_regex": lambda doc, v: doc["pre_tokenizer"]["pretokenizers"][1].update(use_regex=v),
    "pre_tokenizer.pretokenizers[1].add_prefix_space": lambda doc, v: doc["pre_tokenizer"]["pretokenizers"][1].update(add_prefix_space=v),
    "pre_tokenizer.pretokenizers[0].invert": lambda doc, v: doc["pre_tokenizer"]["pretokenizers"][0].update(invert=v),
    "added_tokens[0].lstrip": lambda doc, v: doc["added_tokens"][0].update(lstrip=v),
    "added_tokens[0].single_word": lambda doc, v: doc["added_tokens"][0].update(single_word=v),
    "model.ignore_merges": lambda doc, v: doc["model"].update(ignore_merges=v),
}


@pytest.mark.parametrize("value", ["false", 0, 1, [], {}])
@pytest.mark.parametrize("field", sorted(FLAGS))
def test_hf_flag_that_is_not_a_boolean(hf_doc: dict[str, Any], tmp_path: Path, field: str, value: object) -> None:
    doc = json.loads(json.dumps(hf_doc))
    assert [n["type"] for n in doc["pre_tokenizer"]["pretokenizers"]] == ["Split", "ByteLevel"]
    FLAGS[field](doc, value)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: {re.escape(field)} must be true or false"):
        bytepair.load_hf(path)
    with pytest.raises(FormatError, match=rf"{re.escape(field)} must be true or false"):
        bytepair.load(path)


# use_regex's default is true, which a Split before it does not allow.
@pytest.mark.parametrize("field", sorted(f for f in FLAGS if not f.endswith("use_regex")))
def test_hf_flag_null_is_its_default(hf_doc: dict[str, Any], tmp_path: Path, field: str) -> None:
    doc = json.loads(json.dumps(hf_doc))
    FLAGS[field](doc, None)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    assert bytepair.load_hf(path).decode(bytepair.load_hf(path).encode("hello world")) == "hello world"


@pytest.fixture(scope="module")
def wp_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tok = bytepair.train_wordpiece_from_iterator(["hello world the quick brown fox"] * 10, vocab_size=120)
    d = tmp_path_factory.mktemp("wp")
    tok.save_pretrained(d)
    doc: dict[str, Any] = json.loads((d / "tokenizer.json").read_text())
    return doc


def _load_wp(doc: dict[str, Any], path: Path) -> object:
    path.write_text(json.dumps(doc))
    return bytepair.load(path)


# BertNormalizer's options are booleans (strip_accents may be null); read by truth value, the
# string "false" turned lowercasing on.
@pytest.mark.parametrize("value", ["false", 0, 2, [], {"a": 1}])
@pytest.mark.parametrize("key", ["clean_text", "handle_chinese_chars", "lowercase", "strip_accents"])
def test_wordpiece_normalizer_option_that_is_not_a_boolean(wp_doc: dict[str, Any], tmp_path: Path, key: str, value: object) -> None:
    doc = json.loads(json.dumps(wp_doc))
    doc["normalizer"][key] = value
    path = tmp_path / "tokenizer.json"
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: normalizer.{key} must be true or false"):
        _load_wp(doc, path)


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("key", ["clean_text", "handle_chinese_chars", "lowercase", "strip_accents"])
def test_wordpiece_normalizer_option_is_read(wp_doc: dict[str, Any], tmp_path: Path, key: str, value: bool) -> None:
    doc = json.loads(json.dumps(wp_doc))
    doc["normalizer"][key] = value
    tok = _load_wp(doc, tmp_path / "tokenizer.json")
    assert tok._bert[key] is value  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [[], {"a": 1}, None, 0, True])
@pytest.mark.parametrize("key", ["unk_token", "continuing_subword_prefix"])
def test_wordpiece_model_string_that_is_not_a_string(wp_doc: dict[str, Any], tmp_path: Path, key: str, value: object) -> None:
    doc = json.loads(json.dumps(wp_doc))
    doc["model"][key] = value
    path = tmp_path / "tokenizer.json"
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: model.{key} must be a string"):
        _load_wp(doc, path)


@pytest.mark.parametrize("value", [None, 5, ["[CLS]"], {"a": 1}])
def test_wordpiece_template_token_that_is_not_a_string(wp_doc: dict[str, Any], tmp_path: Path, value: object) -> None:
    doc = json.loads(json.dumps(wp_doc))
    doc["post_processor"]["single"][0] = {"SpecialToken": {"id": value, "type_id": 0}}
    path = tmp_path / "tokenizer.json"
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: post_processor.single\[0\].SpecialToken.id must be a string"):
        _load_wp(doc, path)


@pytest.fixture(scope="module")
def wp_bytepair_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tok = bytepair.train_wordpiece_from_iterator(["hello world the quick brown fox"] * 10, vocab_size=120)
    path = tmp_path_factory.mktemp("wpb") / "wp.json"
    tok.save(path)
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


@pytest.mark.parametrize("value", ["false", 0, 2, [], {"a": 1}])
@pytest.mark.parametrize("key", ["clean_text", "handle_chinese_chars", "lowercase", "strip_accents"])
def test_bytepair_wordpiece_bert_option_that_is_not_a_boolean(
    wp_bytepair_doc: dict[str, Any], tmp_path: Path, key: str, value: object
) -> None:
    doc = json.loads(json.dumps(wp_bytepair_doc))
    doc["bert"][key] = value
    path = tmp_path / "wp.json"
    path.write_text(json.dumps(doc))
    for load in (bytepair.load, bytepair.WordPieceTokenizer.from_file):
        with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: bert.{key} must be true or false"):
            load(path)


@pytest.mark.parametrize("value", [[], {"a": 1}, None, 0])
@pytest.mark.parametrize("key", ["unk_token", "continuing_subword_prefix"])
def test_bytepair_wordpiece_string_that_is_not_a_string(
    wp_bytepair_doc: dict[str, Any], tmp_path: Path, key: str, value: object
) -> None:
    doc = json.loads(json.dumps(wp_bytepair_doc))
    doc["wordpiece"][key] = value
    path = tmp_path / "wp.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: wordpiece.{key} must be a string"):
        bytepair.load(path)


@pytest.mark.parametrize("value", [5, "[CLS] $A", {"$A": 1}])
@pytest.mark.parametrize("key", ["template", "pair_template"])
def test_bytepair_wordpiece_template_that_is_not_a_list(
    wp_bytepair_doc: dict[str, Any], tmp_path: Path, key: str, value: object
) -> None:
    doc = json.loads(json.dumps(wp_bytepair_doc))
    doc[key] = value
    path = tmp_path / "wp.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: {key} must be a list of strings or null"):
        bytepair.load(path)
