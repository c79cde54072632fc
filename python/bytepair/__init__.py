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

# -- interop (issue 9): every format bytepair reads, found by content; writers per format.
from bytepair._detect import load
from bytepair.formats.gpt2 import dump_gpt2, load_gpt2
from bytepair.formats.hf import load_hf, save_hf
from bytepair.formats.minbpe import dump_minbpe, load_minbpe
from bytepair.formats.tiktoken import dump_tiktoken, to_tiktoken

try:
    __version__ = version("bytepair")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"


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
    # interop (issue 9)
    "dump_gpt2",
    "dump_minbpe",
    "dump_tiktoken",
    "load_gpt2",
    "load_hf",
    "load_minbpe",
    "save_hf",
    "to_tiktoken",
]

# Corpus encoding (issue 11): token shards and their memory-mapped view.
from bytepair.corpus import Shards, encode_corpus, open_shards  # noqa: E402

__all__ += ["Shards", "encode_corpus", "open_shards"]
