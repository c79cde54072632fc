"""`bytepair encode` / `decode` / `count` / `show` on SentencePiece `.model` files (Unigram and
BPE, trained here): the ids sentencepiece gives, decoding back, the counts, the description;
`--allow-special` and `show --residues` and the commands that do not take these models are
one-line errors naming the mode or the command (`viz`, `stats` and `compare` take them:
tests/test_cli_spm_analysis.py)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import bytepair
from bytepair.cli import main
from bytepair.cli._common import SENTENCEPIECE_COMMANDS

spm = pytest.importorskip("sentencepiece")

SHAKESPEARE = os.path.join(os.path.dirname(bytepair.__file__), "data", "tinyshakespeare.txt")
TEXTS = [
    "To be, or not to be, that is the question.",
    "  Unseen   words: zyzzyva, qat; émigré 2024!  ",
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\n",
    "<s> control pieces as text </s>",
    "",
]


@pytest.fixture(scope="module")
def lines() -> list[str]:
    with open(SHAKESPEARE, encoding="utf-8") as f:
        return [f.readline().rstrip("\n") for _ in range(400)]


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def model(request: pytest.FixtureRequest, lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    if request.param == "unigram":
        tok = bytepair.train_unigram_from_iterator(lines, vocab_size=300)
    else:
        tok = bytepair.train_sentencepiece_from_iterator(lines, vocab_size=300, model_type="bpe")
    path = tmp_path_factory.mktemp("spm_cli") / f"{request.param}.model"
    tok.save(path)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_encode_gives_sentencepieces_ids(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model))
    for text in TEXTS:
        code, out, err = run(capsys, "encode", "-t", str(model), "--text", text)
        assert code == 0, err
        assert out.endswith("\n") and [int(x) for x in out.split()] == sp.encode(text), text
        code, out, err = run(capsys, "encode", "-t", str(model), "--text", text, "--count")
        assert (code, out) == (0, f"{len(sp.encode(text))}\n")
        code, out, err = run(capsys, "encode", "-t", str(model), "--text", text, "--tokens")
        assert code == 0, err
        assert [ast.literal_eval(t) for t in out.split()] == sp.encode(text, out_type=str), text  # quoted pieces
    # a file (and stdin's path, "-" aside) is one text, newlines included
    text = "".join(t + "\n" for t in TEXTS)
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "encode", "-t", str(model), str(src))
    assert code == 0, err
    assert [int(x) for x in out.split()] == sp.encode(text)


def test_decode_round_trips(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model))
    for text in TEXTS:
        ids = sp.encode(text)
        path = tmp_path / "ids.txt"
        path.write_text(" ".join(map(str, ids)) + "\n", encoding="utf-8")
        code, out, err = run(capsys, "decode", "-t", str(model), str(path))
        assert code == 0, err
        assert out == sp.decode(ids)
    text = "To be, or not to be, that is the question."
    path.write_text(str(sp.encode(text)), encoding="utf-8")  # [1, 2, 3] works too
    code, out, err = run(capsys, "decode", "-t", str(model), str(path))
    assert (code, out) == (0, text)
    path.write_text(f"5 {len(sp)}", encoding="utf-8")
    code, out, err = run(capsys, "decode", "-t", str(model), str(path))
    assert code == 1 and err.startswith("bytepair: error: ") and err.count("\n") == 1
    assert f"unknown token id {len(sp)}" in err


def test_count_matches(model: Path, lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(lines[:150]) + "\n", encoding="utf-8")
    b.write_text("Unseen: zyzzyva, émigré.\n", encoding="utf-8")
    code, out, err = run(capsys, "count", "-t", str(model), str(a), str(b))
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["tokens", "bytes", "bytes/token", "file"]
    n_a, n_b = (len(sp.encode(p.read_text(encoding="utf-8"))) for p in (a, b))
    assert rows[1][0] == f"{n_a:,}" and rows[1][1] == f"{a.stat().st_size:,}" and rows[1][3] == str(a)
    assert rows[2][0] == f"{n_b:,}" and rows[2][3] == str(b)
    assert rows[3][0] == f"{n_a + n_b:,}" and rows[3][3] == "total"


def test_show(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tok = bytepair.load(str(model))
    assert isinstance(tok, bytepair.SentencePieceTokenizer)
    code, out, err = run(capsys, "show", str(model), "--limit", "5")
    assert code == 0, err
    kind = "Unigram" if tok.model_type == "unigram" else "BPE"
    assert f"model           SentencePiece {kind}" in out
    assert "vocab size      300 = 297 normal + 1 unknown + 2 control" in out
    assert "normalization   nmt_nfkc" in out
    assert "special pieces  '<unk>' = 0, '<s>' = 1, '</s>' = 2" in out
    assert "pieces 5 of 300, by id:" in out and "295 more pieces" in out
    piece, score, _ = tok.pieces()[4]
    assert any(line.split()[:3] == ["4", repr(piece), f"{score:.4f}"] for line in out.splitlines())
    code, out, err = run(capsys, "show", str(model), "--all")
    assert code == 0 and "pieces (all), by id:" in out and len(out.splitlines()) > 300


def test_modes_it_cannot_run_are_one_line_errors(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "encode", "-t", str(model), "--text", "<s> hi", "--allow-special")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith("bytepair: error: --allow-special: ") and "SentencePiece" in err
    code, out, err = run(capsys, "show", str(model), "--residues")
    assert code == 1 and out == "" and err.count("\n") == 1 and err.startswith("bytepair: error: --residues: ")


@pytest.mark.parametrize(
    "command",
    [
        ["convert", "{m}", "{t}/out.json"],
        ["trace", "-t", "{m}", "--text", "hi"],
        ["train", "{c}", "--base", "{m}", "--vocab-size", "400", "-o", "{t}/t.json"],
    ],
)
def test_other_commands_refuse_them_in_one_line(
    command: list[str], model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("To be, or not to be.\n", encoding="utf-8")
    argv = [a.format(m=model, c=corpus, d=tmp_path / "out", t=tmp_path) for a in command]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.count("\n") == 1, err
    name = command[0] + (" --base" if command[0] == "train" else "")
    assert err.startswith(f"bytepair: error: {model} is a SentencePiece ")
    assert f"`bytepair {name}` does not take SentencePiece models" in err
    assert f"({SENTENCEPIECE_COMMANDS} do)" in err and "viz, stats, compare and encode-corpus" in SENTENCEPIECE_COMMANDS
    assert os.listdir(tmp_path) == ["c.txt"]  # nothing written


def test_a_sentencepiece_family_tokenizer_json(lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An HFSentencePieceTokenizer takes the same paths, with tokenizers' ids."""
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.SentencePieceUnigramTokenizer()
    hf.train_from_iterator(lines, vocab_size=200, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>")
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    assert type(bytepair.load(str(path))).__name__ == "HFSentencePieceTokenizer"
    text = "To be, or not <s> to be: zyzzyva"
    ids = hf.encode(text).ids
    code, out, err = run(capsys, "encode", "-t", str(path), "--text", text)
    assert (code, [int(x) for x in out.split()]) == (0, ids), err
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(out, encoding="utf-8")
    code, out, err = run(capsys, "decode", "-t", str(path), str(ids_file))
    assert (code, out) == (0, hf.decode(ids)), err
    code, out, err = run(capsys, "show", str(path))
    assert code == 0 and "SentencePiece Unigram (tokenizer.json" in out, err
    code, out, err = run(capsys, "encode", "-t", str(path), "--text", text, "--ordinary")
    assert code == 1 and err.startswith("bytepair: error: --ordinary: ") and err.count("\n") == 1
    code, out, err = run(capsys, "trace", "-t", str(path), "--text", text)
    assert code == 1 and "`bytepair trace` does not take SentencePiece models" in err and err.count("\n") == 1
