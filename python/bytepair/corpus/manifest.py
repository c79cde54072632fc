"""``manifest.json``: what an output directory holds and how it was made, checked on resume.

The manifest lists the inputs (path, size, mtime), the tokenizer's hash, the options, and each
finished shard (its files' sizes and CRC-32s, its tokens and documents, and where the next shard
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
    _check_layout(doc, path)
    return doc


def _is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


_INT64 = 2**63 - 1


def _check_layout(doc: dict[str, Any], path: str) -> None:
    """Every value that open_shards and a resumed run read, of the type and range the writer
    gives it. A manifest whose own sha256 matches can still be made by hand or by another
    program; what reads it then indexes it without looking again."""

    def bad(field: str, what: str, value: Any) -> CorpusError:
        return CorpusError(f"{path}: {field} must be {what}, got {value!r:.80}; pass --overwrite to start again")

    for key, kind, what in (
        ("complete", bool, "true or false"),
        ("tokenizer", dict, "an object"),
        ("options", dict, "an object"),
        ("inputs", list, "a list"),
        ("shards", list, "a list"),
    ):
        if not isinstance(doc.get(key), kind):
            raise bad(key, what, doc.get(key))
    for key in ("tokens", "documents", "replaced"):
        if not _is_int(doc.get(key), 0, _INT64):
            raise bad(key, "an int from 0", doc.get(key))

    from bytepair.corpus import formats

    opts = doc["options"]
    fmt, dtype, eot, position = (opts.get(k) for k in ("format", "dtype", "eot", "eot_position"))
    if fmt not in formats.FORMATS:
        raise bad("options.format", " or ".join(map(repr, formats.FORMATS)), fmt)
    if dtype not in ("uint16", "uint32"):
        raise bad("options.dtype", "'uint16' or 'uint32'", dtype)
    itemsize = 2 if dtype == "uint16" else 4
    if "eot" not in opts or eot is not None and not _is_int(eot, 0, 2 ** (8 * itemsize) - 1):
        raise bad("options.eot", f"null or an id that {dtype} holds", eot)
    if "eot_position" not in opts or position not in (("prepend", "append") if eot is not None else (None,)):
        raise bad("options.eot_position", "'prepend' or 'append' with an eot, else null", position)
    # llmc's header counts tokens in an int32; a file holds at most 2**63 - 1 bytes.
    max_tokens = formats.LLMC_MAX_TOKENS if fmt == "llmc" else _INT64 // itemsize
    for k, shard in enumerate(doc["shards"]):
        at = f"shards[{k}]"
        if not isinstance(shard, dict):
            raise bad(at, "an object", shard)
        files = shard.get("files")
        names = formats.shard_names(fmt, k)
        if not isinstance(files, list) or len(files) != len(names):
            raise bad(f"{at}.files", f"a list of {len(names)} file(s) ({', '.join(names)})", files)
        for n, (f, name) in enumerate(zip(files, names)):
            if not isinstance(f, dict):
                raise bad(f"{at}.files[{n}]", "an object", f)
            if f.get("name") != name:
                raise bad(f"{at}.files[{n}].name", repr(name), f.get("name"))
            if not _is_int(f.get("bytes"), 0, _INT64):
                raise bad(f"{at}.files[{n}].bytes", "an int from 0", f.get("bytes"))
            # crc32 since this version; a resumed run still checks the sha256 of older manifests.
            digest, digits = ("crc32", 8) if "crc32" in f or "sha256" not in f else ("sha256", 64)
            value = f.get(digest)
            if not (isinstance(value, str) and len(value) == digits and all(c in "0123456789abcdef" for c in value)):
                raise bad(f"{at}.files[{n}].{digest}", f"{digits} lowercase hex digits", value)
        if not _is_int(shard.get("tokens"), 1, max_tokens):
            raise bad(f"{at}.tokens", f"an int from 1 to {max_tokens}", shard.get("tokens"))
        if not _is_int(shard.get("documents"), 0, _INT64):
            raise bad(f"{at}.documents", "an int from 0", shard.get("documents"))
        nxt = shard.get("next")
        # Where the next shard starts in the input: (document index, tokens of it written);
        # [-1, 0] after the last shard of a finished run.
        if not (isinstance(nxt, list) and (nxt == [-1, 0] or len(nxt) == 2 and all(_is_int(x, 0, _INT64) for x in nxt))):
            raise bad(f"{at}.next", "[document index, tokens to skip]", nxt)
