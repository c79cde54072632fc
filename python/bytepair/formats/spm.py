"""SentencePiece's ``.model`` files (Unigram and BPE), read and written without ``protobuf``.

A ``.model`` is one protobuf message: the pieces (text, score, type), the trainer's options
(model type, byte fallback, special ids) and the normalizer's (the precompiled charsmap,
``add_dummy_prefix``, ``remove_extra_whitespaces``, ``escape_whitespaces``). The Rust core reads
the fields that matter and keeps every other field as it came, so ``dump_spm`` writes back the
file it read, byte for byte. Malformed files raise :class:`bytepair.errors.FormatError` naming
the file and the field.
"""

from __future__ import annotations

import os

from bytepair.sentencepiece import SentencePieceTokenizer

__all__ = ["dump_spm", "load_spm", "looks_like_spm"]


def load_spm(path: str | os.PathLike[str]) -> SentencePieceTokenizer:
    """Reads a SentencePiece ``.model`` file."""
    return SentencePieceTokenizer.from_file(path)


def dump_spm(tokenizer: SentencePieceTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes ``tokenizer`` as a ``.model`` file (atomically)."""
    if not isinstance(tokenizer, SentencePieceTokenizer):
        raise TypeError(f"dump_spm writes a SentencePieceTokenizer, not {type(tokenizer).__name__}")
    tokenizer.save(path)


def looks_like_spm(head: bytes) -> bool:
    """Whether the first bytes of a file look like a ``.model``: the message starts with a
    piece (field 1, length-delimited) whose own first field is the piece's text."""
    if len(head) < 3 or head[0] != 0x0A:
        return False
    i, n = 1, 0
    for shift in range(0, 35, 7):
        if i >= len(head):
            return False
        b = head[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            break
    else:
        return False
    return n > 0 and i < len(head) and head[i] == 0x0A
