"""``bytepair trace``: the pieces a text is split into and every merge that encodes them."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from bytepair._display import token_repr
from bytepair.cli._common import PROG, TOK_HELP, CommandError, Formatter, load_any, open_input, read_text


def _text(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    from bytepair.analysis.trace import MAX_TRACE_CHARS

    if args.text is not None and args.input is not None:
        parser.error("give TEXT|FILE or --text, not both")
    if args.text is not None:
        return str(args.text)
    if args.input is not None and not os.path.exists(args.input) and args.input != "-":
        return str(args.input)  # not a file: the text itself
    parts: list[str] = []
    size = 0
    with contextlib.ExitStack() as stack:
        stream, name = stack.enter_context(open_input(args.input))
        for block in read_text(stream, name):
            parts.append(block)
            size += len(block)
            if size > MAX_TRACE_CHARS and not args.pieces:
                raise CommandError(
                    f"{name} has more than {MAX_TRACE_CHARS:,} characters: trace shows every step, "
                    "for texts a person reads; trace a part of it (or list its --pieces)"
                )
    return "".join(parts)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bytepair.analysis.trace import MergeStep, WordPieceStep, pre_tokenize, trace

    tok = load_any(args.tokenizer, command="trace")
    text = _text(args, parser)
    out = sys.stdout
    if args.pieces:
        pieces = pre_tokenize(tok, text)
        if args.json:
            json.dump([{"piece": p, "span": list(s)} for p, s in pieces], out, ensure_ascii=False)
            out.write("\n")
        else:
            for piece, (start, end) in pieces:
                out.write(f"{start:>6}-{end:<6} {token_repr(piece.encode('utf-8', 'surrogatepass'))}\n")
        return 0
    traces = trace(tok, text)
    if args.json:
        json.dump([_as_json(t) for t in traces], out, ensure_ascii=False)
        out.write("\n")
        return 0

    def show(i: int) -> str:
        return token_repr(tok.decode_single_token_bytes(i)) if hasattr(tok, "decode_single_token_bytes") else str(i)

    for n, t in enumerate(traces):
        out.write(f"piece {n + 1}: {token_repr(t.piece.encode('utf-8', 'surrogatepass'))} (characters {t.span[0]}-{t.span[1]})\n")
        if t.start:
            out.write(f"  bytes: {' '.join(show(i) for i in t.start)}\n")
        for r, step in enumerate(t.steps, 1):
            if isinstance(step, MergeStep):
                pairs = "  ".join(f"{show(a)}+{show(b)} #{m}" for a, b, m in step.pairs if m is not None)
                a, b = step.pairs[step.position][:2]
                out.write(f"  round {r}: pairs {pairs}\n")
                out.write(f"    merge #{step.merge}: {show(a)} + {show(b)} -> {show(step.new_id)} (id {step.new_id}); "
                          f"now {' '.join(show(i) for i in step.tokens)}\n")
            elif isinstance(step, WordPieceStep):
                what = "no match" if step.unknown else "longest match"
                out.write(f"  {what} at {step.span[0]}-{step.span[1]}: {step.token!r} (id {step.id})\n")
        if not t.steps and not t.start:
            out.write("  no match covers the word: the unknown token\n")
        out.write(f"  ids: {t.ids}\n")
    return 0


def _as_json(t: object) -> dict[str, object]:
    from dataclasses import asdict

    return asdict(t)  # type: ignore[call-overload, no-any-return]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "trace",
        formatter_class=Formatter,
        help="show every step of encoding a text: its pieces and each merge",
        description="""\
Show how a text is encoded, step by step, as lecture notes do. The text is
first split into pieces (the pre-tokenizer's pattern); then, for byte-level
BPE, each piece starts as its bytes and every round lists the adjacent pairs
that have a merge, with their merge numbers (lower merges first), and takes
the lowest, the leftmost of equal ones. For WordPiece, each word is matched
longest first. The ids at the end are those `encode` gives.

--pieces lists only the pieces with their character offsets (any length of
text); a trace takes at most 10,000 characters.""",
        epilog=f"""\
examples:
  {PROG} trace -t cl100k_base " tech"
  {PROG} trace -t gpt2 --pieces "Hello world, it's 2024!"
  {PROG} trace -t bert_vocab.txt "Hugging Face" --json""",
    )
    p.add_argument("input", nargs="?", metavar="TEXT|FILE", help="a file to trace, or else the text itself (default: stdin)")
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOK_HELP)
    p.add_argument("--text", metavar="TEXT", help="trace TEXT (even when a file of that name exists)")
    p.add_argument("--pieces", action="store_true", help="only list the pieces and their character offsets")
    p.add_argument("--json", action="store_true", help="print the trace (or the pieces) as JSON")
    p.set_defaults(run=run, subparser=p)
