"""``bytepair.load``: reads a tokenizer in any format bytepair knows, found by its content.

Formats: bytepair's own JSON file; a Hugging Face ``tokenizer.json`` or a model directory
(``tokenizer.json``, or ``vocab.json`` + ``merges.txt``); GPT-2's ``vocab.json`` +
``merges.txt`` (either path, the other file beside it); a tiktoken rank file (``.tiktoken``,
plain or gzip: the shipped encodings are recognised by their hash, others need ``pattern=``);
a minbpe ``.model`` file. WordPiece: bytepair's own file with ``"model": "wordpiece"``, a Hugging
Face ``tokenizer.json`` (or model directory) whose model is WordPiece, or a BERT ``vocab.txt``
(or a directory holding only one); these come back as :class:`WordPieceTokenizer`.
SentencePiece: a ``.model`` file (Unigram or BPE), as :class:`SentencePieceTokenizer`, and a Hugging
Face ``tokenizer.json`` of that family (:mod:`bytepair.formats.hf_spm`). Mistral's Tekken JSON
(``tekken_*.json``: :mod:`bytepair.formats.tekken`), as :class:`Tokenizer`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from bytepair._files import read_head
from bytepair.errors import FormatError
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

__all__ = ["KNOWN_FORMATS", "load"]

KNOWN_FORMATS = (
    "bytepair JSON (Tokenizer.save)",
    "Hugging Face tokenizer.json or model directory",
    "GPT-2 vocab.json + merges.txt",
    "tiktoken rank file (.tiktoken)",
    "minbpe .model",
    "BERT vocab.txt (WordPiece)",
    "SentencePiece .model (Unigram, BPE)",
    "Mistral Tekken JSON (tekken_*.json)",
)

_UNSET = object()


def _unknown(path: str, why: str) -> FormatError:
    return FormatError(f"{path}: {why}; bytepair.load reads: {'; '.join(KNOWN_FORMATS)}")


def load(
    path: str | os.PathLike[str],
    *,
    pattern: str | None | object = _UNSET,
    special_tokens: Mapping[str, int] | None = None,
    encoding: str | None = None,
) -> Tokenizer | WordPieceTokenizer | SentencePieceTokenizer:
    """Reads a tokenizer, whatever its format (see the module doc). ``pattern`` and
    ``special_tokens`` are needed only for tiktoken rank files other than the shipped ones.
    ``encoding="llama3"`` or ``"llama4"`` reads a released file that needs a recipe (Meta's
    Llama 3 / Llama 4 ``tokenizer.model``: see :mod:`bytepair.formats.released`)."""
    where = os.fspath(path)
    if encoding is not None:
        if pattern is not _UNSET or special_tokens is not None:
            raise TypeError("encoding= brings its own pattern and special tokens: pass neither pattern= nor special_tokens=")
        from bytepair.formats.released import load_released

        return load_released(where, encoding)
    if os.path.isdir(where):
        from bytepair.formats.hf import load_pretrained

        tj = os.path.join(where, "tokenizer.json")
        if os.path.exists(tj):
            from bytepair.formats.hf import _load_pretrained_fast

            fast = _load_pretrained_fast(where)  # a byte-level BPE file, well formed
            if fast is not None:
                return fast
            # load_pretrained reads either model kind, with the directory's tokenizer_config.json
            return load_pretrained(where)
        if os.path.exists(os.path.join(where, "vocab.json")):
            return load_pretrained(where)
        if os.path.exists(os.path.join(where, "vocab.txt")):
            from bytepair.formats.bert import load_bert_vocab

            return load_bert_vocab(os.path.join(where, "vocab.txt"))
        raise _unknown(where, "a directory without tokenizer.json, vocab.json or vocab.txt")
    head = read_head(where, 4096)  # a FIFO or device is refused here, not read
    from bytepair.formats.spm import load_spm, looks_like_spm

    if looks_like_spm(head):
        return load_spm(where)
    if head[:2] == b"\x1f\x8b" or _looks_like_ranks(head):
        return _load_ranks(where, pattern, special_tokens)
    if head.startswith(b"minbpe v"):
        from bytepair.formats.minbpe import load_minbpe

        return load_minbpe(where)
    if os.path.basename(where) == "merges.txt" or head.startswith(b"#version"):
        vocab = os.path.join(os.path.dirname(where), "vocab.json")
        if not os.path.exists(vocab):
            raise _unknown(where, "a merges.txt without a vocab.json beside it")
        from bytepair.formats.gpt2 import load_gpt2

        return load_gpt2(vocab, where)
    if os.path.basename(where).endswith("vocab.txt"):
        from bytepair.formats.bert import load_bert_vocab

        return load_bert_vocab(where)
    if head.lstrip()[:1] != b"{":
        raise _unknown(where, "not a format bytepair recognises")
    from bytepair.formats import _hf_fast
    from bytepair._json import read_json

    fast = _hf_fast.load(where)  # a byte-level BPE tokenizer.json, well formed
    if fast is not None:
        return fast
    doc = read_json(where)
    if isinstance(doc, dict) and doc.get("format") == "bytepair-tokenizer":
        if doc.get("model") == "wordpiece":
            from bytepair import _wordpiece_file

            return _wordpiece_file.from_dict(doc, where=where)
        from bytepair._fileformat import from_dict

        return from_dict(doc, where=where)
    from bytepair.formats.tekken import from_tekken_dict, is_tekken

    if is_tekken(doc):
        return from_tekken_dict(doc, where=where)
    if _is_hf_wordpiece(doc):
        return _wordpiece_from_hf(doc, where)
    from bytepair.formats.hf_spm import from_hf_spm, is_hf_spm

    if is_hf_spm(doc):  # Unigram, or BPE with byte fallback / Metaspace (SentencePiece style)
        return from_hf_spm(doc, where=where)
    if isinstance(doc, dict) and "model" in doc and isinstance(doc["model"], dict):
        from bytepair.formats.hf import from_hf_dict

        return from_hf_dict(doc, where=where)
    if isinstance(doc, dict) and doc and all(isinstance(v, int) for v in list(doc.values())[:100]):
        merges = os.path.join(os.path.dirname(where), "merges.txt")
        if not os.path.exists(merges):
            raise _unknown(where, "a vocab.json without a merges.txt beside it")
        from bytepair.formats.gpt2 import load_gpt2

        return load_gpt2(where, merges)
    fmt = doc.get("format") if isinstance(doc, dict) else None
    raise _unknown(where, f"not a bytepair tokenizer file nor a known foreign format (format is {fmt!r})")


def _is_hf_wordpiece(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict) and doc["model"].get("type") == "WordPiece"


def _wordpiece_from_hf(doc: Any, where: str) -> WordPieceTokenizer:
    from bytepair.formats.hf_wordpiece import wordpiece_from_hf

    return wordpiece_from_hf(doc, path=where)


def _looks_like_ranks(head: bytes) -> bool:
    lines = head.split(b"\n")[:3]
    if not lines or not lines[0]:
        return False
    for line in lines[:-1] if len(lines) > 1 else lines:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            return False
    return True


def _load_ranks(where: str, pattern: object, special_tokens: Mapping[str, int] | None) -> Tokenizer:
    from bytepair import encodings
    from bytepair.formats.tiktoken import load_tiktoken

    if pattern is _UNSET:
        from bytepair.formats.tiktoken import _read

        data, _ = _read(where, None)  # decompressed with the reader's bound
        digest = hashlib.sha256(data).hexdigest()
        for name, spec in encodings._ENCODINGS.items():
            if spec.sha256 == digest:
                return encodings.get_encoding(name)
        raise FormatError(
            f"{where}: a tiktoken rank file does not hold its split pattern; pass "
            "bytepair.load(path, pattern=..., special_tokens={...}) (a preset name: gpt2, gpt4, o200k, or a regex)"
        )
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, not {type(pattern).__name__}")
    return load_tiktoken(where, pattern=pattern, special_tokens=special_tokens)

