"""minbpe's files: ``<prefix>.model`` (read back) and ``<prefix>.vocab`` (for people).

``.model`` is text: the line ``minbpe v1``, the split pattern (an empty line: none), the number
of special tokens, one ``text id`` line per special token, then one ``left right`` line of
ids per merge; merge ``i`` makes the token ``256 + i`` and ids 0-255 are the single bytes.
``.vocab`` lists each token as ``[text]`` (bytes shown as UTF-8 with replacement, control
characters as ``\\uXXXX``), merged tokens as ``[left][right] -> [token] id``.
"""

from __future__ import annotations

import os
import unicodedata

from bytepair._atomic import write_atomic
from bytepair._files import read_bytes
from bytepair.errors import BytepairError, FormatError
from bytepair.tokenizer import Tokenizer

__all__ = ["dump_minbpe", "load_minbpe", "render_token"]

MAGIC = "minbpe v1"

# A merge's token is its two parts joined, so k lines can make a token of 2**k bytes: a 339-byte
# file of doubling merges asked for terabytes. The tokens a file makes are bounded by its size:
# cl100k's 100,256 tokens total 644 kB, 0.71 bytes per byte of its 902 kB of merge lines (a
# token averages a few bytes, a merge line costs 4 or more); TOKEN_BYTES_PER_FILE_BYTE is 22
# times that, and the floor leaves room for small hand-made files with long tokens.
TOKEN_BYTES_PER_FILE_BYTE = 16
TOKEN_BYTES_FLOOR = 1 << 20


def _is_id(field: str) -> bool:
    """An id as minbpe writes it: ASCII digits, no longer than 2**64's (str.isdigit also takes
    "²", which int() refuses, and int() refuses numbers of over 4,300 digits)."""
    return field.isascii() and field.isdigit() and len(field) <= 20


def token_bytes_limit(file_bytes: int) -> int:
    """The most bytes the tokens of a ``.model`` file of ``file_bytes`` bytes may total."""
    return TOKEN_BYTES_PER_FILE_BYTE * file_bytes + TOKEN_BYTES_FLOOR


def parse_model(
    text: str, where: str, file_bytes: int | None = None
) -> tuple[str | None, dict[str, int], list[tuple[int, int]]]:
    """``(pattern, special tokens, merges as id pairs)`` of a ``.model`` file's text; the tokens
    the merges make may total at most ``token_bytes_limit(file_bytes)`` bytes (``file_bytes``:
    the file's size, by default the text's UTF-8 length)."""
    if file_bytes is None:
        file_bytes = len(text.encode("utf-8", "surrogatepass"))
    limit = token_bytes_limit(file_bytes)
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].strip() != MAGIC:
        raise FormatError(f"{where}, line 1: expected {MAGIC!r}, got {lines[0][:40]!r}" if lines else f"{where}: empty file")
    if len(lines) < 3:
        raise FormatError(f"{where}: truncated (no pattern or special-token count)")
    pattern = lines[1].strip() or None
    try:
        count = int(lines[2])
    except ValueError:
        raise FormatError(f"{where}, line 3: expected the number of special tokens, got {lines[2][:40]!r}") from None
    if count < 0 or len(lines) < 3 + count:
        raise FormatError(f"{where}, line 3: {count} special tokens announced, the file is shorter")
    specials: dict[str, int] = {}
    for n in range(count):
        line = lines[3 + n].rstrip("\r")
        text_, _, idx = line.rpartition(" ")
        if not text_ or not _is_id(idx):
            raise FormatError(f"{where}, line {4 + n}: expected 'special_token id', got {line[:80]!r}")
        specials[text_] = int(idx)
    merges: list[tuple[int, int]] = []
    lengths = [1] * 256  # each token's length in bytes, by id, counted before any is made
    total = 256
    for n, line in enumerate(lines[3 + count :], 4 + count):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2 or not all(_is_id(f) for f in fields):
            raise FormatError(f"{where}, line {n}: expected two token ids, got {line[:80]!r}")
        a, b = int(fields[0]), int(fields[1])
        made = 256 + len(merges)
        for x in (a, b):
            if x >= made:
                raise FormatError(f"{where}, line {n}: the merge names the id {x}, not made before this merge (id {made})")
        length = lengths[a] + lengths[b]
        total += length
        if total > limit:
            raise FormatError(
                f"{where}, line {n}: the merges make tokens of {total:,} bytes in all (this one {length:,} bytes), "
                f"more than a file of {file_bytes:,} bytes can hold ({TOKEN_BYTES_PER_FILE_BYTE} bytes of tokens per "
                f"byte of file + {TOKEN_BYTES_FLOOR:,}); merges that keep doubling a token?"
            )
        lengths.append(length)
        merges.append((a, b))
    return pattern, specials, merges


