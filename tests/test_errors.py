"""Bad input gets a clear exception naming the bad thing."""

from __future__ import annotations

from pathlib import Path

import pytest

import bytepair
from bytepair import BytepairWarning, CorpusError, PatternError


def test_vocab_size_below_minimum_names_it() -> None:
    with pytest.raises(ValueError, match="minimum is 258"):
        bytepair.train_from_iterator(["abc"], vocab_size=257, special_tokens=["<a>", "<b>"])
    with pytest.raises(TypeError):
        bytepair.train_from_iterator(["abc"], vocab_size="300")  # type: ignore[arg-type]


def test_bad_min_frequency() -> None:
    with pytest.raises(ValueError, match="min_frequency"):
        bytepair.train_from_iterator(["abc"], vocab_size=300, min_frequency=0)


def test_not_utf8_names_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"hello world\ncaf\xe9 au lait\n")
    with pytest.raises(CorpusError, match=r"latin1.txt: not valid UTF-8 at byte offset 15"):
        bytepair.train(path, vocab_size=300)
    tok = bytepair.train(path, vocab_size=300, errors="replace", min_frequency=1)
    assert tok.training["input"]["replaced_bytes"] == 1


def test_not_utf8_offset_in_a_later_block(tmp_path: Path) -> None:
    from bytepair import _core

    path = tmp_path / "late.txt"
    path.write_bytes(b"Line one\nLine two\n" * 100 + b"\xff\n")
    counter = _core.PieceCounter(bytepair.PATTERNS["gpt4"], [], block_bytes=64)
    with pytest.raises(CorpusError, match="byte offset 1800"):
        counter.add_file(str(path))


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        bytepair.train(tmp_path / "nope.txt", vocab_size=300)
    with pytest.raises(CorpusError, match="is a directory"):
        bytepair.train(tmp_path, vocab_size=300)


def test_empty_corpus_warns_and_gives_byte_tokenizer(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.warns(BytepairWarning, match="empty"):
        tok = bytepair.train(path, vocab_size=1000, special_tokens=["<|endoftext|>"])
    assert tok.vocab_size == 257
    assert tok.merges == []
    assert tok.decode(tok.encode("héllo")) == "héllo"
    with pytest.warns(BytepairWarning):
        bytepair.train_from_iterator([], vocab_size=300)


def test_bad_pattern_is_a_pattern_error() -> None:
    with pytest.raises(PatternError, match="cannot compile"):
        bytepair.train_from_iterator(["abc"], vocab_size=300, pattern="(unclosed")


def test_a_str_is_one_path_not_many(tmp_path: Path) -> None:
    path = tmp_path / "ab.txt"
    path.write_text("ab ab ab", encoding="utf-8")
    tok = bytepair.train(str(path), vocab_size=300)
    assert tok.training["input"]["files"] == ["ab.txt"]
    with pytest.raises(TypeError, match="single str"):
        bytepair.train_from_iterator("ab ab ab", vocab_size=300)


def test_progress_callback_exception_stops_training(tmp_path: Path) -> None:
    from bytepair import _core

    class Stop(Exception):
        pass

    def progress(n: int) -> None:
        raise Stop(n)

    counter = _core.PieceCounter(None, [])
    counter.add_texts(["abcdefghij" * 100 + "".join(chr(0x4E00 + i) for i in range(3000))])
    with pytest.raises(Stop):
        counter.train(merges=5000, min_frequency=1, progress=progress)
