"""Mistral's Tekken files (``tekken_*.json``: Mistral NeMo, Pixtral, Ministral and later models).

A Tekken file is tiktoken's model written as JSON::

    {"config": {"pattern": ..., "num_vocab_tokens": N, "default_vocab_size": V,
                "default_num_special_tokens": S, "version": "v7"},
     "vocab": [{"rank": 0, "token_bytes": "<base64>", "token_str": "\\u0000"}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...],
     ... (image / audio / model settings: kept as read, written back)}

The special tokens take the ids ``0 .. S-1`` (those the file does not list are ``<SPECIAL_k>``
at id ``k``); the first ``V - S`` vocab entries follow at ``S + rank`` (the rest are unused),
the rank being the merge priority as in a tiktoken rank file. Files of version v7 and earlier
may leave out ``special_tokens``: the 20 tokens Mistral used then (``<unk>``, ``<s>``, ``</s>``,
``[INST]``, ...) are meant. This is how ``mistral_common``'s ``Tekkenizer`` reads the file, and
:func:`load_tekken` gives its ids (the tests compare):

- ``Tekkenizer.encode(text, bos=False, eos=False)`` never matches special-token text in ``text``:
  that is ``tok.encode_ordinary(text)`` (``tok.encode(text)`` raises, as for any tokenizer, on
  special-token text unless it is allowed or ``disallowed_special=()``);
- ``bos=True`` is the BOS template, ``tok(text)["input_ids"]``; but ``tok(...)`` matches
  special-token text as Hugging Face's conversion of these files does (``mistral_common`` would
  encode ``"[INST]"`` typed in a message as ordinary text);
- ``Tekkenizer.decode(ids)`` drops special tokens: ``tok.decode(ids, skip_special_tokens=True)``;
  with ``SpecialTokenPolicy.KEEP`` it is ``tok.decode(ids)``. One difference is left: ids that put
  a special token between the bytes of one character (which no encoder makes) decode to that
  character here, where ``mistral_common`` decodes each run of ordinary ids apart and gives
  replacement characters.

Roles: ``bos`` = ``<s>``, ``eos`` = ``</s>``, ``unk`` = ``<unk>``, ``pad`` = ``<pad>`` (those the
file has). :func:`dump_tekken` writes a tokenizer whose ids have this layout (special tokens
first, then the ranks, single bytes at ``S .. S+255``) and refuses, naming the first id that
does not fit, any other: renumbering would change every id the model was trained with.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bytepair._atomic import write_atomic
from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

__all__ = ["dump_tekken", "is_tekken", "load_tekken", "to_tekken_dict"]

# The special tokens a file of version v7 or earlier means when it lists none (ids 0..19).
_LEGACY_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
_LEGACY_UP_TO = 7  # versions after v7 must list their special tokens
_ROLES = {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "pad": "<pad>"}
_CONFIG_KEYS = ("pattern", "num_vocab_tokens", "default_vocab_size", "default_num_special_tokens", "version")
_DEFAULT_VERSION = "v7"


@dataclass
class _TekkenExtras:
    """What a Tekken file holds beyond the tokenizer, kept on a tokenizer :func:`load_tekken`
    made (``tok.__dict__["_tekken"]``) so that :func:`dump_tekken` writes the file back as read."""

    version: str
    num_vocab_tokens: int
    listed: list[dict[str, Any]] | None  # the file's special_tokens entries, or None if it has none
    unused_vocab: list[dict[str, Any]]  # vocab entries past default_vocab_size - S
    config_rest: dict[str, Any] = field(default_factory=dict)
    rest: dict[str, Any] = field(default_factory=dict)  # image, audio, type, ...
    specials: dict[str, int] = field(default_factory=dict)  # as read: a changed tokenizer drops the extras


def is_tekken(doc: Any) -> bool:
    """Whether a parsed JSON document is meant as a Tekken file: a ``config`` object beside a
    ``vocab`` (no other format bytepair reads has both; a malformed one is then refused
    naming the field, not as an unknown format)."""
    return isinstance(doc, dict) and isinstance(doc.get("config"), dict) and "vocab" in doc


def _int(doc: Mapping[str, Any], key: str, where: str, field_name: str) -> int:
    value = doc.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise FormatError(f"{where}: {field_name} must be a non-negative integer, got {value!r}")
    return value


def _version_number(version: str, where: str) -> int:
    if len(version) < 2 or version[0] != "v" or not version[1:].isdigit():
        raise FormatError(f"{where}: config.version must be a version like 'v7' or 'v13', got {version!r}")
    return int(version[1:])


def load_tekken(path: str | os.PathLike[str]) -> Tokenizer:
    """Reads a Tekken file (see the module doc) into a :class:`~bytepair.Tokenizer` with
    ``mistral_common``'s ids. A malformed file raises :class:`~bytepair.FormatError` naming the
    file and the field."""
    from bytepair._json import read_json

    where = os.fspath(path)
    return from_tekken_dict(read_json(where), where=where)


def from_tekken_dict(doc: Any, *, where: str = "<tekken>") -> Tokenizer:
    """:func:`load_tekken` of an already parsed document."""
    from bytepair.pipeline.templates import TemplateProcessing

    if not isinstance(doc, dict):
        raise FormatError(f"{where}: a Tekken file is a JSON object, got {type(doc).__name__}")
    config = doc.get("config")
    if not isinstance(config, dict):
        raise FormatError(f"{where}: config must be an object, got {config!r}")
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise FormatError(f"{where}: config.pattern must be a non-empty regex string, got {pattern!r}")
    version = config.get("version")
    if not isinstance(version, str):
        raise FormatError(f"{where}: config.version must be a string such as 'v7', got {version!r}")
    version_number = _version_number(version, where)
    vocab_size = _int(config, "default_vocab_size", where, "config.default_vocab_size")
    n_special = _int(config, "default_num_special_tokens", where, "config.default_num_special_tokens")
    num_vocab_tokens = _int(config, "num_vocab_tokens", where, "config.num_vocab_tokens")
    vocab = doc.get("vocab")
    if not isinstance(vocab, list):
        raise FormatError(f"{where}: vocab must be a list, got {type(vocab).__name__}")
    if vocab_size < n_special or vocab_size - n_special > len(vocab):
        raise FormatError(
            f"{where}: config.default_vocab_size {vocab_size} needs {vocab_size - n_special} vocab entries after "
            f"config.default_num_special_tokens {n_special}, and vocab has {len(vocab)}"
        )

    listed = doc.get("special_tokens")
    if listed is None:
        if version_number > _LEGACY_UP_TO:
            raise FormatError(f"{where}: special_tokens is missing; files of version {version} must list them")
        texts = list(_LEGACY_SPECIALS)
    else:
        if not isinstance(listed, list):
            raise FormatError(f"{where}: special_tokens must be a list, got {type(listed).__name__}")
        texts = []
        for k, entry in enumerate(listed):
            if not isinstance(entry, dict):
                raise FormatError(f"{where}: special_tokens[{k}] must be an object, got {entry!r}")
            text = entry.get("token_str")
            if not isinstance(text, str) or not text:
                raise FormatError(f"{where}: special_tokens[{k}].token_str must be a non-empty string, got {text!r}")
            # mistral_common finds a special token's text by its position and its id by its rank:
            # the two must agree, or encode and decode would disagree.
            if entry.get("rank") != k:
                raise FormatError(f"{where}: special_tokens[{k}].rank must be {k} (its position), got {entry.get('rank')!r}")
            if not isinstance(entry.get("is_control", True), bool):
                raise FormatError(f"{where}: special_tokens[{k}].is_control must be true or false, got {entry['is_control']!r}")
            texts.append(text)
    if len(texts) > n_special:
        raise FormatError(
            f"{where}: special_tokens lists {len(texts)} tokens, more than config.default_num_special_tokens {n_special}"
        )
    texts += [f"<SPECIAL_{k}>" for k in range(len(texts), n_special)]
    specials: dict[str, int] = {}
    for k, text in enumerate(texts):
        if text in specials:
            raise FormatError(f"{where}: special_tokens[{k}].token_str {text!r} is also special token {specials[text]}")
        specials[text] = k

    inner = vocab_size - n_special
    ranks: dict[bytes, int] = {}
    for k in range(inner):
        entry = vocab[k]
        if not isinstance(entry, dict):
            raise FormatError(f"{where}: vocab[{k}] must be an object, got {entry!r}")
        if entry.get("rank") != k:
            raise FormatError(f"{where}: vocab[{k}].rank must be {k} (its position), got {entry.get('rank')!r}")
        encoded = entry.get("token_bytes")
        if not isinstance(encoded, str):
            raise FormatError(f"{where}: vocab[{k}].token_bytes must be a base64 string, got {encoded!r}")
        try:
            token = binascii.a2b_base64(encoded.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise FormatError(f"{where}: vocab[{k}].token_bytes is not base64: {encoded!r}") from None
        if k < 256 and token != bytes([k]):
            raise FormatError(f"{where}: vocab[{k}].token_bytes must be the single byte {bytes([k])!r}, got {token!r}")
        if not token:
            raise FormatError(f"{where}: vocab[{k}].token_bytes is empty")
        if token in ranks:
            raise FormatError(f"{where}: vocab[{k}].token_bytes {token!r} is also vocab[{ranks[token]}]")
        ranks[token] = k
    roles = {role: text for role, text in _ROLES.items() if text in specials}
    try:
        tok = Tokenizer._from_ranks(
            {b: n_special + r for b, r in ranks.items()}, special_tokens=specials, pattern=pattern, roles=roles
        )
    except BytepairError as e:
        raise FormatError(f"{where}: config.pattern or special_tokens: {e}") from None
    bos = roles.get("bos")
    if bos is not None:
        # mistral_common's encode(..., bos=True); the pair form is Llama's, as Hugging Face writes it.
        tok._post_processor = TemplateProcessing.of(f"{bos} $A", f"{bos} $A {bos}:1 $B:1", {bos: specials[bos]})
    tok._name = None
    tok.__dict__["_tekken"] = _TekkenExtras(
        version=version,
        num_vocab_tokens=num_vocab_tokens,
        listed=None if listed is None else [dict(e) for e in listed],
        unused_vocab=list(vocab[inner:]),
        config_rest={k: v for k, v in config.items() if k not in _CONFIG_KEYS},
        rest={k: v for k, v in doc.items() if k not in ("config", "vocab", "special_tokens")},
        specials=dict(specials),
    )
    return tok


def to_tekken_dict(tok: Tokenizer, *, version: str | None = None) -> dict[str, Any]:
    """The Tekken document of ``tok`` (see :func:`dump_tekken`)."""
    from bytepair.formats.tiktoken import check_ranks_agree

    if not isinstance(tok, Tokenizer):
        raise TypeError(f"a Tekken file holds a byte-level BPE Tokenizer, not {type(tok).__name__}")
    if tok.normalization is not None:
        raise FormatError(f"a Tekken file cannot say that text is normalized; this tokenizer applies {tok.normalization!r}")
    if tok.pattern is None:
        raise FormatError("a Tekken file needs a split pattern (config.pattern); this tokenizer has none")
    specials = tok.special_tokens
    n_special = len(specials)
    by_id = {i: t for t, i in specials.items()}
    for k in range(n_special):
        if k not in by_id:
            raise FormatError(
                f"a Tekken file puts the {n_special} special tokens at ids 0..{n_special - 1}, and id {k} is not one "
                "(bytepair does not renumber: the model's ids would change)"
            )
    vocab = tok._vocab
    ordinary = sorted(i for i in vocab if i not in by_id)
    for rank, i in enumerate(ordinary):
        if i != n_special + rank:
            raise FormatError(
                f"a Tekken file puts the ordinary tokens at ids {n_special}.. without gaps, after the special tokens; "
                f"this tokenizer has id {i} where {n_special + rank} was expected"
            )
        if rank < 256 and vocab[i] != bytes([rank]):
            raise FormatError(
                f"a Tekken file puts byte {rank} at id {n_special + rank}; this tokenizer has {vocab[i]!r} there"
            )
    check_ranks_agree(tok)
    extras: _TekkenExtras | None = tok.__dict__.get("_tekken")
    if extras is not None and extras.specials != specials:
        extras = None  # the special tokens changed since the file was read: its listing no longer holds
    if version is None:
        version = extras.version if extras is not None else _DEFAULT_VERSION
    _version_number(version, "version=")
    entries = []
    for rank, i in enumerate(ordinary):
        token = vocab[i]
        try:
            text: str | None = token.decode("utf-8")
        except UnicodeDecodeError:
            text = None  # a token that is part of a character: mistral_common writes null too
        entries.append({"rank": rank, "token_bytes": base64.b64encode(token).decode("ascii"), "token_str": text})
    unused = extras.unused_vocab if extras is not None else []
    config: dict[str, Any] = {
        "pattern": tok.pattern,
        "num_vocab_tokens": extras.num_vocab_tokens if extras is not None else len(entries) + len(unused),
        "default_vocab_size": n_special + len(entries),
        "default_num_special_tokens": n_special,
        "version": version,
    }
    doc: dict[str, Any] = {"config": config, "vocab": entries + unused}
    if extras is not None:
        config.update(extras.config_rest)
        doc.update(extras.rest)
    if extras is not None and extras.listed is None and version == extras.version:
        pass  # the file relied on the legacy listing: write it back the same way
    elif extras is not None and extras.listed is not None:
        doc["special_tokens"] = extras.listed
    else:
        doc["special_tokens"] = [{"rank": k, "token_str": by_id[k], "is_control": True} for k in range(n_special)]
    return doc


def dump_tekken(tok: Tokenizer, path: str | os.PathLike[str], *, version: str | None = None) -> None:
    """Writes ``tok`` as a Tekken file ``mistral_common`` reads with the same ids.

    ``tok``'s special tokens must be ids ``0 .. S-1`` and its ordinary tokens ``S ..`` without
    gaps, single bytes first (the layout of a file :func:`load_tekken` read); anything else is a
    :class:`~bytepair.FormatError` naming the first id that does not fit, and nothing is
    written. ``version`` (``config.version``) defaults to the one read, else ``"v7"``. A
    tokenizer read from a Tekken file is written back with what the file held beyond the
    tokenizer (image and audio settings, unused vocab entries, the special tokens' flags).
    The file is written to a temporary file beside ``path``, then renamed over it.
    """
    doc = to_tekken_dict(tok, version=version)
    write_atomic(os.fspath(path), json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8"))