def tables(merge_ids: list[tuple[int, int]]) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """minbpe's vocabulary (bytes 0-255, merge ``i`` -> ``256 + i``) and the merges as bytes."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges: list[tuple[bytes, bytes]] = []
    for n, (a, b) in enumerate(merge_ids):
        vocab[256 + n] = vocab[a] + vocab[b]
        merges.append((vocab[a], vocab[b]))
    return vocab, merges


def load_minbpe(path: str | os.PathLike[str]) -> Tokenizer:
    """Reads a minbpe ``.model`` file."""
    where = os.fspath(path)
    data = read_bytes(where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{where}: not UTF-8 text (byte offset {e.start})") from None
    pattern, specials, merge_ids = parse_model(text, where, len(data))
    vocab, merges = tables(merge_ids)
    seen: dict[bytes, int] = {}
    for i, b in vocab.items():
        if b in seen:
            raise FormatError(f"{where}: merge {i - 256} makes {b!r}, already the token {seen[b]}")
        seen[b] = i
    from bytepair.formats.gpt2 import check_special_ids

    check_special_ids(specials, len(vocab), where)
    try:
        return Tokenizer._from_merges(vocab, merges, merge_ids, specials, pattern)
    except BytepairError as e:
        raise FormatError(f"{where}: {e}") from None


def render_token(token: bytes) -> str:
    """A token as ``.vocab`` files show it."""
    text = token.decode("utf-8", errors="replace")
    return "".join(c if unicodedata.category(c)[0] != "C" else f"\\u{ord(c):04x}" for c in text)


def minbpe_merge_ids(tok: Tokenizer) -> list[tuple[int, int]]:
    """The merges as minbpe ids; :class:`FormatError` unless ids are minbpe's (bytes 0-255,
    merge ``i`` makes ``256 + i``)."""
    vocab = tok._vocab
    for i in range(256):
        if vocab.get(i) != bytes([i]):
            raise FormatError(f"cannot write a minbpe model: id {i} is not the byte {i} (minbpe's ids are bytes first)")
    ids = {b: i for i, b in vocab.items()}
    out: list[tuple[int, int]] = []
    for n, (a, b) in enumerate(tok._merge_list()):
        if ids.get(a + b) != 256 + n:
            raise FormatError(f"cannot write a minbpe model: merge {n} makes id {ids.get(a + b)}, not {256 + n}")
        out.append((ids[a], ids[b]))
    if len(vocab) != 256 + len(out):
        raise FormatError("cannot write a minbpe model: some tokens are not made by merges")
    return out


def dump_minbpe(tok: Tokenizer, file_prefix: str | os.PathLike[str]) -> None:
    """Writes ``<file_prefix>.model`` and ``<file_prefix>.vocab`` as minbpe's ``save`` does."""
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"dump_minbpe() takes a Tokenizer, not {type(tok).__name__}")
    if tok.normalization is not None:
        raise FormatError(f"minbpe cannot normalize text; this tokenizer applies {tok.normalization!r}")
    merge_ids = minbpe_merge_ids(tok)
    prefix = os.fspath(file_prefix)
    write_atomic(prefix + ".model", model_text(tok.pattern or "", tok.special_tokens, merge_ids).encode("utf-8"))
    vocab, _ = tables(merge_ids)
    write_atomic(prefix + ".vocab", vocab_text(vocab, merge_ids).encode("utf-8"))


def model_text(pattern: str, specials: dict[str, int], merge_ids: list[tuple[int, int]]) -> str:
    lines = [MAGIC, pattern, str(len(specials))]
    lines += [f"{t} {i}" for t, i in specials.items()]
    lines += [f"{a} {b}" for a, b in merge_ids]
    return "\n".join(lines) + "\n"


def vocab_text(vocab: dict[int, bytes], merge_ids: list[tuple[int, int]]) -> str:
    made = {256 + n: pair for n, pair in enumerate(merge_ids)}
    lines = []
    for i, token in vocab.items():
        if i in made:
            a, b = made[i]
            lines.append(f"[{render_token(vocab[a])}][{render_token(vocab[b])}] -> [{render_token(token)}] {i}")
        else:
            lines.append(f"[{render_token(token)}] {i}")
    return "\n".join(lines) + "\n"
