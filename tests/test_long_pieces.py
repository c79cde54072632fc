"""Long hostile pieces (the worst case stays linear): the linear path for monotone models, and
its runs for a piece of one repeated byte, give tiktoken's ids on pieces far above the
short-path length, for every shipped encoding."""

from __future__ import annotations

import pathlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from tests.test_encodings import NAMES, _reference, rank_dir  # noqa: F401  (a fixture)


def _hostile(kind: str, n: int) -> str:
    if kind == "letter":
        return "a" * n
    if kind == "spaces":
        return " " * n
    if kind == "digits":
        return "1" * n
    if kind == "newlines":
        return "\n" * n
    if kind == "equals":
        return "=" * n
    if kind == "cjk":
        return "".join(chr(0x4E00 + (i * 7919) % 20_902) for i in range(n // 3))
    # Runs of a few letters and spaces: pieces of many different lengths, many merges of (x, x).
    rnd = random.Random(n)
    return "".join(rnd.choice("ab ") * rnd.choice([1, 1, 2, 3, 17, 300]) for _ in range(n // 20))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["letter", "spaces", "newlines", "equals", "digits", "cjk", "runs"])
def test_long_hostile_pieces_match_tiktoken(name: str, kind: str, rank_dir: pathlib.Path) -> None:
    ours = bytepair.get_encoding(name)
    theirs = _reference(name, rank_dir)
    for n in [129, 1000, 4097, 20_011]:
        text = _hostile(kind, n)
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), (kind, n)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_long_random_pieces_match_tiktoken(name: str, rank_dir: pathlib.Path) -> None:
    ours = bytepair.get_encoding(name)
    theirs = _reference(name, rank_dir)
    run = st.tuples(st.sampled_from(["a", "b", "ab", "é", "中", "x"]), st.integers(1, 400))

    @given(st.lists(run, min_size=1, max_size=12))
    @settings(max_examples=60, deadline=None)
    def check(runs: list[tuple[str, int]]) -> None:
        text = "".join(s * k for s, k in runs)
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)

    check()
