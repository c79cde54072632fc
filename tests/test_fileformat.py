"""The tokenizer file: round trips, atomic writes, and clear errors for bad files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import FormatError, Tokenizer

SAMPLE = "The quick brown fox jumps over the lazy dog. 1234567 don't STOP\n\n  \tend " * 20


@pytest.fixture(params=["gpt2", "gpt4", "o200k", None, r"\p{L}+|\s+|[^\s\p{L}]+"])
def tok(request: pytest.FixtureRequest) -> Tokenizer:
    return bytepair.train_from_iterator(
        [SAMPLE], vocab_size=320, pattern=request.param, special_tokens=["<|endoftext|>", "<pad>"]
    )


def test_roundtrip_keeps_everything(tok: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    tok.save(path)
    back = bytepair.load(str(path))
    assert back.merges == tok.merges
    assert back.vocab == tok.vocab
    assert back.special_tokens == tok.special_tokens
    assert back.pattern == tok.pattern
    assert back.pattern_name == tok.pattern_name
    assert back.training == tok.training
    probe = SAMPLE + "<|endoftext|> ünïcödé 中文 👍🏽"
    assert back.encode(probe, allowed_special="all") == tok.encode(probe, allowed_special="all")


def test_file_stores_pattern_regex_and_version(tok: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "bytepair-tokenizer"
    assert doc["version"] == 1
    assert doc["pattern"]["regex"] == tok.pattern
    assert doc["training"]["bytepair_version"] == bytepair.__version__
    assert doc["training"]["input"]["bytes"] == len(SAMPLE.encode())


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tok = bytepair.train_from_iterator([SAMPLE], vocab_size=300)
    path = tmp_path / "tok.json"
    path.write_text("previous content", encoding="utf-8")

    def boom(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        tok.save(path)
    assert path.read_text(encoding="utf-8") == "previous content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json"]


def _saved(tmp_path: Path) -> dict[str, Any]:
    tok = bytepair.train_from_iterator([SAMPLE], vocab_size=300, special_tokens=["<s>"])
    path = tmp_path / "good.json"
    tok.save(path)
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _load_doc(tmp_path: Path, doc: Any) -> Tokenizer:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return bytepair.load(str(path))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(version=99), "version 99 is not supported"),
        (lambda d: d.update(format="other"), "not a bytepair tokenizer file"),
        (lambda d: d.pop("vocab"), "missing the key 'vocab'"),
        (lambda d: d.update(model="unigram"), "unknown model 'unigram'"),
        (lambda d: d["merges"].append([5, 999999]), r"merges\[\d+\] names the token id 999999"),
        (lambda d: d["merges"].append(["a", 1]), r"merges\[\d+\] must be \[left id, right id\]"),
        (lambda d: d["vocab"].__setitem__(3, [3, "@@notbase64"]), r"vocab\[3\] has invalid base64"),
        (lambda d: d["vocab"].__setitem__(3, [4, "BA=="]), r"vocab\[\d\] repeats the id 4"),
        (lambda d: d["vocab"].pop(65), "single byte 0x41"),
        (lambda d: d["merges"].append([97, 97]), r"makes .aa., which is not in the vocabulary"),
        (lambda d: d["special_tokens"].update({"<t>": -1}), "must be a non-negative int"),
        (lambda d: d["special_tokens"].update({"<t>": 97}), "already uses"),
        (lambda d: d["pattern"].update(regex="("), "cannot compile"),
    ],
)
def test_malformed_files_say_what_is_wrong(tmp_path: Path, mutate: Any, message: str) -> None:
    doc = _saved(tmp_path)
    mutate(doc)
    with pytest.raises(bytepair.BytepairError, match=message) as err:
        _load_doc(tmp_path, doc)
    assert "bad.json" in str(err.value)


def test_not_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": "bytepair-tokenizer",\n  "version": 1,,}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"broken.json: not valid JSON: .* line 2"):
        bytepair.load(str(path))


def test_a_key_twice_in_one_object_is_refused(tmp_path: Path) -> None:
    # The last of two values would otherwise win silently (two ids for one token).
    text = json.dumps(_saved(tmp_path))
    path = tmp_path / "twice.json"
    path.write_text(text.replace('{"format"', '{"version": 7, "format"', 1), encoding="utf-8")
    with pytest.raises(FormatError, match=r"twice.json: the key 'version' appears twice"):
        bytepair.load(str(path))


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError):
        bytepair.load("/nonexistent/tok.json")


def test_saved_file_has_ordinary_permissions(tmp_path: Path) -> None:
    tok = bytepair.train_from_iterator([SAMPLE], vocab_size=260)
    old = os.umask(0o022)
    try:
        tok.save(tmp_path / "tok.json")
    finally:
        os.umask(old)
    assert (tmp_path / "tok.json").stat().st_mode & 0o777 == 0o644
