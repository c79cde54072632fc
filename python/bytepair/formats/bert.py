"""BERT's ``vocab.txt``: one WordPiece token per line, the line number (from 0) is its id.

The file holds the vocabulary only; the normalizer's options (``lowercase``, ...) and the
special tokens are not in it, so :func:`load_bert_vocab` takes them as keyword arguments,
passed on to :class:`~bytepair.WordPieceTokenizer`.
"""

from __future__ import annotations

import os
from typing import Any

from bytepair._atomic import write_atomic
from bytepair._files import read_bytes
from bytepair.errors import BytepairError, FormatError
from bytepair.wordpiece import WordPieceTokenizer

__all__ = ["dump_bert_vocab", "load_bert_vocab"]


#: Unknown-token names looked for, in this order, when ``unk_token`` is not given.
UNK_NAMES = ("[UNK]", "<unk>", "<UNK>", "[unk]")


def load_bert_vocab(path: str | os.PathLike[str], **options: Any) -> WordPieceTokenizer:
    """A WordPieceTokenizer from a ``vocab.txt``; ``options`` go to WordPieceTokenizer.

    What the file does not say is read from it: without ``lowercase``, a vocabulary with
    upper-case letters outside its bracketed special tokens is cased (``lowercase=False``, as
    bert-base-cased's), any other uncased; without ``unk_token``, the first of ``[UNK]``,
    ``<unk>``, ``<UNK>``, ``[unk]`` it holds is the unknown token."""
    where = os.fspath(path)
    data = read_bytes(where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise FormatError(f"{where}: line {line} is not UTF-8 text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines:
        raise FormatError(f"{where}: the vocabulary is empty")
    tokens: list[str] = []
    first: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        token = raw[:-1] if raw.endswith("\r") else raw
        if token == "":
            raise FormatError(f"{where}: line {n} is empty (a vocab.txt has one token per line)")
        if token in first:
            raise FormatError(f"{where}: line {n} repeats the token {token!r} of line {first[token]}")
        first[token] = n
        tokens.append(token)
    if "lowercase" not in options:
        options["lowercase"] = not any(_cased(t) for t in tokens)
    if "unk_token" not in options:
        unk = next((u for u in UNK_NAMES if u in first), None)
        if unk is None:
            raise FormatError(
                f"{where}: the vocabulary has no unknown token ({', '.join(UNK_NAMES)}); name the one to use: "
                "load_bert_vocab(path, unk_token=...)"
            )
        options["unk_token"] = unk
    try:
        return WordPieceTokenizer(tokens, **options)
    except BytepairError as e:
        raise FormatError(f"{where}: {e}") from None


def _cased(token: str) -> bool:
    """Whether ``token`` has an upper-case letter that is not part of a special token's name."""
    if len(token) > 2 and token[0] + token[-1] in ("[]", "<>"):
        return False
    return token != token.lower()


def dump_bert_vocab(tok: WordPieceTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes the vocabulary as ``vocab.txt`` (atomically)."""
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    for i, t in enumerate(tokens):
        if t is None or "\n" in t or "\r" in t:
            raise FormatError(f"the token {t!r} (id {i}) cannot be written to a vocab.txt (it holds a line break)")
    write_atomic(path, "".join(f"{t}\n" for t in tokens).encode("utf-8"))
