"""The extension's fast reader of rank files agrees with the Python reader, and leaves every
file it does not read (unusual form, malformed) to it."""

from __future__ import annotations

import gzip
import pathlib

import pytest

import bytepair
from bytepair import Tokenizer
from bytepair.formats.tiktoken import parse_ranks

DATA = pathlib.Path(bytepair.__file__).parent / "data"


@pytest.mark.parametrize("file", ["r50k_base.tiktoken.gz", "cl100k_base.tiktoken.gz", "o200k_base.tiktoken.gz"])
def test_fast_reader_reads_the_shipped_files_as_python_does(file: str) -> None:
    data = gzip.decompress((DATA / file).read_bytes())
    fast = Tokenizer._from_rank_file(data, special_tokens={}, pattern="gpt2")
    assert fast is not None
    assert fast._vocab_dict is None  # the vocabulary dict is made only when asked for
    ranks = parse_ranks(data)
    assert fast.vocab == {r: b for b, r in ranks.items()}
    assert fast.vocab_size == len(ranks)


@pytest.mark.parametrize(
    "data",
    [
        b"IQ== 0\r\naGk= 1\r\n",  # CRLF
        b"IQ== 0\n\naGk= 1\n",  # blank line
        b"IQ== 0\naGk=  1\n",  # two spaces
        b"IQ== 0\naGk= 1",  # no final newline
        b"IQ== 0\naGk= +1\n",  # a sign, which int() accepts
    ],
)
def test_unusual_forms_fall_back_to_the_python_reader(data: bytes) -> None:
    assert Tokenizer._from_rank_file(data, special_tokens={}, pattern=None) is None
    assert parse_ranks(data) == {b"!": 0, b"hi": 1}


def test_special_tokens_and_vocab_size_without_the_dict() -> None:
    lines = b"".join(b"%s %d\n" % (__import__("base64").b64encode(bytes([i])), i) for i in range(256))
    tok = Tokenizer._from_rank_file(lines + b"aGk= 256\n", special_tokens={"<|end|>": 257, "hi": 256}, pattern=None)
    assert tok is not None
    assert tok.vocab_size == 258  # "hi" is the ordinary token 256, "<|end|>" is one more
    assert tok.encode("hi<|end|>", allowed_special="all") == [256, 257]
