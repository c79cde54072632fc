"""Analysis commands on WordPiece tokenizers, the same as on BPE ones: ``count``, ``stats``
and ``compare`` measured against Hugging Face ``tokenizers`` running the same vocabulary."""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from typing import Any

import pytest
from tokenizers import Tokenizer as HFTokenizer

from bytepair import train_wordpiece_from_iterator
from bytepair.analysis.words import byte_offsets, word_spans
from bytepair.cli import main
from bytepair.formats.hf_wordpiece import wordpiece_to_hf

TEXT = (pathlib.Path(__file__).parent / "data" / "multilingual.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, pathlib.Path, HFTokenizer]:
    tok = train_wordpiece_from_iterator([TEXT], vocab_size=400, min_frequency=2, progress=False)
    path = tmp_path_factory.mktemp("wp") / "wp.json"
    tok.save(str(path))
    return tok, path, HFTokenizer.from_str(json.dumps(wordpiece_to_hf(tok)))


def _corpus(tmp_path: pathlib.Path) -> tuple[pathlib.Path, str]:
    text = TEXT + "\nsupercalifragilisticexpialidocious " + "z" * 120 + "\n"
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    return path, text


def test_count(trained: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, wp, hf = trained
    path, text = _corpus(tmp_path)
    assert main(["count", "-t", str(wp), str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    n = len(hf.encode(text, add_special_tokens=False).ids)
    assert row[:2] == [f"{n:,}", f"{path.stat().st_size:,}"]


def test_stats(trained: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, wp, hf = trained
    path, text = _corpus(tmp_path)
    assert main(["stats", "-t", str(wp), "--top", "5", str(path)]) == 0
    out = capsys.readouterr().out
    ids = hf.encode(text, add_special_tokens=False).ids
    assert f"{wp}: {len(ids):,} tokens" in out
    top = Counter(ids).most_common(1)[0]
    assert f"{top[0]}  {hf.id_to_token(top[0])!r}" in out and f"{top[1]:,}" in out


def test_compare(trained: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, wp, hf = trained
    path, text = _corpus(tmp_path)
    assert main(["compare", str(wp), "--corpus", f"c={path}"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    enc = hf.encode(text, add_special_tokens=False)
    spans = word_spans(text)
    ends = byte_offsets(text)[[e for _, e in enc.offsets]]
    split = sum(1 for a, b in spans if any(a < e < b for e in ends))
    assert row[2:4] == [f"{len(enc.ids):,}", f"{len(spans):,}"]
    assert row[5] == f"{100 * split / len(spans):.1f}%"


def test_sweep_still_refuses_wordpiece(trained: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, wp, _ = trained
    path, _ = _corpus(tmp_path)
    assert main(["viz", "-t", str(wp), "--text", "hello"]) == 1
    assert "WordPiece" in capsys.readouterr().err


def test_train_and_show_summaries(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``train --model wordpiece`` and ``show`` give the training summary as for BPE: input,
    timing, compression, tokens per word, share of [UNK], with figures of HF's encoder."""
    path, text = _corpus(tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc \xff def\n")
    out = tmp_path / "wp.json"
    args = ["train", "--model", "wordpiece", str(path), str(bad), "--errors", "replace", "--vocab-size", "300", "-o", str(out)]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "(counting " in err and "1 bad UTF-8 sequence replaced" in err
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    from bytepair import load

    tok = load(str(out))
    hf = HFTokenizer.from_str(json.dumps(wordpiece_to_hf(tok)))  # type: ignore[arg-type]
    full = text + "abc \ufffd def\n"
    ids = hf.encode(full, add_special_tokens=False).ids
    n_bytes = len(full.encode("utf-8"))
    words = len(hf.pre_tokenizer.pre_tokenize_str(hf.normalizer.normalize_str(full)))
    assert f"compression      {n_bytes / len(ids):.2f} bytes/token" in err
    assert f"{len(ids) / words:.2f} tokens/word" in err
    unk = ids.count(tok.token_to_id("[UNK]"))  # type: ignore[union-attr]
    assert unk > 0 and f"{unk / len(ids):.3%} of tokens are [UNK]" in err
    assert "trained on      c.txt, bad.txt, " in shown and f"{words:,} words" in shown
    assert f"on its data     {n_bytes / len(ids):.2f} bytes/token, {len(ids) / words:.2f} tokens/word, {unk / len(ids):.3%}" in shown
