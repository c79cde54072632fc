"""GPT-2's ``vocab.json`` + ``merges.txt``: byte-level BPE written as text.

Each token's bytes are written as a string of printable characters, one per byte, by GPT-2's
byte-to-unicode table: the printable Latin-1 bytes stand for themselves and the others (space,
control bytes, ...) are moved to U+0100 and up (a space is ``Ġ``, a newline ``Ċ``).
``vocab.json`` maps those strings to ids; ``merges.txt`` lists one merge per line, the two
strings separated by a space, in priority order, after an optional ``#version`` line. Special
tokens sit in ``vocab.json`` under their own text (``<|endoftext|>``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from bytepair._atomic import write_atomic
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
_UNICODE_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_UNICODE.items()}
_ENCODE = str.maketrans({chr(b): c for b, c in BYTE_TO_UNICODE.items()})


def bytes_to_unicode(data: bytes) -> str:
    """A token's bytes as GPT-2 writes them (``b" the"`` -> ``"Ġthe"``)."""
    return data.decode("latin-1").translate(_ENCODE)


def unicode_to_bytes(text: str) -> bytes | None:
    """The inverse of :func:`bytes_to_unicode`; ``None`` if a character is not in the table."""
    try:
        return bytes(_UNICODE_TO_BYTE[c] for c in text)
    except KeyError:
        return None


def parse(
    vocab: object, merges_lines: list[str], *, where_vocab: str, where_merges: str, merge_line0: int = 1
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]], list[tuple[int, int]], dict[str, int]]:
    """Checks a GPT-2-style vocabulary (``{string: id}``) and merge lines (``"a b"``); returns
    ``(vocab, merges, merge ids, special tokens)``. Strings outside the byte table are special
    tokens. Errors name the file and the entry."""
    if not isinstance(vocab, dict):
        raise FormatError(f"{where_vocab}: expected a JSON object {{token: id}}")
    by_id: dict[int, bytes] = {}
    by_bytes: dict[bytes, int] = {}
    specials: dict[str, int] = {}
    seen_ids: dict[int, str] = {}
    for text, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise FormatError(f"{where_vocab}: the id of {text!r} must be an int in [0, 2**32), got {i!r}")
        if i in seen_ids:
            raise FormatError(f"{where_vocab}: {text!r} and {seen_ids[i]!r} both have the id {i}")
        seen_ids[i] = text
        raw = unicode_to_bytes(text) if text else None
        if raw is None:
            specials[text] = i
            continue
        if raw in by_bytes:
            raise FormatError(f"{where_vocab}: {text!r} repeats the bytes of id {by_bytes[raw]}")
        by_id[i] = raw
        by_bytes[raw] = i
    missing = [b for b in range(256) if bytes([b]) not in by_bytes]
    if missing:
        raise FormatError(
            f"{where_vocab}: no token for the byte 0x{missing[0]:02x} ({BYTE_TO_UNICODE[missing[0]]!r}); "
            "a byte-level BPE vocabulary has all 256"
        )
    merges: list[tuple[bytes, bytes]] = []
    merge_ids: list[tuple[int, int]] = []
    seen_pairs: dict[tuple[int, int], int] = {}
    for n, line in enumerate(merges_lines):
        lineno = n + merge_line0
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FormatError(f"{where_merges}, line {lineno}: expected two tokens separated by one space, got {line!r:.80}")
        pair: list[int] = []
        for part in parts:
            raw = unicode_to_bytes(part)
            i = None if raw is None else by_bytes.get(raw)
            if i is None:
                raise FormatError(f"{where_merges}, line {lineno}: {part!r} is not a token of the vocabulary")
            pair.append(i)
        a, b = pair
        if by_bytes.get(by_id[a] + by_id[b]) is None:
            raise FormatError(
                f"{where_merges}, line {lineno}: the merge {line!r} makes {parts[0] + parts[1]!r}, which is not in the vocabulary"
            )
        if (a, b) in seen_pairs:
            raise FormatError(f"{where_merges}, line {lineno}: the merge {line!r} is already on line {seen_pairs[a, b]}")
        seen_pairs[a, b] = lineno
        merges.append((by_id[a], by_id[b]))
        merge_ids.append((a, b))
    return by_id, merges, merge_ids, specials


def merge_lines(text: str) -> tuple[list[str], int]:
    """The merge lines of a ``merges.txt`` (after an optional ``#version`` line), and the line
    number of the first."""
    lines = text.split("\n")
    first = 1
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
        first = 2
    while lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines], first


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
    lines, first = merge_lines(read_text(where_m))
    vocab, merges, merge_ids, specials = parse(vocab_doc, lines, where_vocab=where_v, where_merges=where_m, merge_line0=first)
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
    try:
        return Tokenizer._from_merges(vocab, merges, merge_ids, specials, pattern)
    except BytepairError as e:
        raise FormatError(f"{where_v}: {e}") from None


def read_text(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: not UTF-8 text (byte offset {e.start})") from None


def read_json(path: str) -> object:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno} (truncated?)") from None


def vocab_json(tok: Tokenizer) -> dict[str, int]:
    """``{string: id}`` of the ordinary tokens then the special tokens, in id order."""
    out = {bytes_to_unicode(b): i for i, b in sorted(tok._vocab.items())}
    for text, i in sorted(tok._special_tokens.items(), key=lambda kv: kv[1]):
        if tok._core.lookup(text.encode()) != i:
            out[text] = i
    return out


def merges_txt(tok: Tokenizer) -> str:
    lines = ["#version: 0.2"]
    lines += [bytes_to_unicode(a) + " " + bytes_to_unicode(b) for a, b in tok._merge_list()]
    return "\n".join(lines) + "\n"


def check_exportable(tok: Tokenizer, what: str) -> None:
    """GPT-2 and Hugging Face byte-level files show tokens as strings: a special token's text
    must not also be an ordinary token's string."""
    strings = {bytes_to_unicode(b) for b in tok._vocab.values()}
    for text, i in tok._special_tokens.items():
        if text in strings and tok._core.lookup(text.encode()) != i and unicode_to_bytes(text) != tok._vocab.get(i):
            raise FormatError(f"cannot write {what}: the special token {text!r} reads as an ordinary token's string")


def dump_gpt2(tok: Tokenizer, vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> None:
    """Writes ``vocab.json`` and ``merges.txt`` (each atomically). The split pattern and the
    normalization are not part of this format."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"dump_gpt2() takes a Tokenizer, not {type(tok).__name__}")
    check_exportable(tok, "vocab.json")
    vocab = json.dumps(vocab_json(tok), ensure_ascii=False, indent=None) + "\n"
    merges = merges_txt(tok)
    write_atomic(vocab_path, vocab.encode("utf-8"))
    write_atomic(merges_path, merges.encode("utf-8"))
