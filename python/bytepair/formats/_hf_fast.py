"""The fast way in for a Hugging Face ``tokenizer.json``.

Most of a ``tokenizer.json`` is ``model.vocab`` and ``model.merges``: 7.5 MB for o200k's
200,000 tokens and 199,744 merges. :class:`bytepair._core.HfModel` reads those two in Rust,
in one pass, decoding GPT-2's byte table on the way; Python's ``json`` reads the rest of the
document (normalizer, pre-tokenizer, added tokens: a few kB) with the two values replaced by
``{}`` and ``[]``, and :func:`bytepair.formats.hf._components` checks it as the full reader
does. For a file converted from tiktoken (``ignore_merges`` and merges that are exactly the
ranks' own), building the rank model in Rust gives its merges on the way, and the comparison
with the file's is free; no Python object is made per token.

Contract: :func:`load` does what ``from_hf_dict(read_json(path))`` does, or returns ``None``.
It answers ``None`` for anything but the well-formed common case (any JSON error, duplicate
key, odd number, unknown token, unsupported component...), and the full reader then runs and
names the problem in its own words. Past that point both readers share their last step
(``hf._from_merge_list``, which may raise or warn), so errors and warnings are exactly the full
reader's. The tests (``tests/test_hf_fast.py``) compare every entry point with and without the
fast reader on good files, on broken ones and on random edits.

Measured on the o200k-sized file (bench/README.md, ``bench_interop.py``): 0.21 to 0.59 times
the time of ``tokenizers.Tokenizer.from_file`` in the same run, where the full reader took 2.4
to 3.5 times it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bytepair import _core, _json
from bytepair._files import read_bytes
from bytepair.errors import BytepairError, FormatError
from bytepair.formats import gpt2, hf
from bytepair.patterns import resolve
from bytepair.tokenizer import Tokenizer

__all__ = ["load"]


def _rest(data: bytes, model: _core.HfModel) -> dict[str, Any] | None:
    """The document with model.vocab as ``{}`` and model.merges as ``[]``, read by ``json``
    with the full reader's rules (UTF-8, no duplicate key); None where the full reader would fail."""
    out = bytearray()
    at = 0
    for start, end, empty in sorted([(*model.vocab_span, b"{}"), (*model.merges_span, b"[]")]):
        out += data[at:start]
        out += empty
        at = end
    out += data[at:]
    try:
        doc = json.loads(out.decode("utf-8"), object_pairs_hook=_json.no_duplicate_keys)
    except (ValueError, RecursionError, _json.DuplicateKey):
        return None
    if not isinstance(doc, dict) or doc.get("format") == "bytepair-tokenizer":
        return None
    m = doc.get("model")
    # The spans are the model's vocab and merges (the Rust reader found them there).
    if not isinstance(m, dict) or m.get("type") != "BPE" or m.get("vocab") != {} or m.get("merges") != []:
        return None
    return doc


def _rank_tokenizer(
    vocab: _core.HfVocab,
    specials: dict[str, int],
    pattern: str | None,
    normalization: str | None,
    roles: Mapping[str, str],
) -> Tokenizer | None:
    """``hf._as_ranks`` without the vocabulary as Python objects: the rank model, if the
    file's merges are exactly the ranks' own."""
    try:
        tok = Tokenizer.__new__(Tokenizer)
        tok._pattern_name, tok._pattern = resolve(pattern)
        core = vocab.rank_encoder(tok._pattern, sorted(specials.items(), key=lambda kv: kv[1]))
        if core is None:
            return None
        tok._adopt(core, None, None, dict(specials), None, normalization=normalization, roles=roles)
        tok._check_roles(tok._roles)
    except BytepairError:
        return None
    return tok


def load(path: str, roles: Mapping[str, str] | None = None) -> Tokenizer | None:
    """The tokenizer ``hf.from_hf_dict(_json.read_json(path), where=path, roles=roles)``
    returns, or None (see the module doc)."""
    got = _load(path, roles)
    if got is None:
        return None
    tok, doc = got
    return hf._apply_pipeline(tok, doc, path)


def _load(path: str, roles: Mapping[str, str] | None) -> tuple[Tokenizer, dict[str, Any]] | None:
    try:
        data = read_bytes(path)
    except (OSError, FormatError):  # the full reader names the problem (a FIFO, a device...)
        return None
    model = _core.HfModel.parse(data)
    if model is None:
        return None
    doc = _rest(data, model)
    if doc is None:
        return None
    try:
        model_doc, normalization, pattern, specials = hf._components(doc, path)
    except FormatError:
        return None
    vocab = model.resolve(list(specials.items()))
    if vocab is None:
        return None
    try:
        gpt2.check_special_ids(specials, vocab.size, f"{path}: added_tokens")
    except FormatError:
        return None
    roles = {r: t for r, t in (roles or {}).items() if t in specials}
    ignore_merges = model_doc.get("ignore_merges")
    if ignore_merges and vocab.merge_count and vocab.multi_byte == vocab.merge_count:
        tok = _rank_tokenizer(vocab, specials, pattern, normalization, roles)
        if tok is not None:
            return tok, doc
    # A merge list: the same last step as the full reader's (errors included).
    merged = hf._from_merge_list(dict(vocab.items()), vocab.merge_ids(), specials, pattern, normalization, roles, ignore_merges, path)
    return merged, doc
