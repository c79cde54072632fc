"""bytepair.load's format detection, `bytepair convert` to every format, `bytepair show` on each."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest
import tokenizers

import bytepair
from bytepair.cli import main
from tests.interop_texts import DATA, texts, training_text
from tests.test_cli import assert_one_line_error, run


@pytest.fixture(scope="module")
def trained_path(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    tok = bytepair.train_from_iterator(training_text()[:300], vocab_size=400, special_tokens=["<|endoftext|>"])
    path = tmp_path_factory.mktemp("tok") / "tok.json"
    tok.save(path)
    return path


def same_ids(a: bytepair.Tokenizer, b: bytepair.Tokenizer) -> None:
    for text in texts()[:40] + [texts()[-1]]:
        assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all")


@pytest.mark.parametrize(
    ("to", "out", "read"),
    [
        ("bytepair", "out.json", "out.json"),
        ("hf", "tokenizer.json", "tokenizer.json"),
        ("pretrained", "model", "model"),
        ("gpt2", "gpt2", "gpt2/vocab.json"),
        ("tiktoken", "out.tiktoken", None),
        ("minbpe", "out.model", "out.model"),
    ],
)
def test_convert_to_each_format_and_load_back(
    to: str, out: str, read: str | None, trained_path: pathlib.Path, tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tok = bytepair.load(trained_path)
    code, stdout, err = run(capsys, "convert", str(trained_path), str(tmp_path / out), "--to", to)
    assert code == 0, err
    assert f"({to})" in stdout
    if read is None:
        back = bytepair.load(tmp_path / out, pattern=tok.pattern, special_tokens=tok.special_tokens)
    else:
        back = bytepair.load(tmp_path / read)
    if to == "gpt2":  # vocab.json + merges.txt do not hold the pattern
        back = bytepair.load_gpt2(tmp_path / "gpt2/vocab.json", tmp_path / "gpt2/merges.txt", pattern=tok.pattern)
    same_ids(back, tok)
    code, stdout, err = run(capsys, "show", str(tmp_path / (read or out)), "--limit", "3")
    if read is None:
        assert_one_line_error(code, err, "pattern=")
    else:
        assert code == 0, err
        assert "vocab size" in stdout


@pytest.mark.parametrize(
    "path",
    [
        "hf_gpt2_style/tokenizer.json",
        "hf_split_style/tokenizer.json",
        "hf_transformers_gpt2",
        "hf_gpt2_style/vocab.json",
        "hf_gpt2_style/merges.txt",
    ],
)
def test_show_and_convert_read_foreign_files(path: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = run(capsys, "show", str(DATA / path), "--limit", "5")
    assert code == 0, err
    assert "byte-level BPE" in stdout
    code, _, err = run(capsys, "convert", str(DATA / path), str(tmp_path / "tok.json"))
    assert code == 0, err
    assert bytepair.load(tmp_path / "tok.json") == bytepair.load(DATA / path)


def test_convert_a_pretrained_encoding_to_hf(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "convert", "gpt2", str(tmp_path / "tokenizer.json"), "-q")
    assert code == 0, err
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = bytepair.get_encoding("gpt2")
    for text in texts()[:60]:
        assert hf.encode(text).ids == tok.encode(text, allowed_special="all")
    code, stdout, err = run(capsys, "convert", "gpt2", str(tmp_path / "r50k.tiktoken"))
    assert code == 0, err
    assert bytepair.load(tmp_path / "r50k.tiktoken") is tok


def test_unknown_formats_list_the_known_ones(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not a tokenizer")
    with pytest.raises(bytepair.FormatError, match="tiktoken rank file") as e:
        bytepair.load(junk)
    assert "minbpe" in str(e.value) and "Hugging Face" in str(e.value)
    (tmp_path / "odd.json").write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match="bytepair.load reads"):
        bytepair.load(tmp_path / "odd.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(bytepair.FormatError, match="directory"):
        bytepair.load(tmp_path / "empty")
    code, _, err = run(capsys, "convert", str(junk), str(tmp_path / "x.json"))
    assert_one_line_error(code, err, "junk.bin", "bytepair.load reads")
    code, _, err = run(capsys, "convert", "gpt2", str(tmp_path / "x.weird"))
    assert_one_line_error(code, err, "--to")


def test_a_failed_conversion_writes_nothing(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "convert", "cl100k_base", str(tmp_path / "x.model"))
    assert_one_line_error(code, err, "minbpe")
    assert list(tmp_path.iterdir()) == []


def test_vocab_json_without_merges_is_named(tmp_path: pathlib.Path) -> None:
    shutil.copy(DATA / "hf_gpt2_style/vocab.json", tmp_path)
    with pytest.raises(bytepair.FormatError, match="without a merges.txt"):
        bytepair.load(tmp_path / "vocab.json")
    assert main(["convert", "--help"]) == 0
