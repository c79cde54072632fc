"""GPT-2's ``vocab.json`` + ``merges.txt``: byte-level BPE written as text.

Each token's bytes are written as a string of printable characters, one per byte, by GPT-2's
byte-to-unicode table: the printable Latin-1 bytes stand for themselves and the others (space,
control bytes, ...) are moved to U+0100 and up (a space is ``Ġ``, a newline ``Ċ``).
``vocab.json`` maps those strings to ids; ``merges.txt`` lists one merge per line, the two
strings separated by a space, in priority order, after an optional ``#version`` line. Special
tokens sit in ``vocab.json`` under their own text (``<|endoftext|>``).
"""

from __future__ import annotations

import codecs
import json
import operator
import os
from collections.abc import Callable, Mapping
from typing import Any

from bytepair._atomic import write_atomic
from bytepair._json import read_json, read_text
from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

__all__ = ["BYTE_TO_UNICODE", "bytes_to_unicode", "dump_gpt2", "load_gpt2", "unicode_to_bytes"]


def _table() -> dict[int, str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


#: GPT-2's byte -> character table.
BYTE_TO_UNICODE: dict[int, str] = _table()
# Decoding and encoding through a charmap codec runs in C: a tokenizer.json of o200k's size
# has 600,000 strings to convert each way.
_DECODING_TABLE = "".join(BYTE_TO_UNICODE[b] for b in range(256))
_ENCODING_MAP = codecs.charmap_build(_DECODING_TABLE)


def bytes_to_unicode(data: bytes) -> str:
    """A token's bytes as GPT-2 writes them (``b" the"`` -> ``"Ġthe"``)."""
    return codecs.charmap_decode(data, "strict", _DECODING_TABLE)[0]


def unicode_to_bytes(text: str) -> bytes | None:
    """The inverse of :func:`bytes_to_unicode`; ``None`` if a character is not in the table."""
    try:
        return codecs.charmap_encode(text, "strict", _ENCODING_MAP)[0]
    except UnicodeEncodeError:
        return None


def parse(
    vocab: object,
    merge_pairs: list[tuple[str, str]],
    *,
    where_vocab: str,
    merge_name: Callable[[int], str],
) -> tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int]]:
    """Checks a GPT-2-style vocabulary (``{string: id}``) and merges (pairs of strings);
    returns ``(vocab, merges as pairs of ids, special tokens)``. Strings outside the byte table are
    special tokens. Errors name the file and the entry (``merge_name(n)`` for merge ``n``)."""
    if not isinstance(vocab, dict):
        raise FormatError(f"{where_vocab}: expected a JSON object {{token: id}}")
    by_id: dict[int, bytes] = {}
    by_str: dict[str, int] = {}
    specials: dict[str, int] = {}
    seen_ids: dict[int, str] = {}
    fast = _parse_vocab_fast(vocab)
    if fast is not None:
        by_id, by_str = fast
    for text, i in () if fast is not None else vocab.items():
        if type(i) is not int or not 0 <= i < 2**32:
            raise FormatError(f"{where_vocab}: the id of {text!r} must be an int in [0, 2**32), got {i!r}")
        if i in seen_ids:
            raise FormatError(f"{where_vocab}: {text!r} and {seen_ids[i]!r} both have the id {i}")
        seen_ids[i] = text
        raw = unicode_to_bytes(text) if text else None
        if raw is None:
            specials[text] = i
            continue
        by_id[i] = raw
        by_str[text] = i
    # Strings and bytes correspond one to one, so distinct strings are distinct tokens, and
    # the 256 single bytes are the 256 one-character strings of the table.
    missing = [b for b, c in enumerate(_DECODING_TABLE) if c not in by_str]
    if missing:
        raise FormatError(
            f"{where_vocab}: no token for the byte 0x{missing[0]:02x} ({BYTE_TO_UNICODE[missing[0]]!r}); "
            "a byte-level BPE vocabulary has all 256"
        )
    # Checked in bulk (map and zip run in C); the loop below names the first bad merge.
    if merge_pairs and set(map(len, merge_pairs)) != {2}:
        raise ValueError("merges must be pairs")  # the callers then name the bad entry
    lefts, rights = (list(x) for x in zip(*merge_pairs)) if merge_pairs else ([], [])
    a_ids = list(map(by_str.get, lefts))
    b_ids = list(map(by_str.get, rights))
    ok = (
        len(lefts) == len(merge_pairs)
        and None not in a_ids
        and None not in b_ids
        and all(map(by_str.__contains__, map(operator.add, lefts, rights)))
    )
    if not ok:
        for n, (left, right) in enumerate(merge_pairs):
            a = by_str.get(left)
            b = by_str.get(right)
            if a is None or b is None:
                bad = left if a is None else right
                raise FormatError(f"{merge_name(n)}: {bad!r} is not a token of the vocabulary")
            if (left + right) not in by_str:
                raise FormatError(
                    f"{merge_name(n)}: the merge {left + ' ' + right!r} makes {left + right!r}, which is not in the vocabulary"
                )
    merge_ids: list[tuple[int, int]] = list(zip(a_ids, b_ids))  # type: ignore[arg-type]  # no None: checked
    if len(set(merge_ids)) != len(merge_ids):
        first: dict[tuple[int, int], int] = {}
        for n, pair in enumerate(merge_ids):
            if pair in first:
                left, right = merge_pairs[n]
                raise FormatError(f"{merge_name(n)}: the merge {left + ' ' + right!r} repeats {merge_name(first[pair])}")
            first[pair] = n
    return by_id, merge_ids, specials


