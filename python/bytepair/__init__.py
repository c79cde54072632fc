"""bytepair: train, run, inspect and ship subword tokenizers (byte-level BPE and WordPiece).

>>> import bytepair
>>> tok = bytepair.train_from_iterator(["hello hello world"] * 10, vocab_size=260)
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bytepair._api import BatchEncoding
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
from bytepair._detect import load  # every format bytepair reads, found by content
from bytepair.formats.gpt2 import dump_gpt2, load_gpt2
from bytepair.formats.hf import load_hf, save_hf
from bytepair.formats.minbpe import dump_minbpe, load_minbpe
from bytepair.formats.spm import dump_spm, load_spm
from bytepair.formats.tiktoken import dump_tiktoken, load_tiktoken, to_tiktoken
from bytepair.patterns import PATTERNS
from bytepair.pipeline.added_tokens import AddedToken
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.sources import Source
from bytepair.surgery import Residues, Surgery, extend, graft, prune, residues
from bytepair.tokenizer import StreamDecoder, Tokenizer
from bytepair.training import sources_table, train, train_from_counts, train_from_iterator
from bytepair.sentencepiece_training import (
    train_sentencepiece,
    train_sentencepiece_from_iterator,
    train_unigram,
    train_unigram_from_iterator,
)
from bytepair.wordpiece import WordPieceTokenizer
from bytepair.wordpiece_training import train_wordpiece, train_wordpiece_from_iterator

if TYPE_CHECKING:
    from bytepair._hf_patch import TransformersPatch
    from bytepair.analysis.diff import DiffResult, diff
    from bytepair.corpus import Shards, encode_corpus, open_shards

# Corpus encoding needs numpy, whose import is most of `import bytepair`'s time and memory
# (about 1 s of 1.3 s and 14 MiB on the 2-core machine): its names load on first use.
_LAZY = {"Shards", "encode_corpus", "open_shards"}
# bytepair.diff is in bytepair.analysis, which imports numpy as well.
_LAZY_ANALYSIS = {"DiffResult", "diff"}


def patch_transformers() -> TransformersPatch:
    """Makes transformers' fast tokenizers (``AutoTokenizer.from_pretrained(...)``,
    ``PreTrainedTokenizerFast``) encode with bytepair wherever bytepair gives their outputs
    exactly, checked per tokenizer on probe texts; the others stay on transformers, with a
    one-line reason logged at debug level on the ``bytepair.patch`` logger. Returns a handle:
    ``handle.unpatch()`` restores transformers, and so does leaving ``with
    bytepair.patch_transformers():``. Needs transformers 5 or later."""
    from bytepair.errors import MissingExtraError

    try:
        import transformers
    except ImportError:
        raise MissingExtraError("patch_transformers() needs transformers", "transformers") from None
    major = transformers.__version__.split(".")[0]
    if not major.isdigit() or int(major) < 5:
        raise MissingExtraError(
            f"patch_transformers() needs transformers 5 or later (this is {transformers.__version__})", "transformers"
        )
    from bytepair._hf_patch import patch

    return patch()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bytepair")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "0.0.0"


def __getattr__(name: str) -> Any:
    # __version__ on first use: importlib.metadata took a quarter of `import bytepair`'s time
    # (23 of 100 ms), paid by every command and script, most of which never ask.
    if name == "__version__":
        value: Any = _version()
        globals()[name] = value
        return value
    if name in _LAZY:
        import bytepair.corpus

        value = getattr(bytepair.corpus, name)
        globals()[name] = value
        return value
    if name in _LAZY_ANALYSIS:
        import importlib

        value = getattr(importlib.import_module("bytepair.analysis.diff"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bytepair' has no attribute {name!r}")


__all__ = [
    "AddedToken",
    "BatchEncoding",
    "BytepairError",
    "BytepairWarning",
    "CorpusError",
    "DiffResult",
    "DisallowedSpecialTokenError",
    "FormatError",
    "PATTERNS",
    "PatternError",
    "Residues",
    "SentencePieceTokenizer",
    "Shards",
    "Source",
    "StreamDecoder",
    "Surgery",
    "Tokenizer",
    "UnknownTokenError",
    "VocabError",
    "WordPieceTokenizer",
    "__version__",
    "diff",
    "dump_gpt2",
    "dump_minbpe",
    "dump_spm",
    "dump_tiktoken",
    "encode_corpus",
    "encoding_for_model",
    "extend",
    "get_encoding",
    "graft",
    "list_encoding_names",
    "load",
    "load_gpt2",
    "load_hf",
    "load_minbpe",
    "load_spm",
    "load_tiktoken",
    "open_shards",
    "patch_transformers",
    "prune",
    "residues",
    "save_hf",
    "sources_table",
    "to_tiktoken",
    "train",
    "train_from_counts",
    "train_from_iterator",
    "train_sentencepiece",
    "train_sentencepiece_from_iterator",
    "train_unigram",
    "train_unigram_from_iterator",
    "train_wordpiece",
    "train_wordpiece_from_iterator",
]
