"""A special token holding a lone surrogate (no UTF-8 form) is refused where a user gives it,
with a BytepairError naming it, never a UnicodeEncodeError from deep inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair.errors import BytepairError

TEXTS = ["hello world, ab ab abc"] * 10
BAD = "<|a\ud800|>"

MAKERS: dict[str, Callable[[Path], Any]] = {
    "train_from_iterator list": lambda d: bytepair.train_from_iterator(TEXTS, vocab_size=300, special_tokens=[BAD]),
    "train_from_iterator after a good one": lambda d: bytepair.train_from_iterator(
        TEXTS, vocab_size=300, special_tokens=["<|ok|>", BAD]
    ),
    "train (files)": lambda d: bytepair.train([_corpus(d)], vocab_size=300, special_tokens=[BAD], progress=False),
    "train_wordpiece_from_iterator": lambda d: bytepair.train_wordpiece_from_iterator(TEXTS, vocab_size=100, special_tokens=[BAD]),
    "with_special_tokens": lambda d: bytepair.train_from_iterator(TEXTS, vocab_size=260).with_special_tokens({BAD: 400}),
    "WordPieceTokenizer": lambda d: bytepair.WordPieceTokenizer(["[UNK]", "a", BAD], special_tokens=[BAD]),
}


def _corpus(d: Path) -> Path:
    path = d / "corpus.txt"
    path.write_text("\n".join(TEXTS))
    return path


@pytest.mark.filterwarnings("ignore::bytepair.BytepairWarning")
@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_a_special_token_with_a_lone_surrogate(tmp_path: Path, maker: str) -> None:
    with pytest.raises(BytepairError, match=r"token '<\|a\\ud800\|>' holds a lone surrogate \(U\+D800\)"):
        MAKERS[maker](tmp_path)
