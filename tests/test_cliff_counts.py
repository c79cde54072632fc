"""Counts of long runs of one unit (issue #24's cliff): a piece that the merges take whole is
counted without its ids being written (its runs, or the long path's tokens), and long runs of
whitespace are walked 16 bytes at a time by the scanners and by the cut search. The counts must
still be ``len(encode)`` exactly, and the ids tiktoken's, at lengths around the short path's
limit (128 bytes), the whitespace blocks (16), the threads' chunks (256 KiB) and the rounds of a
call (8 MiB)."""

from __future__ import annotations

import pathlib

import pytest

import bytepair
from tests.test_encodings import NAMES, _reference, rank_dir  # noqa: F401  (a fixture)

# ... and characters of 2 and 3 bytes repeated (one piece, each character its own ids).
UNITS = ["\n", " ", "\t", "\r\n", " \n", "a", "7", "e\u0301", "ab", "=", "\u00a0", "\u4e2d"]
UNITS += ["\u00e9", "\u00df", "\u0436", "\u05d0", "\u3042", "\uac00", "\u00e9\u00e8", "\ufffd"]
# Around the short path's limit and the whitespace blocks, then well past both.
LENGTHS = [15, 16, 17, 33, 127, 128, 129, 143, 1000, 4097]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("unit", UNITS)
def test_counts_of_runs_are_tiktokens(name: str, unit: str, rank_dir: pathlib.Path) -> None:
    ours = bytepair.get_encoding(name)
    theirs = _reference(name, rank_dir)
    for n in LENGTHS:
        for text in [unit * n, "x" + unit * n + "x", unit * n + " y"]:
            want = theirs.encode_ordinary(text)
            assert ours.encode_ordinary(text) == want, (unit, n, text[:3])
            assert ours.count(text) == len(want), (unit, n, text[:3])
            # A limit inside and past the count.
            for limit in (0, len(want) // 2, len(want) - 1, len(want)):
                assert ours.count(text, limit=limit) == min(len(want), limit + 1), (unit, n, limit)


@pytest.mark.parametrize("name", NAMES)
def test_counts_around_special_tokens(name: str, rank_dir: pathlib.Path) -> None:
    ours = bytepair.get_encoding(name)
    theirs = _reference(name, rank_dir)
    for unit in ["\n", "a", " ", "ab"]:
        text = unit * 3000 + "<|endoftext|>" + unit * 5000 + "<|endoftext|>"
        want = theirs.encode(text, allowed_special="all")
        assert ours.encode(text, allowed_special="all") == want
        assert ours.count(text, allowed_special="all") == len(want)
        assert ours.count(text, allowed_special="all", limit=len(want) - 2) == len(want) - 1


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "gpt2"])
@pytest.mark.parametrize("unit", ["\n", " ", "a", "ab", "e\u0301", "7", " \n", "\u4e2d\u6587", "\u00e9", "\u3042"])
def test_counts_of_long_runs_are_encode_lengths(name: str, unit: str) -> None:
    """Past the threads' chunks and the rounds (tiktoken is quadratic on one long piece, so
    these are checked against our encode, which the tests above tie to tiktoken's)."""
    enc = bytepair.get_encoding(name)
    for size in [(256 << 10) + 5, (8 << 20) + 3]:
        text = unit * (size // len(unit.encode()))
        for tail in ["", "x\n"]:
            t = text + tail
            n = len(enc.encode_ordinary(t))
            assert enc.count(t) == n, (unit, size, tail)
            assert enc.count(t, num_threads=2) == n, (unit, size, tail)
            assert enc.count(t, limit=n - 1) == n, (unit, size, tail)
            assert enc.count(t, limit=n // 3) == n // 3 + 1, (unit, size, tail)
