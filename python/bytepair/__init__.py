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

# WordPiece (issue 10)
from bytepair.wordpiece import WordPieceTokenizer  # noqa: E402
from bytepair.wordpiece_training import train_wordpiece, train_wordpiece_from_iterator  # noqa: E402

try:
    __version__ = version("bytepair")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"


def load(path: str) -> Tokenizer | WordPieceTokenizer:
    """Reads a tokenizer file written by :meth:`Tokenizer.save` or :meth:`WordPieceTokenizer.save`
    (the file's ``model`` says which class comes back)."""
    # WordPiece (issue 10): the file's model kind picks the class.
    from bytepair import _wordpiece_file

    doc = _wordpiece_file.read_json(path)
    if isinstance(doc, dict) and doc.get("model") == "wordpiece":
        return _wordpiece_file.from_dict(doc, where=str(path))
    from bytepair import _fileformat

    return _fileformat.from_dict(doc, where=str(path))


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
    # WordPiece (issue 10)
    "WordPieceTokenizer",
    "train_wordpiece",
    "train_wordpiece_from_iterator",
]
