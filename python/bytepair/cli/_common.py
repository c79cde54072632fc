"""What the ``bytepair`` commands share: loading tokenizers, reading input, errors, formatting."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

from bytepair._display import pad, width
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer

if TYPE_CHECKING:
    from bytepair.sentencepiece import SentencePieceTokenizer

PROG = "bytepair"
BLOCK = 1 << 20  # bytes read at a time when streaming input
TOK_HELP = "tokenizer file (from `bytepair train`), or a pretrained encoding: gpt2, cl100k_base, o200k_base (required)"
# the commands that run SentencePiece models (the others refuse them, naming these)
SENTENCEPIECE_COMMANDS = "encode, decode, count, show, diff, viz, stats, compare and encode-corpus"
# the commands whose help says they take SentencePiece models too
TOK_HELP_ANY = (
    "tokenizer file (from `bytepair train`; a SentencePiece .model too), or a pretrained encoding: "
    "gpt2, cl100k_base, o200k_base (required)"
)


class CommandError(Exception):
    """A failure to report as ``bytepair: error: <message>`` (exit status 1)."""


def duration(s: float) -> str:
    if s < 60:
        return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"
    m, s = divmod(round(s), 60)
    return f"{m}:{s:02d} min" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d} h"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def encoding_names() -> list[str]:
    try:
        from bytepair.encodings import list_encoding_names
    except ImportError:  # pragma: no cover - a build without the pretrained encodings
        return []
    return list_encoding_names()


def load_tokenizer(spec: str, *, command: str | None = None) -> Tokenizer:
    """A byte-level BPE tokenizer: :func:`load_any`, refusing WordPiece (and SentencePiece) with
    a clear message; ``command`` (``"report"``) is named in it."""
    tok = load_any(spec, command=command)
    if not isinstance(tok, Tokenizer):
        what = "this command" if command is None else f"`{PROG} {command}`"
        raise CommandError(f"{spec} is a WordPiece tokenizer; {what} works on byte-level BPE tokenizers only")
    return tok


def load_any(spec: str, *, command: str | None = None) -> Tokenizer | WordPieceTokenizer:
    """A byte-level BPE or WordPiece tokenizer (:func:`load_model`); a SentencePiece model is a
    one-line error naming ``command``, for the commands that do not run them."""
    from bytepair.sentencepiece import SentencePieceTokenizer

    tok = load_model(spec)
    if isinstance(tok, SentencePieceTokenizer):
        what = "this command" if command is None else f"`{PROG} {command}`"
        raise CommandError(
            f"{spec} is {sentencepiece_kind(tok)}; {what} does not take SentencePiece models "
            f"({SENTENCEPIECE_COMMANDS} do)"
        )
    return tok


def sentencepiece_kind(tok: SentencePieceTokenizer) -> str:
    """``"a SentencePiece Unigram model"``, or what a SentencePiece-family tokenizer.json is."""
    from bytepair.formats.hf_spm import HFSentencePieceTokenizer

    name = "Unigram" if tok.model_type == "unigram" else "BPE"
    if isinstance(tok, HFSentencePieceTokenizer):
        return f"a SentencePiece-family tokenizer.json ({name})"
    return f"a SentencePiece {name} model"


def load_model(spec: str) -> Tokenizer | WordPieceTokenizer | SentencePieceTokenizer:
    """A tokenizer in any format ``bytepair.load`` reads (SentencePiece ``.model`` files and
    SentencePiece-family tokenizer.json files included), or the name of a pretrained encoding
    (``cl100k_base``) when no such file exists."""
    if os.path.isdir(spec) and not (
        os.path.exists(os.path.join(spec, "tokenizer.json")) or os.path.exists(os.path.join(spec, "vocab.json"))
    ):
        raise CommandError(f"{spec} is a directory, not a tokenizer file (nor a model directory with tokenizer.json)")
    if not os.path.exists(spec) and spec in encoding_names():
        from bytepair.encodings import get_encoding

        return get_encoding(spec)
    if not os.path.exists(spec) and os.sep not in spec and not spec.endswith(".json") and encoding_names():
        raise CommandError(
            f"{spec}: no such tokenizer file, nor a pretrained encoding ({', '.join(encoding_names())})"
        )
    from bytepair._detect import load  # any format bytepair reads

    return load(spec)


@contextlib.contextmanager
def open_input(path: str | None) -> Iterator[tuple[BinaryIO, str]]:
    """Yields ``(binary stream, name for messages)``; ``None`` or ``"-"`` is stdin."""
    if path is None or path == "-":
        yield sys.stdin.buffer, "<stdin>"
    else:
        if os.path.isdir(path):
            raise CommandError(f"{path} is a directory, not a file")
        with open(path, "rb") as f:
            yield f, path


def read_text(stream: BinaryIO, name: str) -> Iterator[str]:
    """Decodes UTF-8 in blocks (line endings kept as they are); bad UTF-8 is an error naming the offset."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0
    while True:
        block = stream.read(BLOCK)
        pending = len(decoder.getstate()[0])  # bytes of an incomplete character held from the last block
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as e:
            at = offset - pending + e.start
            raise CommandError(f"{name} is not UTF-8 text (invalid byte at offset {at})") from None
        if text:
            yield text
        if not block:
            return
        offset += len(block)


def stdout_bytes() -> BinaryIO:
    sys.stdout.flush()
    buffer: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # pragma: no cover - stdout replaced by a text-only stream
        raise CommandError("stdout does not accept bytes")
    return buffer


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)


def pattern_arg(value: str) -> str | None:
    return None if value.lower() == "none" else value


def positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return n


def warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def table(rows: list[list[str]], right: Sequence[bool], gaps: Sequence[str]) -> list[str]:
    widths = [max(width(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [pad(cell, widths[c], right=right[c]) for c, cell in enumerate(r)]
        line = cells[0]
        for gap, cell in zip(gaps, cells[1:], strict=False):
            line += gap + cell
        out.append(line.rstrip())
    return out
