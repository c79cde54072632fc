"""``bytepair viz``: see how a text is split into tokens, in the terminal or as an HTML page
(byte-level BPE tokenizers and SentencePiece models: :mod:`bytepair.views`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from typing import BinaryIO

from bytepair.cli._common import PROG, TOK_HELP_ANY, CommandError, Formatter, load_model, open_input, read_text
from bytepair.tokenizer import Tokenizer
from bytepair.views.html import write_html
from bytepair.views.terminal import render_terminal
from bytepair.wordpiece import WordPieceTokenizer

# viz holds the whole text and a view of every token in memory (the terminal view of 16 MB
# took 2.8 GB), so it reads at most this much: /dev/zero, an endless pipe or a huge file is
# refused, naming it, instead of growing memory without end.
MAX_BYTES = 2 << 20


def _read_bounded(stream: BinaryIO, name: str) -> bytes:
    """All of ``stream``, or a CommandError naming it once it holds more than ``MAX_BYTES``."""
    parts: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        block = stream.read(MAX_BYTES + 1 - size)
        if not block:
            return b"".join(parts)
        parts.append(block)
        size += len(block)
    raise CommandError(
        f"{name}: more than {MAX_BYTES:,} bytes; viz shows at most that much "
        "(cut it first, e.g. head -c 100000 FILE | bytepair viz -t TOK)"
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.text is not None and args.input is not None:
        parser.error("give TEXT|FILE or --text, not both")
    tok = load_model(args.tokenizer)  # byte-level BPE or SentencePiece
    if isinstance(tok, WordPieceTokenizer):
        raise CommandError(
            f"{args.tokenizer} is a WordPiece tokenizer; `{PROG} viz` works on byte-level BPE tokenizers "
            "and SentencePiece models"
        )
    if args.text is not None:
        text = args.text
    elif args.input is not None and not os.path.exists(args.input) and args.input != "-":
        text = args.input  # not a file: the text itself
    else:
        with contextlib.ExitStack() as stack:
            stream, name = stack.enter_context(open_input(args.input))
            text = "".join(read_text(io.BytesIO(_read_bounded(stream, name)), name))
    # special-token text is text (a SentencePiece model: its ids as its encode gives them)
    ids = tok.encode(text, disallowed_special=()) if isinstance(tok, Tokenizer) else tok.encode(text)
    if args.html is not None:
        if os.path.isdir(args.html):
            raise CommandError(f"--html {args.html} is a directory; give a file name such as page.html")
        write_html(args.html, tok, ids, show_ids=args.ids, name=args.tokenizer, text=text)
        print(f"wrote {args.html} ({len(ids):,} tokens); open it in a browser", file=sys.stderr)
        return 0
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    sys.stdout.write(render_terminal(tok, ids, show_ids=args.ids, color=color, text=text))
    if args.count:
        print(f"{len(ids):,} tokens, {len(text.encode('utf-8', 'surrogatepass')):,} bytes", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "viz",
        formatter_class=Formatter,
        help="show how a text is split into tokens (terminal or HTML)",
        description="""\
Show a text split into tokens: each token on its own background colour (the
same id always gets the same colour), spaces as ·, tabs as →, newlines as ↵.
A character split across several tokens is shown once, followed by each
token's bytes in hex (‹e6 9d|b1›): nothing is shown as U+FFFD. Without colour
(when stdout is not a terminal, or --color never) tokens are separated by │.

A SentencePiece model (.model, or a SentencePiece-family tokenizer.json) shows
each piece as the text it stands for (▁ is a space, so ·): byte-fallback
pieces with their bytes in hex (↵‹0a›), the unknown piece as the text it
replaced followed by ‹unk›.

--html PAGE writes the same view as one self-contained HTML page (no network):
hover a token for its id, its bytes and the merge that made it (or the kind
of piece).""",
        epilog=f"""\
examples:
  {PROG} viz -t cl100k_base "Tokenizers split 東京 into bytes"
  {PROG} viz -t tok.json play.txt --ids
  {PROG} viz -t tok.json play.txt --html play.html
  {PROG} viz -t tokenizer.model "Byte fallback: 東京" --ids""",
    )
    p.add_argument(
        "input", nargs="?", metavar="TEXT|FILE",
        help=f"a file to show (at most {MAX_BYTES >> 20} MiB), or else the text itself (default: stdin)",
    )
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP_ANY)
    p.add_argument("--text", metavar="TEXT", help="show TEXT (even when a file of that name exists)")
    p.add_argument("--ids", action="store_true", help="show each token's id after it")
    p.add_argument("--html", metavar="PAGE.html", help="write an HTML page instead of printing")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto", help="colour (default: when stdout is a terminal)")
    p.add_argument("--count", action="store_true", help="also print the number of tokens and bytes (to stderr)")
    p.set_defaults(run=run, subparser=p)
