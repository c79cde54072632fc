"""`bytepair train --model wordpiece`, and show / encode / decode on WordPiece files."""

from __future__ import annotations

from typing import Any

import pytest

import bytepair
from bytepair.cli import main


@pytest.fixture
def wp_file(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> Any:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The quick brown fox jumps over the lazy dog. Café naïve!\n" * 50, encoding="utf-8")
    out = tmp_path / "wp.json"
    assert main(["train", str(corpus), "--model", "wordpiece", "--vocab-size", "120", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "tokens/word" in err and "[UNK]" in err
    return out


def test_train_writes_a_wordpiece_file(wp_file: Any) -> None:
    tok = bytepair.load(str(wp_file))
    assert isinstance(tok, bytepair.WordPieceTokenizer)
    assert [tok.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert tok.training["algorithm"] == "score"
    # the summary's figures are those of encoding the training text
    text = "The quick brown fox jumps over the lazy dog. Café naïve!\n" * 50
    assert tok.training["tokens"] == len(tok.encode(text))


def test_encode_decode_show(wp_file: Any, capsys: pytest.CaptureFixture[str]) -> None:
    tok = bytepair.load(str(wp_file))
    assert isinstance(tok, bytepair.WordPieceTokenizer)
    assert main(["encode", "-t", str(wp_file), "--text", "The lazy fox"]) == 0
    out = capsys.readouterr().out
    ids = [int(x) for x in out.split()]
    assert ids == tok.encode("The lazy fox")
    ids_file = wp_file.parent / "ids.txt"
    ids_file.write_text(out, encoding="utf-8")
    assert main(["decode", "-t", str(wp_file), str(ids_file)]) == 0
    assert capsys.readouterr().out == tok.decode(ids) == "the lazy fox"
    assert main(["show", str(wp_file), "--limit", "3"]) == 0
    shown = capsys.readouterr().out
    assert "WordPiece" in shown and "'[UNK]' = 1" in shown


def test_hf_algorithm_and_bad_options(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc abd abe\n" * 10, encoding="utf-8")
    out = tmp_path / "wp.json"
    assert main(["train", str(corpus), "--model", "wordpiece", "--algorithm", "hf", "--vocab-size", "40", "-o", str(out)]) == 0
    tok = bytepair.load(str(out))
    assert isinstance(tok, bytepair.WordPieceTokenizer) and tok.training["algorithm"] == "hf"
    capsys.readouterr()
    assert main(["train", str(corpus), "--model", "wordpiece", "--vocab-size", "40", "--base", str(out), "-o", str(out)]) == 1
    assert capsys.readouterr().err.startswith("bytepair: error: --base")
