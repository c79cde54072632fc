"""The ``bytepair`` command: run in-process through ``bytepair.cli.main`` (plus a few
subprocess runs for the entry points)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair import Tokenizer
from bytepair._display import pad, token_repr, width
from bytepair.cli import main

CORPUS = (
    "The quick brown fox jumps over the lazy dog.\n"
    "Then the dog, rather lazy, sleeps in the sun; the fox runs on.\n"
    "Über naïve café — ünïcödé text, with 日本語 too.\n"
) * 40


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    return path


@pytest.fixture
def trained(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--vocab-size", "300", "--special", "<|endoftext|>", "-o", str(out)]) == 0
    capsys.readouterr()
    return out


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code != 0
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bytepair: error: ")
    for needle in needles:
        assert needle in lines[0]


# ---------------------------------------------------------------------------- train


def test_train_writes_a_tokenizer_and_a_consistent_summary(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tok.json"
    code, stdout, err = run(capsys, "train", str(corpus), "--vocab-size", "300", "-o", str(out), "--no-progress")
    assert code == 0
    assert stdout == ""
    tok = bytepair.load(str(out))
    assert tok.vocab_size == 300
    info = tok.training
    assert f"distinct pieces  {info['distinct_pieces']:,}" in err
    assert f"merges           {info['merges_learned']:,} learned" in err
    assert "stopped early" not in err
    assert "\x1b" not in err  # --no-progress: no bars

    m = re.search(r"compression +([\d.]+) bytes/token .*\(([\d,]+) bytes -> ([\d,]+) tokens\)", err)
    assert m, err
    shown_ratio, shown_bytes, shown_tokens = float(m[1]), int(m[2].replace(",", "")), int(m[3].replace(",", ""))
    n_bytes = len(CORPUS.encode("utf-8"))
    n_tokens = len(tok.encode(CORPUS))
    assert (shown_bytes, shown_tokens) == (n_bytes, n_tokens)
    assert shown_ratio == round(n_bytes / n_tokens, 2)
    assert str(out) in err


def test_train_options_reach_the_tokenizer(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tok.json"
    code, _, err = run(
        capsys,
        "train",
        str(corpus),
        "--vocab-size=280",
        "--pattern=gpt2",
        "--special=<|a|>",
        "--special=<|b|>",
        "--min-frequency=3",
        "--no-stats",
        "-o",
        str(out),
    )
    assert code == 0, err
    assert "compression" not in err
    tok = bytepair.load(str(out))
    assert tok.pattern_name == "gpt2"
    assert tok.special_tokens == {"<|a|>": 278, "<|b|>": 279}
    assert tok.training["min_frequency"] == 3
    same = bytepair.train(
        str(corpus), vocab_size=280, pattern="gpt2", special_tokens=["<|a|>", "<|b|>"], min_frequency=3
    )
    assert tok.merges == same.merges


def test_train_custom_and_no_pattern(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for pattern, label in [(r"\w+|\s+|[^\w\s]+", r"custom: \w+|\s+|[^\w\s]+"), ("none", "none")]:
        out = tmp_path / "tok.json"
        code, _, err = run(capsys, "train", str(corpus), "--vocab-size", "270", "--pattern", pattern, "-o", str(out))
        assert code == 0, err
        assert "bytes/token" in err
        code, shown, _ = run(capsys, "show", str(out))
        assert code == 0
        assert f"pattern         {label}" in shown


def test_train_reports_stopping_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "small.txt"
    small.write_text("abab cdcd", encoding="utf-8")
    out = tmp_path / "tok.json"
    code, _, err = run(capsys, "train", str(small), "--vocab-size", "1000", "-o", str(out))
    assert code == 0
    tok = bytepair.load(str(out))
    assert tok.training["stopped_early"]
    learned = tok.training["merges_learned"]
    assert f"{learned} learned of 744 wanted" in err
    assert "stopped early" in err
    assert f"has {tok.vocab_size} tokens, not the 1,000 asked for" in err


def test_train_on_an_empty_file_warns_without_failing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    out = tmp_path / "tok.json"
    code, _, err = run(capsys, "train", str(empty), "--vocab-size", "300", "-o", str(out))
    assert code == 0
    assert "bytepair: warning: the training corpus is empty" in err
    assert "n/a" in err


def test_train_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shakespeare.json"
    code, _, err = run(capsys, "train", "--sample", "--no-stats", "-o", str(out))
    assert code == 0, err
    assert "tinyshakespeare.txt" in err
    tok = bytepair.load(str(out))
    assert tok.vocab_size == 1000
    assert tok.training["input"]["files"] == ["tinyshakespeare.txt"]


def test_train_progress_goes_to_stderr(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "train", str(corpus), "--vocab-size", "270", "--progress", "-o", str(tmp_path / "t.json")
    )
    assert code == 0
    assert out == ""
    assert "counting" in err and "merging" in err
    assert "encoding" not in err  # compression comes from the counts: no second pass over the files


def test_train_sources_alpha_and_the_per_source_table(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    zh = tmp_path / "zh"
    zh.mkdir()
    (zh / "a.txt.gz").write_bytes(gzip.compress(("中文的文本，还有更多的中文。\n" * 5).encode()))
    out = tmp_path / "mix.json"
    code, _, err = run(
        capsys, "train", "--source", f"en={corpus}", "--source", f"zh={zh}", "--alpha", "0.3",
        "--vocab-size", "400", "--no-progress", "-o", str(out),
    )
    assert code == 0, err
    tok = bytepair.load(str(out))
    names = [s["name"] for s in tok.training["sources"]]
    assert names == ["en", "zh"]
    assert tok.training["alpha"] == 0.3
    assert "2 sources (en, zh)" in err
    table = bytepair.sources_table(tok)
    assert table in err
    assert "bytes/token" in table and "tokens/word" in table
    same = bytepair.train(
        [bytepair.Source(corpus, name="en"), bytepair.Source(zh, name="zh")], vocab_size=400, alpha=0.3
    )
    assert same.merges == tok.merges
    code, _, err = run(capsys, "train", str(corpus), "--alpha", "2", "--vocab-size", "300", "-o", str(out))
    assert_one_line_error(code, err, "alpha must be a number in [0, 1]")


def test_train_continue_normalize_reserve_and_roles(
    tmp_path: Path, corpus: Path, trained: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "more.json"
    code, _, err = run(
        capsys, "train", str(corpus), "--base", str(trained), "--vocab-size", "320",
        "--reserved-special-tokens", "2", "--role", "eos=<|endoftext|>", "--max-token-length", "6",
        "-o", str(out),
    )
    assert code == 0, err
    base = bytepair.load(str(trained))
    tok = bytepair.load(str(out))
    assert tok.merges[: len(base.merges)] == base.merges
    assert tok.special_tokens["<|endoftext|>"] == base.special_tokens["<|endoftext|>"]
    assert tok.reserved_special_tokens == ["<|reserved_0|>", "<|reserved_1|>"]
    assert tok.special_tokens_map == {"eos": "<|endoftext|>"}
    assert all(len(a + b) <= 6 for a, b in tok.merges[len(base.merges) :])
    assert "after the base tokenizer's" in err
    code, _, err = run(
        capsys, "train", str(corpus), "--base", str(trained), "--vocab-size", "320", "--pattern", "superword",
        "--max-words-per-token", "2", "--max-pieces", "1000", "-o", str(out),
    )
    assert code == 0, err  # another pattern: SuperBPE's second stage (tests/test_superword.py)
    assert bytepair.load(str(out)).pattern == bytepair.patterns.superword_pattern(2)
    code, _, err = run(capsys, "train", str(corpus), "--base", str(trained), "--vocab-size", "200", "-o", str(out))
    assert_one_line_error(code, err, "smaller than the base tokenizer's vocab size")
    code, _, err = run(
        capsys, "train", str(corpus), "--normalization", "nfkc+lowercase", "--vocab-size", "300", "-o", str(out)
    )
    assert code == 0, err
    assert bytepair.load(str(out)).normalization == "nfkc+lowercase"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--vocab-size", "300"], "FILES"),
        (["--sample", "CORPUS", "--vocab-size", "300"], "not several"),
        (["--source", "a=CORPUS", "CORPUS", "--vocab-size", "300"], "not several"),
        (["--source", "CORPUS", "--vocab-size", "300"], "expected NAME=PATH"),
        (["CORPUS", "--vocab-size", "300", "--role", "eos"], "expected ROLE=TOKEN"),
        (["CORPUS"], "--vocab-size is required"),
        (["CORPUS", "--vocab-size", "300", "--errors", "lenient"], "invalid choice"),
    ],
)
def test_train_usage_errors(
    argv: list[str], message: str, tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(corpus) if a == "CORPUS" else a for a in argv]
    code, _, err = run(capsys, "train", *argv, "-o", str(tmp_path / "t.json"))
    assert code == 2
    assert "Traceback" not in err
    assert err.startswith("usage: bytepair train")
    assert message in err


def test_train_errors(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "t.json")
    code, _, err = run(capsys, "train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", out)
    assert_one_line_error(code, err, "missing.txt")
    code, _, err = run(capsys, "train", str(corpus), "--vocab-size", "100", "-o", out)
    assert_one_line_error(code, err, "too small", "256")
    code, _, err = run(capsys, "train", str(corpus), "--vocab-size", "300", "--pattern", "(", "-o", out)
    assert_one_line_error(code, err, "(")
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "train", str(tmp_path / "empty"), "--vocab-size", "300", "-o", out)
    assert_one_line_error(code, err, "is a directory with no files")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9 " * 10)
    code, _, err = run(capsys, "train", str(bad), "--vocab-size", "300", "-o", out)
    assert_one_line_error(code, err)
    code, _, err = run(capsys, "train", str(bad), "--vocab-size", "300", "--errors", "replace", "-o", out)
    assert code == 0, err
    assert "bad UTF-8 sequences replaced by U+FFFD" in err
    assert not (tmp_path / "nowhere").exists()
    code, _, err = run(capsys, "train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "nowhere" / "t.json"))
    assert_one_line_error(code, err, "does not exist")


def test_keyboard_interrupt_exits_130_quietly(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> Tokenizer:
        raise KeyboardInterrupt

    monkeypatch.setattr(bytepair, "train", interrupted)
    code, out, err = run(capsys, "train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json"))
    assert (code, out, err) == (130, "", "")


# ---------------------------------------------------------------------------- encode / decode


def test_encode_decode_roundtrip(
    tmp_path: Path, corpus: Path, trained: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tok = bytepair.load(str(trained))
    code, out, _ = run(capsys, "encode", "-t", str(trained), str(corpus))
    assert code == 0
    assert out.endswith("\n") and out.count("\n") == 1
    ids = [int(x) for x in out.split()]
    assert ids == tok.encode(CORPUS)
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(out, encoding="utf-8")
    code, text, _ = run(capsys, "decode", "-t", str(trained), str(ids_file))
    assert code == 0
    assert text == CORPUS


def test_encode_and_decode_use_stdin(
    trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    tok = bytepair.load(str(trained))
    text = "To be, or not to be\r\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(capsys, "encode", "-t", str(trained))
    assert code == 0
    assert [int(x) for x in out.split()] == tok.encode(text)  # "\r\n" kept as it is
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"[{', '.join(out.split())}]".encode())))
    code, back, _ = run(capsys, "decode", "-t", str(trained), "-")
    assert code == 0
    assert back == text


def test_decode_writes_raw_bytes(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "tok.json"
    bytepair.train_from_iterator([CORPUS], vocab_size=260).save(path)
    ids = tmp_path / "ids.txt"
    ids.write_text("195\n", encoding="utf-8")  # half of a two-byte character
    assert main(["decode", "-t", str(path), str(ids)]) == 0
    assert capsysbinary.readouterr().out == b"\xc3"


def test_encode_options(trained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tok = bytepair.load(str(trained))
    text = "the fox<|endoftext|>the dog"
    code, out, err = run(capsys, "encode", "-t", str(trained), "--text", text)
    assert_one_line_error(code, err, "'<|endoftext|>'", "--allow-special")
    code, out, _ = run(capsys, "encode", "-t", str(trained), "--text", text, "--allow-special")
    assert code == 0
    assert [int(x) for x in out.split()] == tok.encode(text, allowed_special="all")
    assert tok.special_tokens["<|endoftext|>"] in [int(x) for x in out.split()]
    code, out, _ = run(capsys, "encode", "-t", str(trained), "--text", text, "--ordinary")
    assert [int(x) for x in out.split()] == tok.encode_ordinary(text)
    code, out, _ = run(capsys, "encode", "-t", str(trained), "--text", text, "--ordinary", "--count")
    assert out == f"{len(tok.encode_ordinary(text))}\n"
    code, out, _ = run(capsys, "encode", "-t", str(trained), "--text", "the fox\n", "--tokens")
    assert out == " ".join(token_repr(tok.token_bytes(i)) for i in tok.encode("the fox\n")) + "\n"
    assert "'\\n'" in out
    code, out, _ = run(capsys, "encode", "-t", str(trained), "--text", "")
    assert (code, out) == (0, "\n")


def test_encode_decode_errors(tmp_path: Path, trained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = str(trained)
    code, _, err = run(capsys, "encode", "-t", str(tmp_path / "nope.json"), "--text", "x")
    assert_one_line_error(code, err, "nope.json")
    code, _, err = run(capsys, "encode", "-t", t, str(tmp_path / "nope.txt"))
    assert_one_line_error(code, err, "nope.txt")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"caf\xe9")
    code, _, err = run(capsys, "encode", "-t", t, str(latin1))
    assert_one_line_error(code, err, "not UTF-8", "offset 3")
    ids = tmp_path / "ids.txt"
    ids.write_text("1 2 x3", encoding="utf-8")
    code, _, err = run(capsys, "decode", "-t", t, str(ids))
    assert_one_line_error(code, err, "'x3' is not a token id")
    ids.write_text("1 -2", encoding="utf-8")
    code, _, err = run(capsys, "decode", "-t", t, str(ids))
    assert_one_line_error(code, err, "'-2'")
    ids.write_text("1 99999", encoding="utf-8")
    code, _, err = run(capsys, "decode", "-t", t, str(ids))
    assert_one_line_error(code, err, "99999")


def test_streaming_in_small_blocks(
    tmp_path: Path, trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import bytepair.cli._common

    monkeypatch.setattr(bytepair.cli._common, "BLOCK", 5)  # cuts numbers and UTF-8 characters apart
    tok = bytepair.load(str(trained))
    text = "naïve café, 日本語\nthe fox\n"
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "encode", "-t", str(trained), str(src))
    assert [int(x) for x in out.split()] == tok.encode(text)
    ids = tmp_path / "ids.txt"
    ids.write_text(",\n".join(out.split()), encoding="utf-8")
    code, back, _ = run(capsys, "decode", "-t", str(trained), str(ids))
    assert back == text
    src.write_bytes("ab日cd".encode() + b"\xff")
    code, _, err = run(capsys, "encode", "-t", str(trained), str(src))
    assert_one_line_error(code, err, "offset 7")
    src.write_bytes(b"abcdefg" + "日".encode()[:2])
    code, _, err = run(capsys, "encode", "-t", str(trained), str(src))
    assert_one_line_error(code, err, "offset 7")


# ---------------------------------------------------------------------------- show


def test_show_header_and_merges(trained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tok = bytepair.load(str(trained))
    code, out, _ = run(capsys, "show", str(trained), "--limit", "5")
    assert code == 0
    lines = out.splitlines()
    assert "vocab size      300 = 256 bytes + 43 merges + 1 special token" in lines
    assert "pattern         gpt4" in lines
    assert "special tokens  '<|endoftext|>' = 299" in lines
    assert any(line.startswith("trained on      corpus.txt") for line in lines)
    rows = [line for line in lines if " = " in line and "+" in line and line.lstrip()[0].isdigit()]
    assert len(rows) == 5
    for rank, row in enumerate(rows):
        a, b = tok.merges[rank]
        assert row.split()[:2] == [str(rank), str(256 + rank)]
        assert f"{token_repr(a + b)} = {token_repr(a)}" in re.sub(r" +", " ", row)
        assert row.rstrip().endswith("+ " + token_repr(b))
    assert lines[-1] == "... 38 more merges; see them with --limit N or --all"


def test_show_limits(trained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def merge_rows(out: str) -> int:
        return sum(1 for line in out.splitlines() if re.match(r"^ *\d+ +\d+ ", line))

    assert merge_rows(run(capsys, "show", str(trained))[1]) == 43  # default 50 > 43
    assert merge_rows(run(capsys, "show", str(trained), "--limit", "0")[1]) == 43
    assert merge_rows(run(capsys, "show", str(trained), "--all", "--limit", "3")[1]) == 43
    assert merge_rows(run(capsys, "show", str(trained), "--limit", "3")[1]) == 3
    code, out, _ = run(capsys, "show", str(trained), "--tokens", "--all")
    assert code == 0
    assert re.search(r"^ *299 +'<\|endoftext\|>' +\(special\)$", out, re.M)
    assert re.search(r"^ *10 +'\\n'$", out, re.M)
    code, _, err = run(capsys, "show", str(trained), "--limit", "-1")
    assert code == 2 and "--limit" in err


def test_show_a_rank_model_lists_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # tiktoken's model: a token's rank is its id; single bytes need not be 0..255.
    tokens = [*[bytes([i]) for i in range(256)][::-1], b"ab", "é".encode()[:1] + b"x"]
    doc = {
        "format": "bytepair-tokenizer",
        "version": 1,
        "model": "ranks",
        "pattern": {"preset": None, "regex": None},
        "normalization": None,
        "special_tokens": {"<|end|>": 300},
        "vocab": [[i, base64.b64encode(t).decode()] for i, t in enumerate(tokens)],
        "training": {},
    }
    path = tmp_path / "ranks.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = run(capsys, "show", str(path), "--limit", "0")
    assert code == 0
    assert "token ranks" in out
    assert "vocab size      259 = 258 ranked tokens + 1 special token" in out
    assert "pattern         none" in out
    assert re.search(r"^ *0 +'\\xff'$", out, re.M)
    assert re.search(r"^ *256 +'ab'$", out, re.M)
    assert re.search(r"^ *257 +'\\xc3x'$", out, re.M)
    assert re.search(r"^ *300 +'<\|end\|>' +\(special\)$", out, re.M)


def test_show_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "show", str(tmp_path / "missing.json"))
    assert_one_line_error(code, err, "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = run(capsys, "show", str(bad))
    assert_one_line_error(code, err, "bad.json", "not valid JSON")
    bad.write_text('{"format": "something-else"}', encoding="utf-8")
    code, _, err = run(capsys, "show", str(bad))
    assert_one_line_error(code, err, "not a bytepair tokenizer")
    code, _, err = run(capsys, "show", str(tmp_path))
    assert_one_line_error(code, err, "directory")


def test_pretrained_encodings_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    encodings = pytest.importorskip("bytepair.encodings")
    enc = encodings.get_encoding("gpt2")
    code, out, _ = run(capsys, "encode", "-t", "gpt2", "--text", "hello world")
    assert code == 0
    assert [int(x) for x in out.split()] == enc.encode("hello world")
    code, out, _ = run(capsys, "show", "gpt2", "--limit", "3")
    assert code == 0
    assert "gpt2 (pretrained encoding" in out
    assert "vocab size      50,257 = 50,256 ranked tokens + 1 special token" in out
    assert re.search(r"^ *0 +'!'$", out, re.M)
    code, _, err = run(capsys, "show", "gpt3")
    assert_one_line_error(code, err, "gpt3", "cl100k_base")


# ---------------------------------------------------------------------------- help, version, entry points


@pytest.mark.parametrize("command", ["train", "encode", "decode", "show"])
def test_subcommand_help_has_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert out.startswith(f"usage: bytepair {command}")
    assert "examples:" in out
    assert f"bytepair {command}" in out.split("examples:")[1]


def test_no_arguments_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys)
    assert code == 0
    assert "usage: bytepair" in out and "train" in out and "examples:" in out


def test_version_and_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, f"bytepair {bytepair.__version__}\n")
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err


def test_a_command_imports_only_its_own_module(capsys: pytest.CaptureFixture[str]) -> None:
    # A fresh interpreter: encode-corpus's start does not pay for the analysis pages, the views
    # or the package metadata (--version's), and the top-level help still lists every command.
    from bytepair.cli import COMMANDS

    script = (
        "import sys\n"
        "from bytepair.cli import main\n"
        "main(['encode-corpus', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('bytepair.cli.') and not m.startswith('bytepair.cli._')))\n"
        "print([m for m in ('bytepair.analysis', 'bytepair.views', 'importlib.metadata') if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    *_, modules, heavy = proc.stdout.splitlines()
    assert (modules, heavy) == ("['bytepair.cli.encode_corpus']", "[]")
    code, out, _ = run(capsys, "--help")
    assert code == 0
    listed = re.findall(r"^    (\S+)\s", out, flags=re.M)
    assert listed == list(COMMANDS) and len(COMMANDS) == 17


def test_python_dash_m_entry_point(trained: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bytepair", "encode", "-t", str(trained)],
        input=b"the fox\n",
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert [int(x) for x in proc.stdout.split()] == bytepair.load(str(trained)).encode("the fox\n")
    proc = subprocess.run(
        [sys.executable, "-m", "bytepair.cli", "show", "missing.json"], capture_output=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr.decode().strip() == "bytepair: error: missing.json: no such file or directory"


def test_the_command_keeps_openblas_to_one_thread_unless_told() -> None:
    # numpy's OpenBLAS threads spin after import and take CPU from the encoder's; the command
    # sets one thread before numpy is imported, and leaves a user's setting alone.
    code = "import os, bytepair.cli, numpy; print(os.environ['OPENBLAS_NUM_THREADS'])"
    for given, want in [(None, "1"), ("3", "3")]:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.decode().strip() == want


@pytest.mark.skipif(shutil.which("bytepair") is None, reason="the bytepair script is not installed")
def test_console_script_pipeline(trained: Path) -> None:
    script = shutil.which("bytepair")
    assert script is not None
    text = "To be, or not to be\n"
    encoded = subprocess.run(
        [script, "encode", "-t", str(trained)], input=text.encode(), capture_output=True, check=True
    )
    decoded = subprocess.run(
        [script, "decode", "-t", str(trained)], input=encoded.stdout, capture_output=True, check=True
    )
    assert decoded.stdout.decode() == text


# ---------------------------------------------------------------------------- token display


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (b" the", "' the'"),
        (b"\n\n", "'\\n\\n'"),
        (b"\t\r", "'\\t\\r'"),
        (b"it's", '"it\'s"'),
        (b"'\"", "'\\'\"'"),
        (b"\\", "'\\\\'"),
        ("é".encode(), "'é'"),
        ("é".encode()[:1], "'\\xc3'"),
        (b"\xe2\x80", "'\\xe2\\x80'"),
        ("\u00a0".encode(), "'\\u00a0'"),
        ("\x85".encode(), "'\\u0085'"),
        (b"\x85", "'\\x85'"),
        (b"\x00", "'\\u0000'"),
        ("日本".encode(), "'日本'"),
        ("\U000e0001".encode(), "'\\U000e0001'"),
    ],
)
def test_token_repr(token: bytes, shown: str) -> None:
    assert token_repr(token) == shown


def test_token_repr_cuts_long_tokens_between_escapes() -> None:
    assert token_repr(b"a" * 100, 10) == "'aaaaaaa…'"
    assert width(token_repr(b"a" * 100, 10)) == 10
    assert token_repr(b"\n" * 20, 10) == "'\\n\\n\\n…'"
    assert token_repr(b"short", 10) == "'short'"


def test_width_and_pad() -> None:
    assert width("日本") == 4
    assert width("e\u0301") == 1
    assert pad("日", 4) == "日  "
    assert pad("7", 3, right=True) == "  7"


def test_show_describes_normalization_reserved_slots_roles_sources_and_base(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("lorem ipsum dolor sit amet\n" * 20, encoding="utf-8")
    mix = tmp_path / "mix.json"
    code, _, err = run(
        capsys, "train", "--source", f"a={corpus}", "--source", f"b={other}", "--alpha", "0.5",
        "--vocab-size", "300", "--reserved-special-tokens", "2", "--role", "eos=<|reserved_0|>",
        "--normalization", "nfc", "-o", str(mix),
    )
    assert code == 0, err
    code, out, _ = run(capsys, "show", str(mix), "--limit", "1")
    assert code == 0
    assert "normalization   nfc" in out
    assert "reserved slots  2 unclaimed (ids 298-299)" in out
    assert "roles           eos = '<|reserved_0|>'" in out
    assert "sources (alpha 0.5):" in out
    more = tmp_path / "more.json"
    code, _, err = run(capsys, "train", str(other), "--base", str(mix), "--vocab-size", "310", "-o", str(more))
    assert code == 0, err
    code, out, _ = run(capsys, "show", str(more), "--limit", "1")
    assert "continued from  a base of 300 tokens" in out
