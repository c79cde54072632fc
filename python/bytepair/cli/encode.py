"""``bytepair encode``: text to token ids (or tokens, or a count)."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from bytepair._display import token_repr
from bytepair._progress import Progress, wanted
from bytepair.cli._common import PROG, TOK_HELP_ANY, CommandError, Formatter, load_model, open_input, read_text
from bytepair.errors import DisallowedSpecialTokenError
from bytepair.sentencepiece import SentencePieceTokenizer
from bytepair.tokenizer import Tokenizer
from bytepair.wordpiece import WordPieceTokenizer


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.text is not None and args.file is not None:
        parser.error("give a FILE or --text, not both")
    tok = load_model(args.tokenizer)
    if isinstance(tok, WordPieceTokenizer):
        from bytepair.cli import _wordpiece

        return _wordpiece.run_encode(args, tok)
    if isinstance(tok, SentencePieceTokenizer):
        from bytepair.cli import _spm

        return _spm.run_encode(args, tok)
    if args.allow_special:
        options: dict[str, Any] = {"allowed_special": "all"}
    elif args.ordinary:
        options = {"disallowed_special": ()}
    else:
        options = {}
    out = sys.stdout
    with contextlib.ExitStack() as stack:
        if args.text is not None:
            texts: Iterable[str] = [args.text]
        else:
            stream, name = stack.enter_context(open_input(args.file))
            texts = read_text(stream, name)
            if not options and tok.special_tokens:
                texts = _checked_whole(tok, texts)
            if wanted(args.progress):
                bar = Progress("encoding", total=_size(args.file), unit="bytes")
                stack.callback(bar.close)
                texts = _metered(texts, bar)
        ids = tok.encode_iterable(texts, **options)
        try:
            if args.count:
                out.write(f"{sum(1 for _ in ids)}\n")
            else:
                _write_ids(out, tok, ids, as_tokens=args.tokens)
        except DisallowedSpecialTokenError as e:
            out.flush()
            raise CommandError(_special_hint(e)) from None
    return 0


def _size(path: str | None) -> int | None:
    """The input's size when it is a regular file (stdin and pipes have none)."""
    if path is None or path == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _metered(texts: Iterable[str], bar: Progress) -> Iterator[str]:
    done = 0
    for text in texts:
        yield text
        done += len(text.encode("utf-8", "surrogatepass"))
        bar.update(done)


def _checked_whole(tok: Tokenizer, texts: Iterable[str]) -> Iterator[str]:
    """The input, read to its end and checked for special-token text before the first chunk is
    handed on, so that no id is written for an input that fails at its last line. It is kept
    meanwhile in a spool: memory up to 64 MB, a temporary file beyond."""
    margin = max(len(t) for t in tok.special_tokens) - 1
    tail = ""
    with tempfile.SpooledTemporaryFile(max_size=64 << 20, mode="w+", encoding="utf-8", errors="surrogatepass", newline="") as spool:
        for chunk in texts:
            tok._check_disallowed(tail + chunk, frozenset(), "all")  # also those straddling two chunks
            tail = (tail + chunk)[-margin:] if margin else ""
            spool.write(chunk)
        spool.seek(0)
        while block := spool.read(1 << 20):
            yield block


def _write_ids(out: TextIO, tok: Tokenizer, ids: Iterable[int], *, as_tokens: bool) -> None:
    batch: list[str] = []
    first = True
    for i in ids:
        batch.append(token_repr(tok.token_bytes(i)) if as_tokens else str(i))
        if len(batch) >= 8192:
            out.write(("" if first else " ") + " ".join(batch))
            first = False
            batch = []
    out.write(("" if first or not batch else " ") + " ".join(batch) + "\n")


def _special_hint(e: DisallowedSpecialTokenError) -> str:
    what = getattr(e, "token", None)
    if isinstance(what, str):
        found = f"the input contains the special token {what!r}"
    else:
        # the library's message also names its keyword arguments; keep its first sentence only.
        found = str(e).split(". ")[0].replace("the text contains", "the input contains")
    return f"{found}; pass --allow-special to encode special tokens as their ids, or --ordinary to encode them as text"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    encode = commands.add_parser(
        "encode",
        formatter_class=Formatter,
        help="encode text to token ids",
        description="""\
Encode text to token ids and print them on one line, separated by spaces.

The whole input is encoded as one text (newlines included, so
`encode | decode` gives back the input byte for byte). The input is read from
FILE, or from stdin when FILE is - or missing, and must be UTF-8. Special-token
text in the input is an error unless --allow-special or --ordinary is given.

A SentencePiece model (.model) gives the ids sentencepiece's encode(text) gives
for the whole input (no BOS / EOS); control pieces written in the text are
text, as there (--allow-special is an error).""",
        epilog=f"""\
examples:
  echo "To be, or not to be" | {PROG} encode -t shakespeare.json
  {PROG} encode -t tok.json --text "hello world" --tokens    # show the tokens, not ids
  {PROG} encode -t cl100k_base corpus.txt --count            # count tokens as GPT-4 does
  {PROG} encode -t tok.json --allow-special chat.txt > ids.txt
  {PROG} encode -t tok.model --text "hello world" --tokens   # a SentencePiece model's pieces""",
    )
    encode.add_argument("file", nargs="?", metavar="FILE", help="input text file (default: stdin)")
    encode.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP_ANY)
    encode.add_argument("--text", metavar="TEXT", help="encode TEXT instead of reading a file")
    special = encode.add_mutually_exclusive_group()
    special.add_argument(
        "--allow-special", action="store_true", help="encode special-token text as the special tokens' ids"
    )
    special.add_argument("--ordinary", action="store_true", help="encode special-token text as ordinary text")
    output = encode.add_mutually_exclusive_group()
    output.add_argument("--count", action="store_true", help="print only the number of tokens")
    encode.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr while reading a file (default: only when stderr is a terminal)",
    )
    output.add_argument("--tokens", action="store_true", help="print each token's text, quoted, instead of its id")
    encode.set_defaults(run=run, subparser=encode)
