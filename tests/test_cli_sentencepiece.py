"""`bytepair train --model unigram` and `--model spm-bpe`: the .model they write (sentencepiece
loads it, as a Unigram or a BPE model, and gives bytepair's ids), the same model as
bytepair.train_sentencepiece with the same options, one-line errors for options of the other
models (SentencePiece options given to them, Unigram's own given to spm-bpe), and --help."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import Source
from bytepair.cli import main

spm = pytest.importorskip("sentencepiece")

SHAKESPEARE = os.path.join(os.path.dirname(bytepair.__file__), "data", "tinyshakespeare.txt")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 200 KB of the Shakespeare sample, whole lines, with a few lines of digits and
    other scripts for the options that split them."""
    with open(SHAKESPEARE, encoding="utf-8") as f:
        text = f.read(200_000)
    text = text[: text.rfind("\n") + 1] + "In 1599, 42 players; 3.14 and 2718.\nΚαλημέρα κόσμε. Привет, мир! 東京タワー\n"
    path = tmp_path_factory.mktemp("sentencepiece_cli") / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_model_loads_in_sentencepiece_with_bytepairs_ids(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tok.model"
    code, stdout, err = run(capsys, "train", str(corpus), "--model", "unigram", "--vocab-size", "800", "-o", str(out))
    assert code == 0, err
    assert stdout == ""
    assert "trained Unigram on" in err and "vocab size       800 = 797 learned pieces" in err
    assert f"wrote {out}" in err
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.get_piece_size() == 800
    assert [sp.id_to_piece(i) for i in range(3)] == ["<unk>", "<s>", "</s>"]
    tok = bytepair.load(str(out))
    assert isinstance(tok, bytepair.SentencePieceTokenizer) and tok.model_type == "unigram"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    texts = lines[:300:3] + lines[-2:] + ["  Unseen   words: zyzzyva, qat; émigré 2024!  "]
    for text in texts:
        assert tok.encode(text) == sp.encode(text), text
        assert sp.decode(sp.encode(text)) == tok.decode(tok.encode(text))


def test_spm_bpe_model_loads_in_sentencepiece_as_bpe_with_bytepairs_ids(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bpe.model"
    code, stdout, err = run(capsys, "train", str(corpus), "--model", "spm-bpe", "--vocab-size", "800", "-o", str(out))
    assert code == 0, err
    assert stdout == ""
    assert "trained SentencePiece BPE on" in err and "vocab size       800 = 797 learned pieces" in err
    assert "merges           " in err and "seed pieces" not in err
    assert f"wrote {out}" in err
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.get_piece_size() == 800
    assert [sp.id_to_piece(i) for i in range(3)] == ["<unk>", "<s>", "</s>"]
    # sentencepiece takes it for a BPE model: n-best segmentation is Unigram's only
    with pytest.raises(RuntimeError, match="NBestEncode is not available"):
        sp.nbest_encode_as_ids("to be or not to be", 2)
    tok = bytepair.load(str(out))
    assert isinstance(tok, bytepair.SentencePieceTokenizer) and tok.model_type == "bpe"
    assert tok.vocab_size == 800
    lines = corpus.read_text(encoding="utf-8").splitlines()
    texts = lines[:300:3] + lines[-2:] + ["  Unseen   words: zyzzyva, qat; émigré 2024!  "]
    for text in texts:
        assert tok.encode(text) == sp.encode(text), text
        assert sp.decode(sp.encode(text)) == tok.decode(tok.encode(text))


# every SentencePiece option of the command line, and the keywords train_sentencepiece takes for them
OPTION_SETS: list[tuple[list[str], dict[str, Any]]] = [
    ([], {}),
    (
        [
            "--byte-fallback", "--split-digits", "--user-defined-symbols", "<sep>,foo", "--user-defined-symbols", "bar",
            "--control-symbols", "<mask>", "--pad-piece", "<pad>", "--no-eos", "--unk-piece", "<UNK>",
            "--bos-piece", "<bos>", "--max-piece-length", "8", "--character-coverage", "0.9999",
            "--seed-size", "20000", "--shrinking-factor", "0.8", "--num-sub-iterations", "3", "--threads", "2",
        ],
        dict(
            byte_fallback=True, split_digits=True, user_defined_symbols=["<sep>", "foo", "bar"],
            control_symbols=["<mask>"], pad_piece="<pad>", eos_piece=None, unk_piece="<UNK>", bos_piece="<bos>",
            max_piece_length=8, character_coverage=0.9999, seed_size=20000, shrinking_factor=0.8,
            num_sub_iterations=3, num_threads=2,
        ),
    ),
    (
        [
            "--normalization", "identity", "--no-add-dummy-prefix", "--no-remove-extra-whitespaces",
            "--treat-whitespace-as-suffix", "--no-split-by-unicode-script", "--no-split-by-number", "--no-bos",
        ],
        dict(
            normalization="identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
            treat_whitespace_as_suffix=True, split_by_unicode_script=False, split_by_number=False, bos_piece=None,
        ),
    ),
]


UNIGRAM_ONLY = {"--seed-size": "seed_size", "--shrinking-factor": "shrinking_factor", "--num-sub-iterations": "num_sub_iterations"}


def without_unigram_options(argv: list[str], kwargs: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The option set less Unigram's own options (each takes one value)."""
    kept: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg in UNIGRAM_ONLY:
            next(it)
        else:
            kept.append(arg)
    return kept, {k: v for k, v in kwargs.items() if k not in UNIGRAM_ONLY.values()}


@pytest.mark.parametrize("model, model_type", [("unigram", "unigram"), ("spm-bpe", "bpe")])
@pytest.mark.parametrize("argv, kwargs", OPTION_SETS, ids=["defaults", "pieces", "whitespace"])
def test_the_command_line_model_is_the_python_apis(
    model: str, model_type: str, argv: list[str], kwargs: dict[str, Any], tmp_path: Path, corpus: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if model == "spm-bpe":
        argv, kwargs = without_unigram_options(argv, kwargs)
    out = tmp_path / "tok.model"
    code, _, err = run(capsys, "train", str(corpus), "--model", model, "--vocab-size", "700", *argv, "-o", str(out))
    assert code == 0, err
    expected = bytepair.train_sentencepiece(str(corpus), vocab_size=700, model_type=model_type, **kwargs)
    assert expected.model_type == model_type
    assert out.read_bytes() == expected.to_bytes()
    assert bytepair.load(str(out)).to_bytes() == expected.to_bytes()
    if model == "unigram":  # the older name gives the same model
        assert bytepair.train_unigram(str(corpus), vocab_size=700, **kwargs).to_bytes() == expected.to_bytes()


@pytest.mark.parametrize("model, model_type", [("unigram", "unigram"), ("spm-bpe", "bpe")])
def test_named_sources_are_counted_together(
    model: str, model_type: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("the quick brown fox jumps over the lazy dog\n" * 20, encoding="utf-8")
    b.write_text("pack my box with five dozen liquor jugs\n" * 20, encoding="utf-8")
    out = tmp_path / "mix.model"
    code, _, err = run(
        capsys, "train", "--model", model, "--source", f"x={a}", "--source", f"y={b}", "--vocab-size", "30",
        "-o", str(out),
    )
    assert code == 0, err
    assert "2 sources (x, y)" in err
    expected = bytepair.train_sentencepiece(
        [Source([str(a)], name="x"), Source([str(b)], name="y")], vocab_size=30, model_type=model_type
    )
    assert out.read_bytes() == expected.to_bytes()


@pytest.mark.parametrize("model", ["unigram", "spm-bpe"])
def test_a_small_corpus_gives_a_note_not_an_error(model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "small.txt"
    small.write_text("abc abd abe\n" * 3, encoding="utf-8")
    out = tmp_path / "small.model"
    code, _, err = run(capsys, "train", str(small), "--model", model, "--vocab-size", "500", "-o", str(out))
    assert code == 0, err
    assert "note: the training text gives only" in err and "not the 500 asked for" in err
    assert "warning" not in err
    assert 3 < spm.SentencePieceProcessor(model_file=str(out)).get_piece_size() < 500


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--model", "unigram", "--tie-break", "first"], "--tie-break is for byte-level BPE or WordPiece training"),
        (["--model", "unigram", "--special", "<sep>"], "use --user-defined-symbols"),
        (["--model", "unigram", "--max-token-length", "8"], "use --max-piece-length"),
        (["--model", "unigram", "--cased"], "--cased"),
        (["--model", "unigram", "--normalization", "nfc"], "nmt_nfkc, nfkc, identity"),
        (["--model", "unigram", "--no-bos", "--bos-piece", "<b>"], "--no-bos and --bos-piece"),
        (["--model", "unigram", "--threads", "0"], "--threads must be at least 1"),
        (["--model", "unigram", "--character-coverage", "1.5"], "--character-coverage must be a number in (0, 1]"),
        (["--model", "unigram", "--vocab-size", "3"], "--vocab-size must be"),
        (["--model", "unigram", "--user-defined-symbols", "<s>"], "'<s>' is given twice"),
        (["--seed-size", "100"], "--seed-size is for Unigram training (--model unigram), not --model bpe"),
        (
            ["--no-split-by-number"],
            "--no-split-by-number is for SentencePiece training (--model unigram or spm-bpe), not --model bpe",
        ),
        (["--model", "wordpiece", "--byte-fallback"], "not --model wordpiece"),
        (["--model", "wordpiece", "--no-eos"], "--no-eos is for SentencePiece training (--model unigram or spm-bpe)"),
        (["--model", "spm-bpe", "--seed-size", "100"], "--seed-size is for Unigram training (--model unigram), not --model spm-bpe"),
        (["--model", "spm-bpe", "--shrinking-factor", "0.5"], "--shrinking-factor is for Unigram training (--model unigram)"),
        (["--model", "spm-bpe", "--num-sub-iterations", "3"], "--num-sub-iterations is for Unigram training"),
        (["--model", "spm-bpe", "--tie-break", "first"], "--tie-break is for byte-level BPE or WordPiece training (--model bpe or wordpiece), not --model spm-bpe"),
        (["--model", "spm-bpe", "--min-frequency", "3"], "not --model spm-bpe"),
        (["--model", "spm-bpe", "--normalization", "nfc"], "with --model spm-bpe, one of nmt_nfkc, nfkc, identity"),
        (["--model", "spm-bpe", "--max-piece-length", "0"], "--max-piece-length must be an int from 1 to 255"),
        (["--model", "spm-bpe", "--no-eos", "--eos-piece", "<e>"], "--no-eos and --eos-piece"),
    ],
)
def test_bad_options_are_one_line_errors(
    argv: list[str], needle: str, tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tok.model"
    if "--vocab-size" not in argv:
        argv = [*argv, "--vocab-size", "700"]
    code, _, err = run(capsys, "train", str(corpus), *argv, "-o", str(out))
    assert code == 1
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bytepair: error: ") and needle in lines[0], lines[0]
    assert not out.exists()


def test_help_mentions_unigram_and_spm_bpe(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "train", "--help")
    assert code == 0
    assert "--model unigram" in out and "--model spm-bpe" in out and "{bpe,wordpiece,unigram,spm-bpe}" in out
    assert "SentencePiece options (--model unigram or spm-bpe)" in out
    for option in ("--character-coverage", "--user-defined-symbols", "--no-bos", "--seed-size", "--byte-fallback"):
        assert option in out
