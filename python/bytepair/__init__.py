"""bytepair: train, run, inspect and ship byte-level BPE tokenizers.

>>> import bytepair
>>> tok = bytepair.train_from_iterator(["hello hello world"] * 10, vocab_size=260)
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from bytepair.encodings import encoding_for_model, get_encoding, list_encoding_names
from bytepair.errors import (
    BytepairError,
    BytepairWarning,
    CorpusError,
    DisallowedSpecialTokenError,
    FormatError,
    PatternError,
    UnknownTokenError,
    VocabError,
)
from bytepair.formats.tiktoken import load_tiktoken
from bytepair.patterns import PATTERNS
from bytepair.tokenizer import StreamDecoder, Tokenizer
from bytepair.sources import Source
from bytepair.training import sources_table, train, train_from_counts, train_from_iterator

try:
    __version__ = version("bytepair")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"


def load(path: str) -> Tokenizer:
    """Reads a tokenizer file written by :meth:`Tokenizer.save`."""
    return Tokenizer.from_file(path)


__all__ = [
    "PATTERNS",
    "BytepairError",
    "BytepairWarning",
    "CorpusError",
    "DisallowedSpecialTokenError",
    "FormatError",
    "PatternError",
    "Source",
    "StreamDecoder",
    "Tokenizer",
    "UnknownTokenError",
    "VocabError",
    "__version__",
    "encoding_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "load_tiktoken",
    "sources_table",
    "train",
    "train_from_counts",
    "train_from_iterator",
]