def _parse_vocab_fast(vocab: dict[Any, Any]) -> tuple[dict[int, bytes], dict[str, int]] | None:
    """The common case in bulk (all strings in the byte table, distinct int ids): one codec call
    for all the strings (one character per byte, so lengths carry over). None otherwise, and
    the entry-by-entry loop names what is wrong."""
    texts = list(vocab)
    ids = list(vocab.values())
    if not all(type(i) is int for i in ids) or (ids and not (0 <= min(ids) and max(ids) < 2**32)):
        return None
    if len(set(ids)) != len(ids) or not all(texts):
        return None
    try:
        joined = codecs.charmap_encode("".join(texts), "strict", _ENCODING_MAP)[0]
    except UnicodeEncodeError:
        return None
    by_id: dict[int, bytes] = {}
    at = 0
    for text, i in zip(texts, ids):
        end = at + len(text)
        by_id[i] = joined[at:end]
        at = end
    return by_id, dict(zip(texts, ids))


def merge_lines(text: str, where: str) -> tuple[list[tuple[str, str]], Callable[[int], str]]:
    """The merges of a ``merges.txt`` (after an optional ``#version`` line) as pairs, and how
    to name merge ``n`` in messages (``merges.txt, line 7``)."""
    lines = text.split("\n")
    first = 1
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
        first = 2
    while lines and lines[-1] in ("", "\r"):
        lines.pop()
    pairs: list[tuple[str, str]] = []
    for n, line in enumerate(lines):
        parts = line.rstrip("\r").split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FormatError(f"{where}, line {n + first}: expected two tokens separated by one space, got {line!r:.80}")
        pairs.append((parts[0], parts[1]))
    return pairs, lambda n: f"{where}, line {n + first}"


