"""``bytepair diff``: where two tokenizers disagree (vocabularies, and ids on a corpus and on
hostile inputs). Exit status 0 when no difference is found, 1 when they differ, 2 on errors."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from bytepair._display import token_repr
from bytepair.cli._common import PROG, CommandError, Formatter, load_model, plural, positive
from bytepair.errors import BytepairError

if TYPE_CHECKING:
    from bytepair.analysis.diff import AnyTokenizer, DiffResult

#: Exit statuses, as diff(1) and cmp(1) have them: CI can tell "differs" from "failed".
EQUAL, DIFFER, TROUBLE = 0, 1, 2


def _load(spec: str) -> AnyTokenizer:
    """Any tokenizer ``bytepair.load`` reads (SentencePiece ``.model`` files included), or a
    pretrained name; the shared loader's messages for everything else."""
    return load_model(spec)


def _seconds(value: str) -> float:
    try:
        s = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not s > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value}")
    return s


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        return _run(args)
    except (CommandError, BytepairError, ValueError, OSError) as e:
        # Reported as every command reports errors, but with status 2: 1 means "they differ".
        from bytepair.cli import _error_message

        sys.stdout.flush()
        print(f"{PROG}: error: {_error_message(e)}", file=sys.stderr)
        return TROUBLE


def _run(args: argparse.Namespace) -> int:
    from bytepair.analysis.diff import diff

    a, b = _load(args.a), _load(args.b)
    result = diff(
        a,
        b,
        corpus=args.corpus or None,
        texts=args.text,
        hostile=args.hostile,
        specials=not args.ordinary,
        max_docs=args.max_docs,
        mixed=args.mixed,
        seed=args.seed,
        time_limit=args.time_limit,
        shrink_time=args.shrink_time,
        examples=args.examples,
        text_field=args.text_field,
    )
    result = _named(result, args.a, args.b)
    out = sys.stdout
    if args.json:
        json.dump(result.to_dict(), out)  # ASCII: a lone surrogate in an input stays valid JSON
        out.write("\n")
    else:
        out.write("\n".join(report(result)) + "\n")
    return EQUAL if result.equal else DIFFER


def _named(result: DiffResult, a: str, b: str) -> DiffResult:
    from dataclasses import replace

    return replace(result, a=a, b=b)


def _tok(token: bytes | None) -> str:
    return "(end of ids)" if token is None else token_repr(token, 40)


