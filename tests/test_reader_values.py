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