def load_gpt2(
    vocab_path: str | os.PathLike[str],
    merges_path: str | os.PathLike[str],
    *,
    pattern: str | None = "gpt2",
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Reads GPT-2's ``vocab.json`` and ``merges.txt``. Vocabulary entries that are not byte
    strings (``<|endoftext|>``) become special tokens; ``special_tokens`` adds more. ``pattern``
    defaults to GPT-2's own split pattern."""
    where_v, where_m = os.fspath(vocab_path), os.fspath(merges_path)
    vocab_doc = read_json(where_v)
    pairs, name = merge_lines(read_text(where_m), where_m)
    vocab, merge_ids, specials = parse(vocab_doc, pairs, where_vocab=where_v, merge_name=name)
    merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
    # A token of several bytes that no merge makes can only be added text (GPT-2's
    # <|endoftext|>): it is a special token, as Hugging Face treats it.
    made = {a + b for a, b in merges}
    parts = {x for pair in merges for x in pair}
    for i, b in list(vocab.items()):
        if len(b) > 1 and b not in made and b not in parts:
            try:
                text = b.decode("utf-8")
            except UnicodeDecodeError:
                continue
            del vocab[i]
            specials[text] = i
    specials.update(special_tokens or {})
    check_special_ids(specials, len(vocab), where_v)
    try:
        return Tokenizer._from_merges(vocab, merges, merge_ids, specials, pattern)
    except BytepairError as e:
        raise FormatError(f"{where_v}: {e}") from None


def check_special_ids(specials: Mapping[str, int], n_tokens: int, where: str) -> None:
    """Special-token ids must stay near the vocabulary: the core keeps tables indexed by id,
    so a stray id of 2**31 would cost gigabytes."""
    limit = 2 * (n_tokens + len(specials)) + (1 << 20)
    for text, i in specials.items():
        if i > limit:
            raise FormatError(f"{where}: the special token {text!r} has the id {i}, far beyond the {n_tokens} tokens")


def token_strings(tok: Tokenizer) -> dict[int, str]:
    """``{id: string}`` of the ordinary tokens."""
    return {i: bytes_to_unicode(b) for i, b in tok._vocab.items()}


def vocab_json(tok: Tokenizer, strings: dict[int, str] | None = None) -> dict[str, int]:
    """``{string: id}`` of the ordinary tokens then the special tokens, in id order."""
    strings = token_strings(tok) if strings is None else strings
    out = {strings[i]: i for i in sorted(strings)}
    for text, i in sorted(tok._special_tokens.items(), key=lambda kv: kv[1]):
        if tok._core.lookup(text.encode()) != i:
            out[text] = i
    return out


def merge_ids(tok: Tokenizer) -> list[tuple[int, int]]:
    """The merges as pairs of ids (recovered from the ranks for a rank model)."""
    if tok._merges is None:
        return [(a, b) for a, b, _ in tok._core.rank_merges()]
    ids = {b: i for i, b in tok._vocab.items()}
    return [(ids[a], ids[b]) for a, b in tok._merges]


def merges_txt(tok: Tokenizer, strings: dict[int, str] | None = None) -> str:
    strings = token_strings(tok) if strings is None else strings
    lines = ["#version: 0.2", *(strings[a] + " " + strings[b] for a, b in merge_ids(tok))]
    return "\n".join(lines) + "\n"


def check_exportable(tok: Tokenizer, what: str) -> dict[int, str]:
    """GPT-2 and Hugging Face byte-level files show tokens as strings: a special token's text
    must not also be an ordinary token's string. Returns the strings, ``{id: string}``."""
    check_specials_exportable(tok, what)
    return token_strings(tok)


def check_specials_exportable(tok: Tokenizer, what: str) -> None:
    """:func:`check_exportable` without making the strings: a special token written into the
    vocabulary (see :func:`vocab_json`) must not read as an ordinary token's string, i.e. its
    text must not be GPT-2's string of an ordinary token's bytes (strings and bytes correspond
    one to one)."""
    for text, i in tok._special_tokens.items():
        if tok._core.lookup(text.encode()) != i:
            raw = unicode_to_bytes(text)
            if raw and tok._core.lookup(raw) is not None:
                raise FormatError(f"cannot write {what}: the special token {text!r} reads as an ordinary token's string")


def dump_gpt2(tok: Tokenizer, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> None:
    """Writes ``vocab.json`` and ``merges.txt`` (each atomically). The split pattern and the
    normalization are not part of this format."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"dump_gpt2() takes a Tokenizer, not {type(tok).__name__}")
    strings = check_exportable(tok, "vocab.json")
    vocab = json.dumps(vocab_json(tok, strings), ensure_ascii=False, indent=None) + "\n"
    merges = merges_txt(tok, strings)
    write_atomic(vocab_path, vocab.encode("utf-8"))
    write_atomic(merges_path, merges.encode("utf-8"))
