"""bytepair's own tokenizer file: one self-contained, versioned JSON document.

    {
      "format": "bytepair-tokenizer",
      "version": 1,
      "model": "bpe",                      # "bpe": vocab + merges; "ranks": tiktoken's model
      "pattern": {"preset": "gpt4", "regex": "..."},   # regex null: no splitting
      "normalization": null,               # or "nfc", "nfkc+lowercase", ... (see _normalize.py)
      "special_tokens": {"<|endoftext|>": 50256},
      "reserved_special_tokens": [50257],  # ids of reserved slots not yet claimed (optional)
      "special_tokens_map": {"eos": "<|endoftext|>"},  # roles (optional)
      "vocab": [[0, "AA=="], [1, "AQ=="], ...],       # [id, base64 of the token's bytes]
      "merges": [[97, 98], ...],                      # [left id, right id], in priority order
      "training": {...},                              # options, input sizes, bytepair version
      "bytepair_version": "0.1.0"
    }

Everything needed to encode identically is in the file: a tokenizer loaded with another
pattern would silently shift every id, so the pattern's regex itself is stored.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

from bytepair._atomic import write_atomic
from bytepair._json import read_json
from bytepair._normalize import canonical
from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

FORMAT = "bytepair-tokenizer"
VERSION = 1
ID_BOUND = 2**32  # ids are u32 in the core


def to_dict(tok: Tokenizer) -> dict[str, Any]:
    from bytepair import __version__

    vocab = tok._vocab
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "model": "bpe" if tok._merges is not None else "ranks",
        "pattern": {"preset": tok.pattern_name, "regex": tok.pattern},
        "normalization": tok.normalization,
        "special_tokens": tok.special_tokens,
        "reserved_special_tokens": sorted(tok._reserved),
        "special_tokens_map": tok.special_tokens_map,
        "vocab": [[i, base64.b64encode(vocab[i]).decode("ascii")] for i in sorted(vocab)],
    }
    if tok._merges is not None:
        ids = {b: i for i, b in vocab.items()}
        doc["merges"] = [[ids[a], ids[b]] for a, b in tok._merges]
    doc["training"] = tok.training
    doc["bytepair_version"] = __version__
    return doc


def save(tok: Tokenizer, path: str | os.PathLike[str]) -> None:
    text = json.dumps(to_dict(tok), ensure_ascii=False, separators=(",", ":")) + "\n"
    write_atomic(path, text.encode("utf-8"))


def _need(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise FormatError(f"{where}: missing the key {key!r}")
    value = doc[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FormatError(f"{where}: {key!r} must be {names}, got {type(value).__name__}")
    return value


def from_dict(doc: Any, where: str = "tokenizer") -> Tokenizer:
    if not isinstance(doc, dict):
        raise FormatError(f"{where}: expected a JSON object at the top level")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise FormatError(f"{where}: not a bytepair tokenizer file (format is {fmt!r}, expected {FORMAT!r})")
    version = _need(doc, "version", int, where)
    if version > VERSION or version < 1:
        raise FormatError(
            f"{where}: format version {version} is not supported (this bytepair reads version {VERSION}); "
            "upgrade bytepair to read it"
        )
    model = _need(doc, "model", str, where)
    if model == "wordpiece":  # another class reads WordPiece files
        raise FormatError(f"{where}: a WordPiece tokenizer: read it with bytepair.load() or WordPieceTokenizer.from_file()")
    if model not in ("bpe", "ranks"):
        raise FormatError(f"{where}: unknown model {model!r} (expected 'bpe' or 'ranks')")
    pattern = _need(doc, "pattern", dict, where)
    regex = pattern.get("regex")
    if regex is not None and not isinstance(regex, str):
        raise FormatError(f"{where}: pattern.regex must be a string or null")
    normalization = doc.get("normalization")
    try:
        normalization = canonical(normalization)
    except (BytepairError, TypeError):
        raise FormatError(f"{where}: normalization {normalization!r} is not supported by this bytepair") from None
    specials = _need(doc, "special_tokens", dict, where)
    for text, i in specials.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < ID_BOUND:
            raise FormatError(f"{where}: special_tokens[{text!r}] must be a non-negative int below 2**32, got {i!r}")
    reserved = doc.get("reserved_special_tokens") or []
    if not isinstance(reserved, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in reserved):
        raise FormatError(f"{where}: 'reserved_special_tokens' must be a list of ids")
    if set(reserved) - set(specials.values()):
        bad = sorted(set(reserved) - set(specials.values()))[0]
        raise FormatError(f"{where}: reserved_special_tokens names the id {bad}, which is not a special token")
    roles = doc.get("special_tokens_map") or {}
    if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
        raise FormatError(f"{where}: 'special_tokens_map' must map roles to special-token texts")

    vocab: dict[int, bytes] = {}
    for n, entry in enumerate(_need(doc, "vocab", list, where)):
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[0], int)
            or isinstance(entry[0], bool)
            or not 0 <= entry[0] < ID_BOUND
            or not isinstance(entry[1], str)
        ):
            raise FormatError(f"{where}: vocab[{n}] must be [id in [0, 2**32), base64 string], got {entry!r:.80}")
        try:
            token = base64.b64decode(entry[1], validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"{where}: vocab[{n}] has invalid base64 {entry[1]!r:.80}") from None
        if entry[0] in vocab:
            raise FormatError(f"{where}: vocab[{n}] repeats the id {entry[0]}")
        vocab[entry[0]] = token
    training = doc.get("training") or {}
    if not isinstance(training, dict):
        raise FormatError(f"{where}: 'training' must be an object")
    try:
        if model == "ranks":
            return Tokenizer._from_ranks(
                {b: i for i, b in vocab.items()}, special_tokens=specials, pattern=regex, training=training,
                normalization=normalization, reserved=reserved, roles=roles,
            )
        merge_ids: list[tuple[int, int]] = []
        for n, m in enumerate(_need(doc, "merges", list, where)):
            if not (
                isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in m)
            ):
                raise FormatError(f"{where}: merges[{n}] must be [left id, right id], got {m!r:.80}")
            a, b = m
            if a not in vocab or b not in vocab:
                bad = a if a not in vocab else b
                raise FormatError(f"{where}: merges[{n}] names the token id {bad}, which is not in the vocab")
            merge_ids.append((a, b))
        merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
        return Tokenizer._from_merges(
            vocab, merges, merge_ids, dict(specials), regex, training, normalization=normalization, reserved=reserved, roles=roles
        )
    except FormatError:
        raise
    except BytepairError as e:
        raise FormatError(f"{where}: {e}") from None


def load(path: str | os.PathLike[str]) -> Tokenizer:
    return from_dict(read_json(path), where=os.fspath(path))
