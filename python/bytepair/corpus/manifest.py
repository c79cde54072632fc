"""``manifest.json``: what an output directory holds and how it was made, checked on resume.

The manifest lists the inputs (path, size, mtime), the tokenizer's hash, the options, and each
finished shard (its files' sizes and sha256, its tokens and documents, and where the next shard
starts in the input: document index and tokens already written of that document). It is
rewritten atomically after every shard, so it always describes shards that are complete on
disk. Its own ``manifest_sha256`` (over the rest of it) catches hand edits.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from bytepair._atomic import write_atomic
from bytepair._files import read_bytes
from bytepair.errors import CorpusError

if TYPE_CHECKING:
    from bytepair.tokenizer import Tokenizer

NAME = "manifest.json"
FORMAT = "bytepair-shards"
VERSION = 1


def tokenizer_hash(tok: Tokenizer) -> str:
    """sha256 of everything that decides the ids (vocabulary, merges, pattern, normalization,
    special tokens), not of how the tokenizer was trained. Hashes the token bytes directly
    (a few ms for o200k, whose table the extension builds; 0.3 s through Python bytes objects,
    1 s through the JSON file format)."""
    meta = {
        "model": "bpe" if tok._merges is not None else "ranks",
        "pattern": tok.pattern,
        "normalization": tok.normalization,
        "special_tokens": tok.special_tokens,
    }
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    if tok._vocab_dict is None:  # the vocabulary is the extension's: the same bytes, made in Rust
        h.update(tok._core.vocab_table()[0])
    else:
        h.update(b"".join(i.to_bytes(4, "little") + len(b).to_bytes(4, "little") + b for i, b in sorted(tok._vocab.items())))
    for a, b in tok._merges or ():
        h.update(len(a).to_bytes(4, "little") + a + len(b).to_bytes(4, "little") + b)
    return h.hexdigest()


def _body_hash(doc: dict[str, Any]) -> str:
    rest = {k: v for k, v in doc.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write(outdir: str, doc: dict[str, Any]) -> None:
    doc["manifest_sha256"] = _body_hash(doc)
    write_atomic(os.path.join(outdir, NAME), (json.dumps(doc, indent=1) + "\n").encode())


def read(outdir: str) -> dict[str, Any] | None:
    """The manifest of ``outdir``, checked against its own hash; ``None`` if there is none."""
    path = os.path.join(outdir, NAME)
    if not os.path.exists(path):
        return None
    data = read_bytes(path, CorpusError)  # a FIFO would block the read, a device never end
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:  # ValueError: JSONDecodeError, or an int of 4,300+ digits
        raise CorpusError(f"{path} is not a valid manifest ({e}); pass --overwrite to start again") from None
    except RecursionError:
        raise CorpusError(f"{path} is not a valid manifest (nested too deeply); pass --overwrite to start again") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CorpusError(f"{path} is not a bytepair shard manifest; pass --overwrite to start again")
    if doc.get("version") != VERSION:
        raise CorpusError(f"{path}: unknown manifest version {doc.get('version')!r}")
    try:
        edited = doc.get("manifest_sha256") != _body_hash(doc)
    except RecursionError:  # json.dumps of a document that json.loads just took, deeper in the stack
        raise CorpusError(f"{path} is not a valid manifest (nested too deeply); pass --overwrite to start again") from None
    if edited:
        raise CorpusError(f"{path} was edited (its sha256 does not match); pass --overwrite to start again")
    return doc
