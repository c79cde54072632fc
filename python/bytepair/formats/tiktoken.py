"""tiktoken's rank files (``*.tiktoken``): one token per line, ``base64(token bytes) SPACE rank``.

A rank file holds the ordinary tokens only. The split pattern and the special tokens are not in
it (tiktoken keeps them in code), so :func:`load_tiktoken` takes them as arguments. A token's
rank is both its id and its merge priority: encoding merges, lowest rank first, the adjacent
pair whose joined bytes are a token.

Files may be gzip-compressed; they are recognised by their first bytes, whatever their name.
``expected_hash`` is the sha256 of the uncompressed content, as tiktoken checks it. A gzip file
is decompressed as a stream, and stopped past ``GUNZIP_RATIO`` times its size (plus 1 MiB): a
real rank file compresses about 2:1 (o200k: 3.6 MB, 1.7 MB gzipped), gzip at most about
1,000:1, so a 7 MB file could otherwise ask for 7 GB.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import os
import sys
import zlib
from collections.abc import Mapping
from typing import Any

from bytepair._atomic import write_atomic
from bytepair._files import read_bytes
from bytepair.errors import FormatError
from bytepair.tokenizer import Tokenizer

__all__ = ["check_ranks_agree", "dump_tiktoken", "load_tiktoken", "to_tiktoken"]

_GZIP_MAGIC = b"\x1f\x8b"
GUNZIP_RATIO = 32  # see the module doc
_GUNZIP_FLOOR = 1 << 20
_MAX_RANK = 2**32 - 2  # ids are u32 in the core; u32::MAX is reserved
# The core keeps an id-indexed table, so a stray huge rank would cost memory in proportion to it.
_MAX_GAP = 1 << 20

if sys.version_info >= (3, 11):

    def _b64decode(s: bytes) -> bytes:
        return binascii.a2b_base64(s, strict_mode=True)

else:  # pragma: no cover - exercised on 3.10 only

    def _b64decode(s: bytes) -> bytes:
        return base64.b64decode(s, validate=True)


def load_tiktoken(
    path: str | os.PathLike[str],
    *,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None = None,
    expected_hash: str | None = None,
) -> Tokenizer:
    """Reads a tiktoken rank file (plain or gzip) into a :class:`~bytepair.Tokenizer`.

    ``pattern`` is the split pattern the ranks were made with: a preset name (``"gpt2"``,
    ``"gpt4"``, ``"o200k"``), a regex, or ``None``; it is required because a wrong pattern
    silently changes every encoding. ``special_tokens`` is ``{text: id}``. With
    ``expected_hash`` (hex sha256 of the uncompressed content) a different file raises
    :class:`~bytepair.FormatError` naming both hashes. A malformed line raises
    :class:`~bytepair.FormatError` naming the file and the line number.
    """
    # The same checks as Tokenizer(...)'s (ids in [0, 2**32)), before the extension sees them:
    # it would raise OverflowError for 2**32 or -1.
    specials = Tokenizer._resolve_specials(dict(special_tokens or {}), {}, {})
    data, where = _read(path, expected_hash)
    # The extension reads the common form of rank files itself; anything else (or a malformed
    # file) goes through parse_ranks below, which accepts what tiktoken accepts and names errors.
    tok = Tokenizer._from_rank_file(data, special_tokens=specials, pattern=pattern)
    if tok is not None:
        return tok
    return Tokenizer._from_ranks(parse_ranks(data, where), special_tokens=specials, pattern=pattern)


def read_ranks(path: str | os.PathLike[str], *, expected_hash: str | None = None) -> dict[bytes, int]:
    """The ``{token bytes: rank}`` table of a tiktoken rank file (plain or gzip)."""
    return parse_ranks(*_read(path, expected_hash))


def _read(path: str | os.PathLike[str], expected_hash: str | None) -> tuple[bytes, str]:
    """The uncompressed, hash-checked content of a rank file, and its name for messages."""
    where = os.fspath(path)
    data = gunzip(read_bytes(where), where)
    if expected_hash is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected_hash.strip().lower():
            raise FormatError(
                f"{where}: sha256 of the content is {actual}, expected {expected_hash}; "
                f"the file is corrupt or not the one expected"
            )
    return data, where


def gunzip(data: bytes, where: str) -> bytes:
    """``data`` decompressed if it is gzip (as ``gzip.decompress`` does: members one after
    another), else ``data``; a ``FormatError`` past ``GUNZIP_RATIO * len(data) + 1 MiB`` bytes."""
    if data[:2] != _GZIP_MAGIC:
        return data
    limit = GUNZIP_RATIO * len(data) + _GUNZIP_FLOOR
    out: list[bytes] = []
    size = 0
    rest = data
    try:
        while rest:  # one gzip member at a time
            d = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
            # Output stops one byte past the limit: a bomb is never inflated whole. Short of
            # that, the call takes all the input it can, so a member not ended is truncated.
            chunk = d.decompress(rest, limit - size + 1)
            out.append(chunk)
            size += len(chunk)
            if size > limit:
                raise FormatError(
                    f"{where}: decompresses to more than {limit:,} bytes ({GUNZIP_RATIO} times the "
                    f"file's {len(data):,} bytes + 1 MiB); a rank file compresses about 2:1 (a gzip bomb?)"
                )
            if not d.eof:
                raise FormatError(f"{where}: not a valid gzip file (truncated: it ends inside the compressed data)")
            rest = d.unused_data.lstrip(b"\x00")  # gzip.decompress allows zero padding after a member
            if rest and rest[:2] != _GZIP_MAGIC:
                raise FormatError(f"{where}: not a valid gzip file (bytes after the compressed data)")
    except zlib.error as e:
        raise FormatError(f"{where}: not a valid gzip file ({e})") from None
    return b"".join(out)


def parse_ranks(data: bytes, where: str = "<tiktoken ranks>") -> dict[bytes, int]:
    """Parses the content of a rank file; ``where`` names it in error messages."""
    lines = data.splitlines()
    # Fast path for well-formed files; anything unusual is parsed again, line by line, below.
    try:
        ranks = {_b64decode(token): int(rank) for token, rank in map(bytes.split, lines)}
    except ValueError:  # binascii.Error is a ValueError
        return _parse_lines(lines, where)
    if len(ranks) != len(lines) or not _plausible(ranks):
        return _parse_lines(lines, where)
    return ranks


def _plausible(ranks: dict[bytes, int]) -> bool:
    values = ranks.values()
    return (
        b"" not in ranks
        and min(values, default=0) >= 0
        and max(values, default=0) <= min(_MAX_RANK, 2 * len(ranks) + _MAX_GAP)
        and len(set(values)) == len(ranks)
    )


def _parse_lines(lines: list[bytes], where: str) -> dict[bytes, int]:
    """The slow parser: checks each line and names the first bad one."""
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    line_of_token: dict[bytes, int] = {}
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue  # blank lines are allowed, as tiktoken allows them
        if len(fields) != 2:
            raise _bad_line(where, lineno, line, "expected two fields, 'base64(token) rank'")
        token, rank_text = fields
        try:
            token_bytes = _b64decode(token)
        except ValueError:
            raise _bad_line(where, lineno, line, f"{token!r} is not valid base64") from None
        if not token_bytes:
            raise _bad_line(where, lineno, line, "the token is empty")
        try:
            rank = int(rank_text)
        except ValueError:
            rank = -1
        if rank < 0:
            raise _bad_line(where, lineno, line, f"the rank {rank_text!r} is not a non-negative integer")
        if token_bytes in line_of_token:
            first = line_of_token[token_bytes]
            raise _bad_line(where, lineno, line, f"the token {token_bytes!r} is already on line {first}")
        if rank in line_of_rank:
            raise _bad_line(where, lineno, line, f"the rank {rank} is already on line {line_of_rank[rank]}")
        line_of_token[token_bytes] = line_of_rank[rank] = lineno
        ranks[token_bytes] = rank
    limit = min(_MAX_RANK, 2 * len(ranks) + _MAX_GAP)
    for rank, lineno in line_of_rank.items():
        if rank > limit:
            raise _bad_line(
                where, lineno, lines[lineno - 1], f"the rank {rank} is far beyond the {len(ranks)} tokens of the file"
            )
    return ranks


def _bad_line(where: str, lineno: int, line: bytes, why: str) -> FormatError:
    shown = line[:80].decode("ascii", "backslashreplace") + ("..." if len(line) > 80 else "")
    return FormatError(f"{where}, line {lineno}: {why}: {shown!r}")


def dump_tiktoken(tok: Tokenizer, path: str | os.PathLike[str]) -> None:
    """Writes ``tok``'s ordinary tokens as a tiktoken rank file, ids as ranks, in rank order.

    A name ending in ``.gz`` is gzip-compressed. The pattern and the special tokens are not
    part of the format: pass them again to :func:`load_tiktoken` (or ``tiktoken.Encoding``).
    The file is written to a temporary file beside ``path``, then renamed over it.
    """
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"dump_tiktoken() takes a Tokenizer, not {type(tok).__name__}")
    check_ranks_agree(tok)
    target = os.fspath(path)
    vocab = tok._vocab
    data = b"".join(base64.b64encode(vocab[i]) + b" %d\n" % i for i in sorted(vocab))
    if target.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    write_atomic(target, data)


# ------------------------------------------------------------------ a live tiktoken.Encoding


def check_ranks_agree(tok: Tokenizer) -> None:
    """Raises :class:`~bytepair.FormatError` when ``tok``'s ids, read as tiktoken ranks, would
    encode differently from its merge list.

    A rank file keeps only the tokens; tiktoken merges, lowest rank first, any pair whose joined
    bytes are a token, and takes a piece that is a token as that token. A merge list says which
    pairs merge, in which order. The two agree when the merges are in id order of their
    results and each token's merge is the last merge that the ranks themselves would make of
    its bytes (so also every token of two or more bytes is made by a merge). Trained
    tokenizers agree; a hand-made or imported merge list may not.
    """
    if tok._merges is None:
        return
    vocab = tok._vocab
    ids = {b: i for i, b in vocab.items()}
    listed = [(ids[a], ids[b], ids[a + b]) for a, b in tok._merges]
    for n in range(1, len(listed)):
        if listed[n][2] <= listed[n - 1][2]:
            a, b = tok._merges[n]
            raise FormatError(
                f"cannot write tiktoken ranks: merge {n} ({a!r}, {b!r}) makes id {listed[n][2]}, lower than the "
                f"id {listed[n - 1][2]} made by merge {n - 1}; as ranks they would merge in another order"
            )
    ranks = Tokenizer._from_ranks({b: i for i, b in vocab.items()}, special_tokens={}, pattern=None)
    by_ranks = {t: (l, r) for l, r, t in ranks._core.rank_merges()}
    by_list = {t: (l, r) for l, r, t in listed}
    for i, b in sorted(vocab.items()):
        if len(b) < 2:
            continue
        if by_list.get(i) != by_ranks.get(i):
            why = (
                "no merge makes it" if i not in by_list
                else "the ranks cannot make it" if i not in by_ranks
                else f"the merge list makes it from {vocab[by_list[i][0]]!r} + {vocab[by_list[i][1]]!r}, the ranks "
                f"from {vocab[by_ranks[i][0]]!r} + {vocab[by_ranks[i][1]]!r}"
            )
            raise FormatError(f"cannot write tiktoken ranks: token {i} ({b!r}) would encode differently: {why}")


def to_tiktoken(tok: Tokenizer, *, name: str | None = None) -> Any:
    """A ``tiktoken.Encoding`` that encodes as ``tok`` does: its ids as ranks, its pattern (in
    tiktoken's own regex dialect, the one bytepair uses) and its special tokens. Raises
    :class:`~bytepair.FormatError` when ranks cannot say what the merge list says (see
    :func:`check_ranks_agree`), or when ``tok`` normalizes text (tiktoken does not)."""
    try:
        import tiktoken
    except ImportError:
        raise ImportError("to_tiktoken() needs tiktoken: pip install tiktoken") from None
    if tok.normalization is not None:
        raise FormatError(f"tiktoken cannot normalize text; this tokenizer applies {tok.normalization!r}")
    if tok.pattern is None:
        raise FormatError("tiktoken needs a split pattern; this tokenizer has none")
    check_ranks_agree(tok)
    return tiktoken.Encoding(
        name or tok.name or "bytepair",
        pat_str=tok.pattern,
        mergeable_ranks={b: i for i, b in tok._vocab.items()},
        special_tokens=tok.special_tokens,
    )
