"""``bytepair decode``: token ids back to the exact bytes."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import BinaryIO

from bytepair.cli import _common
from bytepair.cli._common import PROG, TOK_HELP_ANY, CommandError, Formatter, load_model, open_input, stdout_bytes
from bytepair.errors import UnknownTokenError
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.wordpiece import WordPieceTokenizer


def _parse_ids(stream: BinaryIO, name: str) -> Iterator[list[int]]:
    """Token ids separated by whitespace or commas (``[1, 2, 3]`` works too), in batches."""
    rest = b""
    while True:
        block = stream.read(_common.BLOCK)
        data = rest + block
        words = data.replace(b",", b" ").replace(b"[", b" ").replace(b"]", b" ").split()
        if block and words and not data[-1:].isspace() and data[-1:] not in (b",", b"[", b"]"):
            rest = words.pop()  # may continue in the next block
        else:
            rest = b""
        ids = []
        for w in words:
            if not w.isdigit():
                shown = w.decode("utf-8", "replace")
                raise CommandError(f"{name}: {shown[:40]!r} is not a token id (expected whole numbers >= 0)")
            ids.append(int(w))
        if ids:
            yield ids
        if not block:
            return


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    tok = load_model(args.tokenizer)
    if isinstance(tok, WordPieceTokenizer):
        from bytepair.cli import _wordpiece

        return _wordpiece.run_decode(args, tok)
    if isinstance(tok, SentencePieceTokenizer):
        from bytepair.cli import _spm

        return _spm.run_decode(args, tok)
    with open_input(args.file) as (stream, name):
        batches = _parse_ids(stream, name)
        out = stdout_bytes()
        # Raw bytes: a token that ends inside a UTF-8 character is written as it is, so
        # `encode | decode` gives back the input byte for byte.
        for ids in batches:
            try:
                out.write(tok.decode_bytes(ids))
            except UnknownTokenError as e:
                raise CommandError(f"{name}: {e} (were the ids made with another tokenizer?)") from None
        out.flush()
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    decode = commands.add_parser(
        "decode",
        formatter_class=Formatter,
        help="decode token ids to text",
        description="""\
Decode token ids to text. Ids are read from FILE (or stdin when FILE is - or
missing), separated by whitespace or commas (so [1, 2, 3] works too). The
tokens' bytes are written to stdout exactly, with no newline added. A
SentencePiece model (.model) writes the text sentencepiece's decode(ids) gives.""",
        epilog=f"""\
examples:
  echo 405 308 44 533 325 291 308 | {PROG} decode -t shakespeare.json
  {PROG} encode -t tok.json in.txt | {PROG} decode -t tok.json > out.txt   # out.txt == in.txt""",
    )
    decode.add_argument("file", nargs="?", metavar="FILE", help="file of token ids (default: stdin)")
    decode.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP_ANY)
    decode.set_defaults(run=run, subparser=decode)