def report(r: DiffResult) -> list[str]:
    """The human-readable report ``bytepair diff`` prints."""
    v = r.vocab
    lines = [f"A: {r.a} ({r.kind_a})", f"B: {r.b} ({r.kind_b})", ""]
    lines.append("vocabulary: " + ("the same ids with the same bytes" if v.equal else "differs"))
    lines.append(f"  ordinary tokens          A {v.size_a:,}  B {v.size_b:,}  same id and bytes {v.same:,}")
    if v.only_a:
        lines.append(f"  ids only in A            {v.only_a:,}  e.g. " + ", ".join(f"{i} {_tok(t)}" for i, t in v.examples_only_a))
    if v.only_b:
        lines.append(f"  ids only in B            {v.only_b:,}  e.g. " + ", ".join(f"{i} {_tok(t)}" for i, t in v.examples_only_b))
    if v.changed:
        lines.append(
            f"  same id, other bytes     {v.changed:,}  e.g. "
            + ", ".join(f"{i} {_tok(x)} vs {_tok(y)}" for i, x, y in v.examples_changed)
        )
    if v.moved:
        lines.append(
            f"  same bytes, other id     {v.moved:,}  e.g. "
            + ", ".join(f"{_tok(t)} {x} vs {y}" for t, x, y in v.examples_moved)
        )
    specials = []
    if v.specials_same:
        specials.append(f"{len(v.specials_same)} the same")
    if v.specials_changed:
        specials.append("other ids: " + ", ".join(f"{t} {x} vs {y}" for t, (x, y) in list(v.specials_changed.items())[:5]))
    if v.specials_only_a:
        specials.append("only in A: " + ", ".join(f"{t} {i}" for t, i in list(v.specials_only_a.items())[:5]))
    if v.specials_only_b:
        specials.append("only in B: " + ", ".join(f"{t} {i}" for t, i in list(v.specials_only_b.items())[:5]))
    lines.append("  special tokens           " + ("; ".join(specials) if specials else "none"))
    lines.append("")
    if r.documents:
        lines.append(f"encodings: {r.differ:,} of {plural(r.documents, 'input')} differ ({100 * r.share:.1f}%)")
    else:
        lines.append("encodings: no inputs compared")
    width = max((len(s.source) for s in r.sources), default=0)
    for s in r.sources:
        lines.append(f"  {s.source:<{width}}  {s.differ:>6,} of {s.documents:,}")
    if not r.complete:
        lines.append("  (stopped at the time limit: not every input was compared)")
    d = r.shortest
    if d is not None:
        lines.append("")
        shrunk = f", shrunk from {plural(d.original_length, 'character')}" if d.original_length != len(d.text) else ""
        lines.append(f"shortest input found on which they differ ({d.source}{shrunk}):")
        lines.append(f"  {token_repr(d.text.encode('utf-8', 'surrogatepass'), 100)}")
        lines.append(f"  first difference at token {d.position}:")
        for side, err, i, t in (("A", d.a_error, d.a_id, d.a_token), ("B", d.b_error, d.b_id, d.b_token)):
            what = f"raises {err}" if err else "(no more tokens)" if i is None else f"id {i} {_tok(t)}"
            lines.append(f"    {side}: {what}")
        if d.a_token is not None and d.a_token == d.b_token:
            lines.append("    (the same bytes under other ids)")
        for side, ids, toks in (("A", d.a_ids, d.a_tokens), ("B", d.b_ids, d.b_tokens)):
            if ids and len(ids) <= 24:
                lines.append(f"  {side} tokens: " + " ".join(f"{token_repr(t, 30)}[{i}]" for i, t in zip(ids, toks)))
    lines.append("")
    lines.append("no difference found" if r.equal else "the tokenizers differ")
    return lines


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "diff",
        formatter_class=Formatter,
        help="where two tokenizers disagree: vocab and ids",
        description="""\
Compare two tokenizers in any formats bytepair reads (or pretrained names):
their vocabularies id by id (ordinary tokens as bytes; special tokens by text
and id), and their ids on generated hostile inputs (whitespace runs of every
kind and length, digits, a sample of every Unicode script, Unicode edge cases,
invalid UTF-8 repaired, newlines and CRLF, code, long runs of one character,
each tokenizer's special tokens as text, random mixes of these) and on a
--corpus. Prints the share of inputs whose ids differ, and the shortest input
found on which they differ (shrunk by delta debugging: lines, words,
characters) with the first differing token of each.

Exit status: 0 when no difference is found, 1 when the tokenizers differ,
2 when the command fails (a message on stderr) or is used wrongly. Inputs that
were not compared (--time-limit, --max-docs) can hide differences.""",
        epilog=f"""\
examples:
  {PROG} diff o200k_base converted/tokenizer.json
  {PROG} diff gpt2 cl100k_base --corpus docs/ --max-docs 1000 --json
  {PROG} diff tok.json tok_hf/ --no-hostile --corpus eval.jsonl --time-limit 60""",
    )
    p.add_argument("a", metavar="A", help="a tokenizer in any format bytepair reads (SentencePiece .model too), or gpt2, r50k_base, cl100k_base, o200k_base")
    p.add_argument("b", metavar="B", help="the other tokenizer, as A")
    p.add_argument("--corpus", action="append", default=[], metavar="PATH",
                   help="also compare the documents of PATH (file, directory, glob; repeat); a text file in blocks of about 8 KiB")
    p.add_argument("--text", action="append", default=[], metavar="TEXT", help="also compare on TEXT (repeat)")
    p.add_argument("--no-hostile", dest="hostile", action="store_false", help="do not generate hostile inputs")
    p.add_argument("--ordinary", action="store_true",
                   help="encode special-token text as ordinary text (BPE; default: as the special tokens)")
    p.add_argument("--max-docs", type=positive, metavar="N", help="compare at most N documents of the corpus")
    p.add_argument("--mixed", type=positive, default=500, metavar="N", help="random mixes of hostile inputs (default 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random mixes (default 0)")
    p.add_argument("--time-limit", type=_seconds, metavar="S", help="stop within about S seconds (default: no limit)")
    p.add_argument("--shrink-time", type=_seconds, default=5.0, metavar="S",
                   help="seconds spent shrinking differing inputs (default 5)")
    p.add_argument("--examples", type=positive, default=5, metavar="N", help="examples of each vocabulary difference (default 5)")
    p.add_argument("--text-field", default="text", metavar="F", help="the text field of .jsonl lines (default: text)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run, subparser=p)
